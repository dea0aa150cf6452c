"""`nogobot analysis`: a JSON-lines analysis engine in the spirit of KataGo's.

One query per line on stdin, one answer per analysed position on stdout, each a single line of
JSON. Many queries (and many turns of one query) are searched at the same time: each position is
a ``Searcher.search_steps`` generator, and every round the leaves that all of them want
evaluated go to the network in ONE call (the mechanism of ``selfplay.play_games_batched``), so a
batch of 16 leaves per search becomes a network batch of up to 16 × ``concurrency`` positions.
Answers are written as positions finish, so they may come out of order; each carries the
query's ``id`` and its ``turnNumber``.

Query (KataGo's field names; NoGo has no komi, no pass, and only square boards)::

    {"id": "g1", "boardXSize": 9, "moves": [["B", "E5"], ["W", "D4"]],
     "analyzeTurns": [0, 1, 2], "maxVisits": 200, "includeOwnership": true}

=====================  ==========  ===========================================================
field                  required    meaning
=====================  ==========  ===========================================================
id                     yes         a string (or an integer), echoed in every answer
moves                  yes         ``[player, vertex]`` pairs, ``"B"``/``"W"`` and a GTP vertex
boardXSize             yes         2..19; ``boardYSize``, if given, must be the same
initialStones          no          ``[player, vertex]`` pairs on the board before the moves
initialPlayer          no          who moves first when ``moves`` is empty (default Black)
analyzeTurns           no          turns to analyse, 0 = before ``moves[0]``; default: the last
maxVisits              no          root visits of each search (default: ``--visits``)
analysisPVLen          no          moves in each ``pv`` after the first (default 15, at most 19)
includeOwnership       no          the network's dominion map (``ownership``)
includePolicy          no          the network's move probabilities (``policy``)
rules, komi            no          ``rules`` must be ``"nogo"`` if given; ``komi`` is ignored
=====================  ==========  ===========================================================

Any other field is ignored with a warning line (``{"id","warning","field"}``). Special actions,
as in KataGo: ``{"id":..,"action":"query_version"}``, ``"clear_cache"``, ``"terminate"`` (with
``terminateId`` and optional ``turnNumbers``) and ``"terminate_all"``; each is echoed back.

Answer (one per analysed turn)::

    {"id": "g1", "turnNumber": 2, "isDuringSearch": false,
     "moveInfos": [{"move": "C3", "order": 0, "visits": 120, "winrate": 0.61, "prior": 0.25,
                    "lcb": 0.58, "utility": 0.22, "pv": ["C3", "E3", ...]}, ...],
     "rootInfo": {"visits": 200, "winrate": 0.60, "utility": 0.2, "rawWinrate": 0.57,
                  "currentPlayer": "B", "thisHash": "9F0C..."},
     "ownership": [...], "policy": [...]}

* Values are for the side to move (``--report-as sidetomove``, the default), or for Black or
  White (``--report-as black|white``); ``ownership`` follows the same perspective (+1: that
  side owns the point). ``utility`` is ``2·winrate − 1`` (NoGo has no score term).
* ``moveInfos`` lists the searched moves, best first (``order``). A move the endgame solver
  proved has ``"proven": true`` and a winrate of exactly 0 or 1 (its visits may be 0: a solved
  position needs no tree search).
* ``ownership`` and ``policy`` are row-major from the top-left point (A9 on 9×9), one value per
  point; ``policy`` has ``-1`` on illegal points and, unlike KataGo's, no pass entry.
* A position whose side to move has no legal move (the game is over) is answered with empty
  ``moveInfos`` and a winrate of 0 for the side to move.
* A search stops at the first batch that reaches ``maxVisits`` (as ``nogobot gtp --playouts``
  does), so ``rootInfo.visits`` may pass it by a batch or so.
* A search is a fresh tree each time (no reuse between queries); the evaluation cache and the
  endgame solver's table are shared by all queries of a board size, so overlapping positions
  (the turns of one game) cost fewer network calls. With a network that gives each position the
  same output whatever batch it is in, a lone query gets exactly the search that
  ``nogobot gtp --playouts maxVisits`` does on a fresh engine (tests/test_analysis.py).

Errors never stop the engine. A line that is not a JSON object gets ``{"error": ...}``; a bad
query gets ``{"id": ..., "error": ..., "field": ...}`` (missing field, wrong type, bad size, an
illegal move sequence naming the move); a failure while searching one position gets
``{"id": ..., "turnNumber": ..., "error": ...}``. Nothing but these JSON lines is written to
stdout (the CLI points file descriptor 1 at stderr for everything else); logs go to stderr. At
EOF the engine finishes the queries it has, then exits with status 0.
"""

