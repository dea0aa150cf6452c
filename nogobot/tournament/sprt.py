"""Two-engine match statistics as engine testers compute them: pentanomial counts of game pairs,
Elo with its 95% interval, and the SPRT's log-likelihood ratio (generalised SPRT).

Conventions (those of Fishtest's ``LLRcalc.py`` and fastchess's ``sprt.cpp``, after Michel Van
den Bergh's notes "GSPRT approximation" and "Comments on normalized Elo"):

* **Results** are counts from the tested engine's side. Per game (trinomial): ``[L, D, W]``;
  NoGo has no draws, so D is always 0. Per pair (pentanomial, the same opening played twice with
  colours swapped): ``[LL, LD, WL+DD, WD, WW]``, a pair scoring 0, ½, 1, 1½ or 2; in NoGo only
  0, 1 and 2 occur, and the machinery is unchanged with LD = WD = 0.
* **Scores** are scaled to [0, 1]: outcome i of k has value i / (k − 1), so a pair's value is
  its mean game score. Empty cells are replaced by 1e-3 (Fishtest's regularisation), which keeps
  the variance positive after a few games; N is the regularised count.
* **Logistic model** (``model: logistic``; elo0/elo1 in ordinary Elo): the statistic is the
  mean score, s = 1/(1 + 10^(−Elo/400)) under each hypothesis.
* **Normalized model** (``model: normalized``, fastchess's default; elo0/elo1 in normalized
  Elo, which does not depend on the draw rate or on how well pairing cancels the colour bias):
  the statistic is the t-value t = (μ − ½)/σ, nElo = t·800/ln 10 with σ a game's standard
  deviation; a pair's mean has half a game's variance, so a pair's t is √2 times as large.
  For independent games without draws nElo ≈ Elo near 0.
* **LLR** (``llr``): the generalised log-likelihood ratio N·Σ p̂_i·ln(p1_i/p0_i), p̂ the
  observed distribution and p_k the distribution closest to it (maximum likelihood) whose
  statistic has H_k's value: for a mean, proposition 1.1 of the normalized-Elo notes; for a
  t-value, its section 4.1 (a fixed-point iteration). This is what fastchess and Fishtest
  compute. The closed forms (``llr_approx``: N·(s1 − s0)(2ŝ − s0 − s1)/(2σ̂²), and
  (games/2)·ln[(1 + (t̂ − t0)²)/(1 + (t̂ − t1)²)]) agree with it for mixed results but fail on
  lopsided ones: after one or two pairs, or when one engine wins every pair, σ̂² is only the
  regularisation and the first would stop a test at once while the second would hardly move.
* **Bounds:** the test stops with H1 (Elo ≥ elo1) when LLR ≥ ln((1 − β)/α) and with H0
  (Elo ≤ elo0) when LLR ≤ ln(β/(1 − α)); α is the chance of accepting H1 when H0 holds (a false
  "it is stronger"), β the chance of accepting H0 when H1 holds (a missed improvement).
* **Elo and interval:** Elo = −400·log10(1/ŝ − 1) from the unregularised scores, 95% interval
  from ŝ ± 1.96·σ̂/√N mapped through the same function (pairs: σ̂ of pairs, N pairs).

Everything takes numpy arrays of counts on the last axis, so a simulation computes thousands of
matches' LLR at once (tests/test_tournament_sprt.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

NELO_PER_T = 800.0 / math.log(10.0)  # normalized Elo per unit of t-value (347.4...)
Z95 = 1.959963984540054
EPSILON = 1e-3  # Fishtest's regularisation of empty cells
MODELS = ("normalized", "logistic")


class SprtError(ValueError):
    """Bad SPRT settings; the message says which and what is allowed."""


@dataclass(frozen=True)
class SprtConfig:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self):
        if not self.elo0 < self.elo1:
            raise SprtError(f"sprt: elo0 ({self.elo0:g}) must be less than elo1 "
                            f"({self.elo1:g})")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise SprtError(f"sprt: {name} must be between 0 and 1, not {v:g}")
        if self.alpha + self.beta >= 1:
            raise SprtError("sprt: alpha + beta must be less than 1")
        if self.model not in MODELS:
            raise SprtError(f"sprt: model must be one of {', '.join(MODELS)}, not "
                            f"{self.model!r}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def verdict(self, llr: float) -> str | None:
        """"H1" (elo1 accepted), "H0" (elo0 accepted) or None (go on)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def describe(self) -> str:
        unit = "nElo" if self.model == "normalized" else "Elo"
        return (f"SPRT {unit} [{self.elo0:g}, {self.elo1:g}], alpha {self.alpha:g}, beta "
                f"{self.beta:g}; bounds [{self.lower:.2f}, {self.upper:.2f}]")

    def to_dict(self) -> dict:
        return asdict(self)


