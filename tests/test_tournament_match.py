"""Two-engine matches end to end from the command line: an opening suite played paired, and an
SPRT that stops the match, resumes, and is reported (real subprocess engines, 5x5 boards).

Checks: with a suite, games 2j and 2j+1 start from opening j with colours swapped, the engines
continue legally from the position the referee set up, and the collection shows the opening
moves; an SPRT match between an engine and one that resigns at once stops with H1 after the
pairs the LLR needs (plus games already in flight), not the 40 it was allowed; stopped with
SIGTERM part way and rerun (with --sprt given on the command line, unquoted), it reaches the
same verdict at the same game; a third run plays nothing; `tournament report` shows the LLR;
--sprt on three engines is refused in one line.
"""

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from nogobot.game import sgf
from nogobot.tournament.folder import read_games
from nogobot.tournament.sprt import SprtConfig, llr

pytestmark = pytest.mark.slow  # real subprocess engines: ~40 s

BROKEN = str(ROOT / "tests" / "broken_engine.py")


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "nogobot", *args], cwd=ROOT, timeout=timeout,
                          capture_output=True, text=True)


def records(out):
    path = out / "results.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_opening_suite_played_paired(tmp_path):
    (tmp_path / "suite.sgf").write_text("(;GN[five-1]SZ[5];B[cc];W[bb])\n"
                                        "(;GN[five-2]SZ[5];B[aa])\n")
    spec = tmp_path / "m.yaml"
    spec.write_text("""
board_size: 5
games: 6
jobs: 2
openings: suite.sgf
time: {kind: per_move, seconds: 2, tolerance: 1}
engines:
  random: nogobot agent random --seed {seed}
  greedy: nogobot agent greedy --seed {seed}
""")
    out = tmp_path / "out"
    r = cli("tournament", str(spec), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    recs = sorted(records(out), key=lambda x: x["key"][2])
    assert len(recs) == 6
    games = {name.rsplit("#", 1)[1]: data for name, data in read_games(out)}
    for x in recs:
        k = x["key"][2]
        opening = ["five-1", "five-2"][(k // 2) % 2]
        assert x["opening"] == opening and x["pair"] == k // 2 + 1
        first = ["C3", "B4"] if opening == "five-1" else ["A5"]
        assert x["moves"][:len(first)] == first and x["opening_plies"] == len(first)
        assert x["reason"] == "no_legal_move", x  # the engines knew the position
        rec = sgf.parse(games[x["id"]])
        assert len(rec.moves) == x["plies"] and rec.comments[0] == "opening"
    for j in range(3):  # a pair: one opening, each engine black once
        a, b = recs[2 * j], recs[2 * j + 1]
        assert a["opening"] == b["opening"] and (a["black"], a["white"]) == (b["white"],
                                                                              b["black"])
    assert "opening suite suite.sgf" in r.stdout and "pairs LL/WL/WW" in r.stdout


def spec_text(extra=""):
    return f"""
name: sprt
board_size: 5
games: 40
jobs: 2
time: {{kind: per_move, seconds: 5}}
{extra}
engines:
  good: [{sys.executable}, {BROKEN}, good]
  quitter: [{sys.executable}, {BROKEN}, resign, --after, "1"]
"""


def test_sprt_stops_resumes_and_reports(tmp_path):
    cfg = SprtConfig(0, 250)
    need = next(j for j in range(1, 40) if llr([0, 0, 0, 0, j], cfg) >= cfg.upper)
    spec = tmp_path / "sprt.yaml"
    spec.write_text(spec_text("sprt: {elo0: 0, elo1: 250}"))
    out = tmp_path / "out"
    r = cli("tournament", str(spec), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    recs = records(out)
    assert all(x["winner"] == ("B" if x["black"] == "good" else "W") for x in recs)
    assert 2 * need <= len(recs) <= 2 * need + 2  # the deciding pair + at most jobs in flight
    summary = json.loads((out / "summary.json").read_text())["match"]
    assert summary["sprt"]["verdict"] == "H1" and summary["sprt"]["decided_at"] == 2 * need
    assert summary["pentanomial"]["WW"] == len(recs) // 2 and summary["test"] == "good"
    assert f"H1 accepted at game {2 * need}" in r.stdout and "LLR" in r.stdout

    # The same test stopped part way and resumed: the same crossing.
    out2 = tmp_path / "out2"
    spec.write_text(spec_text())  # no sprt in the spec: it comes from the command line
    cmd = [sys.executable, "-m", "nogobot", "tournament", str(spec), "--out", str(out2),
           "--sprt", "elo0=0", "elo1=250"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    deadline = time.monotonic() + 120
    while len(records(out2)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    text, _ = proc.communicate(timeout=60)
    part = records(out2)
    assert proc.returncode == 130 and 3 <= len(part) < 2 * need, text
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"resuming: {len(part)} of 40" in r.stdout
    assert f"H1 accepted at game {2 * need}" in r.stdout
    assert records(out2)[:len(part)] == part
    n = len(records(out2))
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "nothing to play" in r.stdout, r.stdout + r.stderr
    assert len(records(out2)) == n and len(read_games(out2)) == n

    r = cli("tournament", "report", str(out2))
    assert r.returncode == 0 and f"H1 accepted at game {2 * need}" in r.stdout, r.stdout

    three = tmp_path / "three.yaml"
    three.write_text(spec_text().replace("engines:", "engines:\n  other: [x]"))
    r = cli("tournament", str(three), "--sprt", "elo0=0", "elo1=5")
    assert r.returncode != 0 and "two engines" in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0, r.stderr
