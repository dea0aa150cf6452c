"""`nogobot review` (nogobot/review.py) on the analysis engine.

A scripted game with a planted blunder: from a set-up 6x6 position that the side to move wins,
both sides play perfect moves (the exact solver's) except one move of the winner that hands the
game over; the review must find exactly that move, with the loss of the whole game, and a
winning alternative. The annotated SGF opens in sgfmill, its main line replays legally and is
the game, its variations are legal too, and the markup and comments are there. Times: the
tournament's per-move comments and plain BL/WL. The command reviews a tournament folder with a
progress report, and says how to install matplotlib when it is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from exact_evaluator import ExactEvaluator

from nogobot.analysis import review, review_graph
from nogobot.analysis.engine import AnalysisEngine
from nogobot.engine.solver import WIN, Solver
from nogobot.game import coords, sgf
from nogobot.game.board import BLACK, WHITE, Board

SIZE = 6


def _wins(solver: Solver, board: Board) -> bool:
    return solver.solve(board, 5_000_000).result == WIN


def blunder_game(seed: int = 0) -> tuple[sgf.GameRecord, int]:
    """(record, index of the planted blunder): a set-up position with 11 empty points whose
    side to move wins; perfect moves except the winner's second move, which loses."""
    solver = Solver(1 << 20)
    for s in range(seed, seed + 500):
        rng = np.random.default_rng(s)
        b = Board(SIZE)
        while SIZE * SIZE - b.ply > 11 and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal() or not _wins(solver, b):
            continue
        winner = b.to_move
        setup = [(int(b.stones[p]), p) for p in range(SIZE * SIZE) if b.stones[p]]
        game = b.copy()
        moves, blunder = [], None
        while not game.is_terminal():
            colour = game.to_move
            move = solver.solve(game, 5_000_000).move
            if blunder is None and colour == winner and len(moves) == 2:
                for m in game.legal_moves():
                    after = game.copy()
                    after.play(int(m))
                    if _wins(solver, after):  # the opponent now wins: a blunder
                        move, blunder = int(m), len(moves)
                        break
                else:
                    break
            moves.append((colour, move))
            game.play(move)
        if blunder is None:
            continue
        rec = sgf.GameRecord(size=SIZE, moves=moves, setup=setup, first_to_move=winner,
                             black="B-bot", white="W-bot", result=sgf.result_of(game))
        return rec, blunder
    raise AssertionError("no position with a blunder found")


def engine(visits: int = 200) -> AnalysisEngine:
    return AnalysisEngine(ExactEvaluator(), visits=visits, report_as="black")


def test_the_planted_blunder_is_found(tmp_path):
    rec, k = blunder_game()
    path = tmp_path / "game.sgf"
    sgf.save(rec, path)
    [rv] = review.review_games([path], engine(), tmp_path / "out", visits=200)
    m = rv.moves[k]
    assert m.colour == rec.moves[k][0] and m.move == coords.to_gtp(rec.moves[k][1], SIZE)
    assert m.before == 1.0 and m.after == 0.0 and m.loss == 1.0 and m.label == "blunder"
    assert [x.number for x in rv.moves if x.label] == [k + 1]  # every other move was perfect
    # The preferred move really wins (checked by the solver, not by the review).
    board = rec.board(k)
    board.play(coords.from_gtp(m.best, SIZE), m.colour)
    assert not _wins(Solver(1 << 20), board)
    loser, turn = review.turning_point(rv)
    assert loser == m.colour and turn.number == k + 1
    text = review.summary(rv)
    assert f"worst: {k + 1} {m.move} -100.0% (better {m.best})" in text
    assert f"turned at move {k + 1}" in text
    data = json.loads((tmp_path / "out" / "game.json").read_text())
    assert data["moves"][k]["label"] == "blunder"


def test_annotated_sgf_opens_and_replays(tmp_path):
    rec, k = blunder_game(7)
    path = tmp_path / "g.sgf"
    sgf.save(rec, path)
    [rv] = review.review_games([path], engine(), tmp_path, visits=200)
    data = (tmp_path / "g.review.sgf").read_bytes()
    back = sgf.parse(data)  # sgfmill reads it; every main-line move is checked by the rules
    assert back.moves == rec.moves and sorted(back.setup) == sorted(rec.setup)
    from sgfmill import sgf as sgfmill

    game = sgfmill.Sgf_game.from_bytes(data)
    nodes = game.get_main_sequence()[1:]
    bad = nodes[k]
    best = sgf.from_flat(coords.from_gtp(rv.moves[k].best, SIZE), SIZE)
    assert bad.get("TR") == {best} and bad.get("BM") == 2
    assert bad.get("MA") == {sgf.from_flat(rec.moves[k][1], SIZE)}
    assert "blunder" in bad.get("C") and "Preferred:" in bad.get("C")
    assert "turned at move" in game.get_root().get("C")
    assert all(n.get("C").startswith("nogobot review") for n in nodes)
    # Every variation is legal from where it branches, and the blunder got one.
    variations = 0

    def walk(node, board: Board):
        nonlocal variations
        for i, child in enumerate(node):
            colour, rc = child.get_move()
            b = board.copy()
            if colour is not None:
                p = sgf._to_flat(rc, SIZE)
                c = BLACK if colour == "b" else WHITE
                assert b.is_legal(p, c), child
                b.play(p, c)
            variations += i > 0
            walk(child, b)

    walk(game.get_root(), rec.board(0))
    assert variations >= 1 and len(bad.parent) == 2


