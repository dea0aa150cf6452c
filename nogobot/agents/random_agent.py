"""RandomAgent: a uniformly random legal move (the weakest baseline, and a fuzzing opponent)."""

from __future__ import annotations

import random

from ..engine.agent import Agent
from ..game import coords
from ..game.board import Board


class RandomAgent(Agent):
    """Plays a move drawn uniformly from the legal moves of the side to move."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def select_move(self, board: Board, seconds: float | None = None) -> int:
        moves = board.legal_moves()
        if len(moves) == 0:
            return coords.RESIGN
        return int(moves[self.rng.randrange(len(moves))])
