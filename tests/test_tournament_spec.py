"""Tournament specs, the referee clock, and bad input that must fail before any game.

Checks: the shipped specs in tournaments/ load; YAML syntax errors, unknown fields, wrong types,
duplicate keys and inconsistent gauntlets are reported with file, line and field; `nogobot`
commands run with this Python; the clock flags sudden death, byo-yomi and per-move overruns
beyond the tolerance and sends the right time_settings/time_left; from the command line, a spec
error, an engine that does not start, an unknown agent option and an unknown harness option all
exit with a one-paragraph message, no traceback and no game played.
"""

import subprocess
import sys

import pytest

from conftest import ROOT
from nogobot.tournament.clock import RefereeTimeControl, SideClock
from nogobot.tournament.spec import SpecError, load_spec

GOOD = """\
name: t
board_size: 5
games: 2
time: {kind: per_move, seconds: 1}
engines:
  a: nogobot agent random --seed 1
  b:
    command: [python, tests/broken_engine.py, good]
    threads: 2
"""


def write(tmp_path, text, name="spec.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "tournaments").rglob("*.yaml")
                                         if "candidates" not in p.parts), ids=str)
def test_shipped_specs_load(path):
    spec = load_spec(path)
    assert len(spec.engines) >= 2 and spec.pairings()


def test_good_spec(tmp_path):
    spec = load_spec(write(tmp_path, GOOD))
    assert spec.board_size == 5 and spec.games == 2 and spec.anchor == "a"
    assert spec.engines["a"].argv[:3] == [sys.executable, "-m", "nogobot"]
    assert spec.engines["b"].threads == 2
    assert spec.engines["b"].environment()["OMP_NUM_THREADS"] == "2"
    assert spec.engines["a"].environment()["NUMBA_NUM_THREADS"] == "1"
    assert spec.pairings() == [("a", "b")]
    assert spec.time.kind == "per_move" and spec.time.period == 1


@pytest.mark.parametrize("text,expect", [
    (GOOD.replace("games: 2", "games: [2"),
     "spec.yaml:4:5: YAML syntax error: expected ',' or ']', but got ':' "
     "(while parsing a flow sequence started at line 3)"),
    (GOOD.replace("games: 2", "gmaes: 2"), "spec.yaml:3: gmaes: unknown field"),
    (GOOD.replace("games: 2", "games: two"), "spec.yaml:3: games: must be an integer"),
    (GOOD.replace("board_size: 5", "board_size: 40"), "spec.yaml:2: board_size: must be 2..19"),
    (GOOD.replace("seconds: 1", "secs: 1"), "spec.yaml:4: time.secs: unknown field"),
    (GOOD.replace("per_move", "blitz"), "spec.yaml:4: time.kind: must be one of"),
    (GOOD.replace("seconds: 1", "seconds: 1, main: 3"), "spec.yaml:4: time.main: not used with "
     "kind per_move"),
    (GOOD.replace("threads: 2", "threads: 0"), "spec.yaml:9: engines.b.threads: must be >= 1"),
    (GOOD.replace("threads: 2", "thread: 2"), "spec.yaml:9: engines.b.thread: unknown field"),
    (GOOD + "games: 3\n", "spec.yaml:10: games: duplicate key"),
    (GOOD.replace("threads: 2", "threads: 2\n    time: {kind: sudden_death}"),
     "spec.yaml:10: engines.b.time: kind sudden_death needs `main`"),
    (GOOD.replace("threads: 2", "threads: 2\n    time: {kind: per_move, seconds: -1}"),
     "spec.yaml:10: engines.b.time.seconds: must be > 0"),
    (GOOD + "format: gauntlet\n", "format: a gauntlet needs"),
    (GOOD + "format: gauntlet\ngauntlet: zz\n", "gauntlet: 'zz' is not one of the engines"),
    (GOOD + "anchor: zz\n", "spec.yaml:10: anchor: 'zz' is not one of the engines"),
    ("engines: {a: x}\n", "a tournament needs at least two engines"),
    ("name: x\n", "engines: missing"),
    ("", "the spec is empty"),
])
def test_spec_errors_name_line_and_field(tmp_path, text, expect):
    with pytest.raises(SpecError) as err:
        load_spec(write(tmp_path, text))
    assert expect in str(err.value).replace(str(tmp_path) + "/", "")


def test_engine_time_odds(tmp_path):
    """An engine's own ``time`` replaces the tournament's clock for it alone."""
    spec = load_spec(write(tmp_path, GOOD.replace(
        "threads: 2", "threads: 2\n    time: {kind: sudden_death, main: 15, tolerance: 1}")))
    assert spec.time_of("a") == spec.time and spec.engines["a"].time is None
    assert spec.time_of("b") == RefereeTimeControl.sudden_death(15, tolerance=1.0)
    assert spec.has_time_odds()
    assert spec.describe_time() == "a 1 s per move, b 15 s sudden death"
    assert spec.describe_time(("b", "a")) == "b 15 s sudden death, a 1 s per move"
    same = load_spec(write(tmp_path, GOOD.replace(
        "threads: 2", "threads: 2\n    time: {kind: per_move, seconds: 1}"), "same.yaml"))
    assert not same.has_time_odds() and same.describe_time() == "1 s per move"
    assert not load_spec(write(tmp_path, GOOD, "plain.yaml")).has_time_odds()


