"""Gumbel AlphaZero's root (nogobot.engine.gumbel): the completed Q and the improved policy on known
values, sequential halving's schedule, the forced root child in the search kernel, a search
that finds the move whose value is best, and a self-play game with the Gumbel root."""

import math

import numpy as np
import pytest

from nogobot.engine.gumbel import GumbelRoot, GumbelSettings, completed_q, improved_policy, sigma
from nogobot.engine.mcts import SearchConfig
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.game.board import Board
from nogobot.net.driver import run_search
from nogobot.net.inference import Evaluation, UniformEvaluator

CONFIG = SearchConfig(batch_size=4, max_tree_mb=4, use_solver=False, rollout_weight=0.0)


def test_completed_q_mixes_the_root_value_for_unvisited_moves():
    visits = np.array([3, 1, 0, 0])
    q = np.array([0.5, -0.5, np.nan, np.nan])  # [-1, 1] for the side to move
    priors = np.array([0.4, 0.2, 0.3, 0.1])
    got = completed_q(visits, q, priors, root_value=0.0)
    # visited: (q + 1) / 2; unvisited: (v + N · Σπq / Σπ) / (1 + N) with v = 0.5, N = 4
    mixed = (0.4 * 0.75 + 0.2 * 0.25) / 0.6
    v_mix = (0.5 + 4 * mixed) / 5
    assert got == pytest.approx([0.75, 0.25, v_mix, v_mix])


def test_improved_policy_is_the_prior_without_visits_and_favours_better_moves():
    priors = np.array([0.5, 0.3, 0.2])
    logits = np.log(priors)
    s = GumbelSettings()
    none = improved_policy(logits, np.zeros(3), np.full(3, np.nan), priors, 0.2, s)
    assert none == pytest.approx(priors)  # every move gets the same completed Q
    searched = improved_policy(logits, np.array([4, 4, 0]), np.array([-0.6, 0.6, np.nan]),
                               priors, 0.0, s)
    assert searched.sum() == pytest.approx(1.0)
    assert searched[1] > priors[1] and searched[0] < priors[0]
    # σ grows with the most visited move's visits: the same values weigh more after more search
    assert sigma(np.array([1.0]), 10, s)[0] == pytest.approx((50 + 10) * 1.0)


class Bandit:
    """Root children whose every visit returns a fixed value: stands in for the search."""

    def __init__(self, values):
        self.values = np.asarray(values, np.float64)
        self.visits = np.zeros(len(values), np.int64)

    def q(self):
        return np.where(self.visits > 0, self.values, np.nan)


