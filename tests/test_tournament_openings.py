"""Opening suites and the records of a match (tournament/openings.py, folder.py, records.py).

Checks: the shipped 9x9 suite loads, is legal, has 100 positions none alike under the 8
symmetries, and says what made it; a suite's errors name the file and game; symmetric positions
share a canonical key; ``make_suite`` keeps only positions in the band, deterministically, and
its SGF collection reads back with sgfmill; a game's SGF marks the opening moves and carries
clocks and game info; ``GameCollection`` keeps games.sgf in step with results.jsonl; ``pack``
turns an old folder (sgf/ per game, loose logs) into games.sgf + logs.tar.gz and review,
timeplot (means and --clock) and the report give the same figures before and after.
"""

import io
import json
import re

import numpy as np
import pytest
from rich.console import Console
from sgfmill import sgf as sgfmill
from sgfmill import sgf_grammar

from nogobot.analysis import review
from nogobot.game import coords
from nogobot.game.board import Board
from nogobot.tools import timeplot
from nogobot.tournament.clock import RefereeTimeControl
from nogobot.tournament.display import report_folder
from nogobot.tournament.folder import (
    GameCollection,
    pack_folder,
    read_games,
    read_log,
    split_collection,
)
from nogobot.tournament.openings import (
    Candidate,
    OpeningError,
    canonical,
    load_suite,
    make_suite,
    resolve_suite,
    suite_sgf,
)
from nogobot.tournament.records import game_sgf
from nogobot.tournament.referee import GameResult
from nogobot.tournament.spec import SpecError, parse_spec


def test_shipped_suite():
    path = resolve_suite("default")
    assert path == resolve_suite("9x9") and path.is_file()
    suite = load_suite(path, 9)
    assert len(suite) == 100 and len({o.name for o in suite}) == 100
    keys = set()
    for o in suite:
        assert 2 <= len(o.moves) <= 6
        b = Board(9)
        for v in o.moves:
            b.play(coords.from_gtp(v, 9))
        keys.add(canonical(b.stones[:81], 9))
    assert len(keys) == 100  # no two alike under the board's symmetries
    games = sgf_grammar.parse_sgf_collection(path.read_bytes())
    root = sgfmill.Sgf_game.from_coarse_game_tree(games[0]).get_root()
    assert "nogobot openings" in root.get("GC") and "win rate" in root.get("C")


def test_suite_errors_name_the_file_and_game(tmp_path):
    bad = tmp_path / "s.sgf"
    for text, words in (("(;SZ[9];B[ee])(;SZ[9];B[ee];W[ee])", "game 2: move 2 (E5) is illegal"),
                        ("(;SZ[9];W[ee])", "game 1: move 1 must be a B move"),
                        ("(;SZ[7];B[dd])", "a 7x7 position"),
                        ("(;SZ[9]AB[ee])", "setup stones"), ("not sgf", "not an SGF"),
                        ("(;SZ[9];B[ee];B[dd])", "must be a W move")):
        bad.write_text(text)
        with pytest.raises(OpeningError, match=re.escape(words)) as e:
            load_suite(bad, 9)
        assert str(bad) in str(e.value)
    with pytest.raises(OpeningError, match="cannot read"):
        load_suite(tmp_path / "missing.sgf", 9)
    spec = tmp_path / "m.yaml"
    with pytest.raises(SpecError, match=r"openings: .*missing.sgf: cannot read"):
        parse_spec({"engines": {"a": "x", "b": "y"}, "openings": "missing.sgf"}, str(spec))
    bad.write_text("(;SZ[9];B[ee])(;SZ[9];B[cc];W[gg])")
    s = parse_spec({"engines": {"a": "x", "b": "y"}, "openings": "s.sgf"}, str(spec))
    assert [s.opening_of(k).moves for k in range(5)] == [("E5",), ("E5",), ("C7", "G3"),
                                                         ("C7", "G3"), ("E5",)]


def test_canonical_is_the_same_under_symmetry():
    rng = np.random.default_rng(0)
    grid = rng.integers(0, 3, (9, 9))
    keys = {canonical(np.rot90(g, k).ravel(), 9) for g in (grid, grid.T) for k in range(4)}
    assert len(keys) == 1
    assert canonical(np.roll(grid, 1, axis=0).ravel(), 9) not in keys


