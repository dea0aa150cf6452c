"""`nogobot timeplot`: per-move times parsed from engine logs and tournament SGFs, then drawn."""

import subprocess
import sys

import pytest

from nogobot import timeplot
from nogobot.tournament.clock import RefereeTimeControl
from nogobot.tournament.records import game_sgf
from nogobot.tournament.referee import GameResult

LOG = """genmove: using MCTSAgent (mcts)
time: black move 1 E5: planned 10.50s max 21.00s used 10.20s left 889.8s main
mcts: D4 winrate 0.5 visits 10 playouts 10 (10/s) time 0.10s stop: planned
time: black move 3 D4: planned 9.00s max 18.00s used 12.25s left 877.6s main
time: white move 2 C3: planned 1.00s max 2.00s used 0.50s left 20.0s main
"""


def test_parse_log():
    ts = timeplot.parse_log(LOG)
    assert ts.moves["black"] == [1, 3] and ts.used["black"] == [10.2, 12.25]
    assert ts.planned["black"] == [10.5, 9.0] and ts.total("white") == 0.5


def test_parse_tournament_sgf():
    res = GameResult("a", "b", 5, winner=1, reason="no_legal_move", moves=["C3", "B2", "D4"],
                     times=[1.5, 0.25, 2.0], clock_left=["8.5s", "9.75s", "6.5s"])
    text = game_sgf(res, event="t", game_id="g", tc=RefereeTimeControl.sudden_death(10))
    ts = timeplot.parse_sgf(text.encode())
    assert ts.moves["black"] == [1, 3] and ts.used["black"] == [1.5, 2.0]
    assert ts.used["white"] == [0.25]


def test_load_rejects_files_without_times(tmp_path):
    p = tmp_path / "empty.log"
    p.write_text("nothing here\n")
    with pytest.raises(ValueError, match="empty.log"):
        timeplot.load(p)


def test_cli_draws_png(tmp_path):
    pytest.importorskip("matplotlib")
    log = tmp_path / "engine.log"
    log.write_text(LOG)
    out = tmp_path / "t.png"
    res = subprocess.run([sys.executable, "-m", "nogobot", "timeplot", str(log), "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "black 22.4 s over 2 moves" in res.stdout


def test_aggregate_tournament_folder(tmp_path):
    (tmp_path / "sgf").mkdir()
    for i, (black, white) in enumerate((("a", "b"), ("b", "a"))):
        res = GameResult(black, white, 5, winner=1, reason="no_legal_move",
                         moves=["C3", "B2", "D4"], times=[1.0 + i, 0.5, 2.0],
                         clock_left=["-", "-", "-"])
        text = game_sgf(res, event="t", game_id=f"g{i}", tc=RefereeTimeControl.per_move(5))
        (tmp_path / "sgf" / f"g{i}.sgf").write_text(text)
    ts = timeplot.load(tmp_path)
    # engine a: game 0 as black (moves 1.0, 2.0), game 1 as white (0.5)
    assert ts.used["a"] == [(1.0 + 0.5) / 2, 2.0]
    assert ts.used["b"] == [(0.5 + 2.0) / 2, 2.0]
