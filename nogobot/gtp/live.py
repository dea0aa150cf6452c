"""What a GTP search shows while it runs: GoGui's live graphics (``gogui-gfx:`` blocks of
visits, principal variation and progress) and the Sabaki/Lizzie ``info`` lines of the analysis
commands, as the ``search.SearchHooks`` of one search (``search_hooks``).

The commands that start these searches, and the state they keep between commands (the
parameters, whether GoGui is attached), are analyze.py's; the texts themselves are built by the
pure functions of views.py. Imports only the standard library at start-up (GoGui's referee copy
of the engine must start fast); the search loads on first use.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from ..engine.candidates import shown, tree_candidates
from . import views
from .views import AnalyzeRequest


class Every:
    """Call ``fn(result, limits)`` at most every ``interval`` seconds (several watchers share
    one search)."""

    def __init__(self, fn: Callable[[Any, Any], None], interval: float):
        self.fn, self.interval = fn, interval
        self.next = time.monotonic() + interval

    def __call__(self, result, limits) -> None:
        now = time.monotonic()
        if now >= self.next:
            self.next = now + self.interval
            self.fn(result, limits)


class AnalysisReporter:
    """Writes one analysis line per call from the live tree (plus kata's score leads)."""

    def __init__(self, write: Callable[[str], None], flavour: str, req: AnalyzeRequest, work,
                 searcher):
        self.write, self.kata, self.req = write, flavour == "kata", req
        self.work, self.searcher = work, searcher
        self._leads: dict[int, float] = {}
        self._ownership: list[float] | None = None

    def __call__(self, result) -> None:
        # At least one move (by prior when nothing was searched yet): every stream reports.
        cands = shown(tree_candidates(self.searcher, result), max(self.req.minmoves, 1),
                      self.req.maxmoves)
        if not cands:
            return
        leads = self._score_leads([c.move for c in cands]) if self.kata else None
        own = self._root_ownership() if self.kata and self.req.ownership else None
        self.write(views.info_line(cands, self.work.size, self.kata, score_lead=leads,
                                   ownership=own))

    def _score_leads(self, moves: list[int]) -> dict[int, float]:
        """scoreLead per move: minus the score head of the position after it (cached)."""
        todo = [m for m in moves if m not in self._leads]
        if todo:
            boards = []
            for m in todo:
                b = self.work.copy()
                b.play(m, self.work.to_move)
                boards.append(b)
            ev = self.searcher.evaluator.evaluate_boards(boards)
            for m, s in zip(todo, ev.score):
                self._leads[m] = -float(s)
        return self._leads

    def _root_ownership(self) -> list[float]:
        if self._ownership is None:
            ev = self.searcher.evaluator.evaluate_boards([self.work])
            self._ownership = [float(v) for v in ev.dominion[0].reshape(-1)]
        return self._ownership


def gfx_progress(searcher, work, result, limits) -> str:
    """The ``gogui-gfx:`` block of a running search: visits, principal variation, a status
    line and how far through its limits it is."""
    cands = shown(tree_candidates(searcher, result))
    lines = views.visits_gfx(work.size, work.to_move, cands, result.pv, result.visits,
                             result.seconds)
    done = []
    if limits.playouts:
        done.append(result.playouts / limits.playouts)
    if limits.seconds:
        done.append(result.seconds / limits.seconds)
    if done:
        lines.append(f"PROGRESS {min(100, int(100 * max(done)))}")
    return "gogui-gfx:\n" + "\n".join(lines) + "\n\n"


def search_hooks(searcher, work, *, write_line: Callable[[str], None],
                 gfx_write: Callable[[str], None] | None, gfx_interval: float,
                 analysis: tuple[str, AnalyzeRequest] | None = None, stop=None):
    """``search.SearchHooks`` for ``searcher``'s search of ``work``: GoGui graphics through
    ``gfx_write`` every ``gfx_interval`` seconds (None: off), analysis lines through
    ``write_line`` (``analysis`` = (flavour, request)), stopped by ``stop``."""
    from ..engine.search import SearchHooks

    watchers = []
    if gfx_write is not None:
        watchers.append(Every(lambda r, limits: gfx_write(gfx_progress(searcher, work, r, limits)),
                              gfx_interval))
    reporter = None
    if analysis is not None:
        reporter = AnalysisReporter(write_line, analysis[0], analysis[1], work, searcher)
        if analysis[1].interval > 0:
            watchers.append(Every(lambda r, limits: reporter(r), analysis[1].interval))

    def progress(result, limits) -> None:
        for watcher in watchers:
            watcher(result, limits)

    def done(result, limits) -> None:
        if reporter is not None:
            reporter(result)  # the final line, always at least one
        if gfx_write is not None:
            gfx_write("gogui-gfx: CLEAR\n")  # before the response (GoGui's advice)

    interval = min([gfx_interval if gfx_write is not None else math.inf]
                   + [analysis[1].interval if analysis and analysis[1].interval > 0
                      else math.inf])
    return SearchHooks(stop=stop, on_progress=progress if watchers else None,
                       progress_interval=interval if watchers else 0.5, on_done=done)
