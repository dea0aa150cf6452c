"""The SPRT and the match statistics (nogobot/tournament/sprt.py, results.match_stats).

Checks: the bounds; the LLR of given counts against values computed here independently, in
plain Python from the published formulas (Van den Bergh's maximum-likelihood distributions, and
Fishtest's closed-form approximations); simulated matches (independent Bernoulli games, many
seeds, vectorised) accept H1 at elo0 and H0 at elo1 no more often than alpha and beta (within a
few points), and a 200-Elo gap at elo0=0 elo1=50 ends with H1 in well under 100 games; the Elo
interval; the pentanomial counts and the first crossing read from results records; the spec's
and the command line's sprt settings and their one-line errors.
"""

import math

import numpy as np
import pytest

from nogobot.tournament.results import match_stats
from nogobot.tournament.spec import SpecError, parse_spec
from nogobot.tournament.sprt import (SprtConfig, SprtError, elo_estimate, llr, llr_approx,
                                     logistic_score, parse_sprt)

NELO = 800 / math.log(10)


# -- independent scalar versions of the published formulas ---------------------------------


def pdf(counts):
    c = [x if x else 1e-3 for x in counts]
    n = sum(c)
    return n, [i / (len(c) - 1) for i in range(len(c))], [x / n for x in c]


def mean_var(a, p):
    mu = sum(x * q for x, q in zip(a, p))
    return mu, sum(q * (x - mu) ** 2 for x, q in zip(a, p))


def root(f, lo, hi):
    """f falls from + to - on (lo, hi): plain bisection until the bracket stops shrinking."""
    while True:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            return mid
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)


def mle_mean(a, ph, s):
    """Proposition 1.1: p_i = ph_i / (1 + x (a_i - s)), sum ph_i (a_i - s)/(1 + x (a_i - s)) = 0."""
    d = [x - s for x in a]
    x = root(lambda t: sum(q * di / (1 + t * di) for q, di in zip(ph, d)),
             -1 / max(d) + 1e-15, -1 / min(d) - 1e-15)
    return [q / (1 + x * di) for q, di in zip(ph, d)]


def mle_t(a, ph, t, rounds=10):
    """Section 4.1: iterate phi_i = a_i - 1/2 - t sigma (1 + ((a_i - mu)/sigma)^2)/2."""
    p = [1 / len(a)] * len(a)
    for _ in range(rounds):
        mu, var = mean_var(a, p)
        sd = math.sqrt(var)
        phi = [x - 0.5 - t * sd * (1 + ((x - mu) / sd) ** 2) / 2 for x in a]
        x = root(lambda th: sum(q * f / (1 + th * f) for q, f in zip(ph, phi)),
                 -1 / max(phi) + 1e-15, -1 / min(phi) - 1e-15)
        p = [q / (1 + x * f) for q, f in zip(ph, phi)]
    return p


def glr(counts, p0_of, p1_of):
    n, a, ph = pdf(counts)
    p0, p1 = p0_of(a, ph), p1_of(a, ph)
    return n * sum(q * (math.log(y) - math.log(x)) for q, x, y in zip(ph, p0, p1))


def logistic_ref(counts, elo0, elo1):
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    return glr(counts, lambda a, ph: mle_mean(a, ph, s0), lambda a, ph: mle_mean(a, ph, s1))


def normalized_ref(counts, elo0, elo1):
    k = math.sqrt(2) if len(counts) == 5 else 1.0
    return glr(counts, lambda a, ph: mle_t(a, ph, k * elo0 / NELO),
               lambda a, ph: mle_t(a, ph, k * elo1 / NELO))


COUNTS = [[5, 0, 20, 0, 15], [10, 0, 30, 0, 10], [0, 0, 13, 0, 37], [2, 0, 10, 0, 8],
          [0, 0, 0, 0, 10], [0, 0, 1, 0, 0], [3, 0, 7], [60, 0, 40]]


def test_bounds():
    c = SprtConfig(0, 50)
    assert c.lower == pytest.approx(-math.log(19)) and c.upper == pytest.approx(math.log(19))
    c = SprtConfig(0, 10, alpha=0.1, beta=0.02)
    assert c.lower == pytest.approx(math.log(0.02 / 0.9))
    assert c.upper == pytest.approx(math.log(0.98 / 0.1))
    assert c.verdict(c.upper) == "H1" and c.verdict(c.lower) == "H0" and c.verdict(0) is None


