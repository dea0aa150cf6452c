"""Recording a finished game: its SGF into games.sgf, then its line into results.jsonl.

The SGF goes first (the collection rewritten atomically), the result line second (one fsync'd
append: the commit point), so a kill between the two leaves a game that the next start drops
and plays again (folder.GameCollection.sync). Games are recorded one at a time, and each record
carries the two-engine test as that game left it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from . import netfiles
from .folder import GAMES, GameCollection
from .records import game_sgf
from .referee import GameResult
from .results import MatchStats, ResultsLog, two_engine_stats
from .scheduler import GameTask
from .spec import TournamentSpec


def record_of(task: GameTask, res: GameResult, spec: TournamentSpec, sgf_rel: str) -> dict:
    """A game's results.jsonl record: who played how, the moves and clocks, the commands and
    the hashes of the nets they name (what a resumed run is checked against)."""
    return {
        "key": task.key, "id": task.game_id, "black": res.black, "white": res.white,
        "winner": "B" if res.winner == 1 else "W", "result": res.result, "reason": res.reason,
        "detail": res.detail, "plies": len(res.moves), "moves": res.moves, "times": res.times,
        "clock_left": res.clock_left, "size": res.size,
        "time_control": spec.describe_time((res.black, res.white)),
        "started": res.started, "duration": res.duration, "sgf": sgf_rel,
        "pair": task.k // 2 + 1, "opening": task.opening.name if task.opening else None,
        "opening_plies": res.opening_plies,
        "commands": {"black": spec.engines[res.black].command,
                     "white": spec.engines[res.white].command},
        "files": {c: netfiles.pins(spec.engines[n].command, spec.engines[n].cwd)
                  for c, n in (("black", res.black), ("white", res.white))},
    }


class Recorder:
    """The results folder of a run: the records it started with, and those it adds."""

    def __init__(self, spec: TournamentSpec, out: Path, results: ResultsLog,
                 records: list[dict]):
        self.spec = spec
        self.results = results
        self.collection = GameCollection(out)
        self.earlier = list(records)
        self.added: list[dict] = []
        self._lock = threading.Lock()

    @property
    def records(self) -> list[dict]:
        with self._lock:
            return self.earlier + self.added

    def record(self, task: GameTask, res: GameResult,
               extra: dict | None = None) -> tuple[dict, MatchStats | None]:
        """Save a finished game; returns its record and the match with it counted."""
        spec = self.spec
        text = game_sgf(res, event=spec.name, game_id=task.game_id, tc=spec.time_of(res.black),
                        white_tc=spec.time_of(res.white),
                        opening=task.opening.name if task.opening else None)
        rec = {**record_of(task, res, spec, GAMES), **(extra or {})}
        with self._lock:
            ms = two_engine_stats(spec, self.earlier + self.added + [rec])
            if ms is not None and ms.sprt is not None:
                rec["sprt"] = {"llr": round(ms.llr, 4), "pentanomial": list(ms.penta)}
            self.collection.add(task.game_id, text)
            self.results.append(rec)  # the commit point
            self.added.append(rec)
        return rec, ms
