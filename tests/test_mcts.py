"""Batched MCTS (mcts.py) and the player (player.py).

Checks: forced wins are found in constructed positions; no virtual loss or pending flag is left
after a search; visit counts add up (root N = 1 + sum of children's N, for every node); tree reuse
keeps the chosen subtree's statistics; proven results are played at once; the memory bound holds;
the selection variants and top-k pruning still produce legal moves.
"""

import io
import itertools
import threading

import numpy as np
import pytest

from nogobot.agents.greedy import GreedyAgent
from nogobot.engine.mcts import SELECT_KL_UCB, SELECT_UCB1_TUNED, SearchConfig
from nogobot.engine.player import MCTSAgent
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.engine.solver import (LONG_TRY_SECONDS, LONG_TRY_SHARE, SOLVER_LONG_EMPTY,
                                   SOLVER_LONG_NODES, SOLVER_MAX_EMPTY, SOLVER_NODES,
                                   SOLVER_NODES_PER_SECOND, SOLVER_REACH_EMPTY, Solver,
                                   solver_budget, solver_seconds)
from nogobot.game import coords
from nogobot.game.board import BLACK, Board
from nogobot.net.inference import Evaluation, UniformEvaluator
from nogobot.tools import warmup


class CountingEvaluator(UniformEvaluator):
    """Uniform priors, value 0.5, counting calls and positions."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.positions = 0

    def evaluate(self, planes):
        self.calls += 1
        self.positions += planes.shape[0]
        return super().evaluate(planes)


def small_config(**kw):
    base = dict(batch_size=8, max_tree_mb=16, cache_entries=1 << 12, use_solver=False)
    base.update(kw)
    return SearchConfig(**base)


def random_board(empties, seed):
    """A 9x9 position after random legal moves, with ``empties`` empty points left."""
    rng = np.random.default_rng(seed)
    b = Board(9)
    while 81 - b.ply > empties:
        b.play(int(rng.choice(b.legal_moves())))
    return b


def solver_calls(board, limits, **config):
    """One search of ``board`` within ``limits`` by a searcher of ``small_config(use_solver=True,
    **config)``, stopped at once: the searcher and each call of its solver as (empty points,
    node budget, seconds). Each solve runs within 1,000 nodes, so that the tests stay quick."""
    s = Searcher(UniformEvaluator(), 9, small_config(use_solver=True, **config))
    calls = []
    solve = s.solver.solve
    s.solver.solve = lambda pos, budget, *a, **kw: calls.append(
        (81 - pos.ply, budget, kw.get("max_seconds"))) or solve(pos, 1_000, *a, **kw)
    stop = threading.Event()
    stop.set()
    s.search(board, limits, stop=stop)
    return s, calls


def assert_tree_consistent(searcher):
    t = searcher.tree
    n, e = t.nodes, t.edges
    assert t.VL[:n].sum() == 0, "virtual loss left behind"
    assert not t.pending[:n].any(), "pending leaf left behind"
    full = bool(t.info[1])
    owner = np.full(n, -1)
    for node in range(n):
        f, k = t.first[node], t.nchild[node]
        if f >= 0 and k > 0:
            assert f + k <= e
            assert abs(t.P[f:f + k].sum() - 1.0) < 1e-3
            if node > 0:  # (root noise is added after the root's edges were sorted)
                assert np.all(np.diff(t.P[f:f + k]) <= 1e-7), "edges not in prior order"
            kids = t.child[f:f + k]
            for j, c in enumerate(kids):
                if c >= 0:
                    assert t.parent[c] == node and t.move[c] == t.emove[f + j]
                    assert owner[c] == -1, "a node reached by two edges"
                    owner[c] = node
            # Every visit of an unproven node went on to one child, except the visit that
            # expanded it (proven nodes and a full tree value nodes without descending).
            if t.proof[node] == 0 and not full:
                assert t.N[node] == t.N[kids[kids >= 0]].sum() + 1
    # Every node but the root hangs under exactly one edge of its parent.
    assert np.all(owner[1:] == t.parent[1:n])


def test_search_uniform_is_consistent_and_counts_playouts():
    ev = CountingEvaluator()
    s = Searcher(ev, 9, small_config())
    r = s.search(Board(9), SearchLimits(playouts=3000))
    assert r.playouts >= 3000 and r.visits == s.tree.N[0]
    assert ev.positions == r.nn_evals <= r.playouts
    assert Board(9).is_legal(r.move)
    assert_tree_consistent(s)
    assert len(r.children) == 81 and sum(c.visits for c in r.children) == r.visits - 1


@pytest.mark.parametrize("lanes", [1, 2])
def test_finds_forced_wins_and_proves_them(lanes):
    """Small endgames (<= 7 moves to choose from): with the solver off, the tree itself must
    prove the result (MCTS-solver), and a proven win must be a real win (brute force). With two
    lanes (two batches in flight) the proofs still come from complete subtrees."""
    from test_solver import brute_force

    rng = np.random.default_rng(2)
    s = Searcher(UniformEvaluator(), 5, small_config(lanes=lanes))
    wins = 0
    for _ in range(60):
        b = Board(5)
        while b.num_legal() > 7:
            b.play(int(rng.choice(b.legal_moves())))
        truth = brute_force(*b.arrays(), b.geo.nbr, b.geo.zobrist)
        r = s.search(b, SearchLimits(playouts=20_000))
        assert r.proven == truth, f"\n{b}"
        assert_tree_consistent(s)
        if truth == 1:
            after = b.copy()
            after.play(r.move)
            assert brute_force(*after.arrays(), after.geo.nbr, after.geo.zobrist) == -1
            wins += 1
    assert wins > 0


def _loses_for_mover(board, q):
    c = board.copy()
    c.play(int(q))
    return any(_wins_now(c, m) for m in c.legal_moves())


def _wins_now(board, m):
    c = board.copy()
    c.play(int(m))
    return c.is_terminal()


def test_win_in_one_is_played_instantly():
    # 2x2: black A2 (0), white B1 (3): black B2 (1) leaves white with no move.
    b = Board(2)
    b.play(0)
    b.play(3)
    s = Searcher(UniformEvaluator(), 2, small_config())
    r = s.search(b, SearchLimits(seconds=30))
    assert r.proven == 1 and r.reason.startswith("proven")
    after = b.copy()
    after.play(r.move)
    assert after.is_terminal()  # the move played wins at once
    assert r.seconds < 5


def test_search_takes_a_win_in_one():
    rng = np.random.default_rng(5)
    s = Searcher(UniformEvaluator(), 5, small_config())
    checked = 0
    for _ in range(300):
        b = Board(5)
        while b.num_legal() > 4 and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal():
            continue
        winning = [int(m) for m in b.legal_moves() if _wins_now(b, m)]
        if winning and len(winning) < b.num_legal():
            r = s.search(b, SearchLimits(playouts=800))
            assert r.move in winning, f"missed a win in one\n{b}"
            checked += 1
    assert checked >= 5


def test_tree_reuse_keeps_subtree_statistics():
    s = Searcher(UniformEvaluator(), 7, small_config())
    b = Board(7)
    s.search(b, SearchLimits(playouts=2000))
    chosen = max(s.children(), key=lambda c: c.visits)
    b.play(chosen.move)
    # Before searching again, move the root and compare.
    s._move_root(b)
    assert s.tree.N[0] == chosen.visits
    r = s.search(b, SearchLimits(playouts=100))
    assert r.visits >= chosen.visits + 100 - 1
    assert_tree_consistent(s)


def test_reuse_resets_on_unrelated_position():
    s = Searcher(UniformEvaluator(), 7, small_config())
    b = Board(7)
    s.search(b, SearchLimits(playouts=500))
    other = Board(7)
    other.play(0)
    other.play(48)
    other.play(24)
    r = s.search(other, SearchLimits(playouts=200))
    assert r.visits <= 200 + 8 + 1


def test_memory_bound_is_respected():
    s = Searcher(UniformEvaluator(), 9, small_config(max_tree_mb=1))
    b = Board(9)
    r = s.search(b, SearchLimits(playouts=100_000, seconds=20))
    assert r.reason == "tree full" and s.tree.nbytes() <= 1 << 20
    assert s.tree.used_bytes() > (1 << 20) * 0.7  # it did use most of the bound
    assert Board(9).is_legal(r.move)
    assert_tree_consistent(s)
    b.play(r.move)  # reuse copies the subtree into the spare tree, also within the bound
    r2 = s.search(b, SearchLimits(playouts=2_000))
    assert s.tree.nbytes() <= 1 << 20 and b.is_legal(r2.move)
    assert_tree_consistent(s)


def test_children_are_allocated_lazily():
    """Only visited moves get a node: a 9x9 search stores far fewer nodes than legal moves of
    expanded positions (edges), and the bytes per playout stay well under one node per edge."""
    s = Searcher(UniformEvaluator(), 9, small_config())
    r = s.search(Board(9), SearchLimits(playouts=4000))
    t = s.tree
    assert t.nodes <= r.playouts + 1
    assert t.edges > 20 * t.nodes
    assert t.used_bytes() < 0.4 * t.edges * (t.NODE_BYTES + t.EDGE_BYTES)
    assert_tree_consistent(s)


@pytest.mark.parametrize("cfg", [dict(selection=SELECT_UCB1_TUNED), dict(selection=SELECT_KL_UCB),
                                 dict(top_k=5), dict(dirichlet_weight=0.25, root_policy_temp=1.03),
                                 dict(batch_size=1), dict(batch_size=64)])
def test_variants_play_legal_moves(cfg):
    s = Searcher(UniformEvaluator(), 7, small_config(**cfg), seed=1)
    b = Board(7)
    for _ in range(4):
        r = s.search(b, SearchLimits(playouts=300))
        assert b.is_legal(r.move)
        b.play(r.move)
        assert_tree_consistent(s)


def test_stop_event_interrupts():
    s = Searcher(UniformEvaluator(), 9, small_config())
    stop = threading.Event()
    stop.set()
    r = s.search(Board(9), SearchLimits(seconds=60), stop=stop)
    assert r.reason == "interrupted" and r.seconds < 5


def test_solver_answers_endgame_instantly():
    rng = np.random.default_rng(11)
    s = Searcher(UniformEvaluator(), 9, small_config(use_solver=True))
    # Compile the solver's kernels first (a fresh checkout has no numba cache: 5-10 s), so the
    # bound below times the answers, not the compiler.
    warmup.load("later")  # the solver's kernels
    for _ in range(5):
        b = Board(9)
        while 81 - b.ply > 16 and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal():
            continue
        r = s.search(b, SearchLimits(seconds=30))
        assert r.reason.startswith("solver") and r.proven in (1, -1)
        assert r.seconds < 5 and b.is_legal(r.move)


def test_a_proven_loss_is_answered_with_the_fewest_winning_replies():
    """Where the solver proves the side to move lost, the search plays ``Solver.resist``'s move
    (the smallest share of winning replies); with ``resist`` off, the stubbornest one."""
    rng = np.random.default_rng(21)
    warmup.load("later")
    seen = differ = 0
    for _ in range(40):
        b = Board(9)
        while 81 - b.ply > 14 and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal() or b.num_legal() < 3:
            continue
        solved = Solver(1 << 20).solve(b, 2_000_000)
        if solved.result != -1:
            continue
        want = Solver(1 << 20).resist(b, solved.move_nodes, 2_000_000)
        got = Searcher(UniformEvaluator(), 9, small_config(use_solver=True)).search(
            b, SearchLimits(seconds=30))
        assert got.reason.startswith("solver: loss") and got.move == want[0]
        off = Searcher(UniformEvaluator(), 9, small_config(use_solver=True, resist=False))
        assert off.search(b, SearchLimits(seconds=30)).move == solved.move
        seen += 1
        differ += want[0] != solved.move
    assert seen >= 3 and differ >= 1  # the two rules disagree somewhere, so the test can fail


def test_the_solver_keeps_to_its_share_of_a_timed_move_on_a_slow_machine(monkeypatch):
    """The solver's node budget assumes a nominal node rate; on a machine far slower than that
    (here: a nominal rate 100 times too high, so the budget is the full 2,000,000 nodes, many
    seconds here) the seconds bound read inside its search still ends the move near its limit."""
    from nogobot.engine import solver as solver_module

    warmup.load("later")
    monkeypatch.setattr(solver_module, "SOLVER_NODES_PER_SECOND", 100 * 280_000)
    rng = np.random.default_rng(5)
    s = Searcher(UniformEvaluator(), 9, small_config(use_solver=True))
    tried = 0
    for _ in range(6):
        b = Board(9)
        while 81 - b.ply > SOLVER_MAX_EMPTY and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal() or Solver(1 << 16).solve(b, 20_000).result != 0:
            continue  # only positions the solver cannot settle at once
        r = s.search(b, SearchLimits(seconds=0.5))
        assert r.seconds < 2.5 and not r.reason.startswith("solver")
        tried += 1
    assert tried >= 2


@pytest.mark.slow  # solves of 26 empty points: 5-10 s
def test_solver_is_tried_from_its_reach_and_the_search_goes_on_without_an_answer():
    """From SOLVER_MAX_EMPTY empty points down the search first gives the solver its budget
    (50 nodes a playout here): with too small a budget it searches on, and with enough it
    answers with the proof. One point more than SOLVER_MAX_EMPTY and the solver is not called."""
    rng = np.random.default_rng(12)
    s = Searcher(UniformEvaluator(), 9, small_config(use_solver=True))
    calls = []

    def counted(solver):
        solve = solver.solve
        solver.solve = lambda board, *a, **kw: calls.append(board.ply) or solve(board, *a, **kw)
        return solver

    counted(s.solver)
    for _ in range(2):
        b = Board(9)
        while 81 - b.ply > SOLVER_MAX_EMPTY + 1:
            b.play(int(rng.choice(b.legal_moves())))
        before = s.search(b, SearchLimits(playouts=200))
        assert not before.reason.startswith("solver") and not calls
        b.play(before.move)
        small = s.search(b, SearchLimits(playouts=40))  # 2,000 nodes: not enough here
        assert calls == [b.ply] and small.playouts >= 40
        assert not small.reason.startswith("solver")
        calls.clear()
    for seed in itertools.count():  # a position at the reach that the solver proves in 200k nodes
        b, greedy = Board(9), GreedyAgent(seed=seed)
        while 81 - b.ply > SOLVER_REACH_EMPTY:
            b.play(greedy.select_move(b))
        want = Solver(1 << 20).solve(b, 200_000).result
        if want != 0:
            break
    s.reset()  # no reused tree: the solver's root order is its own, as above
    s.solver = counted(Solver(1 << 20))  # a fresh table
    r = s.search(b, SearchLimits(playouts=4_000))  # the same 200,000 nodes
    assert calls == [b.ply]
    assert r.reason.startswith("solver") and r.proven == want and b.is_legal(r.move)


def test_solver_from_moves_where_the_solver_is_first_tried():
    """``SearchConfig.solver_from`` (``nogobot gtp --solver-from``): the search tries the solver
    from that many empty points, not from SOLVER_MAX_EMPTY, and the time plan's zones say so."""
    rng = np.random.default_rng(3)
    config = small_config(use_solver=True, solver_from=SOLVER_MAX_EMPTY + 2)
    s = Searcher(UniformEvaluator(), 9, config)
    calls = []
    solve = s.solver.solve
    s.solver.solve = lambda board, *a, **kw: calls.append(81 - board.ply) or solve(board, *a,
                                                                                     **kw)
    b = Board(9)
    while 81 - b.ply > SOLVER_MAX_EMPTY + 3:
        b.play(int(rng.choice(b.legal_moves())))
    for _ in range(3):
        s.search(b, SearchLimits(playouts=60))
        b.play(int(rng.choice(b.legal_moves())))
    assert calls == [SOLVER_MAX_EMPTY + 2, SOLVER_MAX_EMPTY + 1]
    zones = MCTSAgent(UniformEvaluator(), config=config).solver_zones
    assert zones.tries == SOLVER_MAX_EMPTY + 2 and zones.reach == SOLVER_REACH_EMPTY
    default = MCTSAgent(UniformEvaluator(), config=small_config(use_solver=True))
    assert default.solver_zones.tries == SOLVER_MAX_EMPTY


