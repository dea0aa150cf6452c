"""A deliberately naive NoGo rules oracle: flood fill from scratch, no incremental state.

Not used to play. It exists as an independent reference: the property tests compare the
incremental kernels of ``board.py`` (the rules owner) against it on every ply, and
``nogobot bench rules`` measures it beside the real kernels. Only ``stones`` (int8 [P], 0/1/2)
and the neighbour table are used.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _block_has_liberty(stones, nbr, start, seen, stack):
    """Flood-fill the block containing ``start``; True if it touches an empty point."""
    colour = stones[start]
    seen[:] = False
    stack[0] = start
    top = 1
    seen[start] = True
    while top > 0:
        top -= 1
        p = stack[top]
        for k in range(4):
            q = nbr[p, k]
            if q < 0:
                continue
            if stones[q] == 0:
                return True
            if stones[q] == colour and not seen[q]:
                seen[q] = True
                stack[top] = q
                top += 1
    return False


@njit(cache=True)
def naive_is_legal(stones, nbr, p, c):
    """Place the stone, then flood-fill the mover's block and every adjacent opponent block."""
    if stones[p] != 0:
        return False
    area = stones.shape[0]
    seen = np.zeros(area, dtype=np.bool_)
    stack = np.empty(area, dtype=np.int64)
    stones[p] = c
    ok = _block_has_liberty(stones, nbr, p, seen, stack)
    if ok:
        for k in range(4):
            q = nbr[p, k]
            if q >= 0 and stones[q] == 3 - c and not _block_has_liberty(stones, nbr, q, seen, stack):
                ok = False  # would capture
                break
    stones[p] = 0
    return ok


@njit(cache=True)
def naive_legal_mask(stones, nbr, c):
    out = np.zeros(stones.shape[0], dtype=np.bool_)
    for p in range(stones.shape[0]):
        out[p] = naive_is_legal(stones, nbr, p, c)
    return out


@njit(cache=True)
def naive_random_playouts(stones0, nbr, to_move, count, seed):
    """Random playouts scanning the whole board with flood fills every ply; returns black wins."""
    np.random.seed(seed)
    area = stones0.shape[0]
    moves = np.empty(area, dtype=np.int64)
    black_wins = 0
    for _ in range(count):
        stones = stones0.copy()
        c = to_move
        while True:
            n = 0
            for p in range(area):
                if naive_is_legal(stones, nbr, p, c):
                    moves[n] = p
                    n += 1
            if n == 0:
                break
            stones[moves[np.random.randint(n)]] = c
            c = 3 - c
        if c == 2:  # white to move and stuck: black won
            black_wins += 1
    return black_wins