def test_gauntlet_pairings(tmp_path):
    spec = load_spec(write(tmp_path, GOOD + "  c: nogobot agent greedy\nformat: gauntlet\n"
                           "gauntlet: c\n"))
    assert spec.pairings() == [("a", "c"), ("b", "c")]


def test_sudden_death_clock():
    c = SideClock(RefereeTimeControl.sudden_death(10, tolerance=0.5))
    assert c.limit() == pytest.approx(10.5)
    assert c.time_left_command("b") == "time_left b 10 0"
    assert c.charge(4.2) and c.time_left_command("b") == "time_left b 5 0"
    assert c.charge(6.1)  # 0.3 s over, within the tolerance
    assert c.limit() == pytest.approx(0.5)
    assert not c.charge(0.6)
    assert RefereeTimeControl.sudden_death(900).gtp_time_settings() == "time_settings 900 0 0"


def test_byoyomi_and_per_move_clocks():
    tc = RefereeTimeControl("canadian", main=5, period=2, count=2, tolerance=0.1)
    c = SideClock(tc)
    assert tc.gtp_time_settings() == "time_settings 5 2 2"
    assert c.limit() == pytest.approx(7.1)
    assert c.charge(6.0)  # main time gone, 1 s into the first period: 1 stone left, 1 s
    assert c.in_byo and c.time_left_args() == (pytest.approx(1.0), 1)
    assert c.charge(0.9)  # block done: the period refills
    assert c.time_left_args() == (2.0, 2)
    assert not c.charge(2.2)
    pm = SideClock(RefereeTimeControl.per_move(0.5, tolerance=0.2))
    assert RefereeTimeControl.per_move(0.5).gtp_time_settings() == "time_settings 0 0.5 1"
    assert pm.time_left_command("w") == "time_left w 0.5 1"
    for _ in range(5):
        assert pm.charge(0.6)  # each move starts a fresh 0.5 s
    assert not pm.charge(0.75)
    none = SideClock(RefereeTimeControl("none", max_move=3))
    assert RefereeTimeControl("none").gtp_time_settings() == "time_settings 0 1 0"
    assert none.limit() == 3 and none.charge(100) is False


def cli(*args, cwd=ROOT, timeout=120):
    return subprocess.run([sys.executable, "-m", "nogobot", *args], cwd=cwd, timeout=timeout,
                          capture_output=True, text=True)


def test_cli_bad_spec_fails_cleanly(tmp_path):
    p = write(tmp_path, GOOD.replace("games: 2", "games: -1"))
    r = cli("tournament", str(p), "--out", str(tmp_path / "out"))
    assert r.returncode == 1
    assert "spec.yaml:3: games: must be >= 1" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()
    r = cli("tournament", str(tmp_path / "missing.yaml"))
    assert r.returncode == 1 and "No such file" in r.stderr and "Traceback" not in r.stderr


def test_cli_engine_that_does_not_start(tmp_path):
    text = GOOD.replace("[python, tests/broken_engine.py, good]",
                        "[python, tests/broken_engine.py, nostart]")
    text = text.replace("nogobot agent random --seed 1", "no-such-program --x")
    text += "  c: nogobot agent rollout --bogus 3\n  d: python tests/broken_engine.py noboard\n"
    p = write(tmp_path, text)
    r = cli("tournament", str(p), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    err = r.stderr
    assert "engine 'a' (no-such-program --x) does not start" in err
    assert "engine 'b'" in err and "broken on purpose" in err  # its stderr is quoted
    assert "engine 'c'" in err and "No such option '--bogus'" in err
    assert "engine 'd'" in err and "refuses boardsize 5" in err
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_cli_unknown_options():
    r = cli("tournament", "tournaments/baselines.yaml", "--jobz", "2")
    assert r.returncode == 2 and "No such option '--jobz'" in r.stderr
    r = cli("agent", "greedy", "--playouts", "5")
    assert r.returncode == 2 and "does not take --playouts" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_second_run_on_a_folder_in_use_is_refused(tmp_path):
    """Two runs resuming one results folder would record the same games twice: while one holds
    the folder, another is refused before it plays (the lock goes with the first run)."""
    from nogobot.tournament.runner import LOCK, TournamentError, folder_lock, run_tournament
    from nogobot.tournament.spec import parse_spec

    spec = parse_spec({"name": "locked", "board_size": 5, "games": 2,
                       "time": {"kind": "per_move", "seconds": 1},
                       "engines": {"a": "nogobot agent random", "b": "nogobot agent random"}})
    out = tmp_path / "out"
    with folder_lock(out):
        with pytest.raises(TournamentError, match="another `nogobot tournament` run"):
            run_tournament(spec, out=out, check=False)
        assert not (out / "results.jsonl").exists()
    assert not (out / LOCK).exists()
    with folder_lock(out):  # free again once the first run is over
        pass
