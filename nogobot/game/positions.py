"""Fixed sample positions that benchmarks and training's equal-compute gating both time searches
on, so that their figures compare."""

from __future__ import annotations

from .board import Board


def sample_positions(size: int, count: int = 4) -> list[Board]:
    """The empty board and a seeded random game after ~1/8, 1/4, 3/8 of the board is filled
    (openings and middle games, where the search spends its time)."""
    import numpy as np

    rng = np.random.default_rng(20261121)
    boards = [Board(size)]
    game = Board(size)
    for k in range(1, count):
        while game.ply < k * size * size // 8 and not game.is_terminal():
            game.play(int(rng.choice(game.legal_moves())))
        boards.append(game.copy())
    return boards