@pytest.mark.parametrize("counts", COUNTS, ids=[str(c) for c in COUNTS])
def test_llr_matches_the_published_formulas(counts):
    assert llr(counts, SprtConfig(0, 50, model="logistic")) == pytest.approx(
        logistic_ref(counts, 0, 50), abs=1e-6)
    assert llr(counts, SprtConfig(-10, 25)) == pytest.approx(
        normalized_ref(counts, -10, 25), abs=1e-6)


def test_closed_forms_by_hand_and_their_agreement_on_mixed_results():
    counts = [5, 0, 20, 0, 15]  # 40 pairs: 5 lost both, 20 split, 15 won both
    n, a, ph = pdf(counts)
    mu, var = mean_var(a, ph)
    s0, s1 = 0.5, 1 / (1 + 10 ** (-50 / 400))
    alt2 = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)  # Fishtest LLR_alt2
    t = (mu - 0.5) / math.sqrt(2 * var)  # per game (a pair's mean has half the variance)
    alt_n = (2 * n / 2) * math.log((1 + t ** 2) / (1 + (t - 50 / NELO) ** 2))
    assert llr_approx(counts, SprtConfig(0, 50, model="logistic")) == pytest.approx(alt2)
    assert llr_approx(counts, SprtConfig(0, 50)) == pytest.approx(alt_n)
    # The exact LLR and the approximations agree within a few percent on mixed results ...
    for model, approx in (("logistic", alt2), ("normalized", alt_n)):
        assert llr(counts, SprtConfig(0, 50, model=model)) == pytest.approx(approx, rel=0.1)
    # ... but not when one engine wins every pair: the closed normalized form hardly moves
    # (0.1 after 10 pairs) where the exact one grows steadily.
    sweep = [0, 0, 0, 0, 10]
    assert llr_approx(sweep, SprtConfig(0, 50)) < 0.2 < 1.5 < llr(sweep, SprtConfig(0, 50))


def test_vectorised_llr_equals_the_scalar_one():
    c = np.array([[5, 0, 20, 0, 15], [10, 0, 30, 0, 10]], dtype=float)
    for model in ("logistic", "normalized"):
        cfg = SprtConfig(0, 50, model=model)
        assert np.allclose(llr(c, cfg), [llr(list(x), cfg) for x in c])


# -- simulations -------------------------------------------------------------------------------


def simulate(elo, cfg, runs, max_pairs, seed, block=40):
    """Sequential tests of ``runs`` matches of independent games at ``elo``: (H1 share, games
    each test took). The LLR is computed in blocks of pairs, only for tests still running."""
    rng = np.random.default_rng(seed)
    p = float(logistic_score(elo))
    counts = np.zeros((runs, 5))
    verdict = np.zeros(runs, dtype=int)  # +1 H1, -1 H0, 0 running
    games = np.full(runs, 2 * max_pairs)
    for start in range(0, max_pairs, block):
        live = np.flatnonzero(verdict == 0)
        if not len(live):
            break
        won = (rng.random((len(live), block, 2)) < p).sum(axis=2)  # 0, 1 or 2 per pair
        path = counts[live, None, :] + np.stack(
            [np.cumsum(won == 0, 1), 0 * won, np.cumsum(won == 1, 1), 0 * won,
             np.cumsum(won == 2, 1)], axis=-1)
        ll = llr(path, cfg)
        up, down = ll >= cfg.upper, ll <= cfg.lower
        first = np.where((up | down).any(1), (up | down).argmax(1), block)
        ended = first < block
        verdict[live[ended]] = np.where(up[ended, first[ended]], 1, -1)
        games[live[ended]] = 2 * (start + first[ended] + 1)
        counts[live] = path[:, -1]
    return float(np.mean(verdict == 1)), games, float(np.mean(verdict == 0))


@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_simulated_error_rates_are_the_nominal_ones(model):
    """At elo0 (50 Elo away from elo1) H1 is accepted about alpha of the time, at elo1 H0 about
    beta (the discrete steps overshoot the bounds, so slightly less is expected)."""
    cfg = SprtConfig(0, 50, alpha=0.05, beta=0.1, model=model)
    runs = 500
    h1, _, open_ = simulate(0, cfg, runs, 800, seed=1)
    assert open_ < 0.01
    assert 0.02 <= h1 <= 0.08, h1  # alpha = 0.05; the standard error is 0.01
    h1, _, open_ = simulate(50, cfg, runs, 800, seed=2)
    assert open_ < 0.01
    assert 0.05 <= 1 - h1 <= 0.14, 1 - h1  # beta = 0.1; the standard error is 0.013


