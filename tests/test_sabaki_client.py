"""nogobot driven by a real client: Sabaki's own GTP controller (npm @sabaki/gtp, pinned in
tests/sabaki/package.json) through tests/sabaki/drive.js. It attaches as Sabaki does, syncs a
position with ControllerStateTracker, asks genmove, streams analysis with Sabaki's preferred
command and stops it by sending the next command, runs genmove_analyze, and checks that an
illegal (capturing) history fails the sync.

Skipped when node or the package is missing (``npm install`` in tests/sabaki installs it;
.ci/run does that when npm exists)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

SABAKI = ROOT / "tests" / "sabaki"
NODE = shutil.which("node")
PACKAGE = SABAKI / "node_modules" / "@sabaki" / "gtp" / "package.json"
VERTEX = re.compile(r"[A-HJ][1-9]")

pytestmark = pytest.mark.skipif(
    NODE is None or not PACKAGE.is_file(),
    reason="needs node and @sabaki/gtp (cd tests/sabaki && npm install)")


@pytest.fixture(scope="module")
def report():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([NODE, "drive.js", sys.executable, "-m", "nogobot", "gtp", "--quiet",
                          "--playouts", "32"], cwd=SABAKI, env=env, capture_output=True,
                         text=True, timeout=180, check=False)
    assert res.stdout.strip(), res.stderr
    rep = json.loads(res.stdout)
    assert res.returncode == 0, rep.get("exception") or rep
    return rep


def test_attach(report):
    attach = report["attach"]
    assert not any(r["error"] for r in attach.values())
    assert attach["name"]["content"] == "nogobot"
    assert attach["protocol_version"]["content"] == "2"
    # Sabaki picks the first listed of analyze / kata-analyze / lz-analyze (and likewise for
    # genmove_analyze); nogobot lists all, so Sabaki uses the plain Sabaki-flavoured names.
    assert report["analyzeCommand"] == "analyze"
    assert report["genmoveCommand"] == "genmove_analyze"


def test_sync_and_genmove(report):
    state = report["sync"]["state"]
    assert state["boardsize"] == [9, 9] and state["komi"] == 0
    assert [h["args"] for h in state["history"]] == [["B", "E5"], ["W", "C3"], ["B", "G7"]]
    gen = report["genmove"]
    assert not gen["error"] and VERTEX.fullmatch(gen["content"])
    assert gen["content"] not in ("E5", "C3", "G7")
    # Sabaki then syncs the same history plus that move: nothing needs to be sent.
    assert report["resync"] == {"sent": [], "historyLength": 4}


def _check_stream(stream, floats: bool):
    assert not stream["error"]
    lines = stream["lines"]
    assert len(lines) >= 3
    for line in lines:
        assert line["count"] >= 1
        for k, v in enumerate(line["top"]):
            assert VERTEX.fullmatch(v["move"]) and v["order"] == k
            assert 0 <= v["winrate"] <= 100 and v["visits"] >= 0
            assert ("." in v["rawWinrate"]) == floats
            assert v["pv"] and v["pv"][0] == v["move"]
            if floats:
                assert v["scoreLead"] is not None
    # The interval (10 cs) is respected roughly until the stop.
    times = [line["t"] for line in lines]
    assert (times[2] - times[0]) / 2 >= 70 and times[1] - times[0] >= 30, times
    # Stopped by the next command, which was answered after the analysis reply closed.
    assert stream["next"] is not None and not stream["next"]["error"]
    assert stream["stoppedAfter"] - times[min(2, len(times) - 1)] < 1500


def test_analysis_streams_and_stops_on_the_next_command(report):
    _check_stream(report["analysis"], floats=True)
    assert report["analysis"]["next"]["content"] == "2"  # protocol_version


def test_lz_analysis(report):
    _check_stream(report["lzAnalysis"], floats=False)
    assert report["lzAnalysis"]["next"]["content"] == "nogobot"


def test_genmove_analyze(report):
    ga = report["genmoveAnalyze"]
    assert not ga["error"] and ga["infoLines"] >= 1
    played = [ln for ln in ga["lastLines"] if ln.startswith("play ")]
    assert len(played) == 1 and VERTEX.fullmatch(played[0][5:])
    history = report["afterGenmoveAnalyze"]["history"]
    assert len(history) == 5 and history[-1] == {"name": "play", "args": ["B", played[0][5:]]}


def test_illegal_history_fails_the_sync_and_quit_exits_cleanly(report):
    assert report["illegalSync"]["failed"]
    assert report["exit"] == {"code": 0, "signal": None}
    assert not report.get("timeout")