def test_solver_max_nodes_caps_the_budget_on_long_clocks_only():
    """``SearchConfig.solver_max_nodes`` (``nogobot gtp --solver-nodes``) replaces the solver's
    per-move cap: a long move gets it whole, a short move still gets its share of the clock,
    and the search hands the solver that budget."""
    # A move long enough for the cap to bind, short of a long try (the next test).
    long_move, short_move = SearchLimits(seconds=50.0), SearchLimits(seconds=1.0)
    assert solver_budget(long_move) == SOLVER_NODES
    assert solver_budget(long_move, 3 * SOLVER_NODES) == 3 * SOLVER_NODES
    assert solver_budget(short_move, 3 * SOLVER_NODES) == solver_budget(short_move) < SOLVER_NODES
    b = random_board(SOLVER_MAX_EMPTY, 5)
    for cap, want in ((None, SOLVER_NODES), (3 * SOLVER_NODES, 3 * SOLVER_NODES)):
        _, calls = solver_calls(b, long_move, solver_max_nodes=cap)
        assert [budget for _, budget, _ in calls] == [want]


def test_solver_rate_sizes_a_timed_moves_budget_and_zero_leaves_it_to_the_seconds():
    """``SearchConfig.solver_rate`` (``nogobot gtp --solver-rate``): a timed move's node budget
    is its solver share of the seconds at that rate (None: the nominal rate), 0 leaves only the
    cap, and a playout budget does not read the rate; the search hands the solver that budget
    with the move's share of the seconds either way."""
    move = SearchLimits(seconds=2.0)
    nominal = solver_budget(move)
    assert nominal == int(SOLVER_NODES_PER_SECOND * 0.5 * 2.0) < SOLVER_NODES
    assert solver_budget(move, rate=2 * SOLVER_NODES_PER_SECOND) == 2 * nominal
    assert solver_budget(move, rate=0) == SOLVER_NODES
    assert solver_budget(SearchLimits(playouts=100), rate=0) == 5_000
    b = random_board(SOLVER_MAX_EMPTY, 7)
    for rate, want in ((None, nominal), (0, SOLVER_NODES)):
        _, calls = solver_calls(b, move, solver_rate=rate)
        assert [(budget, seconds) for _, budget, seconds in calls] == [(want, 1.0)]


