"""The one batched search driver (driver.BatchedSearches) and the Searcher's shared parts:
searches of several board sizes share rounds (one network call per size), a failing network
call ends only the searches that waited on it, a lone search is ``Searcher.search`` exactly,
and searchers built around one cache and solver really share them. The pipelined lone search
(two lanes: the network one batch behind on its own thread) selects disjoint batches, lands or
gives up what is in flight, and leaves a consistent tree whatever ends it (its proofs against
brute force: test_mcts.py)."""

import threading

import numpy as np
import pytest
from test_mcts import assert_tree_consistent

from nogobot.engine.mcts import EvalCache, SearchConfig
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.engine.solver import Solver
from nogobot.game.board import Board
from nogobot.net.driver import IN_FLIGHT, BatchedSearches, run_search
from nogobot.net.inference import UniformEvaluator

CONFIG = SearchConfig(batch_size=4, max_tree_mb=4, use_solver=False)


class Counting(UniformEvaluator):
    """Uniform outputs; records each call's batch shape and fails on ``fail_size`` boards."""

    def __init__(self, fail_size: int = 0):
        self.shapes: list[tuple] = []
        self.fail_size = fail_size

    def evaluate(self, planes):
        self.shapes.append(planes.shape)
        if planes.shape[-1] == self.fail_size:
            raise RuntimeError("the GPU fell over")
        return super().evaluate(planes)


def steps(ev, size: int, playouts: int = 24):
    return Searcher(ev, size, CONFIG, seed=1).search_steps(Board(size),
                                                           SearchLimits(playouts=playouts))


def test_one_call_per_board_size_per_round():
    ev = Counting()
    driver = BatchedSearches(ev)
    for tag, size in (("a", 5), ("b", 7), ("c", 5)):
        assert driver.start(steps(ev, size), tag) is None
    ended = driver.step()
    # The first round evaluates each root: both 5x5 roots in one call, the 7x7 root in another.
    assert sorted((s[-1], s[0]) for s in ev.shapes) == [(5, 2), (7, 1)] and not ended
    while len(driver):
        ended += driver.step()
    assert sorted(f.tag for f in ended) == ["a", "b", "c"]
    assert all(f.error is None and f.result.playouts >= 24 for f in ended)
    assert driver.network_calls == len(ev.shapes)


def test_a_failing_network_call_ends_only_its_searches():
    ev = Counting(fail_size=7)
    driver = BatchedSearches(ev)
    driver.start(steps(ev, 5), "five")
    driver.start(steps(ev, 7), "seven")
    ended = []
    while len(driver):
        ended += driver.step()
    by_tag = {f.tag: f for f in ended}
    assert by_tag["seven"].in_network and "fell over" in str(by_tag["seven"].error)
    assert by_tag["five"].error is None and by_tag["five"].result.playouts >= 24


def test_a_lone_search_is_searcher_search():
    a = run_search(UniformEvaluator(), steps(UniformEvaluator(), 7, 40))
    b = Searcher(UniformEvaluator(), 7, CONFIG, seed=1).search(Board(7), SearchLimits(playouts=40))
    assert (a.move, a.visits, a.playouts, a.nn_evals) == (b.move, b.visits, b.playouts, b.nn_evals)
    assert [c.visits for c in a.children] == [c.visits for c in b.children]


def test_searchers_share_a_cache_and_solver_and_reset_forgets_the_tree():
    cache, solver = EvalCache(25, 1 << 10), Solver(1 << 12)
    first = Searcher(UniformEvaluator(), 5, CONFIG, seed=0, cache=cache, solver=solver)
    second = Searcher(UniformEvaluator(), 5, CONFIG, seed=0, cache=cache, solver=solver)
    assert first.cache is second.cache is cache and first.solver is second.solver is solver
    board = Board(5)
    first.search(board, SearchLimits(playouts=32))
    stored = int(np.count_nonzero(cache.arrays()[1]))
    assert stored > 0
    evals = second.search(board, SearchLimits(playouts=8)).nn_evals
    assert evals < 8  # the positions the first searcher evaluated come from the cache
    visits = first.tree.N[0]
    first.search(board, SearchLimits(playouts=8))
    assert first.tree.N[0] > visits  # same position: the tree is reused
    reused = first.search(board, SearchLimits(playouts=8))
    assert reused.visits > reused.playouts  # the earlier visits were kept
    first.reset()
    assert first.tree.N[0] == 0
    fresh = first.search(board, SearchLimits(playouts=8))
    assert fresh.visits <= fresh.playouts + 1  # a fresh tree: only this search's visits


