"""Botzone (botzone.org.cn, game "NoGo") bot: what ``nogobot botzone`` runs.

Protocol (the Botzone wiki page "Bot"):

* JSON interaction: one input line ``{"requests": [...], "responses": [...], ...}``; requests are
  the opponent's moves ``{"x": X, "y": Y}``, the first is ``{"x": -1, "y": -1}`` exactly when we
  are Black; responses are our earlier moves. Output: one line
  ``{"response": {"x": X, "y": Y}, "debug": "..."}``.
* Simple interaction: a line with the turn number ``n``, then ``2n-1`` lines ``x y``
  (opponent, us, ..., opponent; ``-1 -1`` first when we are Black). Output: ``x y``.
* Keep-running mode: after each answer we print ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` and
  flush; the next input is only the new request (a bare ``{"x": .., "y": ..}`` or ``x y``). A
  full input is also accepted at any time (it replaces the position).

Coordinates: ``x`` is the row counted from the top, ``y`` the column from the left, both 0..8
(``board[x][y]`` as in the official samples; only consistency matters). ``-1 -1`` means no
move.

Choices:

* a fixed per-move budget, ``move_time - margin`` seconds from the moment the request was read
  (default 1.0 - 0.2 s; Botzone counts CPU time between turns against the next one, so nothing
  runs between turns); the network and the numba kernels load before the first request;
* Black never opens at the centre (a rule on some Botzone NoGo variants, unconfirmed; costless);
* bad input never kills the bot: every problem is explained on stderr, the position is rebuilt
  from what can be read (illegal or out-of-range moves in the history are skipped), and a legal
  move is still answered whenever there is one. With no legal move at all we answer ``-1 -1``
  (the game is lost anyway).
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from .game import coords
from .game.coords import BLACK, WHITE

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
NO_MOVE = (-1, -1)


class BotzoneError(ValueError):
    """Input that cannot be used as it stands (the bot reports it and carries on)."""


@dataclass
class Request:
    """One parsed input: a full history (``moves``: requests and responses interleaved,
    opponent first) or a single new opponent move (``move``)."""

    mode: str  # "json" or "simple"
    moves: list[tuple[int, int]] | None = None
    move: tuple[int, int] | None = None
    problems: list[str] = field(default_factory=list)


def _xy(obj: Any, what: str) -> tuple[int, int]:
    """{"x": X, "y": Y} -> (X, Y), or BotzoneError."""
    if not isinstance(obj, dict) or "x" not in obj or "y" not in obj:
        raise BotzoneError(f"{what} is not a move {{\"x\": .., \"y\": ..}}: {obj!r}")
    x, y = obj["x"], obj["y"]
    if isinstance(x, bool) or isinstance(y, bool) or not all(
            isinstance(v, int) or (isinstance(v, float) and v.is_integer()) for v in (x, y)):
        raise BotzoneError(f"{what} has non-integer coordinates: {obj!r}")
    return int(x), int(y)


def parse_json(line: str) -> Request:
    """A JSON input line: the full form (requests/responses) or a bare request."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise BotzoneError(f"input is not valid JSON ({e.msg} at column {e.colno})") from None
    if isinstance(data, dict) and "requests" in data:
        req = Request("json", moves=[])
        requests, responses = data.get("requests"), data.get("responses", [])
        if not isinstance(requests, list) or not isinstance(responses, list):
            raise BotzoneError("requests and responses must be lists")
        if len(requests) != len(responses) + 1:
            req.problems.append(f"{len(requests)} requests but {len(responses)} responses "
                                "(expected one request more than responses)")
        # Interleaved: request 0, response 0, request 1, ...; a missing entry is None so that
        # every later move keeps its colour.
        for i in range(max(len(requests), len(responses))):
            for items, name in ((requests, "requests"), (responses, "responses")):
                if i >= len(items):
                    if name == "requests" or i < len(requests) - 1:
                        req.moves.append(None)
                    continue
                try:
                    req.moves.append(_xy(items[i], f"{name}[{i}]"))
                except BotzoneError as e:
                    req.problems.append(str(e))
                    req.moves.append(None)
        return req
    if isinstance(data, dict) and "x" in data:
        return Request("json", move=_xy(data, "the request"))
    raise BotzoneError(f"JSON input is neither a full input nor a request: {line.strip()[:80]}")


def _ints(line: str, what: str) -> list[int]:
    try:
        return [int(t) for t in line.split()]
    except ValueError:
        raise BotzoneError(f"{what} is not integers: {line.strip()[:80]!r}") from None