def test_long_moves_try_the_solver_from_further_up_with_a_larger_cap():
    """A move with at least ``LONG_TRY_SECONDS`` of hard limit tries the solver from
    ``SOLVER_LONG_EMPTY`` empty points with up to ``SOLVER_LONG_NODES`` in ``LONG_TRY_SHARE``
    of the limit; a shorter move, a playout budget, ``solver_long_from=0`` or a position above
    the long zone do not, and ``solver_max_nodes`` caps a long try too."""
    assert SOLVER_MAX_EMPTY < SOLVER_LONG_EMPTY and SOLVER_NODES < SOLVER_LONG_NODES
    b = random_board(SOLVER_LONG_EMPTY, 8)
    above = random_board(SOLVER_LONG_EMPTY + 1, 8)  # one point above the long zone
    long_move = SearchLimits(seconds=LONG_TRY_SECONDS)
    short_move = SearchLimits(seconds=LONG_TRY_SECONDS - 1)

    def budgets(board, limits, **config):
        return solver_calls(board, limits, **config)[1]

    want = solver_budget(long_move, SOLVER_LONG_NODES, share=LONG_TRY_SHARE)
    seconds = LONG_TRY_SHARE * LONG_TRY_SECONDS
    assert budgets(b, long_move) == [(SOLVER_LONG_EMPTY, want, seconds)]
    assert want > SOLVER_NODES
    assert budgets(b, short_move) == []
    assert budgets(b, SearchLimits(playouts=100_000)) == []
    assert budgets(b, long_move, solver_long_from=0) == []
    assert budgets(above, long_move) == []
    assert budgets(b, long_move, solver_max_nodes=3_000_000) == [
        (SOLVER_LONG_EMPTY, 3_000_000, seconds)]
    assert budgets(above, long_move, solver_long_from=SOLVER_LONG_EMPTY + 1)[0][0] == \
        SOLVER_LONG_EMPTY + 1


