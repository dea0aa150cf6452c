"""A value head against a baseline's on the same positions: ``compare`` gives each phase's
differences in ROC area, log loss and Brier score with 95% intervals from resampling whole games,
so a candidate's value head can be held against the shipped one's where games are decided, with
no match played (``nogobot train calibration --baseline``). ``WeightedAuc`` is the ROC area under
a resample's multiplicities. It reads ``calibration.Predictions`` (with ``baseline``) and the
phases that module names, and imports nothing of it."""

from __future__ import annotations

import math

import numpy as np


class WeightedAuc:
    """The ROC area of fixed predictions under changing position weights (a resample's
    multiplicities), ties counting half: the sort is done once, each weighting costs O(n)."""

    def __init__(self, p: np.ndarray, y: np.ndarray):
        self.order = np.argsort(np.asarray(p, np.float64), kind="stable")
        ranked = np.asarray(p, np.float64)[self.order]
        self.won = np.asarray(y)[self.order] == 1
        self.starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])  # tie groups

    def __call__(self, weights: np.ndarray) -> float:
        w = np.asarray(weights, np.float64)[self.order]
        won_w = np.where(self.won, w, 0.0)
        won = np.add.reduceat(won_w, self.starts)
        lost = np.add.reduceat(w - won_w, self.starts)
        total_won, total_lost = won.sum(), lost.sum()
        if total_won <= 0 or total_lost <= 0:
            return math.nan
        below = np.cumsum(lost) - lost
        return float((won * (below + 0.5 * lost)).sum() / (total_won * total_lost))


def _per_position(p: np.ndarray, y: np.ndarray, eps: float) -> dict:
    """Each position's log loss (predictions clipped to [eps, 1 - eps]) and squared error."""
    p = np.asarray(p, np.float64)
    y = np.asarray(y, np.float64)
    q = np.clip(p, eps, 1 - eps)
    return {"log_loss": -(y * np.log(q) + (1 - y) * np.log(1 - q)), "brier": (p - y) ** 2}


def _interval(draws: np.ndarray) -> list[float | None]:
    """The central 95% of a bootstrap's draws (NaN draws, a resample without the phase, left
    out)."""
    draws = draws[~np.isnan(draws)]
    if not len(draws):
        return [None, None]
    return [float(x) for x in np.percentile(draws, [2.5, 97.5])]


def compare(pred, spans, resamples: int = 1000, seed: int = 0, eps: float = 1e-6) -> list:
    """Per phase (``spans``: (name, most, fewest empty points) each), the net against
    ``pred.baseline`` on the same positions of ``pred`` (a ``calibration.Predictions``): each
    one's ROC area, log loss and Brier score, and the differences (net minus baseline) with 95%
    intervals from a bootstrap over whole games (a game's positions are not independent; one
    resample scores both nets, so the interval is the difference's own)."""
    if pred.baseline is None:
        raise ValueError("compare needs the baseline's predictions (collect(..., baseline=))")
    rng = np.random.default_rng(seed)
    draws = np.stack([np.bincount(rng.integers(0, pred.games, pred.games),
                                  minlength=pred.games) for _ in range(resamples)])
    draws = draws.astype(np.float64)  # [resamples, games]: each game's multiplicity
    out = []
    for name, top, low in spans:
        m = (pred.empty <= top) & (pred.empty >= low)
        if not m.any():
            continue
        p, b = pred.predicted[m], pred.baseline[m]
        y, g = pred.won[m], pred.game[m]
        size = draws @ np.bincount(g, minlength=pred.games)
        entry = {"name": name, "empty_max": top, "empty_min": low, "count": int(m.sum()),
                 "games": int(len(np.unique(g)))}
        ours, base = _per_position(p, y, eps), _per_position(b, y, eps)
        for key in ("log_loss", "brier"):
            diff = np.bincount(g, weights=ours[key] - base[key], minlength=pred.games)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = np.where(size > 0, (draws @ diff) / size, np.nan)
            entry[key] = float(ours[key].mean())
            entry[f"baseline_{key}"] = float(base[key].mean())
            entry[f"diff_{key}"] = entry[key] - entry[f"baseline_{key}"]
            entry[f"diff_{key}_95"] = _interval(boot)
        ranked, ranked_base = WeightedAuc(p, y), WeightedAuc(b, y)
        once = np.ones(len(p))
        entry["auc"], entry["baseline_auc"] = ranked(once), ranked_base(once)
        if not math.isnan(entry["auc"]):
            boot = np.array([ranked(d[g]) - ranked_base(d[g]) for d in draws])
            entry["diff_auc"] = entry["auc"] - entry["baseline_auc"]
            entry["diff_auc_95"] = _interval(boot)
        else:  # one outcome only: no ROC area (JSON has no NaN)
            entry["auc"] = entry["baseline_auc"] = None
        out.append(entry)
    return out
