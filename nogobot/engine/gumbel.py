"""Gumbel AlphaZero's root (Danihelka et al., "Policy improvement by planning with Gumbel",
ICLR 2022): which root moves a small search spends its playouts on, the move it plays, and the
improved policy it teaches.

This module owns the root plan; ``search.Searcher.search_steps`` carries it out by walking each
batch through the root child the plan names (``mcts.select_batch``'s forced root child), and
``train.selfplay`` uses the move and the policy as its targets. The plan:

- **Sampling without replacement:** every legal root move a gets a Gumbel variable g(a); the
  m moves with the largest g(a) + logit(a) are the candidates (the Gumbel-top-k trick samples
  m moves without replacement from the policy).
- **Sequential halving:** the playout budget n is split over ⌈log2 m⌉ phases. In each phase every
  remaining candidate gets the same number of new visits, ⌊n / (phases · candidates)⌋ (at least
  one); then the better half by g(a) + logit(a) + σ(q̂(a)) stays. The search ends when one
  candidate is left or the budget is spent.
- **The move** is the remaining candidate with the largest g(a) + logit(a) + σ(q̂(a)); a move
  proven to win is played at once.
- **The improved policy** is softmax(logit + σ(completed Q)): a visited move's Q is its mean
  value; a move never visited gets the value v_mix that mixes the network's root value with the
  visited moves' values weighted by their priors. σ(q) = (c_visit + max_b N(b)) · c_scale · q,
  with q in [0, 1].

With 16–64 playouts a move, PUCT's visit counts are a poor policy target (most moves get none
or one visit); this target improves on the prior policy even when few moves were searched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

C_VISIT = 50.0
C_SCALE = 1.0


@dataclass
class GumbelSettings:
    """The plan's parameters (the paper's defaults for board games: m = 16, c_visit = 50,
    c_scale = 1)."""
    m: int = 16
    c_visit: float = C_VISIT
    c_scale: float = C_SCALE


def sigma(q01: np.ndarray, max_visits: int, s: GumbelSettings) -> np.ndarray:
    """The monotone transform of values in [0, 1] that makes them comparable to logits."""
    return (s.c_visit + max_visits) * s.c_scale * np.asarray(q01, np.float64)


def completed_q(visits: np.ndarray, q: np.ndarray, priors: np.ndarray,
                root_value: float) -> np.ndarray:
    """Every root move's value for the side to move, in [0, 1]: its mean value where visited,
    else v_mix (the network's root value ``root_value`` in [-1, 1], mixed with the visited moves'
    values weighted by their priors, as much as those moves were visited)."""
    visits = np.asarray(visits, np.float64)
    q01 = (np.nan_to_num(np.asarray(q, np.float64), nan=0.0) + 1.0) / 2.0
    priors = np.asarray(priors, np.float64)
    seen = visits > 0
    total = visits.sum()
    v01 = (float(root_value) + 1.0) / 2.0
    if seen.any() and priors[seen].sum() > 0:
        mixed = float((priors[seen] * q01[seen]).sum() / priors[seen].sum())
        v_mix = (v01 + total * mixed) / (1.0 + total)
    else:
        v_mix = v01
    return np.where(seen, q01, v_mix)


def improved_policy(logits: np.ndarray, visits: np.ndarray, q: np.ndarray, priors: np.ndarray,
                    root_value: float, s: GumbelSettings) -> np.ndarray:
    """softmax(logit + σ(completed Q)) over the root moves (the policy target)."""
    visits = np.asarray(visits, np.float64)
    z = np.asarray(logits, np.float64) + sigma(completed_q(visits, q, priors, root_value),
                                               int(visits.max(initial=0)), s)
    z -= z.max()
    e = np.exp(z)
    return e / e.sum()


class GumbelRoot:
    """The root plan of one search: ``next`` says which root child (by index in the root's
    move list) the next walks go through and how many; ``move_index`` is the child to play once
    ``next`` says the plan is done. Indices are those of ``Searcher.children()``."""

    def __init__(self, playouts: int, rng: np.random.Generator,
                 settings: GumbelSettings | None = None):
        if playouts < 1:
            raise ValueError("a Gumbel search needs at least one playout")
        self.settings = settings or GumbelSettings()
        if self.settings.m < 1:
            raise ValueError("gumbel m must be at least 1")
        self.playouts = playouts
        self.rng = rng
        self.g: np.ndarray | None = None  # the Gumbel variables, once the root is expanded
        self.logits: np.ndarray | None = None
        self.candidates: list[int] = []
        self.phases = 0
        self.targets: dict[int, int] = {}  # candidate -> visits it should have by this phase's end
        self.done = False

    def start(self, priors: np.ndarray) -> None:
        """Draw the Gumbel variables and the candidates once the root's priors are known (later
        calls keep the first draw)."""
        if self.g is not None:
            return
        n = len(priors)
        self.logits = np.log(np.maximum(np.asarray(priors, np.float64), 1e-30))
        self.g = self.rng.gumbel(size=n)
        m = min(self.settings.m, n)
        order = np.argsort(-(self.g + self.logits), kind="stable")
        self.candidates = [int(i) for i in order[:m]]
        self.phases = max(1, math.ceil(math.log2(m)))

    def _new_phase(self, visits: np.ndarray) -> None:
        per = max(1, self.playouts // (self.phases * len(self.candidates)))
        self.targets = {k: int(visits[k]) + per for k in self.candidates}

    def scores(self, visits: np.ndarray, q: np.ndarray) -> np.ndarray:
        """g + logit + σ(q̂) for every root move (q̂ in [0, 1]; a move never visited counts 0)."""
        visits = np.asarray(visits, np.float64)
        q01 = (np.nan_to_num(np.asarray(q, np.float64), nan=-1.0) + 1.0) / 2.0
        return self.g + self.logits + sigma(q01, int(visits.max(initial=0)), self.settings)

    def next(self, visits: np.ndarray, q: np.ndarray, proof: np.ndarray, spent: int,
             batch: int) -> tuple[int, int] | None:
        """(root child index, walks) for the next batch, or None when the plan is done. ``visits``,
        ``q``, ``proof`` are the root children's (``Searcher.children()`` order), ``spent`` the
        playouts this search has made, ``batch`` the most walks one batch may take."""
        if self.done or self.g is None:  # before ``start`` the caller expands the root
            return None
        visits = np.asarray(visits)
        if np.any(np.asarray(proof) == 1) or spent >= self.playouts or len(self.candidates) <= 1:
            self.done = True  # a proven win, the budget spent, or nothing left to compare
            return None
        if not self.targets:
            self._new_phase(visits)
        while True:
            for k in self.candidates:
                short = self.targets[k] - int(visits[k])
                if short > 0 and proof[k] == 0:
                    return k, min(short, batch, self.playouts - spent)
            # Phase over: the better half stays.
            sc = self.scores(visits, q)
            keep = math.ceil(len(self.candidates) / 2)
            self.candidates = sorted(self.candidates, key=lambda k: -sc[k])[:keep]
            if len(self.candidates) <= 1:
                self.done = True
                return None
            self._new_phase(visits)

    def move_index(self, visits: np.ndarray, q: np.ndarray, proof: np.ndarray) -> int:
        """The root child to play: a proven win at once, else the best remaining candidate by
        g + logit + σ(q̂) (a proven loss only when nothing else is left)."""
        proof = np.asarray(proof)
        wins = np.flatnonzero(proof == 1)
        if wins.size:
            return int(wins[0])
        sc = self.scores(visits, q)
        pool = [k for k in self.candidates if proof[k] != -1] or self.candidates
        return int(max(pool, key=lambda k: sc[k]))
