"""One refereed game between two GTP engine processes.

The referee owns the game: its own ``Board`` (board.py is the only judge of legality) and the
clock (clock.py). Each turn it sends ``time_left`` (if the engine knows it) and ``genmove``, times
the reply, checks it, plays it on its board and relays it to the other engine with ``play``.

How a game ends (``reason`` codes; the result string is the winner's colour plus the suffix):

==================  ========  ==============================================================
reason              suffix    meaning
==================  ========  ==============================================================
no_legal_move       R         the side to move has no legal move (the normal NoGo end)
resign              R         an engine answered ``resign`` although it had legal moves
time                Time      genmove took longer than the clock allowed (or no reply: hang)
illegal             Forfeit   occupied point, capture or suicide
pass                Forfeit   ``pass`` (NoGo has no pass)
not_a_vertex        Forfeit   a reply that is not a vertex on this board
garbage             Forfeit   output that is not a GTP response
error               Forfeit   genmove answered with ``?`` (failure)
crash               Forfeit   the engine process died or closed its output
hang                Forfeit   no reply to a non-timed command (play, boardsize...) in time
rejected            Forfeit   the engine refused a legal move of its opponent (``play``)
setup               Forfeit   the engine refused ``boardsize``/``clear_board``, or did not start
==================  ========  ==============================================================

A fresh process is started for each engine in each game (see runner.py for why).
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..game import coords
from ..game.board import BLACK, EMPTY, WHITE, Board
from .clock import RefereeTimeControl, SideClock
from .gtp_client import EngineError, EngineGarbage, EngineTimeout, GtpProcess

SUFFIX = {"no_legal_move": "R", "resign": "R", "time": "Time"}
LETTER = {BLACK: "B", WHITE: "W"}
GTP_COLOUR = {BLACK: "b", WHITE: "w"}


class Interrupted(Exception):
    """The tournament is stopping; the game is abandoned (and will be replayed on resume)."""


@dataclass
class EngineConfig:
    """How to start one engine (built from the spec)."""

    name: str
    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None  # full environment for the process
    time: RefereeTimeControl | None = None  # its own clock (time odds); None: the game's


@dataclass
class GameResult:
    black: str
    white: str
    size: int
    winner: int = EMPTY
    reason: str = ""
    detail: str = ""
    moves: list[str] = field(default_factory=list)  # GTP vertices, black first
    times: list[float] = field(default_factory=list)  # seconds per move, same order
    clock_left: list[str] = field(default_factory=list)  # mover's clock after each move
    started: str = ""
    duration: float = 0.0
    opening_plies: int = 0  # the first moves came from the opening suite (time 0, no clock)

    @property
    def result(self) -> str:
        return f"{LETTER[self.winner]}+{SUFFIX.get(self.reason, 'Forfeit')}"

    @property
    def winner_name(self) -> str:
        return self.black if self.winner == BLACK else self.white

    @property
    def loser_name(self) -> str:
        return self.white if self.winner == BLACK else self.black


class _Lost(Exception):
    """Internal: ``colour`` loses with ``reason``."""

    def __init__(self, colour: int, reason: str, detail: str):
        super().__init__(detail)
        self.colour, self.reason, self.detail = colour, reason, detail


def _classify_illegal(board: Board, p: int, colour: int) -> str:
    """Why a move is illegal, for the record (legality itself was decided by board.py)."""
    if board.stones[p] != EMPTY:
        return "occupied"
    n = board.size
    r, c = divmod(p, n)
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < n and 0 <= cc < n:
            q = rr * n + cc
            if board.stones[q] == 3 - colour and board.block_liberties(q) == [p]:
                return "captures"
    return "suicide"


class Referee:
    """Plays one game. ``on_move(ply, result_so_far)`` is called after every move (progress)."""

    def __init__(self, black: EngineConfig, white: EngineConfig, *, size: int,
                 time: RefereeTimeControl, startup_timeout: float = 120.0,
                 command_timeout: float = 30.0,
                 log_dir: Path | None = None, game_id: str = "game",
                 stop: threading.Event | None = None,
                 on_move: Callable[[GameResult, dict], None] | None = None,
                 live: set | None = None, live_lock: threading.Lock | None = None,
                 opening: list[str] | tuple[str, ...] = ()):
        self.opening = list(opening)  # GTP vertices the referee plays before the engines
        self.cfg = {BLACK: black, WHITE: white}
        self.size = size
        # Each side's clock: the game's, or the engine's own under time odds.
        self.tcs = {c: self.cfg[c].time or time for c in (BLACK, WHITE)}
        self.startup_timeout = startup_timeout
        self.command_timeout = command_timeout
        self.log_dir = log_dir
        self.game_id = game_id
        self.stop = stop or threading.Event()
        self.on_move = on_move
        self.live = live  # shared set of running engines, so an interrupt can kill them all
        self.live_lock = live_lock or threading.Lock()
        self.engines: dict[int, GtpProcess] = {}
        self.known: dict[int, set[str]] = {}
        self.clocks = {c: SideClock(self.tcs[c]) for c in (BLACK, WHITE)}

    # -- engine plumbing -----------------------------------------------------------------
    def _start(self, colour: int) -> None:
        cfg = self.cfg[colour]
        log = None
        if self.log_dir is not None:
            log = self.log_dir / f"{self.game_id}-{LETTER[colour]}.log"
        try:
            eng = GtpProcess(cfg.argv, name=cfg.name, cwd=cfg.cwd, env=cfg.env, stderr_path=log)
        except EngineError as e:
            raise _Lost(colour, "setup", str(e)) from None
        self.engines[colour] = eng
        with self.live_lock:
            if self.live is not None:
                self.live.add(eng)
        # The first reply may wait for imports / JIT loading: the generous start-up timeout.
        self._cmd(colour, "protocol_version", self.startup_timeout, setup=True)
        ok, text = self._cmd(colour, "list_commands", self.command_timeout, setup=True)
        self.known[colour] = set(text.split()) if ok else set()
        for cmd in (f"boardsize {self.size}", "clear_board"):
            ok, text = self._cmd(colour, cmd, self.command_timeout, setup=True)
            if not ok:
                raise _Lost(colour, "setup", f"refused {cmd!r}: {text}")
        self._cmd(colour, "komi 0", self.command_timeout, setup=True)  # failure ignored
        if "time_settings" in self.known[colour]:
            self._cmd(colour, self.tcs[colour].gtp_time_settings(), self.command_timeout,
                      setup=True)

    def _cmd(self, colour: int, cmd: str, timeout: float, setup: bool = False
             ) -> tuple[bool, str]:
        """An untimed command; any engine failure loses the game for ``colour``."""
        if self.stop.is_set():
            raise Interrupted()
        try:
            ok, text, _ = self.engines[colour].command(cmd, timeout)
            return ok, text
        except EngineError as e:
            if self.stop.is_set():
                raise Interrupted() from None
            reason = {"timeout": "hang", "garbage": "garbage", "crash": "crash"}[e.kind]
            if setup and e.kind != "garbage":
                reason = "setup"
            raise _Lost(colour, reason, str(e)) from None

    def _close_all(self) -> None:
        for eng in self.engines.values():
            eng.close(grace=1.0)
            with self.live_lock:
                if self.live is not None:
                    self.live.discard(eng)

    # -- the game ----------------------------------------------------------------------
    def play(self) -> GameResult:
        res = GameResult(black=self.cfg[BLACK].name, white=self.cfg[WHITE].name, size=self.size,
                         started=_dt.datetime.now().isoformat(timespec="seconds"))
        t_start = time.perf_counter()
        board = Board(self.size)
        try:
            for colour in (BLACK, WHITE):
                self._start(colour)
            self._play_opening(board, res)
            while True:
                colour = board.to_move
                if board.num_legal(colour) == 0:
                    res.winner, res.reason = 3 - colour, "no_legal_move"
                    res.detail = f"{COLOUR_WORD[colour]} has no legal move"
                    break
                p, elapsed = self._genmove(board, colour)
                board.play(p, colour)
                vertex = coords.to_gtp(p, self.size)
                res.moves.append(vertex)
                res.times.append(round(elapsed, 4))
                res.clock_left.append(self.clocks[colour].remaining_text())
                if self.on_move is not None:
                    self.on_move(res, {c: self.clocks[c].remaining_text() for c in self.clocks})
                other = 3 - colour
                ok, text = self._cmd(other, f"play {GTP_COLOUR[colour]} {vertex}",
                                     self.command_timeout)
                if not ok:
                    raise _Lost(other, "rejected", f"refused the legal move {vertex}: {text}")
        except _Lost as lost:
            res.winner, res.reason, res.detail = 3 - lost.colour, lost.reason, lost.detail
        finally:
            self._close_all()
            res.duration = round(time.perf_counter() - t_start, 3)
        if self.stop.is_set() and res.reason not in ("no_legal_move",):
            raise Interrupted()
        return res

    def _play_opening(self, board: Board, res: GameResult) -> None:
        """The suite's moves, on the referee's board and relayed to both engines; no clock runs
        (they are nobody's choice), and an engine that refuses one forfeits."""
        for vertex in self.opening:
            colour = board.to_move
            p = coords.from_gtp(vertex, self.size)
            if not board.is_legal(p, colour):  # load_suite checked it; a guard, not a path
                raise ValueError(f"opening move {vertex} is illegal")
            board.play(p, colour)
            res.moves.append(coords.to_gtp(p, self.size))
            res.times.append(0.0)
            res.clock_left.append("-")
            for side in (BLACK, WHITE):
                ok, text = self._cmd(side, f"play {GTP_COLOUR[colour]} {res.moves[-1]}",
                                     self.command_timeout)
                if not ok:
                    raise _Lost(side, "rejected", f"refused the opening move {res.moves[-1]}: "
                                f"{text}")
        res.opening_plies = len(self.opening)

    def _genmove(self, board: Board, colour: int) -> tuple[int, float]:
        """Ask ``colour`` for a move; return (point, seconds) or raise _Lost."""
        clock = self.clocks[colour]
        if "time_left" in self.known[colour]:
            self._cmd(colour, clock.time_left_command(GTP_COLOUR[colour]), self.command_timeout)
        if self.stop.is_set():
            raise Interrupted()
        limit = clock.limit()
        try:
            ok, text, elapsed = self.engines[colour].command(f"genmove {GTP_COLOUR[colour]}",
                                                             limit)
        except EngineTimeout:
            if self.stop.is_set():
                raise Interrupted() from None
            clock.charge(limit)
            raise _Lost(colour, "time", f"no move within {limit:.2f} s "
                        f"({self.tcs[colour].describe()}); engine killed") from None
        except EngineGarbage as e:
            raise _Lost(colour, "garbage", str(e)) from None
        except EngineError as e:
            if self.stop.is_set():
                raise Interrupted() from None
            raise _Lost(colour, e.kind, str(e)) from None
        if not clock.charge(elapsed):
            raise _Lost(colour, "time", f"took {elapsed:.2f} s, more than its clock allowed "
                        f"({self.tcs[colour].describe()}, tolerance "
                        f"{self.tcs[colour].tolerance:g} s)")
        if not ok:
            raise _Lost(colour, "error", f"genmove failed: {text[:100]!r}")
        answer = text.strip()
        low = answer.lower()
        if low == "resign":
            raise _Lost(colour, "resign", f"resigned with {board.num_legal(colour)} legal moves")
        if low == "pass":
            raise _Lost(colour, "pass", "passed (NoGo has no pass)")
        try:
            p = coords.from_gtp(answer, self.size)
        except ValueError:
            raise _Lost(colour, "not_a_vertex", f"genmove answered {answer[:60]!r}") from None
        if not board.is_legal(p, colour):
            why = _classify_illegal(board, p, colour)
            raise _Lost(colour, "illegal", f"illegal move {coords.to_gtp(p, self.size)} "
                        f"({why})")
        return p, elapsed


COLOUR_WORD = {BLACK: "black", WHITE: "white"}
