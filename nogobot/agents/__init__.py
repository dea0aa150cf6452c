"""Players that choose moves: the contract every GTP-driven player implements.

An ``Agent`` is what `nogobot gtp` and `nogobot agent NAME` wrap: given a position and an optional
time budget it returns a flat point (a legal move for the side to move) or ``coords.RESIGN`` when
the side to move has no legal move. Baseline agents (random, greedy, rollout, alphabeta) live in
this package; the network player (search) lives in ``nogobot.player``.
"""

from __future__ import annotations

from typing import Protocol

from ..board import Board


class Agent(Protocol):
    """Anything that picks moves. Must never return an illegal point."""

    name: str

    def select_move(self, board: Board, seconds: float | None = None) -> int:
        """A legal point for ``board.to_move``, or coords.RESIGN if it has none.

        ``seconds`` is the wall-clock budget for this move (None: the agent's own default).
        The board must be left exactly as it was given (use copy() or play/undo)."""
        ...