@pytest.mark.parametrize("n, m", [(64, 16), (32, 16), (200, 8), (10, 4)])
def test_sequential_halving_schedule(n, m):
    rng = np.random.default_rng(3)
    area = 25
    bandit = Bandit(np.linspace(-0.5, 0.5, area))
    root = GumbelRoot(n, rng, GumbelSettings(m=m))
    root.start(np.full(area, 1.0 / area))
    first = list(root.candidates)
    assert len(first) == m == len(set(first))
    order = np.argsort(-(root.g + root.logits), kind="stable")
    assert first == [int(k) for k in order[:m]]  # the Gumbel top-m
    spent = 0
    while (plan := root.next(bandit.visits, bandit.q(), np.zeros(area), spent, 4)) is not None:
        k, walks = plan
        assert k in root.candidates and 1 <= walks <= 4
        bandit.visits[k] += walks
        spent += walks
    phases = math.ceil(math.log2(m))
    # every phase gives each remaining candidate the same share: n / (phases · candidates)
    want = sum(max(1, n // (phases * (m >> i))) * (m >> i) for i in range(phases))
    assert spent == min(want, n)
    assert set(np.flatnonzero(bandit.visits)) <= set(first)
    assert len(root.candidates) == 1 or spent >= n
    # the candidate left is the best of the first ones by g + logit + σ(q̂)
    best = root.move_index(bandit.visits, bandit.q(), np.zeros(area))
    assert best in first
    assert bandit.visits[best] == bandit.visits.max()


def test_a_proven_win_ends_the_plan_and_is_played():
    rng = np.random.default_rng(0)
    root = GumbelRoot(64, rng, GumbelSettings(m=4))
    root.start(np.full(6, 1 / 6))
    proof = np.zeros(6)
    proof[5] = 1
    assert root.next(np.zeros(6), np.full(6, np.nan), proof, 0, 4) is None
    assert root.move_index(np.zeros(6), np.full(6, np.nan), proof) == 5


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        GumbelRoot(0, np.random.default_rng(0))
    with pytest.raises(ValueError):
        GumbelRoot(8, np.random.default_rng(0), GumbelSettings(m=0))


def test_the_search_visits_only_the_plans_candidates():
    """The kernel's forced root child: on the empty 9×9 board with a uniform net, a 64-playout
    Gumbel search with m = 16 visits exactly its 16 candidates, and no other root move."""
    searcher = Searcher(UniformEvaluator(), 9, CONFIG, seed=5)
    root = GumbelRoot(64, np.random.default_rng(7), GumbelSettings(m=16))
    res = run_search(searcher.evaluator, searcher.search_steps(Board(9), SearchLimits(playouts=64),
                                                               root=root))
    assert res.reason in ("gumbel", "playouts")
    moves, priors, visits, q, proof, net_value = searcher.root_arrays()
    visited = set(np.flatnonzero(visits).tolist())
    twin = GumbelRoot(64, np.random.default_rng(7), GumbelSettings(m=16))
    twin.start(priors)  # the same draw: the plan's first 16 candidates
    assert len(visited) == 16 and visited == set(twin.candidates)
    assert 60 <= visits.sum() <= 68
    assert net_value == pytest.approx(0.0)  # the uniform net's 0.5 win probability


class Marked(UniformEvaluator):
    """A net that sees only point ``x``: the side to move wins with probability 0.9 when it has
    a stone there, 0.1 when the opponent has, 0.5 while it is empty. Its policy is uniform, so
    that only the search can find the root's one good move, ``x``."""

    def __init__(self, x: int):
        self.x = x

    def evaluate(self, planes):
        ev = super().evaluate(planes)
        b = planes.shape[0]
        own = planes[:, 0].reshape(b, -1)[:, self.x] > 0
        opp = planes[:, 1].reshape(b, -1)[:, self.x] > 0
        value = np.where(own, 0.9, np.where(opp, 0.1, 0.5)).astype(np.float32)
        return Evaluation(ev.policy_logits, value, ev.dominion, ev.score)


@pytest.mark.parametrize("seed", range(4))
def test_the_plan_plays_and_teaches_the_move_with_the_best_value(seed):
    x = 12  # the centre of 5x5
    searcher = Searcher(Marked(x), 5, CONFIG, seed=seed)
    root = GumbelRoot(100, np.random.default_rng(seed), GumbelSettings(m=25))
    run_search(searcher.evaluator, searcher.search_steps(Board(5), SearchLimits(playouts=100),
                                                         root=root))
    moves, priors, visits, q, proof, net_value = searcher.root_arrays()
    k = root.move_index(visits, q, proof)
    assert moves[k] == x
    target = improved_policy(root.logits, visits, q, priors, net_value, root.settings)
    assert int(moves[int(np.argmax(target))]) == x
    assert target[k] > 0.5  # a uniform prior (0.04) improved by what the search saw


def test_selfplay_game_with_the_gumbel_root():
    from nogobot.train.config import SelfPlayConfig
    from nogobot.train.selfplay import play_selfplay_game, search_config

    sp = SelfPlayConfig(playouts=24, playout_cap_randomisation=False, gumbel=True, gumbel_m=8,
                        batch_size=4, max_tree_mb=4, use_solver=False)
    searcher = Searcher(UniformEvaluator(), 5, search_config(sp), seed=2)
    game = play_selfplay_game(searcher, 5, sp, np.random.default_rng(2))
    a = game.arrays
    assert np.all(a["policy_weight"] == 1.0)
    policy = a["policy"].astype(np.float64)
    assert np.allclose(policy.sum(axis=1), 1.0, atol=1e-2)
    legal = a["planes"][:, 2].reshape(len(policy), -1) > 0
    assert not np.any((policy > 0) & ~legal)  # targets only where the side to move may play
    # The first position: every move's completed Q is the uniform net's 0.5, so the improved
    # policy is the (uniform) prior over all 25 points, where 24 playouts' visits reach at most
    # the plan's 8 candidates.
    assert np.allclose(policy[0], 1 / 25, atol=1e-3)


def test_the_gumbel_config_loads_and_bad_settings_are_named():
    import re
    from pathlib import Path

    from nogobot.train.config import ConfigError, load_config

    configs = Path(__file__).resolve().parents[1] / "configs"
    cfg = load_config(configs / "campaign" / "campaign-gumbel.yaml")
    assert cfg.selfplay.gumbel and cfg.selfplay.gumbel_m == 16
    assert (cfg.selfplay.playouts, cfg.selfplay.fast_playouts) == (64, 16)
    assert not load_config(configs / "campaign" / "campaign.yaml").selfplay.gumbel
    with pytest.raises(ConfigError, match=re.escape("selfplay.gumbel_m: expected an integer "
                                                    "in 1..361")):
        load_config(configs / "campaign" / "campaign-gumbel.yaml", ["selfplay.gumbel_m=0"])