class BotzoneBot:
    """The game state and the move choice; ``run`` speaks the protocol on streams."""

    def __init__(self, agent_factory: Callable[[], Any], *, size: int = 9,
                 move_time: float = 1.0, margin: float = 0.2, min_think: float = 0.05,
                 log: Callable[[str], None] | None = None, seed: int | None = None):
        if move_time <= 0 or margin < 0:
            raise ValueError("move_time must be > 0 and margin >= 0")
        self.agent_factory = agent_factory
        self.agent = None
        self.size = size
        self.move_time = move_time
        self.margin = margin
        self.min_think = min_think
        self.log = log or (lambda msg: None)
        self.rng = random.Random(seed)
        self.me: int | None = None  # our colour, known from the first full input
        self.board = None
        self.mode = "json"

    # -- set-up -----------------------------------------------------------------------------
    def prepare(self) -> None:
        """Build the agent and run it once on a scratch board (loads the network and numba's
        kernels) before the first request, so no turn pays for it."""
        from .game.board import Board

        self.board = Board(self.size)
        self.agent = self.agent_factory()
        try:
            self.agent.select_move(Board(self.size), 0.02)
        except Exception:  # noqa: BLE001 -- a failed warm-up only costs the first move time
            self.log(f"botzone: warm-up failed:\n{traceback.format_exc()}")

    # -- positions --------------------------------------------------------------------------
    def _point(self, xy: tuple[int, int]) -> int:
        x, y = xy
        if not (0 <= x < self.size and 0 <= y < self.size):
            raise BotzoneError(f"move {xy} is off the {self.size}x{self.size} board")
        return coords.to_flat(x, y, self.size)

    def _apply(self, xy: tuple[int, int] | None, colour: int, what: str) -> None:
        """Play ``xy`` for ``colour`` if it is a legal move; otherwise say why and skip it."""
        if xy is None:
            return  # unreadable; already reported
        if xy == NO_MOVE:
            self.log(f"botzone: {what} is (-1, -1) (no move); ignored")
            return
        try:
            p = self._point(xy)
        except BotzoneError as e:
            self.log(f"botzone: {what}: {e}; ignored")
            return
        if not self.board.is_legal(p, colour):
            why = "occupied" if self.board.stones[p] else "a capture or suicide"
            self.log(f"botzone: {what} {xy} is illegal for "
                     f"{'black' if colour == BLACK else 'white'} ({why}); ignored")
            return
        self.board.play(p, colour)

    def load(self, req: Request) -> None:
        """Bring the board up to date with a parsed input."""
        from .game.board import Board

        self.mode = req.mode
        for problem in req.problems:
            self.log(f"botzone: {problem}")
        if req.moves is not None:
            moves = req.moves
            first = moves[0] if moves else NO_MOVE
            if not moves:
                self.log("botzone: empty history; playing as black")
            elif first is None:
                self.log("botzone: the first request is unreadable; assuming we are white")
            self.me = BLACK if first == NO_MOVE else WHITE
            self.board = Board(self.size)
            for i, xy in enumerate(moves):
                mine = i % 2 == 1
                colour = self.me if mine else 3 - self.me
                if i == 0 and xy == NO_MOVE:
                    continue  # we are black: no opponent move before ours
                what = f"{'responses' if mine else 'requests'}[{i // 2}]"
                self._apply(xy, colour, what)
        else:
            if self.me is None:
                self.log("botzone: a single request before any full input; assuming a new game")
                self.me = BLACK if req.move == NO_MOVE else WHITE
                self.board = Board(self.size)
            if req.move != NO_MOVE or self.board.ply > 0:
                self._apply(req.move, 3 - self.me, "the request")

    # -- moves ------------------------------------------------------------------------------
    def choose(self, deadline: float) -> tuple[int, str]:
        """Our move (flat point, or -1 when we have none) and a debug note."""
        board, me = self.board, self.me or BLACK
        legal = [int(p) for p in board.legal_moves(me)]
        if not legal:
            return -1, "no legal move"
        work = board.copy()
        work.to_move = me
        seconds = max(deadline - time.monotonic(), self.min_think)
        note = ""
        try:
            if self.agent is None:
                self.agent = self.agent_factory()
            p = int(self.agent.select_move(work, seconds))
            res = self.agent.last_result
            if res is not None:
                note = f"win {res.winrate:.3f} visits {res.visits}"
        except Exception:  # noqa: BLE001 -- an agent failure must not lose on time
            self.log(f"botzone: the agent failed; playing a random legal move:\n"
                     f"{traceback.format_exc()}")
            p = -2
        centre = coords.to_flat(self.size // 2, self.size // 2, self.size)
        if me == BLACK and board.ply == 0 and p == centre and self.size % 2 == 1:
            p = self._not_centre(legal, centre)
            note += " (centre opening avoided)"
        if p not in legal:
            if p != -2:
                self.log(f"botzone: the agent chose {p}, not a legal move; playing another")
            p = self.rng.choice([q for q in legal if q != centre or board.ply > 0] or legal)
        return p, note.strip()

    def _not_centre(self, legal: list[int], centre: int) -> int:
        """The agent's best other opening: most visited other root move, else random."""
        res = self.agent.last_result
        others = [c for c in (res.children if res is not None else []) if c.move != centre]
        if others:
            return max(others, key=lambda c: (c.visits, c.prior)).move
        return self.rng.choice([q for q in legal if q != centre])

    def respond(self, req: Request | None, started: float) -> str:
        """Load ``req`` (None: unreadable input), choose, play our move; the output line."""
        from .game.board import Board

        if self.board is None:
            self.board = Board(self.size)
        if req is not None:
            self.load(req)
        if self.me is None:
            self.me = BLACK
        p, note = self.choose(started + self.move_time - self.margin)
        if p >= 0:
            self.board.play(p, self.me)
            x, y = coords.from_flat(p, self.size)
        else:
            x, y = NO_MOVE
        used = time.monotonic() - started
        self.log(f"botzone: {'black' if self.me == BLACK else 'white'} plays {x} {y} "
                 f"({coords.to_gtp(p, self.size) if p >= 0 else 'none'}) in {used:.2f}s"
                 + (f"; {note}" if note else ""))
        if self.mode == "simple":
            return f"{x} {y}"
        return json.dumps({"response": {"x": x, "y": y},
                           "debug": f"nogobot {note} {used:.2f}s".replace("  ", " ")},
                          separators=(",", ":"))

    # -- protocol ---------------------------------------------------------------------------
    def read_request(self, readline: Callable[[], str]) -> tuple[Request | None, float] | None:
        """Read one input (None at EOF): (request or None if unreadable, time read)."""
        line = readline()
        while line and not line.strip():
            line = readline()
        if not line:
            return None
        started = time.monotonic()
        text = line.strip()
        try:
            if text.startswith(("{", "[")):
                return parse_json(text), started
            nums = _ints(text, "the input line")
            if len(nums) == 2:
                return Request("simple", move=(nums[0], nums[1])), started
            if len(nums) != 1:
                raise BotzoneError(f"expected a turn number or 'x y', got {text[:80]!r}")
            n = nums[0]
            if not 1 <= n <= self.size * self.size:
                raise BotzoneError(f"turn number {n} out of range")
            req = Request("simple", moves=[])
            for i in range(2 * n - 1):
                row = readline()
                if not row:
                    req.problems.append(f"input ended after {i} of {2 * n - 1} move lines")
                    break
                try:
                    xy = _ints(row, f"move line {i + 1}")
                    if len(xy) != 2:
                        raise BotzoneError(f"move line {i + 1} is not 'x y': {row.strip()!r}")
                    req.moves.append((xy[0], xy[1]))
                except BotzoneError as e:
                    req.problems.append(str(e))
                    req.moves.append(None)
            return req, started
        except BotzoneError as e:
            self.log(f"botzone: {e}; answering from the position as known")
            self.mode = "json" if text.startswith(("{", "[")) else "simple"
            return None, started

    def run(self, instream: TextIO, outstream: TextIO, keep_running: bool = True) -> int:
        """Answer requests until EOF (keep-running) or after one answer; returns 0."""
        while True:
            got = self.read_request(instream.readline)
            if got is None:
                return 0
            req, started = got
            try:
                line = self.respond(req, started)
            except Exception:  # noqa: BLE001 -- still say something legal if we can
                self.log(f"botzone: internal error:\n{traceback.format_exc()}")
                line = self._emergency()
            outstream.write(line + "\n")
            if keep_running:
                outstream.write(KEEP_RUNNING + "\n")
            outstream.flush()
            if not keep_running:
                return 0

    def _emergency(self) -> str:
        try:
            legal = [int(p) for p in self.board.legal_moves(self.me or BLACK)]
            p = self.rng.choice(legal)
            self.board.play(p, self.me or BLACK)
            x, y = coords.from_flat(p, self.size)
        except Exception:  # noqa: BLE001
            x, y = NO_MOVE
        if self.mode == "simple":
            return f"{x} {y}"
        return json.dumps({"response": {"x": x, "y": y}}, separators=(",", ":"))


def serve_botzone(agent_factory: Callable[[], Any], *, move_time: float = 1.0,
                  margin: float = 0.2, keep_running: bool = True, size: int = 9,
                  instream: TextIO | None = None, outstream: TextIO | None = None,
                  errstream: TextIO | None = None, quiet: bool = False,
                  seed: int | None = None) -> int:
    """Run the bot on stdin/stdout (stdout carries only answers and the keep-running marker;
    anything else printed meanwhile goes to stderr)."""
    err = errstream if errstream is not None else sys.stderr

    def log(msg: str) -> None:
        if quiet:
            return
        try:
            err.write(msg.rstrip("\n") + "\n")
            err.flush()
        except (OSError, ValueError):
            pass

    bot = BotzoneBot(agent_factory, size=size, move_time=move_time, margin=margin, log=log,
                     seed=seed)
    out = outstream if outstream is not None else sys.stdout
    with contextlib.redirect_stdout(err):
        try:
            bot.prepare()
        except Exception as e:  # noqa: BLE001 -- e.g. a bad model: one line, no answer, exit 2
            from .net.inference import ModelError

            what = str(e) if isinstance(e, ModelError) else f"{type(e).__name__}: {e}"
            print(f"nogobot botzone: cannot start: {what}", file=err, flush=True)
            return 2
        return bot.run(instream if instream is not None else sys.stdin, out, keep_running)
