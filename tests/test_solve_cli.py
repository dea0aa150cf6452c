"""`nogobot solve`: the published 3x3 and 4x4 verdicts through the command line, its JSON, a
finished position reported as lost, and one clear line with exit code 2 for each bad input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import ROOT

from nogobot.cli import main

SGF_DIR = ROOT / "gtp_conformance" / "sgf"


def run(*args):
    result = CliRunner().invoke(main, ["solve", "--quiet", *args])
    return result


def test_3x3_first_player_wins():
    r = run("--size", "3", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["result"] == "win" and report["winner"] == "black"
    assert report["moves"][report["move"]] == "win" and report["nodes"] > 0
    # The kernels are loaded before the search's clock starts, and reported apart.
    assert report["startup_seconds"] >= 0 and report["seconds"] >= 0


@pytest.mark.slow  # a few hundred thousand nodes
def test_4x4_second_player_wins_every_opening_lost():
    r = run("--size", "4", "--all", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["result"] == "loss" and report["winner"] == "white"
    assert len(report["moves"]) == 16 and set(report["moves"].values()) == {"loss"}


def test_text_report_and_moves():
    # After B B2 on 3x3 white to move; each result line and the figures are printed.
    r = run("--size", "3", "--moves", "B B2", "--all")
    assert r.exit_code == 0, r.output
    assert "white to move" in r.output and "result:" in r.output and "nodes:" in r.output


def test_finished_position_is_lost_for_the_side_to_move():
    # 2x2: B1, B2, A1 leave white (to move) without a legal move (A2 would capture).
    r = run("--size", "2", "--moves", "B B1 W B2 B A1", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["to_move"] == "white" and report["result"] == "loss"
    assert report["winner"] == "black" and report["stopped"].startswith("finished")


def test_sgf_position_after_a_move():
    r = run(str(SGF_DIR / "game3.sgf"), "--move", "2", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["stones"] == 2


@pytest.mark.parametrize("args, words", [
    ([str(SGF_DIR / "garbage.sgf")], "not an SGF"),
    ([str(SGF_DIR / "capture.sgf")], "capture"),
    ([str(SGF_DIR / "pass.sgf")], "pass"),
    ([str(SGF_DIR / "size21.sgf")], "size"),
    (["no-such-file.sgf"], "cannot read"),
    ([str(SGF_DIR / "game3.sgf"), "--move", "999"], "moves"),
    (["--size", "5", "--moves", "B C3 W C3"], "illegal"),
    (["--size", "5", "--moves", "B Z9"], "not a point"),
    (["--size", "21"], "outside"),
    (["--size", "3x9"], "square"),
    (["--size", "five"], "not a board size"),
    (["--move", "3"], "needs an SGF"),
    (["--size", "3", "--off", "magic"], "not a rule"),
    (["--size", "3", "--max-seconds", "0"], "positive"),
])
def test_bad_input_one_line_exit_2(args, words):
    r = run(*args)
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("nogobot solve: "), r.output
    assert words.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in r.output


def test_limits_stop_with_what_is_known():
    r = run("--size", "6", "--max-seconds", "0.5", "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["result"] == "unknown" and report["stopped"] == "limit reached"
    assert report["seconds"] < 10


def test_ctrl_c_stops_the_search_and_reports(monkeypatch):
    """An interrupt (what Ctrl-C's handler does: ``request_stop``) ends the search at its next
    read of the clock, and the report says so."""
    import threading

    from nogobot.cli import solve as solve_cli
    from nogobot.game.board import Board

    def press():
        import os
        import signal
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.0, press)
    timer.start()
    try:
        report = solve_cli.solve_position(Board(7), all_moves=False, max_seconds=None,
                                          max_nodes=None, tt_mb=16, rules={},
                                          log=lambda m: None)
    finally:
        timer.cancel()
    assert report["stopped"] == "interrupted (Ctrl-C)" and report["result"] == "unknown"
