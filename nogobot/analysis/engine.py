"""`nogobot analysis`: a JSON-lines analysis engine in the spirit of KataGo's.

One query per line on stdin, one answer per analysed position on stdout, each a single line of
JSON. Many queries (and many turns of one query) are searched at the same time: each position is
a ``Searcher.search_steps`` generator, and every round the leaves that all of them want
evaluated go to the network in ONE call (the mechanism of ``selfplay.play_games_batched``), so a
batch of 16 leaves per search becomes a network batch of up to 16 × ``concurrency`` positions.
Answers are written as positions finish, so they may come out of order; each carries the
query's ``id`` and its ``turnNumber``.

This module owns the scheduling: the queue of positions, the searchers per board size and the
two lanes of searches whose network calls overlap the tree work, plus the process around it
(``serve``, ``main``) and in-process use (``analyse``). What a query and an answer say (the
fields, their validation, the errors) is analysis_protocol.py's, documented there.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import traceback
from collections import deque
from typing import Any, Callable

from .. import __version__
from .protocol import (
    DEFAULT_VISITS,
    REPORT_AS,
    JsonWriter,
    Query,
    QueryError,
    Task,
    add_root_outputs,
    answer_fields,
    check_action,
    parse_query,
    positions,
)

_EOF = object()


class AnalysisEngine:
    """Searches queued positions concurrently; answers through ``emit(dict)``.

    ``submit_line``/``submit`` may be called from another thread (the stdin reader) while
    ``run`` searches; ``close_input`` ends ``run`` once everything queued is answered."""

    def __init__(self, evaluator, *, config=None, concurrency: int = 16,
                 visits: int = DEFAULT_VISITS, report_as: str = "sidetomove",
                 pipeline: bool = True, log: Callable[[str], None] | None = None):
        from ..engine.mcts import SearchConfig

        if report_as not in REPORT_AS:
            raise ValueError(f"report_as must be one of {REPORT_AS}, not {report_as!r}")
        self.evaluator = evaluator
        self.config = config or SearchConfig()
        self.concurrency = max(1, int(concurrency))
        self.visits = int(visits)
        self.report_as = report_as
        self.pipeline = pipeline
        self.log = log or (lambda msg: None)
        self.inbox: queue.Queue = queue.Queue()
        self._idle: dict[int, list] = {}  # board size -> Searchers not in use
        self._caches: dict[int, Any] = {}  # board size -> the shared EvalCache
        self._solver = None
        self.positions_done = 0
        self.visits_done = 0
        self.network_calls = 0
        self.network_rows = 0

    # -- input (any thread) ---------------------------------------------------------------------
    def submit_line(self, line: bytes | str, emit: Callable[[dict], None]) -> None:
        """One input line: errors and warnings are emitted at once, work is queued."""
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                emit({"error": "the line is not valid UTF-8"})
                return
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except ValueError as e:
            emit({"error": f"could not parse JSON: {e}"})
            return
        self.submit(obj, emit)

    def submit(self, obj: Any, emit: Callable[[dict], None]) -> Query | None:
        """Validate one query or action object and queue it (the query is returned)."""
        if not isinstance(obj, dict):
            emit({"error": "a query must be a JSON object"})
            return None
        if "id" not in obj:
            emit({"error": "missing field", "field": "id"})
            return None
        qid = obj["id"]
        if isinstance(qid, bool) or not isinstance(qid, (str, int)):
            emit({"error": "id must be a string or an integer", "field": "id", "id": qid})
            return None
        if "action" in obj:
            error = check_action(obj)
            if error is not None:
                emit(error)
                return None
            self.inbox.put(("action", obj))
            return None
        try:
            query = parse_query(obj, self.visits)
        except QueryError as e:
            out = {"id": qid, "error": str(e)}
            if e.field:
                out["field"] = e.field
            emit(out)
            return None
        for key, message in query.warnings:
            emit({"id": qid, "warning": message, "field": key})
        tasks = positions(query)
        query.remaining = len(tasks)
        query.started = time.perf_counter()
        self.inbox.put(("tasks", tasks))
        return query

    def close_input(self) -> None:
        self.inbox.put(_EOF)

    # -- the search loop (one thread) -----------------------------------------------------------
    def run(self, emit: Callable[[dict], None]) -> None:
        """Search until ``close_input`` was called and every queued position is answered.

        The running searches are split into two lanes (two ``driver.BatchedSearches``).
        While the network evaluates one lane's leaves (on a worker thread: onnxruntime releases
        the GIL), this thread expands, backs up and selects the next leaves of the other, so
        the tree work overlaps the network's. With ``pipeline`` off, one lane and one thread."""
        from concurrent.futures import ThreadPoolExecutor

        from ..net.driver import BatchedSearches

        pending: deque[Task] = deque()
        lanes = [BatchedSearches(self.evaluator), BatchedSearches(self.evaluator)]
        flight = None  # (lane, future) of the network call in progress
        eof = False
        pool = ThreadPoolExecutor(1, thread_name_prefix="analysis-network") \
            if self.pipeline else None
        try:
            while True:
                while True:  # take all that arrived; wait only when there is nothing to do
                    busy = len(lanes[0]) or len(lanes[1]) or pending or flight or eof
                    try:
                        item = self.inbox.get(block=not busy)
                    except queue.Empty:
                        break
                    if item is _EOF:
                        eof = True
                    elif item[0] == "tasks":
                        pending.extend(item[1])
                    else:
                        running = [tag[0] for lane in lanes for tag in lane.tags()]
                        self._action(item[1], pending, running, emit)
                while pending and len(lanes[0]) + len(lanes[1]) < self.concurrency:
                    k = (0 if pool is None else 1 - flight[0] if flight is not None
                         else int(len(lanes[1]) < len(lanes[0])))  # never the lane in flight
                    self._start(pending.popleft(), lanes[k], emit)
                if pool is None:
                    if not len(lanes[0]) and not len(lanes[1]):
                        if eof and not pending:
                            break
                        continue
                    self._ended(lanes[0].step(), emit)
                    continue
                idle = (1 - flight[0]) if flight is not None else (0 if len(lanes[0]) else 1)
                new = (idle, pool.submit(lanes[idle].evaluate)) if len(lanes[idle]) else None
                if flight is not None:
                    k, future = flight
                    self._ended(lanes[k].deliver(future.result()), emit)
                flight = new
                if (flight is None and not len(lanes[0]) and not len(lanes[1]) and eof
                        and not pending):
                    break
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
            self.network_calls += sum(lane.network_calls for lane in lanes)
            self.network_rows += sum(lane.network_rows for lane in lanes)
            mean = self.network_rows / max(1, self.network_calls)
            self.log(f"analysis: {self.positions_done} positions, {self.visits_done} visits; "
                     f"{self.network_calls} network calls of {mean:.1f} positions on average")

    def _searcher(self, size: int):
        """An idle searcher for ``size`` with a fresh tree: its own tree and buffers, the size's
        shared cache and the shared solver table."""
        from ..engine.mcts import EvalCache
        from ..engine.search import Searcher
        from ..engine.solver import Solver

        idle = self._idle.setdefault(size, [])
        if idle:
            searcher = idle.pop()
        else:
            cfg = self.config
            if size not in self._caches:
                self._caches[size] = EvalCache(size * size, cfg.cache_entries)
            if self._solver is None and cfg.use_solver:
                self._solver = Solver(1 << 20)
            searcher = Searcher(self.evaluator, size, cfg, seed=0, cache=self._caches[size],
                                solver=self._solver)
        searcher.reset()  # a fresh tree: no reuse between unrelated queries
        return searcher

    def _start(self, task: Task, lane, emit) -> None:
        """Run a task to its first network batch (or to its answer, when it needs none)."""
        if task.stop.is_set():
            self._finish(task, {"noResults": True}, emit)
            return
        searcher = self._searcher(task.board.size)
        ended = lane.start(self._steps(task, searcher), (task, searcher))
        if ended is not None:
            self._ended([ended], emit)

    def _ended(self, ended: list, emit) -> None:
        """Answer the searches that ended (``driver.Finished``) and free their searchers."""
        for f in ended:
            task, searcher = f.tag
            self._idle.setdefault(searcher.size, []).append(searcher)
            if f.error is None:
                self._finish(task, f.result, emit)
            else:
                self._fail(task, f.error, emit,
                           "network evaluation failed" if f.in_network else "search failed")

    def _steps(self, task: Task, searcher):
        """The search of one position as a generator (yields planes, receives evaluations),
        returning its answer fields. The network's output for the root itself (ownership,
        policy) is taken from the search's first batch when the root is evaluated there;
        otherwise (a cached or solved root) one extra row is asked for."""
        from ..engine.search import SearchLimits
        from ..net.features import board_planes

        board, q = task.board, task.query
        need_root = q.ownership or q.policy
        root_ev = None
        steps = searcher.search_steps(board, SearchLimits(playouts=q.visits), stop=task.stop)
        try:
            planes = next(steps)
            while True:
                root_row = (need_root and root_ev is None and bool(searcher.tree.pending[0])
                            and int(searcher.leaves[0]) == 0)
                ev = yield planes
                if root_row:
                    root_ev = ev.slice(0, 1)
                planes = steps.send(ev)
        except StopIteration as done:
            result = done.value
        answer = answer_fields(task, searcher, result, self.report_as)  # before it is reused
        if need_root:
            if root_ev is None:
                root_ev = yield board_planes(board)[None]
            add_root_outputs(answer, task, root_ev, self.report_as)
        self.positions_done += 1
        self.visits_done += result.visits
        return answer

    def _finish(self, task: Task, fields: dict, emit) -> None:
        q = task.query
        out = {"id": q.id, "turnNumber": task.turn, "isDuringSearch": False}
        out.update(fields)
        emit(out)
        self._done_one(q)

    def _fail(self, task: Task, e: Exception, emit, what: str = "search failed") -> None:
        self.log(f"analysis: {what} for id {task.query.id} turn {task.turn}: "
                 + "".join(traceback.format_exception_only(type(e), e)).strip())
        if not isinstance(e, RuntimeError):
            self.log("".join(traceback.format_exception(e)))
        emit({"id": task.query.id, "turnNumber": task.turn, "error": f"{what}: {e}"})
        self._done_one(task.query)

    def _done_one(self, q: Query) -> None:
        q.remaining -= 1
        if q.remaining == 0:
            self.log(f"analysis: id {q.id}: {len(q.turns)} position(s) in "
                     f"{time.perf_counter() - q.started:.2f} s")

    # -- actions (on the search thread, between rounds) -----------------------------------------
    def _action(self, obj: dict, pending: deque, running: list[Task], emit) -> None:
        action = obj["action"]
        reply = dict(obj)
        if action == "query_version":
            reply.update(version=__version__, git_hash="<omitted>")
        elif action == "clear_cache":
            for cache in self._caches.values():
                cache.clear()
            if self._solver is not None:
                self._solver.keys[:] = 0
                self._solver.vals[:] = 0
        else:
            target = obj.get("terminateId") if action == "terminate" else None
            turns = obj.get("turnNumbers")

            def hit(task: Task) -> bool:
                return ((target is None or task.query.id == target)
                        and (turns is None or task.turn in turns))

            for task in [t for t in pending if hit(t)]:
                pending.remove(task)
                self._finish(task, {"noResults": True}, emit)
            for task in running:
                if hit(task):
                    task.stop.set()  # it stops after this batch and reports what it has
        emit(reply)