def parse_sprt(items, where: str = "--sprt") -> SprtConfig:
    """A config from ``elo0=0 elo1=50 alpha=0.05 beta=0.05 model=normalized`` (a list of
    KEY=VALUE strings, or a mapping); SprtError with a one-line message otherwise."""
    if isinstance(items, dict):
        pairs = list(items.items())
    else:
        pairs = []
        for item in items:
            for word in str(item).replace(",", " ").split():
                key, sep, value = word.partition("=")
                if not sep:
                    raise SprtError(f"{where}: {word!r} is not KEY=VALUE (e.g. elo0=0 elo1=50)")
                pairs.append((key, value))
    fields: dict = {}
    for key, value in pairs:
        key = str(key)
        if key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise SprtError(f"{where}: unknown field {key!r} (allowed: elo0, elo1, alpha, beta, "
                            "model)")
        if key == "model":
            fields[key] = str(value)
            continue
        try:
            if isinstance(value, bool):
                raise ValueError
            fields[key] = float(value)
        except (TypeError, ValueError):
            raise SprtError(f"{where}: {key} must be a number, not {value!r}") from None
    for key in ("elo0", "elo1"):
        if key not in fields:
            raise SprtError(f"{where}: {key} is missing (e.g. elo0=0 elo1=50)")
    try:
        return SprtConfig(**fields)
    except SprtError as e:
        raise SprtError(f"{where}: {str(e).removeprefix('sprt: ')}") from None


# -- the maths (vectorised over leading axes) ------------------------------------------------


