"""The time manager through GTP: the engine's own clock, time commands, budgets passed to the
search, and pondering (think on the opponent's time, stop at once on any input)."""

import io
import re
import time

from nogobot.engine.agent import Agent
from nogobot.engine.mcts import SearchConfig
from nogobot.engine.player import MCTSAgent
from nogobot.engine.timecontrol import MoveBudget, TimeControl, TimePolicy
from nogobot.gtp import Engine, NoGoCommands, serve
from nogobot.net.inference import UniformEvaluator


class RecordingAgent(Agent):
    """Plays the first legal move and records the budget it was given."""

    name = "recording"
    can_ponder = True
    takes_move_budget = True

    def __init__(self):
        self.budgets = []

    def select_move(self, board, seconds=None):
        self.budgets.append(seconds)
        return int(board.legal_moves()[0])

    def ponder(self, board, stop, max_seconds=600.0):
        stop.wait(0.01)


def session(agent, **kw):
    logged = []
    handler = NoGoCommands(lambda: agent, log=logged.append, **kw)
    return Engine(handler, name="t", version="t"), handler, logged


def test_sudden_death_clock_is_charged_and_budgets_shrink():
    agent = RecordingAgent()
    engine, handler, logged = session(agent, clock=TimeControl.sudden_death(60))
    engine.handle("showboard")  # the rules kernels load first (serve's warm-up does that)
    for _ in range(4):
        assert engine.handle("genmove b").startswith("= ")
    first, last = agent.budgets[0], agent.budgets[-1]
    assert isinstance(first, MoveBudget) and 0 < first.planned <= first.maximum < 60
    assert handler.clock.state("b").main_left < 60  # our own clock ran
    assert any(re.match(r"time: black move 1 \S+: planned [\d.]+s max [\d.]+s used", m)
               for m in logged)
    # The first move's plan is shortened by whatever loading it waited for (seconds on a busy
    # machine), so the shrinking is judged from the second move on.
    assert last.planned <= agent.budgets[1].planned * 1.5


def test_time_left_corrects_the_clock():
    agent = RecordingAgent()
    engine, handler, _ = session(agent, clock=TimeControl.sudden_death(900))
    engine.handle("genmove b")
    roomy = agent.budgets[-1].planned
    engine.handle("time_left b 12 0")
    engine.handle("genmove b")
    tight = agent.budgets[-1]
    assert tight.maximum < 12 and tight.planned < roomy / 5


def test_whole_second_time_left_keeps_the_own_clocks_fraction():
    """GTP's time_left is whole seconds rounded down: the own clock's reading is kept where it
    falls inside that second, and anything else the controller says is taken as said."""
    from nogobot.gtp.clock import finer_main_left

    assert finer_main_left(13.0, 13.42) == 13.42  # the own clock, inside the second
    assert finer_main_left(13.0, 14.2) == 13.0  # the own clock ran slow: the controller wins
    assert finer_main_left(13.0, 12.8) == 13.0  # the controller gives more: take it
    assert finer_main_left(13.5, 13.9) == 13.5  # fractions are exact: taken as said
    engine, handler, _ = session(RecordingAgent(), clock=TimeControl.sudden_death(15))
    engine.handle("genmove b")
    own = handler.clock.state("b").main_left
    engine.handle(f"time_left b {int(own)} 0")
    assert handler.clock.state("b").main_left == own
    engine.handle(f"time_left b {int(own) - 1} 0")
    assert handler.clock.state("b").main_left == int(own) - 1


def test_time_settings_and_kgs_forms_reach_the_budget():
    agent = RecordingAgent()
    engine, handler, _ = session(agent)
    engine.handle("kgs-time_settings byoyomi 0 5 3")  # straight into byo-yomi: 5 s periods
    engine.handle("genmove b")
    b = agent.budgets[-1]
    assert b.maximum <= 5 - TimePolicy().lag_buffer + 1e-9
    engine.handle("time_settings 0 1 0")  # GoGui's "no limit"
    engine.handle("genmove w")
    assert abs(agent.budgets[-1].planned - TimePolicy().no_limit_seconds) < 0.05