def test_make_suite_keeps_the_band_and_reads_back(tmp_path):
    calls = []

    def evaluate(positions):  # a fake search: the win rate depends on the moves only
        calls.append(len(positions))
        return [0.3 + 0.4 * ((sum(map(ord, "".join(p))) * 7919) % 100) / 100 for p in positions]

    kept = make_suite(evaluate, size=7, count=12, min_plies=2, max_plies=4, band=(0.45, 0.55),
                      seed=5)
    again = make_suite(evaluate, size=7, count=12, min_plies=2, max_plies=4, band=(0.45, 0.55),
                       seed=5)
    assert [c.moves for c in kept] == [c.moves for c in again]  # deterministic
    assert len(kept) == 12 and all(0.45 <= c.winrate <= 0.55 for c in kept)
    assert sum(calls) > 12  # some positions were outside the band
    path = tmp_path / "suite.sgf"
    path.write_text(suite_sgf(kept, 7, "made by a test", "t"))
    back = load_suite(path, 7)
    assert [o.name for o in back] == [f"t-{k:03d}" for k in range(1, 13)]
    assert [list(o.moves) for o in back] == [[coords.to_gtp(p, 7) for p in c.moves]
                                             for c in kept]
    with pytest.raises(OpeningError, match="win rate in"):
        make_suite(lambda ps: [0.9] * len(ps), size=7, count=3, max_candidates=20)
    assert isinstance(kept[0], Candidate)


def result(moves, opening=0, winner=1):
    return GameResult("a", "b", 9, winner=winner, reason="no_legal_move", moves=moves,
                      times=[0.0] * opening + [1.5] * (len(moves) - opening),
                      clock_left=["-"] * opening + ["58.5s"] * (len(moves) - opening),
                      started="2026-11-26T10:00:00", opening_plies=opening)


def test_game_sgf_marks_the_opening_and_carries_clocks():
    text = game_sgf(result(["E5", "D4", "C3", "F6"], opening=2), event="m", game_id="001-a-vs-b",
                    tc=RefereeTimeControl.sudden_death(60), opening="nogo9-007")
    game = sgfmill.Sgf_game.from_string(text)
    root = game.get_root()
    assert (root.get("PB"), root.get("PW"), root.get("RE"), root.get("EV")) == ("a", "b", "B+R",
                                                                                 "m")
    assert "60 s sudden death" in root.get("GC") and root.get("TM") == 60
    assert "Opening: nogo9-007 (2 plies" in root.get("C")
    nodes = game.get_main_sequence()[1:]
    assert [n.get("C") for n in nodes[:2]] == ["opening", "opening"]
    assert not nodes[0].has_property("BL") and nodes[2].get("BL") == 58.5
    assert nodes[2].get("C").startswith("1.500 s")
    ts = timeplot.parse_sgf(text.encode())
    assert ts.moves["black"] == [3] and ts.moves["white"] == [4]  # the opening is no one's time


def test_collection_follows_the_results(tmp_path):
    coll = GameCollection(tmp_path)
    for k in (1, 2, 3):
        coll.add(f"00{k}", game_sgf(result(["E5", "D4"]), event="m", game_id=f"00{k}",
                                    tc=RefereeTimeControl.per_move(1)))
    coll.add("002", game_sgf(result(["C3"]), event="m", game_id="002",
                             tc=RefereeTimeControl.per_move(1)))  # replayed: replaced
    assert [g for g, _ in split_collection(coll.path.read_bytes())] == ["001", "003", "002"]
    assert coll.sync(["002", "001"]) == 1  # 003 had no result line (killed in between)
    games = split_collection(coll.path.read_bytes())
    assert [g for g, _ in games] == ["002", "001"]
    assert len(sgfmill.Sgf_game.from_bytes(games[0][1]).get_main_sequence()) == 2