def test_a_failed_solver_try_is_reported_and_logged():
    """A move whose solver try ends unknown says so in its result (``solver_try``: the try's
    nodes and seconds) and in the engine's log line; a move with no try says nothing."""
    b = random_board(SOLVER_MAX_EMPTY, 9)
    log = io.StringIO()
    agent = MCTSAgent(UniformEvaluator(), config=small_config(use_solver=True), playouts=20,
                      log=log)
    agent.select_move(b)  # 20 playouts: a 1,000-node try, far too few at 28 empty points
    r = agent.last_result
    assert not r.reason.startswith("solver") and r.proven == 0
    nodes, seconds = r.solver_try
    assert 0 < nodes <= 1_000 and seconds >= 0
    assert f"; solver unknown after {nodes:,} nodes in " in log.getvalue()
    empty = MCTSAgent(UniformEvaluator(), config=small_config(use_solver=True), playouts=20,
                      log=io.StringIO())
    empty.select_move(Board(9))
    assert empty.last_result.solver_try is None and "solver" not in empty.log.getvalue()


def test_solver_threads_multiply_the_budget_not_the_seconds():
    """``SearchConfig.solver_threads`` (``nogobot gtp --solver-threads``): the searcher's solver
    searches with that many threads, and its node budget grows with them while its seconds
    stay the move's share."""
    b = random_board(SOLVER_MAX_EMPTY, 6)
    limits = SearchLimits(seconds=1.0)
    for threads in (1, 3):
        s, calls = solver_calls(b, limits, solver_threads=threads)
        assert s.solver.threads == threads
        assert [(budget, seconds) for _, budget, seconds in calls] == [
            (threads * solver_budget(limits), solver_seconds(limits))]