def test_times_from_tournament_comments_and_from_bl_wl(tmp_path):
    from nogobot.tournament.clock import RefereeTimeControl
    from nogobot.tournament.records import game_sgf
    from nogobot.tournament.referee import GameResult

    res = GameResult("a", "b", 5, winner=1, reason="no_legal_move", moves=["C3", "B2", "D4"],
                     times=[1.5, 0.25, 2.0], clock_left=["8.5s", "9.75s", "6.5s"])
    text = game_sgf(res, event="t", game_id="g", tc=RefereeTimeControl.sudden_death(10))
    assert review.move_times(text.encode()) == [1.5, 0.25, 2.0]
    plain = b"(;GM[1]FF[4]SZ[5]TM[60];B[cc]BL[58.5];W[bb]WL[50];B[dd]BL[55.25];W[ee])"
    assert review.move_times(plain) == [1.5, 10.0, 3.25, None]
    # The review keeps the tournament's comment first, so timeplot still reads the times.
    path = tmp_path / "t.sgf"
    path.write_text(text)
    [rv] = review.review_games([path], engine(16), tmp_path, visits=16)
    assert [m.seconds for m in rv.moves] == [1.5, 0.25, 2.0]
    from nogobot.tools import timeplot

    ts = timeplot.parse_sgf((tmp_path / "t.review.sgf").read_bytes())
    assert ts.used["black"] == [1.5, 2.0] and ts.used["white"] == [0.25]


def test_png_with_and_without_times(tmp_path):
    pytest.importorskip("matplotlib")
    rec, _ = blunder_game()
    plain = tmp_path / "plain.sgf"
    sgf.save(rec, plain)
    timed = tmp_path / "timed.sgf"
    text = sgf.serialise(sgf.GameRecord(
        size=rec.size, moves=rec.moves, setup=rec.setup, first_to_move=rec.first_to_move,
        result=rec.result, comments={i: f"{0.5 + i:.3f} s" for i in range(len(rec.moves))}))
    timed.write_text(text)
    review.review_games([plain, timed], engine(64), tmp_path / "out", visits=64,
                        draw=review_graph.plot)
    from matplotlib.image import imread

    a = imread(tmp_path / "out" / "plain.png")
    b = imread(tmp_path / "out" / "timed.png")
    assert a.shape[0] < b.shape[0]  # the time panel beneath the graph


def test_collect_tournament_folders_and_errors(tmp_path):
    (tmp_path / "t" / "sgf").mkdir(parents=True)
    for name in ("001-a-vs-b", "002-a-vs-b"):
        (tmp_path / "t" / "sgf" / f"{name}.sgf").write_text("(;SZ[5];B[cc])")
    assert [p.name for p in review.collect([str(tmp_path / "t")])] == [
        "001-a-vs-b.sgf", "002-a-vs-b.sgf"]
    with pytest.raises(review.ReviewError, match="no such file"):
        review.collect([str(tmp_path / "missing.sgf")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(review.ReviewError, match="no SGF files"):
        review.collect([str(tmp_path / "empty")])


def test_unreadable_games_are_skipped(tmp_path):
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;SZ[5];B[cc];W[cc])")  # occupied point
    good = tmp_path / "good.sgf"
    good.write_text("(;SZ[5];B[cc];W[bb])")
    said = []
    out = review.review_games([bad, good], engine(16), tmp_path / "o", visits=16,
                              log=said.append)
    assert [Path(r.path).name for r in out] == ["good.sgf"]
    assert any("skipping" in s and "bad.sgf" in s and "illegal" in s for s in said)


def test_missing_matplotlib_is_one_line(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from nogobot.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(RuntimeError, match="pip install matplotlib"):
        review_graph.check_plotting()
    g = tmp_path / "g.sgf"
    g.write_text("(;SZ[5];B[cc])")
    res = CliRunner().invoke(main, ["review", str(g), "-o", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert res.output.strip().count("\n") == 0 and "pip install matplotlib" in res.output


def test_review_command_on_a_tournament_folder(tmp_path):
    """The command end to end on the shipped model: a results folder with two games."""
    from nogobot.tournament.clock import RefereeTimeControl
    from nogobot.tournament.records import game_sgf
    from nogobot.tournament.referee import GameResult

    folder = tmp_path / "results"
    (folder / "sgf").mkdir(parents=True)
    for k, moves in enumerate((["E5", "D4", "C3", "F6"], ["C3", "G7", "E5"])):
        res = GameResult("nogobot", "greedy", 9, winner=1, reason="no_legal_move", moves=moves,
                         times=[0.5] * len(moves), clock_left=["29.5s"] * len(moves))
        (folder / "sgf" / f"00{k + 1}-nogobot-vs-greedy.sgf").write_text(
            game_sgf(res, event="t", game_id=f"g{k}", tc=RefereeTimeControl.sudden_death(30)))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = folder / "review"  # the default for a folder: inside it
    args = ["review", str(folder), "--visits", "16", "--threads", "1"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        args.append("--no-png")
    run = subprocess.run([sys.executable, "-m", "nogobot", *args], capture_output=True,
                         text=True, timeout=300, env=env, check=False)
    assert run.returncode == 0, run.stderr
    for k in (1, 2):
        stem = out / f"00{k}-nogobot-vs-greedy"
        assert Path(f"{stem}.review.sgf").is_file() and Path(f"{stem}.txt").is_file()
        sgf.load(f"{stem}.review.sgf")
        if "--no-png" not in args:
            assert Path(f"{stem}.png").stat().st_size > 10_000
    assert (out / "summary.txt").read_text().count("visits per position") == 2
    assert "nogobot (B) vs greedy (W)" in run.stdout and "wrote 2 review(s)" in run.stdout
    assert "review: 9/9 positions, 2/2 games" in run.stderr  # progress when not a terminal