def old_folder(tmp_path):
    """A results folder of the old layout: sgf/ID.sgf, loose logs/, results.jsonl."""
    folder = tmp_path / "old"
    (folder / "sgf").mkdir(parents=True)
    (folder / "logs").mkdir()
    lines = []
    for k in range(4):
        gid = f"{k + 1:03d}-a-vs-b"
        black, white = ("a", "b") if k % 2 == 0 else ("b", "a")
        res = result(["E5", "D4", "C3", "F6", "G7"][:3 + k % 2], winner=1 + k % 2)
        res.black, res.white = black, white
        (folder / "sgf" / f"{gid}.sgf").write_text(game_sgf(
            res, event="old", game_id=gid, tc=RefereeTimeControl.sudden_death(60)))
        for side in "BW":
            (folder / "logs" / f"{gid}-{side}.log").write_text(
                f"time: black move 1 E5: planned 1.00s max 2.00s used {1 + k}.00s left "
                f"{59 - k}.00s main\nmcts: E5 winrate 0.99\n")
        lines.append(json.dumps({"key": ["a", "b", k], "id": gid, "black": black,
                                 "white": white, "winner": "B" if k % 2 == 0 else "W",
                                 "result": res.result, "reason": "no_legal_move",
                                 "moves": res.moves, "times": res.times, "size": 9,
                                 "time_control": "60 s sudden death",
                                 "sgf": f"sgf/{gid}.sgf"}))
    (folder / "logs" / "005-a-vs-b-B.log").write_text("a game that never finished\n")
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def figures(folder):
    buf = io.StringIO()
    report_folder(folder, Console(file=buf, width=200, color_system=None))
    ts = timeplot.aggregate(folder)
    clock = timeplot.clock_table(timeplot.clock_report(folder))
    games = sorted(split_collection(d)[0][1] for _, d in read_games(folder))
    return (buf.getvalue(), ts.used, ts.moves, clock, games,
            [str(p).rsplit("/", 1)[-1].rsplit("#", 1)[-1].removesuffix(".sgf")
             for p in review.collect([str(folder)])])


def test_pack_keeps_every_figure(tmp_path):
    folder = old_folder(tmp_path)
    before = figures(folder)
    assert "clock spent while undecided" in before[3]
    done = pack_folder(folder)
    assert done == {"games": 4, "logs": 9}
    assert sorted(p.name for p in folder.iterdir()) == ["games.sgf", "logs.tar.gz",
                                                        "results.jsonl"]
    assert figures(folder) == before
    assert read_log(folder, "005-a-vs-b-B.log") == "a game that never finished\n"  # kept too
    assert all(json.loads(x)["sgf"] == "games.sgf"
               for x in (folder / "results.jsonl").read_text().splitlines())
    assert pack_folder(folder) == {"games": 4, "logs": 0}  # packing again changes nothing
    assert figures(folder) == before


def test_pack_refuses_to_lose_games(tmp_path):
    folder = old_folder(tmp_path)
    (folder / "sgf" / "009-a-vs-b.sgf").write_text("(;SZ[9]GN[009-a-vs-b];B[ee])")
    with pytest.raises(ValueError, match="results.jsonl does not"):
        pack_folder(folder)
    assert (folder / "sgf" / "001-a-vs-b.sgf").is_file() and not (folder / "games.sgf").exists()


def test_a_rerun_on_an_old_folder_converts_it_first(tmp_path):
    from nogobot.tournament.runner import run_tournament

    folder = old_folder(tmp_path)
    before = figures(folder)
    spec = parse_spec({"engines": {"a": "x", "b": "y"}, "games": 4,
                       "time": {"kind": "sudden_death", "main": 60}})
    buf = io.StringIO()
    assert run_tournament(spec, out=folder, check=False,
                          console=Console(file=buf, width=200, color_system=None)) == 0
    assert "older layout converted (4 games" in buf.getvalue()
    assert not (folder / "sgf").exists() and (folder / "games.sgf").is_file()
    assert figures(folder)[1:] == before[1:]  # the report now also has the match table


def test_openings_command_with_the_shipped_net(tmp_path):
    """`nogobot openings` end to end at a tiny budget (the net's search, a few seconds)."""
    import subprocess
    import sys

    from conftest import ROOT

    out = tmp_path / "s.sgf"
    run = subprocess.run([sys.executable, "-m", "nogobot", "openings", "-o", str(out), "--count",
                          "3", "--playouts", "16", "--band", "0.2-0.8", "--seed", "7"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    suite = load_suite(out, 9)
    assert [o.name for o in suite] == ["s-001", "s-002", "s-003"]
    root = sgfmill.Sgf_game.from_coarse_game_tree(
        sgf_grammar.parse_sgf_collection(out.read_bytes())[0]).get_root()
    assert "--count 3 --plies 2-6 --playouts 16 --band 0.20-0.80 --seed 7" in root.get("GC")
    bad = subprocess.run([sys.executable, "-m", "nogobot", "openings", "-o", str(out),
                          "--plies", "6-2"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and bad.stderr.strip().count("\n") == 0 and "--plies" in bad.stderr
