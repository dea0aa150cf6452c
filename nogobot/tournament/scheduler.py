"""Which games a run plays, in what order, and playing them on a pool of threads.

Round k of every pairing comes before round k+1, so a partial run stays balanced; games 2j and
2j+1 of a pairing are a pair (the same opening, colours swapped). ``play_all`` runs one job per
game and turns Ctrl-C and SIGTERM into an orderly stop; ``SprtStop`` ends a two-engine match
once its test is decided.
"""

from __future__ import annotations

import concurrent.futures as cf
import signal
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from .openings import Opening
from .spec import TournamentSpec


@dataclass(frozen=True)
class GameTask:
    a: str
    b: str
    k: int  # index within the pairing; a is black when k is even
    opening: Opening | None = None  # games 2j and 2j+1 share one (spec.opening_of)

    @property
    def black(self) -> str:
        return self.a if self.k % 2 == 0 else self.b

    @property
    def white(self) -> str:
        return self.b if self.k % 2 == 0 else self.a

    @property
    def key(self) -> list:
        return [self.a, self.b, self.k]

    @property
    def game_id(self) -> str:
        return f"{self.k + 1:03d}-{self.a}-vs-{self.b}"


def game_seed(task: GameTask, engine: str) -> int:
    """A seed that differs per game and engine but is the same on every rerun."""
    return zlib.crc32(f"{task.game_id}:{engine}".encode()) & 0x7FFFFFFF


def game_argv(argv: list[str], task: GameTask | None, engine: str) -> list[str]:
    """Fill the ``{seed}`` placeholder of an engine command (0 in the start-up check).

    Without it, seeded deterministic engines would replay the same game in every round."""
    seed = str(game_seed(task, engine)) if task is not None else "0"
    return [a.replace("{seed}", seed) for a in argv]


def schedule(spec: TournamentSpec, games: int) -> list[GameTask]:
    """Round k of every pairing before round k+1, so a partial tournament stays balanced."""
    return [GameTask(a, b, k, spec.opening_of(k)) for k in range(games)
            for a, b in spec.pairings()]


class SprtStop:
    """The SPRT's stop: once a recorded game decides the test, no new game starts. Games in
    flight are played out and recorded; the verdict stays the one at the crossing."""

    def __init__(self):
        self._decided = threading.Event()
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._decided.is_set()

    def update(self, stats) -> bool:
        """Take the match as a game left it (``results.MatchStats`` or None); True only for
        the game that decided the test."""
        if stats is None or stats.verdict is None:
            return False
        with self._lock:
            if self._decided.is_set():
                return False
            self._decided.set()
            return True


def play_all(todo: list[GameTask], jobs: int, play_one: Callable[[GameTask], object],
             cancel: Callable[[], None]) -> bool:
    """Run ``play_one`` for every task on ``jobs`` threads; a game's error is raised here.
    Ctrl-C or SIGTERM calls ``cancel`` (which ends the games in flight) and drops the games not
    started; returns True when that happened."""
    old_term = None
    if threading.current_thread() is threading.main_thread():
        def on_term(signum, frame):
            raise KeyboardInterrupt
        old_term = signal.signal(signal.SIGTERM, on_term)
    pool = cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="game")
    interrupted = False
    try:
        pending = {pool.submit(play_one, t) for t in todo}
        while pending:
            finished, pending = cf.wait(pending, timeout=0.25)
            for f in finished:
                f.result()
    except KeyboardInterrupt:
        interrupted = True
        cancel()
        pool.shutdown(wait=True, cancel_futures=True)
    finally:
        pool.shutdown(wait=True)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    return interrupted