def test_per_move_budget_is_respected_by_the_real_search(search_kernels):
    # The agent's own default (5 s) is far above the clock's 0.5 s a move: a search that ignored
    # the GTP budget would take it.
    agent = MCTSAgent(UniformEvaluator(), config=SearchConfig(use_solver=False), seconds=5.0,
                      log=None)
    engine, handler, _ = session(agent, clock=TimeControl.per_move(0.5))
    planned = 0.5 - TimePolicy().lag_buffer
    for colour in "bwbw":
        t0 = time.monotonic()
        assert engine.handle(f"genmove {colour}").startswith("= ")
        wall = time.monotonic() - t0
        # The search stops at the planned time by its own clock (one batch of overshoot at most);
        # the lag buffer covers the rest on a quiet machine. The wall-clock bound is loose because
        # a loaded CI box can withhold the CPU for a while, which no engine controls.
        assert agent.last_result.seconds < planned + 0.1
        assert wall < 2.0


def test_ponder_stops_at_once_on_input_and_the_tree_is_reused():
    agent = MCTSAgent(UniformEvaluator(), config=SearchConfig(use_solver=False),
                      seconds=0.2, log=None)
    lines = ["boardsize 7", "genmove b"]
    script = "\n".join(lines) + "\n"
    out = io.StringIO()

    class SlowInput(io.StringIO):
        """Delivers the next line only after a pause, like a human opponent."""

        def readline(self):
            line = super().readline()
            if line.startswith("play"):
                # The reader thread asks for this line while genmove still runs (its first search
                # may compile): the opponent answers only after seeing the engine's move.
                deadline = time.monotonic() + 120
                while out.getvalue().count("=") < 2 and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(1.0)  # the engine ponders meanwhile
                self.t_sent = time.monotonic()
                # White answers in a corner that black's move left empty.
                line = "play w G7\n" if "= A1" in out.getvalue() else line
            return line

    src = SlowInput(script + "play w A1\n")
    errs = io.StringIO()
    serve(lambda: agent, instream=src, outstream=out, errstream=errs, ponder=True,
          time_control=TimeControl("none"),
          time_policy=TimePolicy(no_limit_seconds=0.2))
    answered = time.monotonic()
    assert out.getvalue().count("=") == 3
    assert answered - src.t_sent < 0.5  # pondering stopped at once on the input line
    searcher = agent.searcher(7)  # the 7x7 game's
    # After the ponder the root had the position with white to move; its visits survived.
    assert searcher.tree.N[0] > 0


def test_an_agent_gets_the_budget_it_declares_it_takes():
    """Without ``takes_move_budget`` (the Agent default) an agent gets the planned seconds."""

    class Plain(RecordingAgent):
        takes_move_budget = False
        can_ponder = False

    agent = Plain()
    engine, _, _ = session(agent, clock=TimeControl.sudden_death(60), ponder=True)
    assert engine.handle("genmove b").startswith("= ")
    assert isinstance(agent.budgets[0], float) and 0 < agent.budgets[0] < 60


def test_the_agents_solver_zones_shape_the_plan():
    """The GTP layer hands the agent's endgame-solver zones to the plan: with about 32 empty
    points the moves from 28 down count as shares of a move, so this one gets more than the length
    model alone would give it."""
    import numpy as np

    from nogobot.engine.timecontrol import SolverZones, plan_move
    from nogobot.game import coords
    from nogobot.game.board import BLACK, Board

    rng = np.random.default_rng(5)
    b, moves = Board(9), []
    while 81 - b.ply > 32 or b.to_move != BLACK:
        m = int(rng.choice(b.legal_moves()))
        b.play(m)
        moves.append(coords.to_gtp(m, 9))
    plain, solving = RecordingAgent(), RecordingAgent()
    solving.solver_zones = SolverZones(exact=22, reach=26, tries=28)
    budgets = []
    for agent in (plain, solving):
        engine, handler, _ = session(agent, clock=TimeControl.sudden_death(60))
        for i, mv in enumerate(moves):
            assert engine.handle(f"play {'bw'[i % 2]} {mv}").startswith("=")
        budgets.append(handler.move_budget(BLACK))
    state = handler.clock.state("b")
    want = plan_move(TimeControl.sudden_death(60), state, b.num_legal(BLACK), b.num_legal(2),
                     TimePolicy(), empty_points=81 - b.ply, solver=solving.solver_zones)
    assert budgets[1] == want
    assert budgets[1].planned > 1.5 * budgets[0].planned