def test_agent_resigns_without_legal_move_and_plays_games():
    agent = MCTSAgent(UniformEvaluator(), config=small_config(), playouts=64, seconds=None, log=None)
    b = Board(5)
    while not b.is_terminal():
        m = agent.select_move(b)
        assert b.is_legal(m)
        b.play(m)
    assert agent.select_move(b) == coords.RESIGN


def test_evaluation_contract():
    ev = UniformEvaluator()
    out = ev.evaluate(np.zeros((3, 12, 9, 9), np.float32))
    assert isinstance(out, Evaluation)
    assert out.policy_logits.shape == (3, 81) and out.value.shape == (3,)


def test_kernel_settings_fill_each_named_slot_once():
    """The kernels read ``cfg_f``/``cfg_i`` by the ``CF_*``/``CI_*`` indices: each name has a
    slot of its own, and ``kernel_settings`` puts each setting in its named slot."""
    from nogobot.engine import mcts

    f_names = [n for n in dir(mcts) if n.startswith("CF_") and n != "CF_COUNT"]
    i_names = [n for n in dir(mcts) if n.startswith("CI_") and n != "CI_COUNT"]
    assert sorted(getattr(mcts, n) for n in f_names) == list(range(mcts.CF_COUNT))
    assert sorted(getattr(mcts, n) for n in i_names) == list(range(mcts.CI_COUNT))
    cfg = SearchConfig(c_puct=2.5, fpu_reduction=0.3, virtual_loss=2.0, root_policy_temp=1.5,
                       rollout_weight=0.25, top_k=7, selection=SELECT_KL_UCB, batch_size=32,
                       rollout_count=6, c_puct_log=0.45, c_puct_base=300.0)
    cfg_f, cfg_i = mcts.kernel_settings(cfg)
    assert cfg_f[mcts.CF_C_PUCT] == 2.5 and cfg_f[mcts.CF_FPU_REDUCTION] == 0.3
    assert cfg_f[mcts.CF_C_PUCT_LOG] == 0.45 and cfg_f[mcts.CF_C_PUCT_BASE] == 300.0
    assert cfg_f[mcts.CF_VIRTUAL_LOSS] == 2.0 and cfg_f[mcts.CF_ROOT_TEMP] == 1.5
    assert cfg_f[mcts.CF_ROLLOUT_WEIGHT] == 0.25
    assert cfg_i[mcts.CI_TOP_K] == 7 and cfg_i[mcts.CI_SELECTION] == SELECT_KL_UCB
    assert cfg_i[mcts.CI_MAX_COLLISIONS] == 32 and cfg_i[mcts.CI_ROLLOUT_COUNT] == 6
    assert cfg_i[mcts.CI_FORCED_CHILD] == -1


