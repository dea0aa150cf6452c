"""`nogobot gtp` as a real process: raw-byte framing, stdout purity, EOF/quit exit status,
command-line options."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

from nogobot.net.modelfile import SHIPPED_MODEL_NAMES

FRAMED = re.compile(rb"(?:[=?]\d* [^\n]*(?:\n[^\n]+)*\n\n)*")


def gtp(data: bytes, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "nogobot", "gtp", *args], input=data,
                          capture_output=True, timeout=timeout, env=env, check=False)


def responses(stdout: bytes) -> list[str]:
    assert FRAMED.fullmatch(stdout), stdout  # nothing but well-framed responses
    return [r.decode() for r in stdout.split(b"\n\n")[:-1]]


def test_raw_framing_and_preprocessing():
    data = (b"1 name\r\n"  # CR LF
            b"\t2\tprotocol_version\t\n"  # tabs
            b"3 proto\x01col_ver\x7fsion\x00\n"  # control characters
            b"4 protocol_version # a comment\n"
            b"# only a comment\n\n   \n\t\n"  # no response to these
            b"\xff\xfe\xfd\n"  # invalid UTF-8
            b"5 boardsize 3\n6 play b \xc3\xa9\n"
            b"7 gogui-rules_board\n"
            b"8 showboard\n"
            b"9 quit\n"
            b"10 name\n")  # after quit: never answered
    res = gtp(data, "--quiet")
    assert res.returncode == 0
    got = responses(res.stdout)
    assert got[:5] == ["=1 nogobot", "=2 2", "=3 2", "=4 2", "? unknown command"]
    assert got[5:7] == ["=5 ", "?6 syntax error"]
    assert got[7] == "=7 . . .\n. . .\n. . ."
    assert got[8].startswith("=8 \n   A B C\n 3 . . . 3")
    assert got[9] == "=9 "
    assert len(got) == 10


def test_eof_without_quit_exits_zero():
    res = gtp(b"name\nboardsize 5\nplay b C3")  # no final newline either
    assert res.returncode == 0
    assert responses(res.stdout) == ["= nogobot", "= ", "= "]


def test_empty_input_exits_zero():
    res = gtp(b"")
    assert res.returncode == 0 and res.stdout == b""


def test_logs_go_to_stderr_only():
    res = gtp(b"boardsize 5\ngenmove b\ngenmove w\nloadsgf /no/such/file.sgf\n",
              "--playouts", "32")
    assert res.returncode == 0
    got = responses(res.stdout)
    assert got[-1] == "? cannot load file"
    assert b"MCTSAgent" in res.stderr and b"/no/such/file.sgf" in res.stderr
    assert b"time: black move 1" in res.stderr  # the per-move time log
    # Which net plays: the default net, or its int8 encoding on a CPU with int8 dot products.
    assert any(f"network: {n} (".encode() in res.stderr for n in SHIPPED_MODEL_NAMES)
    quiet = gtp(b"boardsize 5\ngenmove b\n", "--quiet", "--playouts", "32")
    assert quiet.stderr == b""


def test_options():
    res = gtp(b"gogui-rules_board_size\ngenmove b\n", "--size", "7", "--seed", "5",
              "--time", "30", "--quiet")
    assert res.returncode == 0
    got = responses(res.stdout)
    assert got[0] == "= 7" and re.fullmatch(r"= [A-HJ][1-7]", got[1])
    # The same seed and a fixed playout count give the same game.
    script = b"boardsize 9\n" + b"genmove b\ngenmove w\n" * 15
    fixed = ("--seed", "3", "--quiet", "--playouts", "50")
    a, b = gtp(script, *fixed), gtp(script, *fixed)
    assert a.stdout == b.stdout
    for bad in (["--size", "1"], ["--size", "20"], ["--time", "-1"]):
        assert gtp(b"name\n", *bad).returncode != 0


@pytest.mark.parametrize("line", [b"quit\n", b"7 quit\n", b"quit # bye\r\n"])
def test_quit_exits_zero(line):
    res = gtp(line + b"name\n")
    assert res.returncode == 0
    assert len(responses(res.stdout)) == 1 and res.stdout.startswith(b"=")
