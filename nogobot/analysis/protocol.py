"""The JSON protocol of `nogobot analysis` (KataGo's analysis engine's, for NoGo): it owns what
a query may say and how it is validated (``parse_query``, ``check_action``), the positions a
query asks for (``positions``), the fields of an answer (``answer_fields``, ``add_root_outputs``)
and the writing of whole JSON lines (``JsonWriter``). The scheduling of the searches is
analysis.py's.

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
import threading
from dataclasses import dataclass, field
from typing import Any

from ..game import coords
from ..game.coords import BLACK, WHITE

DEFAULT_VISITS = 500
DEFAULT_PV_LEN = 15
MAX_PV_LEN = 19  # a candidate's line is at most 20 moves (``candidates.PV_LENGTH``)
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
    from ..game.sgf import GameRecord, SgfError

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




ACTIONS = ("query_version", "clear_cache", "terminate", "terminate_all")


def check_action(obj: dict) -> dict | None:
    """The error line for an invalid action object (one with an ``id`` and an ``action``),
    None for a valid one."""
    qid, action = obj["id"], obj["action"]
    if action not in ACTIONS:
        return {"id": qid, "error": f"unknown action {json.dumps(action)}", "field": "action"}
    if action == "terminate" and "terminateId" not in obj:
        return {"id": qid, "error": "missing field", "field": "terminateId"}
    turns = obj.get("turnNumbers")
    if turns is not None and not (isinstance(turns, list) and all(
            isinstance(t, int) and not isinstance(t, bool) for t in turns)):
        return {"id": qid, "error": "must be a list of integers", "field": "turnNumbers"}
    return None


# --------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------


def _num(x: float, digits: int = 6):
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def flips(report_as: str, to_move: int) -> bool:
    """Whether values for the side to move are reported from the other side's view."""
    return ((report_as == "black" and to_move == WHITE)
            or (report_as == "white" and to_move == BLACK))


def answer_fields(task: Task, searcher, result, report_as: str) -> dict:
    """``moveInfos`` and ``rootInfo`` of a finished search (read before the searcher is
    reused: the tree is still the one searched)."""
    from ..engine.candidates import shown, tree_candidates

    board, size = task.board, task.board.size
    flip = flips(report_as, board.to_move)

    def wr(x: float) -> float:
        return 1.0 - x if flip else x

    infos = []
    if board.num_legal() > 0:
        cands = shown(tree_candidates(searcher, result), minmoves=1)
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


def add_root_outputs(answer: dict, task: Task, root_ev, report_as: str) -> None:
    """The network's own output for the root (``ownership``, ``policy``, and ``rawWinrate``
    when the search had none) added to ``answer``; ``root_ev`` is the root's evaluation row."""
    from ..net.inference import priors

    board = task.board
    sign = -1.0 if flips(report_as, board.to_move) else 1.0
    if task.query.ownership:
        answer["ownership"] = [_num(sign * v) for v in root_ev.dominion[0].reshape(-1)]
    if task.query.policy:
        legal = board.legal_mask()
        p = priors(root_ev.policy_logits[0], legal)
        answer["policy"] = [_num(x) if ok else -1 for x, ok in zip(p, legal)]
    if "rawWinrate" not in answer["rootInfo"] and board.num_legal() > 0:
        v = float(root_ev.value[0])
        answer["rootInfo"]["rawWinrate"] = _num(1.0 - v if sign < 0 else v)


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
