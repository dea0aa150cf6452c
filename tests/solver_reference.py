"""An obviously-correct slow reference for the exact solver, and random positions to feed it.

``reference_value`` is plain negamax over the naive rules (``game.naive_rules``: flood fills from
scratch, no incremental state, nothing shared with ``board.py``'s kernels): no table, no
ordering, no static rule; a node is won when some legal move leaves the opponent lost. It is
exponential, so it is only asked about positions with a handful of empty points.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nogobot.game.board import BLACK, Board
from nogobot.game.naive_rules import naive_is_legal


@njit(cache=True)
def _negamax(stones, nbr, c):
    for p in range(stones.shape[0]):
        if stones[p] == 0 and naive_is_legal(stones, nbr, p, c):
            stones[p] = c
            v = -_negamax(stones, nbr, 3 - c)
            stones[p] = 0
            if v == 1:
                return 1
    return -1


def reference_value(board: Board) -> int:
    """+1 when the side to move wins ``board`` with perfect play, -1 when it loses."""
    return int(_negamax(board.stones.copy(), board.geo.nbr, board.to_move))


def board_from_stones(stones: np.ndarray, size: int, to_move: int) -> Board:
    """The position with these stones (int8 [size*size], 0/1/2) and side to move."""
    chars = ".XO"
    text = "\n".join("".join(chars[int(v)] for v in stones[r * size:(r + 1) * size])
                     for r in range(size))
    return Board.from_ascii(text, to_move=to_move)


def dihedral(size: int) -> list[np.ndarray]:
    """The 8 symmetries of the square board, each as the permutation ``perm`` with
    ``new[perm[p]] = old[p]`` over flat points."""
    perms = []
    rows, cols = np.divmod(np.arange(size * size), size)
    for k in range(8):
        r, c = rows.copy(), cols.copy()
        if k & 1:
            r, c = c, r
        if k & 2:
            r = size - 1 - r
        if k & 4:
            c = size - 1 - c
        perms.append(r * size + c)
    return perms


def random_position(size: int, rng, empty: int, max_legal: int = 99) -> Board:
    """A position from uniformly random legal play on ``size``, stopped at ``empty`` empty points
    (or earlier, once the side to move has at most ``max_legal`` moves, or none)."""
    b = Board(size)
    while b.geo.area - b.ply > empty and b.num_legal() > max_legal:
        b.play(int(rng.choice(b.legal_moves())))
    while b.geo.area - b.ply > empty and b.num_legal() > 0:
        b.play(int(rng.choice(b.legal_moves())))
    return b


def random_small_positions(seed: int, count: int) -> list[Board]:
    """A mixed batch: 3x3 and 4x4 from random openings, partly filled 5x5 and 9x9 endgames with
    few empty points (the reference stays fast: at most about a dozen moves deep)."""
    rng = np.random.default_rng(seed)
    out = []
    shapes = [(3, 8), (3, 6), (4, 10), (4, 9), (5, 10), (5, 9), (9, 14), (9, 12)]
    for i in range(count):
        size, empty = shapes[i % len(shapes)]
        out.append(random_position(size, rng, empty))
    return out


def random_symmetric_position(size: int, rng, empty: int) -> Board:
    """A position that one of the board's symmetries (other than the identity) maps onto
    itself: random stones of a random colour on whole orbits of that symmetry, where legal,
    until about ``empty`` points are left; a random side to move."""
    from nogobot.game.board import IllegalMove

    perm = dihedral(size)[int(rng.integers(1, 8))]
    b = Board(size)
    for _ in range(40 * size * size):
        if b.geo.area - int((b.stones > 0).sum()) <= empty:
            break
        orbit = [int(rng.integers(size * size))]
        while int(perm[orbit[-1]]) != orbit[0]:
            orbit.append(int(perm[orbit[-1]]))
        colour = int(rng.integers(1, 3))
        trial = b.copy()
        try:
            for p in orbit:
                trial.play(p, colour)
        except IllegalMove:
            continue
        b = trial
    b.to_move = int(rng.integers(1, 3))
    return b


__all__ = ["BLACK", "board_from_stones", "dihedral", "random_position",
           "random_small_positions", "random_symmetric_position", "reference_value"]
