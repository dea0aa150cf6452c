"""The contract every GTP-driven player implements.

An ``Agent`` is what `nogobot gtp` and `nogobot agent NAME` wrap: given a position and an optional
time budget it returns a flat point (a legal move for the side to move) or ``coords.RESIGN`` when
the side to move has no legal move. The network player is ``player.MCTSAgent`` (its search is
``search``'s); the baseline agents live in ``nogobot.agents``.

An agent declares what else it can do, and the GTP layer reads only these declarations (it never
probes an agent's attributes). Subclassing ``Agent`` gives the defaults: no pondering, no
analysis, a plain number of seconds per move, no endgame solver, no search result to report.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from .timecontrol import NO_SOLVER, SolverZones

if TYPE_CHECKING:
    from ..game.board import Board


class Agent(Protocol):
    """Anything that picks moves. Must never return an illegal point."""

    name: str = "agent"
    # ``ponder(board, stop)`` thinks on the opponent's time (``nogobot gtp --ponder``).
    can_ponder: bool = False
    # The network player: ``search(board, limits, hooks)``, ``searcher(size)``, ``evaluator``,
    # ``playouts``, ``config``, ``set_c_puct``, ``set_threads``; GoGui views and Sabaki analysis
    # need it, and ``select_move`` then also takes ``hooks`` (``search.SearchHooks``).
    can_analyze: bool = False
    # ``select_move``'s ``seconds`` may be the time manager's ``timecontrol.MoveBudget`` (plan,
    # hard maximum, early stop); otherwise the GTP layer passes its planned seconds.
    takes_move_budget: bool = False
    solver_zones: SolverZones = NO_SOLVER  # where an endgame solver works (the time plan reads it)
    # Its own knobs for the time plan (``timecontrol.TimePolicy``), which `nogobot agent` hands
    # to the GTP layer; None: the defaults.
    time_policy: Any = None
    last_result: Any = None  # the last search's ``search.SearchResult``, for agents that have one
    seconds: float | None = None  # the default time per move (the ``seconds`` parameter sets it)

    def select_move(self, board: Board, seconds: float | None = None) -> int:
        """A legal point for ``board.to_move``, or coords.RESIGN if it has none.

        ``seconds`` is the wall-clock budget for this move (None: the agent's own default).
        The board must be left exactly as it was given (use copy() or play/undo)."""
        ...

    def ponder(self, board: Board, stop: threading.Event) -> None:
        """Think on the opponent's time (``board``: the opponent to move) until ``stop`` is set
        (only called when ``can_ponder``)."""
        return None
