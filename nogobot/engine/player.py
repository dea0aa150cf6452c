"""The network player: plays a move under a clock with the batched search.

``MCTSAgent`` wraps the search driver (``search.Searcher``) in the ``Agent`` protocol for GTP
and owns the whole search of a move: the budget (a fixed time, playouts, or the time manager's
``MoveBudget`` with its stop hook), where the endgame solver works (``solver_zones``), the
watchers' ``SearchHooks`` (GoGui interrupt, live graphics, analysis lines), pondering, the
opening book's answers (``book.OpeningBook``), and the log line.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable

from ..game import coords
from ..game.board import Board
from .agent import Agent
from .book import OpeningBook
from .mcts import SearchConfig
from .search import Searcher, SearchHooks, SearchLimits, SearchProgress, SearchResult
from .solver import zones_from
from .timecontrol import NO_SOLVER, SolverZones


class MCTSAgent(Agent):
    """The ``Agent`` the GTP engine uses: search to the time or playout budget, play most visited."""

    name = "mcts"
    can_ponder = True
    can_analyze = True
    takes_move_budget = True

    def __init__(self, evaluator, size: int = 9, config: SearchConfig | None = None,
                 playouts: int | None = None, seconds: float | None = 1.0,
                 seed: int | None = None, log=sys.stderr, book: OpeningBook | None = None):
        """``book``: positions answered from an opening book, without search or clock."""
        self.evaluator = evaluator
        self.book = book
        self.config = config or SearchConfig()
        self.playouts = playouts
        self.seconds = seconds
        self.seed = seed
        self.log = log
        self._searcher: Searcher | None = None
        self.last_result: SearchResult | None = None

    @property
    def solver_zones(self) -> SolverZones:
        """Where the endgame solver works: tried first, within a share of the move's time, from
        ``SOLVER_MAX_EMPTY`` empty points; usually proving the game within a move from
        ``SOLVER_REACH_EMPTY``; answering at once from ``SOLVER_INSTANT_EMPTY``."""
        if not self.config.use_solver:
            return NO_SOLVER
        return zones_from(self.config.solver_from)  # ``SearchConfig`` may move the first try

    def searcher(self, size: int) -> Searcher:
        if self._searcher is None or self._searcher.size != size:
            self._searcher = Searcher(self.evaluator, size, self.config, self.seed)
        return self._searcher

    def set_c_puct(self, value: float) -> None:
        """Change the exploration constant for this and later searches (the current tree
        is kept)."""
        self.config.c_puct = value
        if self._searcher is not None:
            self._searcher.set_c_puct(value)

    def set_threads(self, threads: int) -> bool:
        """Run the network on ``threads`` CPU threads from now on. onnxruntime fixes the count
        per session, so a new session of the same net replaces the evaluator; ValueError for a
        network that has no thread count (GPU, none). False when it already has that many."""
        ev = self.evaluator
        if ev.threads == threads:
            return False
        if ev.path is None or ev.on_gpu:
            raise ValueError("only a CPU onnx network has a thread count")
        from ..net.inference import OnnxEvaluator

        self.evaluator = OnnxEvaluator(ev.path, device="cpu", threads=threads)
        if self._searcher is not None:
            self._searcher.evaluator = self.evaluator
        return True

    def plan(self, seconds=None):
        """Search limits and the time manager's stop hook for ``seconds``: a number (a fixed
        time), a ``timecontrol.MoveBudget`` (plan, hard maximum, early stop, extension), or None
        (the agent's own default). Emergencies get no stopper.

        Fixed playouts (``nogobot gtp --playouts N``) against a GTP budget search exactly N
        playouts: the clock is not consulted (reproducible runs, tests; a large N can lose on
        time). Only an only move, a proven result or the endgame solver's answer comes sooner.
        With a number (Botzone's per-move time) both limits apply, whichever comes first."""
        from .timecontrol import MoveBudget, SearchStopper

        if isinstance(seconds, MoveBudget):
            if self.playouts is not None:
                return SearchLimits(playouts=self.playouts), None
            limits = SearchLimits(seconds=seconds.maximum)
            stopper = None if seconds.emergency else SearchStopper(seconds)
            return limits, stopper
        secs = seconds if seconds is not None else self.seconds
        return SearchLimits(playouts=self.playouts, seconds=secs), None

    def report(self, result: SearchResult, size: int) -> None:
        """Log one search on stderr (or the log stream given)."""
        self.last_result = result
        if self.log is not None:
            rate = result.playouts / result.seconds if result.seconds > 0 else math.inf
            tried = "" if result.solver_try is None else \
                "; solver unknown after {:,} nodes in {:.2f}s".format(*result.solver_try)
            print(f"mcts: {coords.to_gtp(result.move, size)} winrate {result.winrate:.3f} "
                  f"visits {result.visits} playouts {result.playouts} ({rate:,.0f}/s) "
                  f"time {result.seconds:.2f}s stop: {result.reason}{tried}", file=self.log,
                  flush=True)

    def select_move(self, board: Board, seconds=None, hooks: SearchHooks | None = None) -> int:
        """Search and return the move (``seconds`` as in ``plan``), logged and kept in
        ``last_result``; ``hooks`` watch the search. A position in the opening book is answered
        from it at once."""
        entry = self.book.lookup(board) if self.book is not None else None
        if entry is not None:
            self.last_result = None  # no search: nothing for the time model or the watchers
            if self.log is not None:
                print(f"book: {coords.to_gtp(entry.move, board.size)} winrate "
                      f"{entry.winrate:.3f} visits {entry.visits} (opening book, no search)",
                      file=self.log, flush=True)
            return entry.move
        limits, stopper = self.plan(seconds)
        result = self.search(board, limits, hooks, should_stop=stopper)
        self.report(result, board.size)
        return result.move

    def search(self, board: Board, limits: SearchLimits, hooks: SearchHooks | None = None,
               should_stop: Callable[[SearchProgress], str | None] | None = None
               ) -> SearchResult:
        """One search of ``board`` (its side to move) within ``limits``, reusing the tree,
        with the watchers' ``hooks``; nothing is logged (analysis views use it directly)."""
        hooks = hooks or SearchHooks()
        watch = hooks.on_progress
        progress = None if watch is None else (lambda result: watch(result, limits))
        result = self.searcher(board.size).search(board, limits, stop=hooks.stop,
                                                  should_stop=should_stop, on_progress=progress,
                                                  progress_interval=hooks.progress_interval)
        if hooks.on_done is not None:
            hooks.on_done(result, limits)
        return result

    def ponder(self, board: Board, stop: threading.Event, max_seconds: float = 600.0) -> None:
        """Think on the opponent's time (``board``: the opponent to move) until ``stop`` is set;
        the tree is reused when the opponent's move arrives."""
        if board.num_legal() == 0:
            return
        self.searcher(board.size).search(board, SearchLimits(seconds=max_seconds), stop=stop)
