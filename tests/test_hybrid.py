"""Hybrid leaf evaluation: the search mixes policy rollouts into the network's leaf values.

With a network that knows nothing (``UniformEvaluator``: value 0.5 everywhere), the root value of
a position whose side to move wins nearly every rollout comes only from the rollouts: it stays
near 0 without them and follows them with them. The cache and the nodes keep the network's own
value either way.
"""

from itertools import pairwise

import numpy as np
import pytest

from nogobot.engine.mcts import SearchConfig
from nogobot.engine.playout import rollout_value
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.game.board import Board
from nogobot.net.inference import UniformEvaluator


def _candidates():
    rng = np.random.default_rng(11)
    for _ in range(80):
        b = Board(7)
        for _ in range(int(rng.integers(14, 22))):
            if b.num_legal() == 0:
                break
            b.play(int(rng.choice(b.legal_moves())))
        if b.num_legal() > 3:
            yield rollout_value(b, 300, 1), b


@pytest.fixture(scope="module")
def extremes():
    """7x7 middle-game positions where the side to move wins the most / the fewest rollouts."""
    ranked = sorted(_candidates(), key=lambda vb: vb[0])
    (low, worst), (high, best) = ranked[0], ranked[-1]
    assert low < -0.25 and high > 0.25, (low, high)
    return best, worst


@pytest.fixture(scope="module")
def lopsided(extremes):
    return extremes[0]


def _search(board, weight, count=1, playouts=600):
    cfg = SearchConfig(rollout_weight=weight, endgame_rollout_weight=None, rollout_count=count,
                       use_solver=False, batch_size=8, max_tree_mb=16)
    s = Searcher(UniformEvaluator(), board.size, cfg, seed=3)
    return s, s.search(board, SearchLimits(playouts=playouts))


def test_rollouts_drive_the_value_where_the_network_knows_nothing(extremes):
    best, worst = extremes
    for board, sign in ((best, 1), (worst, -1)):
        _, plain = _search(board, 0.0)
        _, hybrid = _search(board, 1.0, count=2)
        assert abs(plain.value) < 0.2  # only terminal leaves carry information
        assert sign * (hybrid.value - plain.value) > 0.15, (sign, plain.value, hybrid.value)


def test_weight_scales_the_rollouts_share(lopsided):
    _, half = _search(lopsided, 0.5, count=4)
    _, full = _search(lopsided, 1.0, count=4)
    assert 0.05 < half.value < full.value


def test_cache_and_nodes_keep_the_network_value(lopsided):
    searcher, _ = _search(lopsided, 1.0, playouts=200)
    t = searcher.tree
    used = searcher.cache.used
    assert used.any()
    np.testing.assert_allclose(searcher.cache.value[used], 0.0, atol=1e-6)
    assert np.all(np.abs(t.value[1:t.nodes]) < 1e-6)


def test_rollouts_leave_the_board_and_tree_consistent(lopsided):
    before = lopsided.copy()
    searcher, result = _search(lopsided, 0.7, count=2, playouts=300)
    assert lopsided.hash == before.hash and lopsided.moves == before.moves
    assert lopsided.is_legal(result.move)
    t = searcher.tree
    assert int(t.VL[:t.nodes].sum()) == 0  # every virtual loss was removed
    kids = t.children(0)
    assert int(t.N[0]) >= int(kids.N.sum())


def test_weight_ramps_with_the_phase():
    cfg = SearchConfig(rollout_weight=0.4, endgame_rollout_weight=0.9, ramp_start_empties=55,
                       ramp_end_empties=30)
    weights = [cfg.rollout_weight_at(e) for e in range(81, -1, -1)]  # the game in order
    assert weights[0] == cfg.rollout_weight_at(55) == 0.4
    assert cfg.rollout_weight_at(30) == cfg.rollout_weight_at(0) == 0.9
    assert all(a <= b for a, b in pairwise(weights))  # rises as the board fills
    assert 0.4 < cfg.rollout_weight_at(42) < 0.9
    assert cfg.rollout_weight_at(84, 162) == cfg.rollout_weight_at(42)  # scaled by the area
    no_ramp = SearchConfig(rollout_weight=0.5, endgame_rollout_weight=None)
    assert no_ramp.rollout_weight_at(10) == 0.5  # one weight throughout
    assert SearchConfig(rollout_weight=0.0, endgame_rollout_weight=0.9).rollout_weight_at(10) == 0


def test_a_late_root_searches_with_the_endgame_weight(lopsided):
    # The 7x7 position has 27-35 of 49 points empty: past a ramp that ends at 66 of 81 (40 of
    # 49), the search's weight is the endgame one, and the search is the one with that weight
    # throughout.
    def ramped(late):
        cfg = SearchConfig(rollout_weight=0.5, endgame_rollout_weight=late, ramp_start_empties=80,
                           ramp_end_empties=66, rollout_count=4, use_solver=False, batch_size=8,
                           max_tree_mb=16)
        s = Searcher(UniformEvaluator(), lopsided.size, cfg, seed=3)
        return s.search(lopsided, SearchLimits(playouts=600)).value

    _, full = _search(lopsided, 1.0, count=4)
    _, none = _search(lopsided, 0.0, count=4)
    assert ramped(1.0) == full.value
    assert ramped(0.0) == none.value
