"""`nogobot timeplot`: per-move times parsed from engine logs and tournament SGFs, then drawn."""

import subprocess
import sys

import pytest

from nogobot.tools import timeplot
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


# Two games of a 60 s engine log: in the first, move 5 reads a win rate above 0.98 (decided with
# 60 - 48 = 12 s spent) and move 7 is the solver's first proof; the second game (the move number
# goes down) is never decided.
CLOCK_LOG = """mcts: E5 winrate 0.55 visits 10 playouts 10 (10/s) time 5.00s stop: planned
time: black move 1 E5: planned 5.00s max 9.00s used 5.00s left 55.0s main
mcts: D4 winrate 0.97 visits 10 playouts 10 (10/s) time 7.00s stop: planned
time: black move 3 D4: planned 6.00s max 9.00s used 7.00s left 48.0s main
mcts: C3 winrate 0.99 visits 10 playouts 10 (10/s) time 30.00s stop: time
time: black move 5 C3: planned 6.00s max 40.00s used 30.00s left 18.0s main
mcts: B2 winrate 1.000 visits 0 playouts 0 (0/s) time 2.00s stop: solver: win (9 nodes)
time: black move 7 B2: planned 2.00s max 4.00s used 2.00s left 16.0s main
genmove: a new game
mcts: E5 winrate 0.50 visits 10 playouts 10 (10/s) time 20.00s stop: planned
time: white move 2 E5: planned 20.00s max 30.00s used 20.00s left 40.0s main
time: white move 4 A1: planned 1.00s max 2.00s used 0.50s left 39.5s main
"""


def test_clock_use_counts_the_clock_until_the_first_decided_move():
    first, second = timeplot.clock_use(CLOCK_LOG)
    assert first.main == 60 and first.used == 44 and first.rated
    assert first.decided_at == 5 and first.undecided == 12 and first.proof == "win"
    assert first.undecided_share == pytest.approx(0.2)
    assert first.least_left == 16 and first.longest == 30
    # Never decided: the whole game counts; no proof.
    assert second.main == 60 and second.used == 20.5 and second.undecided == 20.5
    assert second.decided_at is None and second.proof is None
    assert first.lost_left is None and second.lost_left is None  # no loss proven


RAVE_LOG = """rave: E5 winrate 0.512 sims 90000 (60,000/s) kept 0 nodes 1 time 1.50s stop: planned
time: white move 2 E5: planned 1.50s max 3.00s used 1.50s left 58.5s main
rave: D4 winrate 0.480 sims 90000 (60,000/s) kept 0 nodes 1 time 2.50s stop: time
time: white move 4 D4: planned 1.50s max 3.00s used 2.50s left 56.0s main
rave: C3 winrate 0.000 sims 0 (0/s) kept 0 nodes 5000 time 0.50s stop: solver: loss
time: white move 6 C3: planned 2.00s max 4.00s used 0.50s left 55.5s main
"""


def test_clock_use_reads_rave_logs():
    (game,) = timeplot.clock_use(RAVE_LOG)
    assert game.rated and game.decided_at == 6 and game.undecided == 4.0
    assert game.proof == "loss" and game.used == 4.5
    # The loss was proven at move 6, with 56 s of the 60 left at its start.
    assert game.lost_left == 56.0 and game.lost_left_share == pytest.approx(56 / 60)


def test_clock_report_reads_a_tournament_folders_logs(tmp_path):
    import json

    (tmp_path / "logs").mkdir()
    game = {"id": "001-a-vs-b", "black": "a", "white": "b", "winner": "B"}
    (tmp_path / "results.jsonl").write_text(json.dumps(game) + "\n{torn")
    first_game = CLOCK_LOG.split("genmove: a new game")[0]
    (tmp_path / "logs" / "001-a-vs-b-B.log").write_text(first_game)
    (tmp_path / "logs" / "001-a-vs-b-W.log").write_text(  # an engine that logs no win rates
        "time: white move 2 A1: planned 1.00s max 2.00s used 3.00s left 57.0s main\n")
    found = timeplot.clock_report(tmp_path)
    assert [(e, u.undecided) for e, u in found] == [("a", 12.0), ("b", 3.0)]
    table = timeplot.clock_table(found)
    assert "a: 1 game at 60 s; clock spent while undecided: median 20.0%" in table
    assert "b: 1 game at 60 s; clock spent while undecided: not known" in table
    assert "clock left at the first proven loss: no proven loss" in table
    # A lost game's engine log: the table gives the share left at the proof's move.
    (tmp_path / "logs" / "001-a-vs-b-W.log").write_text(RAVE_LOG)
    table = timeplot.clock_table(timeplot.clock_report(tmp_path))
    assert ("b: 1 game at 60 s; clock spent while undecided: median 6.7% (lowest tenth 6.7%, "
            "range 6.7%-6.7%) over 1") in table
    assert "clock left at the first proven loss: median 93.3% (highest tenth 93.3%) over 1" in table
    empty = tmp_path / "empty.log"
    empty.write_text("genmove: nothing timed\n")
    with pytest.raises(ValueError, match="empty.log: no sudden-death clock lines"):
        timeplot.clock_report(empty)


def test_cli_clock_table_and_its_errors(tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(CLOCK_LOG)
    cmd = [sys.executable, "-m", "nogobot", "timeplot", "--clock", str(log)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    # The games spent 20% and 34.2% undecided: the median of two is their mean.
    assert ("engine.log: 2 games at 60 s; clock spent while undecided: median 27.1% (lowest "
            "tenth 20.0%, range 20.0%-34.2%) over 2; in all: median 53.8%") in res.stdout
    assert not list(tmp_path.glob("*.png"))  # --clock draws nothing
    log.write_text(LOG.replace(" main", " period"))  # byo-yomi lines: no sudden-death clock
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "no sudden-death clock lines" in res.stderr
    assert "Traceback" not in res.stderr
