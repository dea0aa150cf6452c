"""3×3 NoGo move patterns: the classical move-ordering knowledge of rave's tree priors.

What this module owns: the pattern code of a move (``move_code``), its canonical form under the
board's eight symmetries, the ring geometry it reads, and the pattern table (``PatternTable``:
sorted canonical codes and their weights, a lookup in numba). Fitting a table from games is
``train/patterns.py``'s job; the shipped table is ``nogobot/agents/rave-patterns.npz``.

A move p for colour c (o the opponent) is described by the eight points around it, read as a
ring clockwise from the north-west (NW, N, NE, E, SE, S, SW, W), and by p's own legality:

- an orthogonal neighbour (ring slots 1, 3, 5, 7) is one of 11 states: off the board; empty and
  legal for both, for c only, for o only, for neither; c's stone whose block has 1, 2 or >= 3
  liberties; o's stone likewise. These carry NoGo's tactics: eyes, the last liberties that
  become one side's safe points, ataris.
- a diagonal neighbour (slots 0, 2, 4, 6) is one of 4: off the board, empty, c's stone, o's.
- p itself is *safe* (o may not play it) or contested.

Rotating the board shifts the ring by two slots and a reflection maps slot i to (2 - i) mod 8,
so both keep diagonals diagonal; the canonical code is the least of the eight transforms' codes,
and a table holds each pattern once. The code is the ring's digits in mixed radix (4 for a
diagonal slot, 11 for an orthogonal one) times two, plus one when p is safe: under 7.5 million.

This is the Crazy Stone / Mogo kind of knowledge (Coulom 2007): a weight per pattern, fitted to
the moves strong players chose, used as a prior, with no network in the agent.
"""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
from numba import njit

from ..core.atomicio import write_atomic
from ..game.board import liberty_count

RING = ((-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1))
RADIX = np.array([4, 11, 4, 11, 4, 11, 4, 11], dtype=np.int64)
PLACE = np.cumprod(np.concatenate(([1], RADIX[:-1]))).astype(np.int64)  # weight of each slot
NUM_CODES = int(np.prod(RADIX)) * 2
# The eight symmetries as slot permutations: transform t sends slot i to SLOT_MAP[t, i].
SLOT_MAP = np.array([[(i + 2 * k) % 8 for i in range(8)] for k in range(4)]
                    + [[(2 - i + 2 * k) % 8 for i in range(8)] for k in range(4)],
                    dtype=np.int64)


@lru_cache(maxsize=None)
def ring_table(size: int) -> np.ndarray:
    """(area, 8) int16: the ring's points around each point, -1 off the board."""
    ring = np.full((size * size, 8), -1, dtype=np.int16)
    for p in range(size * size):
        r, col = divmod(p, size)
        for i, (dr, dc) in enumerate(RING):
            rr, cc = r + dr, col + dc
            if 0 <= rr < size and 0 <= cc < size:
                ring[p, i] = rr * size + cc
    return ring


@njit(cache=True, inline="always")
def _digit(stones, root, libs, legal, q, odd, c):
    if q < 0:
        return 0
    s = stones[q]
    if not odd:
        return 1 if s == 0 else (2 if s == c else 3)
    if s == 0:
        a = legal[c, q]
        b = legal[3 - c, q]
        return 1 if (a and b) else (2 if a else (3 if b else 4))
    n = liberty_count(libs, root[q])
    k = 0 if n == 1 else (1 if n == 2 else 2)
    return (5 if s == c else 8) + k


