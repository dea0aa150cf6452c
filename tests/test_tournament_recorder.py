"""The run's parts without engines: the recorder (SGF first, then the result line), the SPRT's
stop (exactly one game decides it) and the scheduler's pool (a stop cancels, an error surfaces).
"""

from __future__ import annotations

import hashlib
import threading

import pytest

from nogobot.game.board import BLACK, WHITE
from nogobot.tournament.folder import GameCollection, read_records, split_collection
from nogobot.tournament.recorder import Recorder
from nogobot.tournament.referee import GameResult
from nogobot.tournament.results import ResultsLog, two_engine_stats
from nogobot.tournament.scheduler import GameTask, SprtStop, play_all, schedule
from nogobot.tournament.spec import parse_spec


def _spec(tmp_path, sprt: bool = False):
    net = tmp_path / "net.onnx"
    net.write_bytes(b"bytes of a net")
    data = {"name": "m", "board_size": 5, "games": 4,
            "engines": {"a": f"nogobot gtp --model {net} --seed {{seed}}",
                        "b": "nogobot agent random --seed {seed}"}}
    if sprt:
        data["sprt"] = {"elo0": 0, "elo1": 500, "alpha": 0.2, "beta": 0.2}
    return parse_spec(data, str(tmp_path / "m.yaml"))


def _result(task: GameTask, winner: int) -> GameResult:
    return GameResult(black=task.black, white=task.white, size=5, winner=winner,
                      reason="no_legal_move", moves=["C3", "B2"], times=[0.1, 0.1],
                      clock_left=["-", "-"], started="2000-01-01T00:00:00", duration=1.0)


def test_the_recorder_saves_the_sgf_then_the_line(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    rec = Recorder(spec, out, ResultsLog(out / "results.jsonl"), [])
    tasks = schedule(spec, 2)
    first, _ = rec.record(tasks[0], _result(tasks[0], BLACK))
    assert [r["id"] for r in read_records(out)] == [tasks[0].game_id]
    net = str(tmp_path / "net.onnx")  # the record keeps the hash of the net it names
    assert first["files"] == {"black": {net: hashlib.sha256(b"bytes of a net").hexdigest()},
                              "white": {}}
    games = split_collection((out / "games.sgf").read_bytes())
    assert [gn for gn, _ in games] == [tasks[0].game_id]

    # A kill between the SGF and the line: the game is in games.sgf but not recorded, and the
    # next start drops it (it is played again).
    def killed(record):
        raise KeyboardInterrupt

    rec.results.append = killed
    with pytest.raises(KeyboardInterrupt):
        rec.record(tasks[1], _result(tasks[1], WHITE))
    assert len(split_collection((out / "games.sgf").read_bytes())) == 2
    assert len(read_records(out)) == 1 and rec.records == [first]
    assert GameCollection(out).sync([r["id"] for r in read_records(out)]) == 1


def test_each_record_carries_the_test_as_its_game_left_it(tmp_path):
    spec = _spec(tmp_path, sprt=True)
    out = tmp_path / "out"
    out.mkdir()
    rec = Recorder(spec, out, ResultsLog(out / "results.jsonl"), [])
    for task in schedule(spec, 4):
        r, ms = rec.record(task, _result(task, BLACK if task.black == "a" else WHITE))
        assert r["sprt"]["llr"] == pytest.approx(ms.llr, abs=1e-4)
    assert two_engine_stats(spec, read_records(out)).wins == 4


class _Stats:
    def __init__(self, verdict):
        self.verdict = verdict


def test_the_sprt_stop_is_decided_by_exactly_one_game():
    stop = SprtStop()
    assert not stop.update(None) and not stop.update(_Stats(None)) and not stop.is_set()
    decided = []
    threads = [threading.Thread(target=lambda: decided.append(stop.update(_Stats("H1"))))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert decided.count(True) == 1 and stop.is_set()
    assert not stop.update(_Stats("H0"))  # the verdict stays the one at the crossing


def test_the_pool_plays_every_game_and_a_stop_cancels(tmp_path):
    spec = _spec(tmp_path)
    tasks = schedule(spec, 4)
    played = []
    assert not play_all(tasks, 2, played.append, lambda: pytest.fail("not stopped"))
    assert sorted(t.game_id for t in played) == sorted(t.game_id for t in tasks)

    cancelled = []

    def interrupted(task):
        raise KeyboardInterrupt

    assert play_all(tasks, 1, interrupted, lambda: cancelled.append(True))
    assert cancelled == [True]

    def broken(task):
        raise ValueError("a game's own error")

    with pytest.raises(ValueError, match="a game's own error"):
        play_all(tasks, 2, broken, lambda: None)