from __future__ import annotations

import json
import math
import queue
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from . import __version__, coords
from .coords import BLACK, WHITE

DEFAULT_VISITS = 500
DEFAULT_PV_LEN = 15
MAX_PV_LEN = 19  # the tree's principal variation is at most 20 moves (views.PV_LENGTH)
MAX_VISITS = 100_000_000
REPORT_AS = ("sidetomove", "black", "white")
KNOWN_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize",
                "boardYSize", "analyzeTurns", "maxVisits", "analysisPVLen", "includeOwnership",
                "includePolicy"}
_PLAYER = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_LETTER = {BLACK: "B", WHITE: "W"}


class QueryError(ValueError):
    """A query that cannot be analysed; ``field`` names the culprit (None: the whole line)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass
class Query:
    """A validated analysis query."""

    id: Any
    size: int
    board: Any  # the position before moves[0] (setup stones, first player)
    moves: list[tuple[int, int]]
    turns: list[int]
    visits: int
    pv_len: int = DEFAULT_PV_LEN
    ownership: bool = False
    policy: bool = False
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (field, message)
    remaining: int = 0  # turns not yet answered
    started: float = 0.0


@dataclass
class Task:
    """One position to analyse: a turn of a query."""

    query: Query
    turn: int
    board: Any
    stop: threading.Event = field(default_factory=threading.Event)


_EOF = object()


# --------------------------------------------------------------------------------------------
# Query validation
# --------------------------------------------------------------------------------------------


def _player(value, field_name: str) -> int:
    if isinstance(value, str) and value.lower() in _PLAYER:
        return _PLAYER[value.lower()]
    raise QueryError(f"player must be \"B\" or \"W\", not {json.dumps(value)}", field_name)


def _stones(value, size: int, field_name: str) -> list[tuple[int, int]]:
    if not isinstance(value, list):
        raise QueryError("must be a list of [player, vertex] pairs", field_name)
    out = []
    for k, item in enumerate(value):
        what = f"move {k + 1}" if field_name == "moves" else f"stone {k + 1}"
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], str)):
            raise QueryError(f"{what} must be a [player, vertex] pair, not {json.dumps(item)}",
                             field_name)
        colour = _player(item[0], field_name)
        vertex = item[1]
        if vertex.strip().lower() == "pass":
            raise QueryError(f"{what} is a pass: NoGo has no pass", field_name)
        try:
            p = coords.from_gtp(vertex, size)
        except ValueError as e:
            raise QueryError(f"{what}: {e}", field_name) from None
        out.append((colour, p))
    return out


def _integer(obj: dict, key: str, default, lo: int, hi: int):
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryError(f"must be an integer, not {json.dumps(value)}", key)
    if not lo <= value <= hi:
        raise QueryError(f"must be between {lo} and {hi}, not {value}", key)
    return value


def _flag(obj: dict, key: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise QueryError(f"must be true or false, not {json.dumps(value)}", key)
    return value


def parse_query(obj: dict, default_visits: int = DEFAULT_VISITS) -> Query:
    """A query object (with an ``id``, no ``action``) -> Query, or QueryError naming the field."""
    from .sgf import GameRecord, SgfError

    for key in ("moves", "boardXSize"):
        if key not in obj:
            raise QueryError("missing field", key)
    size = obj["boardXSize"]
    if isinstance(size, bool) or not isinstance(size, int):
        raise QueryError(f"must be an integer, not {json.dumps(size)}", "boardXSize")
    if not coords.MIN_SIZE <= size <= coords.MAX_SIZE:
        raise QueryError(f"board size {size} is not supported (2..19)", "boardXSize")
    if "boardYSize" in obj and obj["boardYSize"] != size:
        raise QueryError("only square boards: boardYSize must equal boardXSize", "boardYSize")
    rules = obj.get("rules", "nogo")
    if not (isinstance(rules, str) and rules.lower() == "nogo"):
        raise QueryError(f"rules must be \"nogo\" (this engine plays NoGo), not "
                         f"{json.dumps(rules)}", "rules")
    komi = obj.get("komi", 0)
    if isinstance(komi, bool) or not isinstance(komi, (int, float)):
        raise QueryError(f"must be a number, not {json.dumps(komi)}", "komi")
    moves = _stones(obj["moves"], size, "moves")
    setup = _stones(obj.get("initialStones", []), size, "initialStones")
    points = [p for _, p in setup]
    if len(set(points)) != len(points):
        raise QueryError("two stones on one point", "initialStones")
    first = None
    if "initialPlayer" in obj:
        first = _player(obj["initialPlayer"], "initialPlayer")
    n = len(moves)
    turns = obj.get("analyzeTurns", [n])
    if not isinstance(turns, list) or not turns or any(
            isinstance(t, bool) or not isinstance(t, int) for t in turns):
        raise QueryError("must be a non-empty list of integers", "analyzeTurns")
    bad = [t for t in turns if not 0 <= t <= n]
    if bad:
        raise QueryError(f"turn {bad[0]} is not in 0..{n} (there are {n} moves)",
                         "analyzeTurns")
    visits = _integer(obj, "maxVisits", default_visits, 1, MAX_VISITS)
    pv_len = _integer(obj, "analysisPVLen", DEFAULT_PV_LEN, 0, MAX_PV_LEN)
    ownership, policy = _flag(obj, "includeOwnership"), _flag(obj, "includePolicy")
    try:
        # Every move is checked by the rules; the error names the first illegal one.
        GameRecord(size=size, moves=moves, setup=setup, first_to_move=first).board()
        board = GameRecord(size=size, setup=setup, first_to_move=first).board()
    except SgfError as e:
        raise QueryError(str(e), "initialStones" if str(e).startswith("setup") else "moves"
                         ) from None
    warnings = [(k, "unknown field, ignored") for k in obj
                if k not in KNOWN_FIELDS and k != "action"]
    return Query(obj["id"], size, board, moves, list(dict.fromkeys(turns)), visits, pv_len,
                 ownership, policy, warnings)


def positions(query: Query) -> list[Task]:
    """The query's turns as tasks, in the order asked. Turn t is the position before
    ``moves[t]`` with that move's player to move (after the last move: the other player)."""
    want = set(query.turns)
    found: dict[int, Any] = {}
    board = query.board.copy()
    for t in range(len(query.moves) + 1):
        if t in want:
            b = board.copy()
            if t < len(query.moves):
                b.to_move = query.moves[t][0]
            found[t] = b
        if t < len(query.moves):
            colour, p = query.moves[t]
            board.play(p, colour)
    return [Task(query, t, found[t]) for t in query.turns]


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


