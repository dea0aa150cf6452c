"""Whole tournaments from the command line, among the real baseline agents (tiny: 5x5 boards).

Checks: a round robin of random / rollout / alphabeta finishes with every game in the results
file once, colours alternating, every game in the one SGF collection (games.sgf) and the logs in
logs.tar.gz, the standings table and summary written;
a tournament stopped with SIGTERM (clean stop, exit 130) and then killed with SIGKILL (plus a
torn last line) resumes on rerun, keeps every finished game unchanged and ends with exactly the
scheduled games, and refuses to mix in games at a changed clock; --report reprints the tables
without playing.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from nogobot.game import sgf
from nogobot.tournament.folder import read_games

pytestmark = pytest.mark.slow  # real subprocess engines: ~30 s


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "nogobot", *args], cwd=ROOT, timeout=timeout,
                          capture_output=True, text=True)


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_round_robin_of_baselines(tmp_path):
    spec = tmp_path / "rr.yaml"
    spec.write_text("""
name: rr
board_size: 5
games: 2
jobs: 2
anchor: random
time: {kind: per_move, seconds: 2, tolerance: 1}
engines:
  random: nogobot agent random --seed 1
  rollout: nogobot agent rollout --playouts 300 --seed 2
  alphabeta: nogobot agent alphabeta --seconds 0.05 --seed 3
""")
    out = tmp_path / "out"
    r = cli("tournament", str(spec), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    recs = [json.loads(x) for x in lines(out / "results.jsonl")]
    assert len(recs) == 6
    keys = sorted(tuple(x["key"]) for x in recs)
    assert keys == sorted((a, b, k) for a, b in [("random", "rollout"), ("alphabeta", "random"),
                                                 ("alphabeta", "rollout")] for k in range(2))
    games = {name.rsplit("#", 1)[1]: data for name, data in read_games(out)}
    assert x_only(out) == ["games.sgf", "logs.tar.gz", "results.jsonl", "standings.txt",
                           "summary.json"]
    for x in recs:
        a, b, k = x["key"]
        assert (x["black"], x["white"]) == ((a, b) if k % 2 == 0 else (b, a))
        assert x["reason"] == "no_legal_move", x  # nobody forfeits or flags
        assert x["sgf"] == "games.sgf" and x["pair"] == k // 2 + 1
        rec = sgf.parse(games[x["id"]])
        assert rec.result == x["result"] and len(rec.moves) == x["plies"]
    table = (out / "standings.txt").read_text()
    for name in ("random", "rollout", "alphabeta", "Elo", "LOS"):
        assert name in table
    assert json.loads((out / "summary.json").read_text())["games"] == 6
    assert "Standings" in r.stdout and "Traceback" not in r.stderr
    r = cli("tournament", str(spec), "--out", str(out), "--report")
    assert r.returncode == 0 and "Standings" in r.stdout and len(lines(out / "results.jsonl")) == 6


def x_only(folder):
    return sorted(os.listdir(folder))


def _run_until(cmd, results, n, sig):
    """Start the harness; send ``sig`` once results has at least n lines."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    deadline = time.monotonic() + 240
    while len(lines(results)) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out


def test_resume_after_stop_and_kill(tmp_path):
    spec = tmp_path / "res.yaml"
    spec.write_text("""
name: res
board_size: 5
games: 6
jobs: 1
time: {kind: per_move, seconds: 5}
engines:
  random: nogobot agent random --seed {seed}
  greedy: nogobot agent greedy --seed {seed}
""")
    out = tmp_path / "out"
    results = out / "results.jsonl"
    cmd = [sys.executable, "-m", "nogobot", "tournament", str(spec), "--out", str(out)]
    code, text = _run_until(cmd, results, 1, signal.SIGTERM)
    first = lines(results)
    assert code == 130 and "interrupted" in text and 1 <= len(first) < 6, text
    code, text = _run_until(cmd, results, len(first) + 1, signal.SIGKILL)
    second = lines(results)
    assert code == -signal.SIGKILL and second[:len(first)] == first and len(second) < 6, text
    with open(results, "a") as f:
        f.write('{"key": ["greedy", "random", 5], "bl')  # torn by the kill
    r = cli("tournament", str(spec), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"resuming: {len(second)} of 6 games already played" in r.stdout
    final = lines(results)
    assert final[:len(second)] == second and len(final) == 6
    keys = [tuple(json.loads(x)["key"]) for x in final]
    assert sorted(keys) == [("greedy", "random", k) for k in range(6)]
    moves = {tuple(json.loads(x)["moves"]) for x in final}
    assert len(moves) == 6  # {seed} differs per game: no round replays another
    assert [n.rsplit("#", 1)[1] for n, _ in read_games(out)] == [
        json.loads(x)["id"] for x in final]  # the collection follows results.jsonl
    assert not (out / "sgf").exists() and not (out / "logs").exists()
    r = cli("tournament", str(spec), "--out", str(out))
    assert r.returncode == 0 and "already in" in r.stdout and len(lines(results)) == 6
    # A changed clock (here one engine's own: time odds) is refused, not mixed in.
    spec.write_text(spec.read_text().replace(
        "greedy: nogobot agent greedy --seed {seed}",
        "greedy: {command: 'nogobot agent greedy --seed {seed}', time: {kind: per_move, "
        "seconds: 2}}"))
    r = cli("tournament", str(spec), "--out", str(out))
    text = r.stdout + r.stderr
    assert r.returncode != 0 and "was played at '5 s per move'" in text, text
    assert "greedy 2 s per move, random 5 s per move" in text and "Traceback" not in text
    assert lines(results) == final


def test_seed_placeholder():
    from nogobot.tournament.runner import GameTask, game_argv

    argv = ["x", "--seed", "{seed}"]
    s1 = game_argv(argv, GameTask("a", "b", 0), "a")[2]
    assert s1 == game_argv(argv, GameTask("a", "b", 0), "a")[2]  # same on a rerun
    assert s1 != game_argv(argv, GameTask("a", "b", 1), "a")[2]
    assert s1 != game_argv(argv, GameTask("a", "b", 0), "b")[2]
    assert game_argv(argv, None, "a") == ["x", "--seed", "0"]


def test_plot_or_clear_message(tmp_path, monkeypatch):
    from nogobot.tournament.results import compute_standings
    from nogobot.tournament.runner import plot_standings
    from nogobot.tournament.spec import parse_spec

    spec = parse_spec({"engines": {"a": "x", "b": "y"}})
    recs = [{"key": ["a", "b", k], "black": "a", "white": "b", "winner": w,
             "reason": "no_legal_move", "moves": [], "times": []}
            for k, w in enumerate("BWB")]
    st = compute_standings(recs, ["a", "b"], "a")
    try:
        import matplotlib  # noqa: F401
        assert plot_standings(spec, st, tmp_path / "s.png") is None
        assert (tmp_path / "s.png").stat().st_size > 0
    except ImportError:
        pass
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    msg = plot_standings(spec, st, tmp_path / "t.png")
    assert "needs matplotlib" in msg and not (tmp_path / "t.png").exists()