# --------------------------------------------------------------------------------------------
# stdin / stdout
# --------------------------------------------------------------------------------------------



def serve(engine: AnalysisEngine, stdin, stdout) -> int:
    """Read queries from ``stdin`` (a binary stream) on a thread, search on this one, answer on
    ``stdout`` (a text stream). Returns 0 at EOF, once every query is answered."""
    emit = JsonWriter(stdout)

    def reader() -> None:
        try:
            for line in stdin:
                engine.submit_line(line, emit)
        except Exception as e:  # a read error ends the input like EOF does
            engine.log(f"analysis: input error: {e}")
        finally:
            engine.close_input()

    threading.Thread(target=reader, name="analysis-input", daemon=True).start()
    engine.run(emit)
    return 0


def main(build: Callable[[], AnalysisEngine], quiet: bool = False) -> int:
    """The ``nogobot analysis`` process: JSON answers on the real stdout only. File descriptor
    1 is pointed at stderr before anything is loaded (``build()`` makes the engine), so nothing
    else (a library's print, a C-level message) can ever reach the answer stream."""
    import os

    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def log(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    engine = build()
    engine.log = log
    log(f"nogobot analysis: {engine.evaluator.describe()}, {engine.visits} visits per position "
        f"by default, up to {engine.concurrency} positions at once (batch "
        f"{engine.config.batch_size} each); ready for one JSON query per line")
    status = serve(engine, sys.stdin.buffer, out)
    try:
        out.flush()
    except OSError:
        pass
    return status


def warm_up(evaluator, config=None, size: int = 9) -> None:
    """Compile (or load) numba's kernels and touch the network before the first query."""
    from ..engine.search import Searcher, SearchLimits
    from ..game.board import Board

    Searcher(evaluator, size, config).search(Board(size), SearchLimits(playouts=32))


def analyse(engine: AnalysisEngine, queries: list[dict],
            on_answer: Callable[[dict], None] | None = None) -> list[dict]:
    """In-process use (``nogobot review``, tests): answer ``queries`` and return every line
    (answers, warnings, errors) in the order they were produced."""
    out: list[dict] = []

    def emit(obj: dict) -> None:
        out.append(obj)
        if on_answer is not None:
            on_answer(obj)

    for q in queries:
        engine.submit(q, emit)
    engine.close_input()
    engine.run(emit)
    return out