def test_a_200_elo_gap_is_found_in_well_under_100_games():
    cfg = SprtConfig(0, 50)
    h1, games, _ = simulate(200, cfg, 400, 100, seed=3, block=10)
    assert h1 > 0.99
    assert np.median(games) <= 60 and np.percentile(games, 90) < 100, np.median(games)


# -- Elo, records, settings ------------------------------------------------------------------


def test_elo_interval():
    e = elo_estimate([0, 0, 13, 0, 37])  # 87 of 100 games in 50 pairs
    assert e.score == pytest.approx(0.87) and e.paired and e.n == 50
    assert e.elo == pytest.approx(-400 * math.log10(1 / 0.87 - 1))
    var = (13 * (0.5 - 0.87) ** 2 + 37 * (1 - 0.87) ** 2) / 50
    assert e.high == pytest.approx(-400 * math.log10(1 / (0.87 + 1.959964 * math.sqrt(var / 50))
                                                     - 1), rel=1e-6)
    assert e.low < e.elo < e.high
    games = elo_estimate([13, 0, 87])  # the same games unpaired: a wider interval
    assert games.high - games.low > e.high - e.low
    assert elo_estimate([0, 0, 0, 0, 3]).elo == math.inf
    assert elo_estimate([0, 0, 0]) is None


def record(k, black, white, winner):
    a, b = sorted((black, white))
    return {"key": [a, b, k], "id": f"{k + 1:03d}-{a}-vs-{b}", "black": black, "white": white,
            "winner": winner}


def test_match_stats_pairs_and_first_crossing():
    recs = []
    for j in range(30):  # "new" wins every game: pairs 2j (new black) and 2j+1 (new white)
        recs += [record(2 * j, "new", "old", "B"), record(2 * j + 1, "old", "new", "W")]
    recs.append(record(60, "new", "old", "W"))  # half a pair: counted as a game, not a pair
    ms = match_stats(recs, "new", "old", SprtConfig(0, 200))
    assert (ms.wins, ms.losses, ms.pairs) == (60, 1, 30)
    assert ms.penta == [0, 0, 0, 0, 30] and ms.as_black == (30, 31) and ms.as_white == (30, 30)
    assert ms.verdict == "H1"
    cfg = SprtConfig(0, 200)
    first = next(2 * j for j in range(1, 31) if llr([0, 0, 0, 0, j], cfg) >= cfg.upper)
    assert ms.decided_at == first
    # Replaying fewer records gives the same crossing (a resumed match reaches it again).
    assert match_stats(recs[:first], "new", "old", cfg).decided_at == first
    split = [record(0, "new", "old", "B"), record(1, "old", "new", "B")]
    assert match_stats(split, "new", "old").penta == [0, 0, 1, 0, 0]


def test_sprt_settings_and_errors(tmp_path):
    assert parse_sprt(["elo0=0 elo1=50"]) == SprtConfig(0, 50)
    assert parse_sprt(["elo0=-5", "elo1=5", "alpha=0.1", "beta=0.2", "model=logistic"]) == \
        SprtConfig(-5, 5, 0.1, 0.2, "logistic")
    for bad, words in ((["elo0=0"], "elo1 is missing"), (["elo0=5 elo1=0"], "less than"),
                       (["elo0=0 elo1=5 alpha=2"], "between 0 and 1"),
                       (["elo0=0 elo1=5 model=bayes"], "model must be"),
                       (["elo0=0 elo1=5 gamma=1"], "unknown field"), (["elo0"], "KEY=VALUE"),
                       (["elo0=x elo1=5"], "must be a number")):
        with pytest.raises(SprtError, match=words):
            parse_sprt(bad)
    two = {"engines": {"a": "x", "b": "y"}, "sprt": {"elo0": 0, "elo1": 10}}
    assert parse_spec(two).sprt == SprtConfig(0, 10)
    with pytest.raises(SpecError, match=r"sprt: .*two engines"):
        parse_spec({"engines": {"a": "x", "b": "y", "c": "z"}, "sprt": {"elo0": 0, "elo1": 10}})
    with pytest.raises(SpecError, match=r"sprt: .*less than"):
        parse_spec({"engines": {"a": "x", "b": "y"}, "sprt": {"elo0": 10, "elo1": 0}})
    spec = parse_spec({"engines": {"a": "x", "b": "y"}, "format": "gauntlet", "gauntlet": "b"})
    assert spec.sprt_engines() == ("b", "a")
