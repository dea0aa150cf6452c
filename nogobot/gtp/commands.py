"""The NoGo GTP commands: game state, moves, records, clock settings, GoGui rules referee.

The protocol layer (engine.py) calls ``cmd_*`` methods with converted arguments; this module
only knows the game. Legality always comes from board.py, which is imported on first use (not
at start-up) so that ``name``/``list_commands`` answer before numba loads; GoGui starts a second
copy of the engine as its rules referee, and tournaments start engines often.

NoGo choices (see also docs/gui-and-gtp.md):

* there is no pass: ``play c pass`` is an ``illegal move``; ``genmove`` answers ``resign`` when
  the colour to play has no legal move, and never ``pass``;
* ``genmove c`` / ``play c v`` for the colour that is not to move simply play for it;
* ``final_score`` is ``B+R`` / ``W+R`` once the side to move is stuck (it lost), before that
  ``? cannot score``;
* ``komi`` is accepted and ignored.

The move generator is an ``Agent`` built by ``agent_factory`` the first time a move is needed
(the referee copy never builds it); what it can do (ponder, analyse, take the time manager's
budget) is what it declares in the ``Agent`` protocol. ``move_budget`` is the hook for the time
manager. A GoGui interrupt stops the network player's search (the move found so far is played).
The analysis commands (GoGui analyze commands, live graphics, Sabaki analysis,
``nogobot-param``) are another handler composed beside this one (analyze.py); while it has
something to show during a genmove it sets ``watch``, which returns the search's hooks.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..engine.timecontrol import TimeControl
from ..game import coords
from ..game.coords import BLACK, WHITE  # not from board.py: no numba at start-up
from . import clock as clocks
from .engine import (
    CANNOT_LOAD_FILE,
    CANNOT_SCORE,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    UNACCEPTABLE_SIZE,
    Channel,
    GtpError,
    GtpSyntaxError,
    color,
    command,
    integer,
    number,
    vertex,
)

_COLOUR = {"b": BLACK, "w": WHITE}
_NAME = {BLACK: "black", WHITE: "white"}
MAX_SGF_BYTES = 10 * 2**20
# Reasons a search stopped that reflect the time manager (not a solver, forced or proven move).
SEARCH_STOPS = ("planned", "unassailable", "time")
# The longest an untimed set-up command (time_settings, boardsize, clear_board) waits, on a clock,
# for the move generator to be ready, so that loading is paid there and not in the first timed
# genmove (harnesses allow 30 s or more; a cold numba cache goes on compiling after it).
READY_WAIT = 5.0


class NoGoCommands:
    """GTP handler for one NoGo game at a time (the game, the clock and the move generator)."""

    def __init__(self, agent_factory: Callable[[], Any], *, board_size: int = 9,
                 clock: TimeControl | None = None,
                 log: Callable[[str], None] = lambda msg: None,
                 time_policy: Any = None, ponder: bool = False):
        if not coords.MIN_SIZE <= board_size <= coords.MAX_SIZE:
            raise ValueError(f"board size {board_size} outside "
                             f"{coords.MIN_SIZE}..{coords.MAX_SIZE}")
        self.agent_factory = agent_factory
        self.agent = None
        self.log = log
        self.size = board_size
        self.komi = 0.0
        self.clock = clocks.Clock(clock or TimeControl())
        self.time_policy = time_policy  # timecontrol.TimePolicy; None = its defaults
        self.ponder = ponder
        self._agent_lock = threading.Lock()
        self._preloading: threading.Thread | None = None
        self._ponder_stop = None
        self._ponder_thread = None
        self.channel = Channel()  # replaced by the engine's (attach_channel)
        # (agent, board) -> search.SearchHooks for a genmove's search; set by the analysis
        # handler while it shows something (live graphics, genmove_analyze), else None.
        self.watch: Callable[[Any, Any], Any] | None = None
        self._new_game()
        self._preload_agent()

    def attach_channel(self, channel: Channel) -> None:
        """Called by the protocol engine: its input events (a GoGui interrupt stops a search)."""
        self.channel = channel

    # -- state ----------------------------------------------------------------------------
    def _new_game(self) -> None:
        self._board = None  # built lazily: creating a Board imports numba
        self.setup: list[tuple[int, int]] = []  # setup stones of a loaded SGF
        self.first_to_move: int | None = None
        self.players: dict[str, str | None] = {"black": None, "white": None}
        self.clock.restart()

    @property
    def board(self):
        if self._board is None:
            from ..game.board import Board

            self._board = Board(self.size)
        return self._board

    def _point(self, v: str) -> int:
        """A syntactically valid vertex -> flat point; pass, column I, off board: illegal."""
        if v == "PASS":
            raise GtpError(ILLEGAL_MOVE)
        try:
            return coords.from_gtp(v, self.size)
        except ValueError:
            raise GtpError(ILLEGAL_MOVE) from None

    def move_budget(self, colour: int):
        """The time manager's budget (``timecontrol.MoveBudget``) for ``colour``'s next move,
        from the time control, what is left on that colour's clock and the position."""
        from ..engine.timecontrol import NO_SOLVER, TimePolicy, plan_move

        board = self.board
        state = self.clock.state("b" if colour == BLACK else "w")
        empty = int((board.stones == 0).sum())
        solver = NO_SOLVER if self.agent is None else self.agent.solver_zones
        return plan_move(self.clock.settings, state, board.num_legal(colour),
                         board.num_legal(3 - colour), self.time_policy or TimePolicy(),
                         empty_points=empty, solver=solver)

    # -- pondering ------------------------------------------------------------------------
    def on_input(self) -> None:
        """Called by the protocol loop as soon as any input line arrives: stop pondering."""
        if self._ponder_thread is not None:
            self._ponder_stop.set()
            self._ponder_thread.join()
            self._ponder_thread = None

    def _start_pondering(self, agent) -> None:
        board = self.board
        if not self.ponder or not agent.can_ponder or board.is_terminal():
            return
        self._ponder_stop = threading.Event()
        self._ponder_thread = threading.Thread(
            target=agent.ponder, args=(board.copy(), self._ponder_stop), daemon=True)
        self._ponder_thread.start()

    def get_agent(self):
        """The move generator, built on first use (it may load the network)."""
        with self._agent_lock:  # a background preload may be building it right now
            if self.agent is None:
                self.agent = self.agent_factory()
                self.log(f"genmove: using {type(self.agent).__name__} ({self.agent.name})")
            return self.agent

    def _preload_agent(self, wait: float = 0.0) -> None:
        """On a real clock, build the move generator (load the network, wait for the search
        kernels) in the background now, so the first timed genmove does not pay for it; then
        wait up to ``wait`` seconds for it (an untimed set-up command: the wait is free). Without
        a clock (GoGui's rules referee copy, analysis) nothing is loaded until a move is asked
        for."""
        if self.agent is not None or self.clock.settings.kind == "none":
            return
        if self._preloading is not None:
            self._preloading.join(wait)
            return

        def build() -> None:
            try:
                self.get_agent()
            except Exception as e:  # noqa: BLE001 -- genmove will report it properly
                self.log(f"preloading the move generator failed: {e}")

        self._preloading = threading.Thread(target=build, daemon=True)
        self._preloading.start()
        if wait > 0:
            self._preloading.join(wait)

    # -- setup ----------------------------------------------------------------------------
    def cmd_boardsize(self, size: integer) -> None:
        if not coords.MIN_SIZE <= size <= coords.MAX_SIZE:
            raise GtpError(UNACCEPTABLE_SIZE)
        self.size = size
        self._new_game()
        self._preload_agent(wait=READY_WAIT)

    def cmd_clear_board(self) -> None:
        self._new_game()
        self._preload_agent(wait=READY_WAIT)

    def cmd_komi(self, komi: number) -> None:
        self.komi = komi  # NoGo has no score; accepted (Sabaki aborts if it fails) and ignored

    # -- moves ----------------------------------------------------------------------------
    def cmd_play(self, c: color, v: vertex) -> None:
        p = self._point(v)
        if not self.board.is_legal(p, _COLOUR[c]):
            raise GtpError(ILLEGAL_MOVE)
        self.board.play(p, _COLOUR[c])

    def cmd_genmove(self, c: color) -> str:
        return self.generate(_COLOUR[c], play=True)

    def cmd_reg_genmove(self, c: color) -> str:
        return self.generate(_COLOUR[c], play=False)

    def generate(self, colour: int, play: bool) -> str:
        """The agent's move for ``colour`` (either colour may be asked, as GTP allows); the
        game state changes only by playing that move (``resign`` changes nothing)."""
        start = time.monotonic()  # the clock runs from receipt (the first board may compile)
        board = self.board
        if board.num_legal(colour) == 0:
            return "resign"
        work = board.copy()  # the agent can never disturb the game state
        work.to_move = colour
        if self.agent is None:
            # The first call may load the network and wait for the search kernels to compile; on
            # a clock it waits at most this move's plan, then a stand-in answers (below).
            plan = self.move_budget(colour)  # without the agent's solver zones
            if self._agent_within(plan.planned - (time.monotonic() - start)) is None:
                return self._stand_in(board, work, colour, play, start, plan)
        agent = self.agent
        budget = self.move_budget(colour)
        waited = time.monotonic() - start
        if self.clock.settings.kind != "none":
            # On a clock, loading time is thinking time, but never below the emergency minimum
            # (policy + a tiny search): a cold start must not leave a 1-playout move. Without a
            # clock the search gets its whole time from when it is ready.
            from ..engine.timecontrol import TimePolicy

            budget = budget.after(waited, floor=(self.time_policy or TimePolicy()).min_per_move)
        p = self._think(agent, work, budget)
        try:
            p = int(p)
        except (TypeError, ValueError):
            p = -2  # not a move at all: treated like an illegal one below
        if p == coords.RESIGN:
            return "resign"
        if not board.is_legal(p, colour):
            self.log(f"genmove: agent returned illegal move {p!r}; playing the first legal move")
            p = int(board.legal_moves(colour)[0])
        answer, used, c = self._answer(board, p, colour, play, start)
        st = self.clock.state(c)
        searched = agent.last_result.reason if agent.last_result is not None else ""
        if searched in SEARCH_STOPS and not budget.emergency:
            st.record_use(used, budget.planned)  # how much of a plan a search really takes
        left = self._clock_left(c)
        self.log(f"time: {_NAME[colour]} move {len(board.moves)} {answer}: planned "
                 f"{budget.planned:.2f}s max {budget.maximum:.2f}s used {used:.2f}s left {left}"
                 + (" EMERGENCY" if budget.emergency else "")
                 + (f" (search ready after {waited:.2f}s)" if waited >= 0.05 else ""))
        if play:
            self._start_pondering(agent)
        return answer

    def _agent_within(self, seconds: float):
        """The move generator; on a clock, None when it is still being built after ``seconds``
        (a cold numba cache compiles the kernels for about two minutes on 2 cores, longer than
        a short game's whole clock). A build that failed is retried here, to raise properly."""
        if self.clock.settings.kind == "none":
            return self.get_agent()
        self._preload_agent()
        if self._preloading is not None:
            self._preloading.join(max(seconds, 0.0))
            if self._preloading.is_alive():
                return None
        return self.get_agent()

    def _stand_in(self, board, work, colour: int, play: bool, start: float, budget) -> str:
        """A move while the move generator is still being built: the greedy one-ply player's
        (the rules kernels only, milliseconds), so a cold start never loses on time."""
        from ..agents.greedy import GreedyAgent

        p = int(GreedyAgent(seed=len(board.moves)).select_move(work))
        answer, used, c = self._answer(board, p, colour, play, start)
        self.log(f"time: {_NAME[colour]} move {len(board.moves)} {answer}: planned "
                 f"{budget.planned:.2f}s used {used:.2f}s left {self._clock_left(c)} (a greedy "
                 "stand-in: the search kernels are still compiling, first run only; `nogobot "
                 "warmup` compiles them ahead of time)")
        return answer

    def _answer(self, board, p: int, colour: int, play: bool, start: float):
        """Play legal move p (when ``play``) and charge the move's time since ``start`` to
        ``colour``'s clock: (its GTP vertex, the seconds, the clock's colour letter)."""
        if play:
            board.play(p, colour)
        used = time.monotonic() - start
        c = "b" if colour == BLACK else "w"
        self.clock.charge(c, used)
        return coords.to_gtp(p, self.size), used, c

    def _clock_left(self, c: str) -> str:
        st = self.clock.state(c)
        return ("no limit" if self.clock.settings.kind in ("none", "per_move")
                else f"{st.main_left:.1f}s main" if st.main_left > 0
                else f"{st.period_left:.1f}s period")

    def _think(self, agent, work, budget) -> int:
        """The agent's move for ``work`` within ``budget`` (a ``timecontrol.MoveBudget``): the
        network player searches with the watchers' hooks and stops on a GoGui interrupt; an
        agent that cannot plan with a budget gets its planned seconds."""
        if agent.can_analyze:
            from ..engine.search import SearchHooks

            hooks = self.watch(agent, work) if self.watch is not None else SearchHooks()
            hooks.stop = hooks.stop or self.channel.interrupted
            return agent.select_move(work, budget, hooks=hooks)
        return agent.select_move(work, budget if agent.takes_move_budget else budget.planned)

    def cmd_undo(self) -> None:
        if not self.board.can_undo():
            raise GtpError(CANNOT_UNDO)
        self.board.undo()

    # -- inspection -----------------------------------------------------------------------
    def cmd_showboard(self) -> str:
        board, n = self.board, self.size
        letters = "   " + " ".join(coords.GTP_COLUMNS[:n])
        lines = ["", letters]
        rows = board.to_ascii().split("\n")
        for r, row in enumerate(rows):
            lines.append(f"{n - r:2d} {row} {n - r:d}")
        lines.append(letters)
        state = f"{_NAME[board.to_move]} to move, {len(board.moves)} moves played"
        if board.is_terminal():
            state += f"; {_NAME[board.to_move]} has no legal move"
        lines.append(state)
        return "\n".join(lines)

    def cmd_final_score(self) -> str:
        from ..game.sgf import result_of

        result = result_of(self.board)
        if result is None:
            raise GtpError(CANNOT_SCORE)
        return result

    def cmd_cputime(self) -> str:
        """CPU seconds used by this process (gogui-twogtp reports it as CPU_B / CPU_W)."""
        return f"{time.process_time():.3f}"

    # -- game records ---------------------------------------------------------------------
    def cmd_loadsgf(self, filename: str, move_number: integer = None) -> None:
        """Load FILE; with n, the position before move n (moves 1..n-1 are played)."""
        from ..game import sgf

        try:
            # Only regular files of sane size: never block on a FIFO or read /dev/zero.
            if not os.path.isfile(filename) or os.path.getsize(filename) > MAX_SGF_BYTES:
                raise OSError("not a regular file of at most 10 MB")
            rec = sgf.load(filename)
            upto = None if move_number is None else move_number - 1
            board = rec.board(upto)
        except (OSError, ValueError) as e:  # SgfError is a ValueError
            self.log(f"loadsgf {filename}: {e}")
            raise GtpError(CANNOT_LOAD_FILE) from None
        self.size = rec.size
        self._new_game()
        self._board = board
        self.setup, self.first_to_move = rec.setup, rec.first_to_move
        self.players = {"black": rec.black, "white": rec.white}

    def cmd_printsgf(self) -> str:
        from ..game import sgf

        rec = sgf.record_of(self.board, setup=self.setup, first_to_move=self.first_to_move,
                            black=self.players["black"], white=self.players["white"])
        return sgf.serialise(rec).strip()

    # -- time -----------------------------------------------------------------------------
    def cmd_time_settings(self, main: number, byo: number, stones: integer) -> None:
        try:
            self.clock.settings = TimeControl.from_time_settings(main, byo, stones)
        except ValueError:
            raise GtpSyntaxError() from None
        self.clock.restart()
        self._preload_agent(wait=READY_WAIT)

    @command("kgs-time_settings")
    def cmd_kgs_time_settings(self, kind: str, *values: number) -> None:
        try:
            self.clock.settings = TimeControl.from_kgs(kind, list(values))
        except ValueError:
            raise GtpSyntaxError() from None
        self.clock.restart()
        self._preload_agent(wait=READY_WAIT)

    def cmd_time_left(self, c: color, seconds: number, stones: integer) -> None:
        try:
            self.clock.set_time_left(c, seconds, stones)
        except ValueError:
            raise GtpSyntaxError() from None

    # -- GoGui rules referee (gogui >= 1.5) ----------------------------------------------
    @command("gogui-rules_game_id")
    def cmd_rules_game_id(self) -> str:
        return "NoGo"

    @command("gogui-rules_board_size")
    def cmd_rules_board_size(self) -> str:
        return str(self.size)  # a bare number: GoGui parses it with Integer.parseInt

    @command("gogui-rules_legal_moves")
    def cmd_rules_legal_moves(self) -> str:
        return " ".join(coords.to_gtp(int(p), self.size) for p in self.board.legal_moves())

    @command("gogui-rules_side_to_move")
    def cmd_rules_side_to_move(self) -> str:
        return _NAME[self.board.to_move]

    @command("gogui-rules_board")
    def cmd_rules_board(self) -> str:
        return self.board.to_ascii()

    @command("gogui-rules_final_result")
    def cmd_rules_final_result(self) -> str:
        board = self.board
        if not board.is_terminal():
            return "unknown"
        loser = _NAME[board.to_move]
        winner = _NAME[3 - board.to_move]
        return f"{winner.capitalize()} wins ({loser} has no legal move)"

    @command("gogui-rules_captured_count")
    def cmd_rules_captured_count(self) -> str:
        return "0 0"  # nothing is ever captured in NoGo