def _num(x: float, digits: int = 6):
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


class AnalysisEngine:
    """Searches queued positions concurrently; answers through ``emit(dict)``.

    ``submit_line``/``submit`` may be called from another thread (the stdin reader) while
    ``run`` searches; ``close_input`` ends ``run`` once everything queued is answered."""

    def __init__(self, evaluator, *, config=None, concurrency: int = 16,
                 visits: int = DEFAULT_VISITS, report_as: str = "sidetomove",
                 pipeline: bool = True, log: Callable[[str], None] | None = None):
        from .mcts import SearchConfig

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
            action = obj["action"]
            if action not in ("query_version", "clear_cache", "terminate", "terminate_all"):
                emit({"id": qid, "error": f"unknown action {json.dumps(action)}",
                      "field": "action"})
                return None
            if action == "terminate" and "terminateId" not in obj:
                emit({"id": qid, "error": "missing field", "field": "terminateId"})
                return None
            turns = obj.get("turnNumbers")
            if turns is not None and not (isinstance(turns, list) and all(
                    isinstance(t, int) and not isinstance(t, bool) for t in turns)):
                emit({"id": qid, "error": "must be a list of integers", "field": "turnNumbers"})
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

        The running searches are split into two lanes (two ``inference.BatchedSearches``).
        While the network evaluates one lane's leaves (on a worker thread: onnxruntime releases
        the GIL), this thread expands, backs up and selects the next leaves of the other, so
        the tree work overlaps the network's. With ``pipeline`` off, one lane and one thread."""
        from concurrent.futures import ThreadPoolExecutor

        from .inference import BatchedSearches

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
        from .mcts import EvalCache
        from .player import Searcher
        from .solver import Solver

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
        """Answer the searches that ended (``inference.Finished``) and free their searchers."""
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
        from .features import board_planes
        from .player import SearchLimits

        board, q = task.board, task.query
        need_root = q.ownership or q.policy
        root_ev = None
        steps = searcher.search_steps(board, SearchLimits(playouts=q.visits), stop=task.stop)
        try:
            planes = next(steps)
            while True:
                root_row = (need_root and root_ev is None and bool(searcher.tree.pending[0])
                            and int(searcher.buffers[0][0]) == 0)
                ev = yield planes
                if root_row:
                    root_ev = ev.slice(0, 1)
                planes = steps.send(ev)
        except StopIteration as done:
            result = done.value
        answer = self._answer(task, searcher, result)  # before the searcher is reused
        if need_root:
            if root_ev is None:
                root_ev = yield board_planes(board)[None]
            self._add_root_outputs(answer, task, root_ev)
        self.positions_done += 1
        self.visits_done += result.visits
        return answer

    def _flip(self, to_move: int) -> bool:
        return ((self.report_as == "black" and to_move == WHITE)
                or (self.report_as == "white" and to_move == BLACK))

    def _answer(self, task: Task, searcher, result) -> dict:
        from .gtp import views

        board, size = task.board, task.board.size
        flip = self._flip(board.to_move)

        def wr(x: float) -> float:
            return 1.0 - x if flip else x

        infos = []
        if board.num_legal() > 0:
            cands = views.shown(views.tree_candidates(searcher, result), minmoves=1)
            for k, c in enumerate(cands):
                w = wr(c.winrate)
                info = {"move": coords.to_gtp(c.move, size), "order": k, "visits": c.visits,
                        "winrate": _num(w), "prior": _num(c.prior), "lcb": _num(wr(c.lcb)),
                        "utility": _num(2 * w - 1),
                        "pv": [coords.to_gtp(p, size)
                               for p in (c.pv or [c.move])[:task.query.pv_len + 1]]}
                if c.proof:
                    info["proven"] = True
                infos.append(info)
        w = wr(result.winrate)
        root = {"visits": result.visits, "winrate": _num(w), "utility": _num(2 * w - 1),
                "currentPlayer": _LETTER[board.to_move], "thisHash": f"{board.hash:016X}"}
        t = searcher.tree
        if result.visits > 0 and t.N[0] > 0:
            root["rawWinrate"] = _num(wr(0.5 * (float(t.value[0]) + 1.0)))
        if result.proven:
            root["proven"] = True
        return {"moveInfos": infos, "rootInfo": root}

    def _add_root_outputs(self, answer: dict, task: Task, root_ev) -> None:
        from .inference import priors

        board = task.board
        sign = -1.0 if self._flip(board.to_move) else 1.0
        if task.query.ownership:
            answer["ownership"] = [_num(sign * v) for v in root_ev.dominion[0].reshape(-1)]
        if task.query.policy:
            legal = board.legal_mask()
            p = priors(root_ev.policy_logits[0], legal)
            answer["policy"] = [_num(x) if ok else -1 for x, ok in zip(p, legal)]
        if "rawWinrate" not in answer["rootInfo"] and board.num_legal() > 0:
            v = float(root_ev.value[0])
            answer["rootInfo"]["rawWinrate"] = _num(1.0 - v if sign < 0 else v)

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


class JsonWriter:
    """Writes one JSON object per line, whole lines only, from any thread."""

    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()
        self.broken = False

    def __call__(self, obj: dict) -> None:
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n"
        with self.lock:
            if self.broken:
                return
            try:
                self.stream.write(line)
                self.stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.broken = True  # the reader went away: finish quietly


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
    from .board import Board
    from .player import SearchLimits, Searcher

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