def _pdf(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, values, probabilities) of regularised counts; values are i/(k-1) on the last axis."""
    c = np.asarray(counts, dtype=float)
    c = np.where(c == 0, EPSILON, c)
    n = c.sum(axis=-1)
    k = c.shape[-1]
    values = np.arange(k) / (k - 1)
    return n, values, c / n[..., None]


def _mean_var(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = (probs * values).sum(axis=-1)
    var = (probs * (values - mu[..., None]) ** 2).sum(axis=-1)
    return mu, var


def _secular(phat: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """θ with Σ p̂_i·φ_i/(1 + θ·φ_i) = 0. Where min φ < 0 < max φ the sum falls with θ on
    (−1/max φ, −1/min φ) (where every 1 + θφ_i > 0), so bisection finds it; elsewhere there is
    no root and the result is nan. Vectorised over the leading axes."""
    lo_phi, hi_phi = phi.min(axis=-1), phi.max(axis=-1)
    ok = (lo_phi < 0) & (hi_phi > 0)
    lo = np.where(ok, -1.0 / np.where(ok, hi_phi, 1.0), -1.0)
    hi = np.where(ok, -1.0 / np.where(ok, lo_phi, -1.0), 1.0)
    for _ in range(45):  # the bracket (width < 1/ε) narrows 2^45-fold: θ to ~1e-10
        mid = (lo + hi) / 2
        f = (phat * phi / (1 + mid[..., None] * phi)).sum(axis=-1)
        lo, hi = np.where(f > 0, mid, lo), np.where(f > 0, hi, mid)
    return np.where(ok, (lo + hi) / 2, np.nan)


def _mle_expected(values: np.ndarray, phat: np.ndarray, s: float) -> np.ndarray:
    """The distribution on ``values`` with mean ``s`` most likely to give the empirical
    ``phat``: p_i = p̂_i / (1 + θ·(a_i − s)) (Van den Bergh, "Comments on normalized Elo",
    proposition 1.1). 0 < s < 1, so the root always exists."""
    d = np.broadcast_to(values - s, phat.shape)
    return phat / (1 + _secular(phat, d)[..., None] * d)


def _phi(values: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
    mu, var = _mean_var(values, p)
    sigma = np.sqrt(np.maximum(var, 1e-300))[..., None]
    return values - 0.5 - t * sigma * (1 + ((values - mu[..., None]) / sigma) ** 2) / 2


def _mle_t_value(values: np.ndarray, phat: np.ndarray, t: float, rounds: int = 10
                 ) -> np.ndarray:
    """The distribution with t-value (μ − ½)/σ = ``t`` most likely to give ``phat``: the
    fixed-point iteration of section 4.1 of the same notes, φ_i = a_i − ½ − t·σ·(1 + ((a_i −
    μ)/σ)²)/2 with μ, σ of the previous iterate, 10 rounds as Fishtest (the change after that
    is far below what a verdict can notice). It starts from the uniform distribution, or, where
    that gives φ of one sign (a large t), from ``phat`` as fastchess does; nan where neither
    works (``llr`` then falls back on the closed form)."""
    uniform = np.full(phat.shape, 1.0 / phat.shape[-1])
    phi = _phi(values, uniform, t)
    bad = ~((phi.min(axis=-1) < 0) & (phi.max(axis=-1) > 0))
    p = np.where(bad[..., None], phat, uniform)
    for _ in range(rounds):
        phi = _phi(values, p, t)
        theta = _secular(phat, phi)
        new = phat / (1 + np.nan_to_num(theta)[..., None] * phi)
        p = np.where(np.isnan(theta)[..., None], np.nan, new)
    return p


def logistic_score(elo):
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(elo, dtype=float) / 400.0))


def _targets(cfg: SprtConfig, k: int) -> tuple[float, float]:
    """H0's and H1's value of the statistic: scores (logistic) or t-values (normalized; a
    pair's t is √2 times a game's, as its mean has half the variance)."""
    if cfg.model == "logistic":
        return float(logistic_score(cfg.elo0)), float(logistic_score(cfg.elo1))
    scale = math.sqrt(2.0) if k == 5 else 1.0
    return scale * cfg.elo0 / NELO_PER_T, scale * cfg.elo1 / NELO_PER_T


def _check(counts) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.shape[-1] not in (3, 5):
        raise ValueError("counts must be [L, D, W] or [LL, LD, WL+DD, WD, WW]")
    return c


def llr(counts, cfg: SprtConfig):
    """The generalised log-likelihood ratio of ``counts`` ([L, D, W] per game or the 5
    pentanomial cells per pair, on the last axis) for H1 against H0: N·Σ p̂·ln(p1/p0), p0 and p1
    the maximum-likelihood distributions under H0 and H1 (what fastchess and Fishtest compute);
    a float, or an array."""
    c = _check(counts)
    n, values, phat = _pdf(c)
    x0, x1 = _targets(cfg, c.shape[-1])
    if cfg.model == "logistic":
        p0, p1 = _mle_expected(values, phat, x0), _mle_expected(values, phat, x1)
    else:
        p0, p1 = _mle_t_value(values, phat, x0), _mle_t_value(values, phat, x1)
    out = n * (phat * (np.log(p1) - np.log(p0))).sum(axis=-1)
    if np.isnan(out).any():
        # No maximum-likelihood fit (a normalized t beyond what the support allows, e.g.
        # elo1 = 400 nElo): fastchess counts no evidence; the closed form is a better guess.
        out = np.where(np.isnan(out), llr_approx(c, cfg), out)
    return float(out) if np.ndim(out) == 0 else out


def llr_approx(counts, cfg: SprtConfig):
    """The closed-form GSPRT approximations, from the sample mean and variance alone (Fishtest's
    ``LLR_alt2`` for the logistic model, ``LLR_normalized_alt`` for the normalized one). They
    agree with ``llr`` once the results are mixed, but not for lopsided ones (see the module
    docstring), so they serve as a cross-check."""
    c = _check(counts)
    n, values, phat = _pdf(c)
    mu, var = _mean_var(values, phat)
    if cfg.model == "logistic":
        x0, x1 = _targets(cfg, c.shape[-1])
        out = n * (x1 - x0) * (2 * mu - x0 - x1) / (2 * var)
    else:
        paired = c.shape[-1] == 5
        t = (mu - 0.5) / np.sqrt(2 * var if paired else var)  # per game
        games = 2 * n if paired else n
        t0, t1 = cfg.elo0 / NELO_PER_T, cfg.elo1 / NELO_PER_T
        out = games / 2 * np.log((1 + (t - t0) ** 2) / (1 + (t - t1) ** 2))
    return float(out) if np.ndim(out) == 0 else out


def _elo_of(score: float) -> float:
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass
class EloEstimate:
    elo: float  # logistic Elo of the tested engine over the other (+-inf for a perfect score)
    low: float  # the 95% interval
    high: float
    nelo: float  # normalized Elo (nan when the variance is 0)
    score: float  # mean game score
    n: int  # pairs or games it is computed from
    paired: bool

    def text(self) -> str:
        def f(x: float) -> str:
            return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:+.0f}"
        return f"{f(self.elo)} [{f(self.low)}, {f(self.high)}]"


def elo_estimate(counts) -> EloEstimate | None:
    """Elo and its 95% interval from unregularised counts ([L, D, W] or pentanomial); None
    without results."""
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    if n == 0:
        return None
    values = np.arange(len(c)) / (len(c) - 1)
    probs = c / n
    mu = float((probs * values).sum())
    var = float((probs * (values - mu) ** 2).sum())
    se = math.sqrt(var / n)
    paired = len(c) == 5
    sigma_game = math.sqrt(2 * var) if paired else math.sqrt(var)
    nelo = (mu - 0.5) / sigma_game * NELO_PER_T if sigma_game > 0 else math.nan
    return EloEstimate(elo=_elo_of(mu), low=_elo_of(mu - Z95 * se), high=_elo_of(mu + Z95 * se),
                       nelo=nelo, score=mu, n=int(n), paired=paired)


def json_number(x: float) -> float | None:
    """JSON has no infinities or NaN: those become null."""
    return None if x is None or not math.isfinite(x) else round(float(x), 4)
