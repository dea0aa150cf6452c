"""Board state -> network input planes, and the 8 board symmetries.

This module owns the input encoding of the network (``FEATURE_VERSION``). Everything is seen from
the side to move ("own" = the colour to move). Planes, float32 [NUM_PLANES, N, N], for any N×N:

====  =====================  ==================================================================
  #   name                   1.0 where
====  =====================  ==================================================================
  0   own stones             a stone of the side to move
  1   opponent stones        a stone of the other colour
  2   own legal              the side to move may play there
  3   opponent legal         the other colour could play there (if it were its turn)
  4   own 1-liberty libs     the point is the liberty of an own block with exactly 1 liberty
  5   own 2-liberty libs     ... of an own block with exactly 2 liberties
  6   opp 1-liberty libs     ... of an opponent block with exactly 1 liberty
  7   opp 2-liberty libs     ... of an opponent block with exactly 2 liberties
  8   last move              the last move played (one-hot; all zero at the start)
  9   move before last       the move before that
 10   black to move          constant: 1.0 everywhere when black is to move, else 0.0
 11   on board               constant 1.0 (the convolutions' zero padding then marks the edge)
====  =====================  ==================================================================

Planes 4-7 are the "advanced specific features" of NoGoZero+ (Gao & Wu, §3.2.4). A point can be
the liberty of several blocks and then carries every plane that applies.

``fill_planes`` is the numba kernel the search calls to write one row of a preallocated batch
[B, C, N, N] straight from the board's state arrays (no Python objects); ``board_planes`` is the
convenience wrapper for a ``Board``.

Symmetries: index k in 0..7 is "rotate by k % 4 quarter turns counter-clockwise (np.rot90), then,
when k >= 4, transpose". ``transform_planes`` acts on arrays [..., N, N], ``transform_policy`` on
flat vectors [..., N*N]; ``inverse_symmetry(k)`` undoes k. ``symmetry_permutation`` gives the same
maps as index tables usable from numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..game.board import BLACK, EMPTY, LAST, LAST2, TO_MOVE, Board, liberty_count

# The contract's two numbers live in modelfile.py, which checks model files without numba.
from .modelfile import FEATURE_VERSION, NUM_PLANES  # noqa: E402

PLANE_NAMES = (
    "own_stones", "opp_stones", "own_legal", "opp_legal",
    "own_lib1", "own_lib2", "opp_lib1", "opp_lib2",
    "last_move", "last_move2", "black_to_move", "on_board",
)
NUM_SYMMETRIES = 8
LIBERTY_PLANES = (4, 5, 6, 7)  # the NoGoZero+ liberty features (switched off in the ablation)


@njit(cache=True)
def fill_planes(stones, root, libs, legal, meta, size, out_row):
    """Write the NUM_PLANES input planes of one position into ``out_row`` [C, >=N, >=N] float32.

    The whole row is zeroed first and the position is written in its top-left N×N corner, so a
    row of a larger buffer works too (zero padding). Arguments are the ``Board`` state arrays."""
    out_row[:] = 0.0
    me = meta[TO_MOVE]
    opp = 3 - me
    area = size * size
    for p in range(area):
        r = p // size
        c = p - r * size
        s = stones[p]
        if s == me:
            out_row[0, r, c] = 1.0
        elif s == opp:
            out_row[1, r, c] = 1.0
        if legal[me, p]:
            out_row[2, r, c] = 1.0
        if legal[opp, p]:
            out_row[3, r, c] = 1.0
        if s != EMPTY:
            continue
        # Every liberty of a block is adjacent to it: look at the blocks around this empty point.
        for k in range(4):
            if k == 0:
                if r == 0:
                    continue
                q = p - size
            elif k == 1:
                if r == size - 1:
                    continue
                q = p + size
            elif k == 2:
                if c == 0:
                    continue
                q = p - 1
            else:
                if c == size - 1:
                    continue
                q = p + 1
            sq = stones[q]
            if sq == EMPTY:
                continue
            n = liberty_count(libs, root[q])
            if n == 1 or n == 2:
                out_row[(4 if sq == me else 6) + n - 1, r, c] = 1.0
    last = meta[LAST]
    if 0 <= last < area:
        out_row[8, last // size, last % size] = 1.0
    last2 = meta[LAST2]
    if 0 <= last2 < area:
        out_row[9, last2 // size, last2 % size] = 1.0
    black = 1.0 if me == BLACK else 0.0
    for r in range(size):
        for c in range(size):
            out_row[10, r, c] = black
            out_row[11, r, c] = 1.0


def board_planes(board: Board) -> np.ndarray:
    """The input planes of ``board``: float32 [NUM_PLANES, N, N]."""
    n = board.size
    out = np.empty((NUM_PLANES, n, n), dtype=np.float32)
    fill_planes(board.stones, board.root, board.libs, board.legal, board.meta, n, out)
    return out


def boards_planes(boards) -> np.ndarray:
    """Stacked planes [B, NUM_PLANES, N, N] of boards that share one size."""
    boards = list(boards)
    if not boards:
        raise ValueError("no boards")
    n = boards[0].size
    if any(b.size != n for b in boards):
        raise ValueError("boards of different sizes cannot share a batch")
    out = np.empty((len(boards), NUM_PLANES, n, n), dtype=np.float32)
    for i, b in enumerate(boards):
        fill_planes(b.stones, b.root, b.libs, b.legal, b.meta, n, out[i])
    return out


# --------------------------------------------------------------------------------------------
# The 8 symmetries of the square (dihedral group D4)
# --------------------------------------------------------------------------------------------


def _check_k(k: int) -> int:
    if not 0 <= k < NUM_SYMMETRIES:
        raise ValueError(f"symmetry index {k} outside 0..7")
    return int(k)


def inverse_symmetry(k: int) -> int:
    """The symmetry that undoes k (rotations invert to the opposite turn; reflections to self)."""
    k = _check_k(k)
    return (4 - k) % 4 if k < 4 else k


def transform_planes(x: np.ndarray, k: int) -> np.ndarray:
    """Apply symmetry k to the last two axes of ``x`` [..., N, N] (returns a contiguous copy)."""
    k = _check_k(k)
    y = np.rot90(x, k % 4, axes=(-2, -1))
    if k >= 4:
        y = np.swapaxes(y, -2, -1)
    return np.ascontiguousarray(y)


def untransform_planes(x: np.ndarray, k: int) -> np.ndarray:
    """Inverse of ``transform_planes(., k)``."""
    return transform_planes(x, inverse_symmetry(k))


def symmetry_permutation(size: int, k: int) -> np.ndarray:
    """Index table t (int64 [N*N]) with transform_policy(v, k) == v[..., t].

    ``t[i]`` is the source point that lands on point i; ``np.argsort(t)[p]`` is where point p
    goes."""
    idx = np.arange(size * size, dtype=np.int64).reshape(size, size)
    return transform_planes(idx, k).reshape(-1)


def transform_point(p: int, size: int, k: int) -> int:
    """Where point p lands under symmetry k."""
    t = symmetry_permutation(size, k)
    return int(np.flatnonzero(t == p)[0])


def transform_policy(v: np.ndarray, k: int) -> np.ndarray:
    """Apply symmetry k to flat per-point vectors [..., N*N] (N inferred from the length)."""
    area = v.shape[-1]
    n = int(round(area ** 0.5))
    if n * n != area:
        raise ValueError(f"policy length {area} is not a square board")
    y = transform_planes(v.reshape(*v.shape[:-1], n, n), k)
    return y.reshape(*v.shape[:-1], area)


def untransform_policy(v: np.ndarray, k: int) -> np.ndarray:
    """Inverse of ``transform_policy(., k)``."""
    return transform_policy(v, inverse_symmetry(k))
