"""Refereed games against a deliberately broken engine (tests/broken_engine.py).

Each way an engine can fail — crash, hang, too slow, garbage output, an illegal move, a pass, an
unwarranted resign, a reply that is not a vertex, a genmove failure, refusing a legal move,
hanging on ``play``, refusing the board size, not starting — loses the game for that engine with
the right reason and result suffix, whichever colour it has; a normal game ends when the side to
move has no legal move; the SGF of a forfeited game is a valid NoGo record with the reason.
"""

import sys

import pytest
from conftest import ROOT

from nogobot.game import sgf
from nogobot.game.board import BLACK, WHITE
from nogobot.tournament.clock import RefereeTimeControl
from nogobot.tournament.records import game_sgf
from nogobot.tournament.referee import EngineConfig, Referee

pytestmark = pytest.mark.slow  # real subprocess engines: ~30 s

BROKEN = str(ROOT / "tests" / "broken_engine.py")


def engine(mode, after=2, name=None):
    return EngineConfig(name or mode, [sys.executable, BROKEN, mode, "--after", str(after)],
                        cwd=str(ROOT))


def referee(black, white, tmp_path, per_move=1.0, command_timeout=5.0):
    return Referee(black, white, size=5, time=RefereeTimeControl.per_move(per_move, tolerance=0.3),
                   startup_timeout=60, command_timeout=command_timeout, log_dir=tmp_path,
                   game_id="g")


CASES = [  # mode, broken colour, reason, result suffix, words in the detail
    ("crash", BLACK, "crash", "Forfeit", ["exit code 3", "crashing on purpose"]),
    ("crash", WHITE, "crash", "Forfeit", ["exit code 3"]),
    ("hang", WHITE, "time", "Time", ["no move within 1.30 s", "killed"]),
    ("slow", BLACK, "time", "Time", ["no move within"]),
    ("garbage", BLACK, "garbage", "Forfeit", ["I think E5 is nice"]),
    ("illegal", WHITE, "illegal", "Forfeit", ["(occupied)"]),
    ("illegal", BLACK, "illegal", "Forfeit", ["(occupied)"]),
    ("pass", BLACK, "pass", "Forfeit", ["passed"]),
    ("resign", WHITE, "resign", "R", ["resigned with"]),
    ("notvertex", BLACK, "not_a_vertex", "Forfeit", ["Z99"]),
    ("error", WHITE, "error", "Forfeit", ["no move for you"]),
    ("refuse", BLACK, "rejected", "Forfeit", ["refused the legal move"]),
    ("hangplay", WHITE, "hang", "Forfeit", ["no reply to 'play'"]),
    ("noboard", BLACK, "setup", "Forfeit", ["boardsize 5", "unacceptable size"]),
    ("nostart", WHITE, "setup", "Forfeit", ["broken on purpose"]),
]


@pytest.mark.parametrize("mode,colour,reason,suffix,words", CASES,
                         ids=[f"{c[0]}-{'B' if c[1] == BLACK else 'W'}" for c in CASES])
def test_broken_engine_loses_with_reason(tmp_path, mode, colour, reason, suffix, words):
    bad, good = engine(mode), engine("good")
    black, white = (bad, good) if colour == BLACK else (good, bad)
    res = referee(black, white, tmp_path, command_timeout=2.0).play()
    assert res.reason == reason, res.detail
    assert res.winner == 3 - colour
    assert res.result == ("W" if colour == BLACK else "B") + "+" + suffix
    for w in words:
        assert w in res.detail, res.detail
    if mode in ("hang", "slow"):
        assert res.duration < 20  # the hung engine was killed, not waited for


def test_normal_game_and_sgf(tmp_path):
    res = referee(engine("good", name="g1"), engine("good", name="g2"), tmp_path).play()
    assert res.reason == "no_legal_move" and res.result.endswith("+R")
    assert len(res.moves) == len(res.times) > 5
    text = game_sgf(res, event="test", game_id="g", tc=RefereeTimeControl.per_move(1.0))
    rec = sgf.parse(text)  # a legal NoGo game, replayed by board.py
    assert rec.result == res.result and rec.black == "g1" and len(rec.moves) == len(res.moves)
    board = rec.board()
    assert board.is_terminal() and board.winner() == res.winner
    assert "s; clock" in rec.comments[0] and "OT[1/1 Canadian]" in text


def test_time_odds_give_each_engine_its_own_clock(tmp_path):
    """Under time odds a 3 s-a-move engine with its own 4 s clock plays on against a 1 s one (the
    same engine on the game's clock loses on time: CASES' ``slow``); the SGF states both."""
    slow = EngineConfig("slow", [sys.executable, BROKEN, "slow", "--after", "5"], cwd=str(ROOT),
                        time=RefereeTimeControl.per_move(4.0, tolerance=0.3))
    ref = referee(engine("good"), slow, tmp_path)
    assert ref.tcs[BLACK].period == 1.0 and ref.tcs[WHITE].period == 4.0
    res = ref.play()
    assert res.reason == "no_legal_move", res.detail
    assert max(res.times[1::2]) > 2.5 and max(res.times[0::2]) < 1.3  # white did think slowly
    text = game_sgf(res, event="test", game_id="g", tc=ref.tcs[BLACK], white_tc=ref.tcs[WHITE])
    assert "TM[" not in text and "OT[" not in text
    assert "Time odds: black 1 s per move, white 4 s per move." in text
    assert len(sgf.parse(text).moves) == len(res.moves)


def test_forfeit_sgf_keeps_reason(tmp_path):
    res = referee(engine("good"), engine("illegal", after=3), tmp_path).play()
    assert res.result == "B+Forfeit"
    text = game_sgf(res, event="test", game_id="g", tc=RefereeTimeControl.sudden_death(60))
    assert "RE[B+Forfeit]" in text and "illegal move" in text and "TM[60]" in text
    assert len(sgf.parse(text).moves) == len(res.moves) == 5  # the illegal move is not in it