@njit(cache=True, nogil=True, _nrt=False)
def move_code(stones, root, libs, legal, ring, slot_map, place, p, c):
    """The canonical pattern code of empty point ``p`` (legal for ``c``) for ``c`` to play."""
    d0 = _digit(stones, root, libs, legal, ring[p, 0], False, c)
    d1 = _digit(stones, root, libs, legal, ring[p, 1], True, c)
    d2 = _digit(stones, root, libs, legal, ring[p, 2], False, c)
    d3 = _digit(stones, root, libs, legal, ring[p, 3], True, c)
    d4 = _digit(stones, root, libs, legal, ring[p, 4], False, c)
    d5 = _digit(stones, root, libs, legal, ring[p, 5], True, c)
    d6 = _digit(stones, root, libs, legal, ring[p, 6], False, c)
    d7 = _digit(stones, root, libs, legal, ring[p, 7], True, c)
    best = -1
    for t in range(8):
        m = slot_map[t]
        code = (d0 * place[m[0]] + d1 * place[m[1]] + d2 * place[m[2]] + d3 * place[m[3]]
                + d4 * place[m[4]] + d5 * place[m[5]] + d6 * place[m[6]] + d7 * place[m[7]])
        if best < 0 or code < best:
            best = code
    safe = 0 if legal[3 - c, p] else 1
    return best * 2 + safe


@njit(cache=True, nogil=True, _nrt=False)
def position_codes(stones, root, libs, legal, ring, slot_map, place, c, out):
    """``out[p]``: the code of each move legal for ``c``, -1 elsewhere."""
    for p in range(stones.shape[0]):
        if legal[c, p]:
            out[p] = move_code(stones, root, libs, legal, ring, slot_map, place, p, c)
        else:
            out[p] = -1


@njit(cache=True, nogil=True, _nrt=False)
def lookup(codes, code):
    """The index of ``code`` in the sorted table ``codes``, -1 when absent."""
    lo = 0
    hi = codes.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if codes[mid] < code:
            lo = mid + 1
        else:
            hi = mid
    if lo < codes.shape[0] and codes[lo] == code:
        return lo
    return -1


class PatternTable:
    """A fitted pattern table: sorted canonical ``codes`` and their ``weights`` (logits), the
    logits of an unknown pattern (contested, safe) and of a move's nearness to the last two
    moves (``near``: neither, the last, the mover's own last, both)."""

    def __init__(self, codes, weights, unknown, near, source: str = ""):
        self.codes = np.ascontiguousarray(codes, dtype=np.int64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)
        self.extra = np.concatenate([np.asarray(unknown, dtype=np.float64).reshape(2),
                                     np.asarray(near, dtype=np.float64).reshape(4)])
        self.source = source
        if self.codes.ndim != 1 or self.codes.shape != self.weights.shape:
            raise ValueError("codes and weights must be 1-D and of one length")
        if len(self.codes) and (np.any(np.diff(self.codes) <= 0) or self.codes[0] < 0
                                or self.codes[-1] >= NUM_CODES):
            raise ValueError("codes must be distinct, sorted and in range")
        if not (np.all(np.isfinite(self.weights)) and np.all(np.isfinite(self.extra))):
            raise ValueError("weights must be finite")

    @classmethod
    def load(cls, path) -> "PatternTable":
        """Read a table written by ``save``; ValueError naming the file and the problem."""
        try:
            with np.load(path) as d:
                return cls(d["codes"], d["weights"], d["unknown"], d["near"], source=str(path))
        except (OSError, KeyError, ValueError, EOFError) as e:
            raise ValueError(f"{path}: not a pattern table ({e})") from None

    def save(self, path) -> None:
        buf = io.BytesIO()
        np.savez_compressed(buf, codes=self.codes, weights=self.weights,
                            unknown=self.extra[:2], near=self.extra[2:])
        write_atomic(path, buf.getvalue())

    def kernel_args(self, size: int) -> tuple:
        """The tuple ``rave_kernels`` reads: (ring, slot map, place values, codes, weights,
        extra)."""
        return (ring_table(size), SLOT_MAP, PLACE, self.codes, self.weights, self.extra)


@lru_cache(maxsize=1)
def default_table() -> PatternTable:
    """The shipped table (``nogobot/agents/rave-patterns.npz``)."""
    from importlib.resources import files
    return PatternTable.load(files("nogobot.agents") / "rave-patterns.npz")
