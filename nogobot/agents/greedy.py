"""GreedyAgent: the "naive one-ply player" of Schaul & Schmidhuber, for NoGo.

Order of preference for the side to move X:

1. a move after which the opponent O has no legal move (X wins at once);
2. otherwise a random move that leaves O no *immediately winning reply* (a reply after which X
   has no legal move), i.e. never a move that loses at once if that can be avoided;
3. otherwise a random legal move (every move loses against best play).

Why the reply check is cheap: a single O stone can make at most 10 points illegal for X (the
point itself, its 4 empty neighbours that lose a liberty, the last liberty of the merged O block,
and the last liberties of up to 4 X blocks it puts in atari), so when X keeps more than
``_MAX_LOSS_PER_MOVE`` legal moves after its own move no O reply can stalemate X, and the
replies are only searched in the late endgame.
"""

from __future__ import annotations

import random

from ..engine.agent import Agent
from ..game import coords
from ..game.board import Board, opponent

# Upper bound on how many of X's legal moves one opponent stone can remove (see module doc).
_MAX_LOSS_PER_MOVE = 10


class GreedyAgent(Agent):
    """Win at once if possible, otherwise avoid moves that let the opponent win at once."""

    name = "greedy"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def select_move(self, board: Board, seconds: float | None = None) -> int:
        me = board.to_move
        you = opponent(me)
        moves = [int(p) for p in board.legal_moves()]
        if not moves:
            return coords.RESIGN
        safe = []
        for p in moves:
            board.play(p, me)
            try:
                if board.num_legal(you) == 0:
                    return p  # the opponent is stuck: immediate win
                if not self._opponent_wins_at_once(board, me, you):
                    safe.append(p)
            finally:
                board.undo()
        return self.rng.choice(safe or moves)

    @staticmethod
    def _opponent_wins_at_once(board: Board, me: int, you: int) -> bool:
        """After my move (board has `you` to move): can `you` leave me with no legal move?"""
        if board.num_legal(me) > _MAX_LOSS_PER_MOVE:
            return False
        for r in board.legal_moves(you):
            board.play(int(r), you)
            stuck = board.num_legal(me) == 0
            board.undo()
            if stuck:
                return True
        return False