def root_visit_shares(**config):
    """The root's children's shares of 1,500 playouts from a middle-game position (uniform
    priors, rollouts as values, so the children's values differ), largest first."""
    s = Searcher(UniformEvaluator(), 9, small_config(rollout_weight=1.0, **config), seed=3)
    s.search(random_board(45, seed=11), SearchLimits(playouts=1500))
    visits = s.tree.children(0).N.astype(float)
    return np.sort(visits / visits.sum())[::-1]


def test_c_puct_log_spreads_a_long_searchs_visits():
    """With the exploration constant growing with the visits, the root (1,500 visits, far past
    the base of 20) explores more: its most visited move gets a smaller share and more moves
    are tried than at the fixed constant; a huge base leaves the growth at nothing."""
    fixed = root_visit_shares()
    grown = root_visit_shares(c_puct_log=2.0, c_puct_base=20.0)
    assert grown[0] < 0.8 * fixed[0]
    assert np.count_nonzero(grown) >= np.count_nonzero(fixed)
    barely = root_visit_shares(c_puct_log=2.0, c_puct_base=1e12)
    assert abs(barely[0] - fixed[0]) < 0.05


def test_set_c_puct_reaches_the_kernels_and_keeps_the_tree():
    s = Searcher(UniformEvaluator(), 9, SearchConfig(batch_size=8, rollout_weight=0.0), seed=1)
    b = Board(9)
    s.search(b, SearchLimits(playouts=64))
    visits = int(s.tree.N[0])
    s.set_c_puct(3.0)
    assert s.c_puct == 3.0 and s.config.c_puct == 3.0
    assert int(s.tree.N[0]) == visits  # the tree is kept
