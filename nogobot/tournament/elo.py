"""Elo ratings from game results: Bradley–Terry maximum likelihood with 95% intervals.

Model: P(i beats j) = 1 / (1 + 10^(-(r_i - r_j)/400)). With θ = r·ln10/400 the log-likelihood
of win counts w_ij is  L(θ) = Σ_ij w_ij log σ(θ_i − θ_j),  concave, maximised by Newton's method
with the anchor's θ held at its given value (only differences are identified).

* **Intervals:** the inverse of the observed Fisher information (−Hessian of L over the free
  ratings) is the asymptotic covariance; 95% interval = ±1.96 σ, in Elo, relative to the anchor
  (whose own interval is 0 by construction).
* **When the MLE does not exist:** if the players cannot be ordered consistently with finite
  ratings (someone won, or lost, every game against some group — the "beat" graph is not
  strongly connected), the likelihood keeps growing as ratings diverge. Then each pairing that
  was played gets ``prior`` virtual draws (half a win each way; BayesElo does the same), which
  keeps every rating finite; the result says so.
* **Likelihood of superiority** between two players from their ratings: Φ(Δr / σ(Δr)), with
  σ(Δr) from the covariance; for a head-to-head record without draws the classical
  0.5·(1 + erf((w − l)/√(2(w + l)))).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


@dataclass
class Ratings:
    names: list[str]
    elo: dict[str, float]
    ci95: dict[str, float]  # half-width of the 95% interval
    cov: np.ndarray  # Elo² covariance, anchor row/column zero
    prior: float  # virtual draws added per pairing (0: pure MLE)
    anchor: str
    connected: dict[str, bool]  # False: no games linking this player to the anchor

    def los(self, a: str, b: str) -> float:
        """Probability that a is stronger than b, from the ratings and their covariance."""
        i, j = self.names.index(a), self.names.index(b)
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        diff = self.elo[a] - self.elo[b]
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def los_head_to_head(wins: float, losses: float) -> float:
    """Likelihood of superiority from a head-to-head record (no draws)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def expected_score(elo_diff: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo_diff / 400.0))


def _strongly_connected(wins: np.ndarray, members: list[int]) -> bool:
    """Every member reaches every other along "beat" edges (i -> j when i beat j)."""
    if len(members) <= 1:
        return True
    sub = wins[np.ix_(members, members)] > 0

    def reach(adj: np.ndarray) -> int:
        seen = {0}
        stack = [0]
        while stack:
            k = stack.pop()
            for m in np.flatnonzero(adj[k]):
                if int(m) not in seen:
                    seen.add(int(m))
                    stack.append(int(m))
        return len(seen)

    n = len(members)
    return reach(sub) == n and reach(sub.T) == n


def _component(games: np.ndarray, start: int) -> list[int]:
    seen = {start}
    stack = [start]
    while stack:
        k = stack.pop()
        for m in np.flatnonzero(games[k] > 0):
            if int(m) not in seen:
                seen.add(int(m))
                stack.append(int(m))
    return sorted(seen)


def bradley_terry(names: list[str], wins: np.ndarray, anchor: str, anchor_elo: float = 0.0,
                  prior: float | None = None, iterations: int = 100) -> Ratings:
    """Ratings from ``wins[i, j]`` = games i won against j.

    ``prior``: virtual draws per played pairing; None = only if the pure MLE does not exist."""
    wins = np.asarray(wins, dtype=float)
    n = len(names)
    a = names.index(anchor)
    games = wins + wins.T
    comp = _component(games, a)
    connected = {names[i]: (i in comp) for i in range(n)}
    if prior is None:
        prior = 0.0 if _strongly_connected(wins, comp) else 1.0
    w = wins[np.ix_(comp, comp)].copy()
    played = (w + w.T) > 0
    w += 0.5 * prior * played
    m = len(comp)
    nij = w + w.T
    theta = np.zeros(m)
    ia = comp.index(a)
    free = [k for k in range(m) if k != ia]
    cov_free = np.zeros((len(free), len(free)))
    for _ in range(iterations):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (w - nij * p).sum(axis=1)
        q = nij * p * (1 - p)
        hess = q - np.diag(q.sum(axis=1))  # Hessian of L (negative semi-definite)
        if not free:
            break
        hf = hess[np.ix_(free, free)]
        try:
            step = np.linalg.solve(hf, grad[free])
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hf, grad[free], rcond=None)[0]
        # Damped Newton: never move a rating more than ~170 Elo per step (robust far from MLE).
        big = np.max(np.abs(step))
        if big > 1.0:
            step /= big
        theta[free] -= step
        if big < 1e-10:
            break
    if free:
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        q = nij * p * (1 - p)
        info = np.diag(q.sum(axis=1)) - q
        try:
            cov_free = np.linalg.inv(info[np.ix_(free, free)])
        except np.linalg.LinAlgError:
            cov_free = np.linalg.pinv(info[np.ix_(free, free)])
    cov = np.zeros((n, n))
    for x, fx in enumerate(free):
        for y, fy in enumerate(free):
            cov[comp[fx], comp[fy]] = cov_free[x, y] * ELO_PER_NAT ** 2
    elo, ci = {}, {}
    for i, name in enumerate(names):
        if i in comp:
            k = comp.index(i)
            elo[name] = anchor_elo + (theta[k] - theta[ia]) * ELO_PER_NAT
            ci[name] = Z95 * math.sqrt(max(cov[i, i], 0.0))
        else:
            elo[name] = float("nan")
            ci[name] = float("nan")
    return Ratings(names=list(names), elo=elo, ci95=ci, cov=cov, prior=prior, anchor=anchor,
                   connected=connected)