def pipelined(**kw) -> SearchConfig:
    return SearchConfig(**{**dict(batch_size=4, max_tree_mb=4, use_solver=False, lanes=2), **kw})


def test_a_batch_in_flight_steers_the_next_one_elsewhere():
    ev = UniformEvaluator()
    s = Searcher(ev, 7, CONFIG, seed=1)
    gen = s.search_steps(Board(7), SearchLimits(playouts=200))
    first = next(gen)  # the root alone
    assert first.shape[0] == 1
    assert gen.send(ev.evaluate(first)) is not None
    second = gen.send(IN_FLIGHT)  # the first batch of children is in the network
    (lane_a, n_a, _), (lane_b, n_b, _) = s.lanes.flying
    leaves_a = set(s.lanes.buffers[lane_a][0][:n_a].tolist())
    leaves_b = set(s.lanes.buffers[lane_b][0][:n_b].tolist())
    assert lane_a != lane_b and n_b == second.shape[0] == 4
    assert not leaves_a & leaves_b  # virtual loss and the pending marks keep them apart
    assert all(s.tree.pending[leaf] for leaf in leaves_a | leaves_b)
    gen.close()  # given up mid-flight: no virtual loss or pending mark stays behind
    assert_tree_consistent(s)
    assert s.lanes.flying == []


class Slow(UniformEvaluator):
    """Uniform outputs that take a while and record on which threads they ran."""

    def __init__(self, fail_after: int | None = None):
        self.threads: set[str] = set()
        self.calls = 0
        self.fail_after = fail_after

    def evaluate(self, planes):
        self.threads.add(threading.current_thread().name)
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("the network fell over")
        threading.Event().wait(0.001)
        return super().evaluate(planes)


def test_a_pipelined_search_runs_the_network_on_its_own_thread_and_lands_every_batch():
    ev = Slow()
    s = Searcher(ev, 7, pipelined(), seed=1)
    board = Board(7)
    for _ in range(3):  # tree reuse across moves, as in a game
        r = s.search(board, SearchLimits(playouts=300))
        assert r.playouts >= 300 and r.visits == s.tree.N[0]
        assert sum(c.visits for c in r.children) == r.visits - 1
        assert board.is_legal(r.move)
        assert_tree_consistent(s)
        board.play(r.move)
    assert threading.current_thread().name not in ev.threads
    assert all(name.startswith("nogobot-network") for name in ev.threads)


def test_a_pipelined_search_stops_on_time_and_on_its_stop_event():
    s = Searcher(UniformEvaluator(), 9, pipelined(max_tree_mb=256), seed=2)
    r = s.search(Board(9), SearchLimits(seconds=0.3))
    assert r.reason == "time" and r.playouts > 0 and r.seconds < 2
    assert_tree_consistent(s)
    stop = threading.Event()
    stop.set()
    r = s.search(Board(9), SearchLimits(seconds=60), stop=stop)
    assert r.reason == "interrupted" and r.seconds < 5
    assert_tree_consistent(s)


def test_a_failing_network_call_in_a_pipelined_search_is_raised_and_leaves_the_tree_clean():
    ev = Slow(fail_after=5)
    s = Searcher(ev, 7, pipelined(), seed=1)
    with pytest.raises(RuntimeError, match="fell over"):
        s.search(Board(7), SearchLimits(playouts=500))
    assert_tree_consistent(s)
    ev.fail_after = None  # the network is back: the next search goes on from that tree
    r = s.search(Board(7), SearchLimits(playouts=100))
    assert r.playouts >= 100
    assert_tree_consistent(s)


def test_the_lanes_bench_measures_both_ways_and_needs_two_cores(capsys):
    from nogobot.tools.benchmarks import bench_lanes

    out = bench_lanes(threads=2, seconds=0.05, rounds=1, size=9, batches=(8, 16))
    assert out["one_lane"] > 0 and out["two_lanes"] > 0
    assert out["two_lanes"] == out["two_lanes_by_batch"][8]
    assert set(out["two_lanes_by_batch"]) == {8, 16}
    assert out["ratio"] == pytest.approx(out["two_lanes"] / out["one_lane"])
    printed = capsys.readouterr().out
    assert "1 lane, batch 16" in printed and "two lanes / one" in printed
    assert "2 lanes, batch 8" in printed and "2 lanes, batch 16" in printed
    with pytest.raises(ValueError, match="two cores"):
        bench_lanes(threads=1, seconds=0.05)
