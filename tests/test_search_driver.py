"""The one batched search driver (inference.BatchedSearches) and the Searcher's shared parts:
searches of several board sizes share rounds (one network call per size), a failing network
call ends only the searches that waited on it, a lone search is ``Searcher.search`` exactly,
and searchers built around one cache and solver really share them."""

import numpy as np

from nogobot.engine.mcts import EvalCache, SearchConfig
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.engine.solver import Solver
from nogobot.game.board import Board
from nogobot.net.inference import BatchedSearches, UniformEvaluator, run_search

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
