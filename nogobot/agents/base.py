"""What the numba search baselines (rollout, alphabeta) share: ``SearchAgent``.

Both take a per-move limit ``seconds`` that a budget from the GTP clock can only shorten, seed a
numpy generator, keep ``last_info`` about their last search, answer the trivial positions (no
legal move, one legal move) without searching, and load their compiled kernels when built: a
tiny search on a 3×3 board at GTP start-up, so the first timed ``genmove`` does not pay numba's
loading time.
"""

from __future__ import annotations

import numpy as np

from ..engine.agent import Agent
from ..game import coords
from ..game.board import Board


class SearchAgent(Agent):
    """Base of the search baselines. A subclass sets ``WARMUP`` (the constructor arguments of
    a tiny instance whose search loads every kernel it uses) and implements ``search``."""

    name = "search"
    WARMUP: dict = {}

    def __init__(self, seconds: float | None, seed: int | None, warmup: bool):
        self.seconds = seconds
        self._rng = np.random.default_rng(seed)
        self.last_info: dict = {}
        if warmup:
            # Load the compiled kernels now (GTP start-up), not during the first timed genmove.
            type(self)(**self.WARMUP, warmup=False).select_move(Board(3))

    def select_move(self, board: Board, seconds: float | None = None) -> int:
        legal = board.legal_moves()
        if len(legal) == 0:
            return coords.RESIGN
        if len(legal) == 1:
            return int(legal[0])
        limits = [s for s in (self.seconds, seconds) if s is not None]
        return self.search(board, legal, min(limits) if limits else None)

    def search(self, board: Board, legal: np.ndarray, budget: float | None) -> int:
        """The move for ``board`` (two or more ``legal`` moves) within ``budget`` seconds
        (None: no time limit)."""
        raise NotImplementedError
