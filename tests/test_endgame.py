"""The endgame truth suite (nogobot.tools.endgame, endgame_label, endgame_bench).

Fast versions on a tiny 5x5 suite built in tmp from seeded random games: building is
deterministic whatever the files are called, keeps no game in two splits and no position twice
(under symmetry); labels agree with a plain negamax written here (not the solver's); labelling
resumes where it stopped; the bench's counts; a missing or corrupt suite is one line and exit 2.
Then the shipped suite itself: its size, its positions rebuilt from their moves, its labels.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nogobot.cli import main
from nogobot.game import coords, sgf
from nogobot.game.board import Board
from nogobot.tools import endgame_label
from nogobot.tools.endgame import (
    LABELS,
    POSITIONS,
    SuiteError,
    build_suite,
    load_labels,
    load_positions,
    position_key,
    shipped_suite,
)
from nogobot.tools.endgame_label import label_suite

DEPTHS = (8, 10)


def _random_games(folder: Path, count: int, seed: int = 7) -> list[Board]:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    games = []
    for i in range(count):
        b = Board(5)
        while not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        sgf.save(sgf.record_of(b, black="r", white="r"), folder / f"g{i:03d}.sgf")
        games.append(b)
    return games


def _mirror(board: Board) -> Board:
    """The same game mirrored left to right."""
    m = Board(5)
    for c, p in board.moves:
        r, col = coords.from_flat(p, 5)
        m.play(coords.to_flat(r, 4 - col, 5), c)
    return m


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("endgame")
    games = _random_games(tmp / "games", 12)
    # A copy of a game under another name and its mirror image: the same game, kept once.
    shutil.copy(tmp / "games" / "g000.sgf", tmp / "games" / "copy.sgf")
    sgf.save(sgf.record_of(_mirror(games[0])), tmp / "games" / "mirror.sgf")
    build_suite([str(tmp / "games")], tmp / "suite", per_depth=3, depths=DEPTHS, size=5,
                seed=1, command="test")
    return tmp / "suite"


def _negamax(board: Board, memo: dict) -> int:
    """+1 when the side to move wins with best play, else -1 (no draws in NoGo)."""
    key = board.hash
    if key not in memo:
        memo[key] = -1
        for m in board.legal_moves():
            board.play(int(m))
            v = -_negamax(board, memo)
            board.undo()
            if v == 1:
                memo[key] = 1
                break
    return memo[key]


def _winning_moves(board: Board, memo: dict) -> list[str]:
    """The moves after which the side to move wins, by ``_negamax``, as GTP vertices."""
    wins = []
    for m in board.legal_moves():
        board.play(int(m))
        if _negamax(board, memo) == -1:
            wins.append(coords.to_gtp(int(m), 5))
        board.undo()
    return wins


def test_build_is_deterministic_and_keeps_games_apart(tiny, tmp_path):
    header, positions = load_positions(tiny)
    assert len(positions) == 6 and sorted({p.depth for p in positions}) == list(DEPTHS)
    assert header["games_read"] == 14 and header["games_distinct"] == 12
    keys = [position_key(p.board()) for p in positions]
    assert len(set(keys)) == len(keys)
    # One position per game, so no game feeds two splits (or two depths).
    sources = [(p.source["file"], p.source["game"]) for p in positions]
    assert len(set(sources)) == len(sources)
    for p in positions:
        b = p.board()
        assert int((b.stones == 0).sum()) == p.depth and not b.is_terminal()
        assert b.to_move == p.to_move and p.split in ("dev", "test")
    # The same games under other names, in another order: the same suite.
    shutil.copytree(tiny.parent / "games", tmp_path / "renamed")
    for f in sorted((tmp_path / "renamed").glob("*.sgf")):
        f.rename(f.with_name("z" + f.stem[::-1] + ".sgf"))
    build_suite([str(tmp_path / "renamed")], tmp_path / "again", per_depth=3, depths=DEPTHS,
                size=5, seed=1, command="test")
    _, again = load_positions(tmp_path / "again")
    assert [(p.id, p.split, p.board_text) for p in again] == \
        [(p.id, p.split, p.board_text) for p in positions]


def test_labels_agree_with_plain_negamax(tiny, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    counts = label_suite(suite, nodes=2_000_000)
    assert counts["labelled"] == 6 and counts["unknown"] == 0
    header, labels = load_labels(suite)
    assert header["budget_nodes"] == 2_000_000
    for p in load_positions(suite)[1]:
        lab = labels[p.id]
        board = p.board()
        memo: dict = {}
        truth = _negamax(board, memo)
        assert lab["result"] == ("win" if truth == 1 else "loss"), p.id
        assert lab["winner"] == ("B" if (board.to_move == 1) == (truth == 1) else "W")
        wins = _winning_moves(board, memo)
        assert lab["complete"]
        assert sorted(lab["wins"]) == sorted(wins)
        assert not lab["open"] and len(lab["wins"]) + len(lab["losses"]) == len(
            board.legal_moves())


def test_unsettled_positions_are_kept_unknown_and_labelling_resumes(tiny, tmp_path,
                                                                   monkeypatch):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    first = label_suite(suite, nodes=1, limit=1)  # one node settles nothing
    assert first == {"labelled": 2, "win": 0, "loss": 0, "unknown": 2, "total": 2}
    _, labels = load_labels(suite)
    assert all(lab["result"] == "unknown" and lab["winner"] is None and lab["open"]
               for lab in labels.values())
    calls = []
    real = endgame_label.label_position
    monkeypatch.setattr(endgame_label, "label_position",
                        lambda p, *a, **k: calls.append(p.id) or real(p, *a, **k))
    label_suite(suite, nodes=1)
    assert len(calls) == 4 and not set(calls) & set(labels)  # the done ones are kept
    label_suite(suite, nodes=1, redo="unknown")  # the same budget would fail again
    assert len(calls) == 4
    label_suite(suite, nodes=2_000_000, redo="unknown")
    assert len(calls) == 10
    _, labels = load_labels(suite)
    assert len(labels) == 6 and all(lab["result"] != "unknown" for lab in labels.values())


def test_open_moves_of_won_labels_are_settled_later(tiny, tmp_path, monkeypatch):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    label_suite(suite, nodes=2_000_000, move_nodes=1)  # verdicts, but few other moves
    _, before = load_labels(suite)
    won_open = {i for i, lab in before.items() if lab["result"] == "win" and lab["open"]}
    assert won_open, "the tiny suite should leave a won position with open moves"
    calls = []
    real = endgame_label.settle_open_moves
    monkeypatch.setattr(endgame_label, "settle_open_moves",
                        lambda p, *a, **k: calls.append(p.id) or real(p, *a, **k))
    counts = label_suite(suite, nodes=2_000_000, move_nodes=2_000_000, redo="open")
    assert set(calls) == won_open and counts["labelled"] == len(won_open)
    _, labels = load_labels(suite)
    for p in load_positions(suite)[1]:
        lab, old = labels[p.id], before[p.id]
        if p.id not in won_open:
            assert lab == old
            continue
        board, memo = p.board(), {}
        wins = _winning_moves(board, memo)
        assert lab["complete"] and not lab["open"] and lab["open_tried"] == 2_000_000
        assert lab["wins"] == sorted(wins) and set(old["wins"]) <= set(lab["wins"])
        assert lab["nodes"] > old["nodes"] and lab["budget"] == old["budget"]
    label_suite(suite, nodes=2_000_000, move_nodes=2_000_000, redo="open")
    assert len(calls) == len(won_open)  # nothing left open at that budget: nothing redone


def _bench(suite: Path, *args: str):
    return CliRunner().invoke(main, ["bench", "endgame", "--suite", str(suite), *args])


def test_bench_counts_proofs_and_labels(tiny, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    label_suite(suite, nodes=2_000_000)
    res = _bench(suite, "--nodes", "2000000", "--no-engine", "--no-rave", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["budget_key"] == "nodes=2000000"
    for d in DEPTHS:
        s = report["depths"][str(d)]
        assert s["positions"] == s["labelled"] == s["proven"] == 3 and s["disagree"] == 0
        rows = [r for r in report["rows"] if r["depth"] == d]
        assert s["sums"] == sum(len(r["regions"]) >= 2 for r in rows)
        assert all(sum(r["regions"]) <= d for r in rows)  # contested points are empty points
    # Nothing proven in 1 node: counted, not dropped; the table says so.
    res = _bench(suite, "--nodes", "1", "--no-engine", "--no-rave", "--depth", "30")
    assert res.exit_code == 2 and "no position matches" in res.stderr
    (suite / "baseline.json").write_text(json.dumps(report))
    res = _bench(suite, "--nodes", "2000000", "--no-engine", "--no-rave", "--limit", "1")
    assert res.exit_code == 0, res.output
    assert "baseline: the solver of" in res.stdout and "1/1 100%" in res.stdout


def test_bench_measures_the_players(tiny, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    label_suite(suite, nodes=2_000_000)
    res = _bench(suite, "--seconds", "0.05", "--limit", "1", "--split", "dev", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    rows = report["rows"]
    assert rows and all(r["split"] == "dev" for r in rows)
    for r in rows:
        assert r["engine"]["move_label"] in ("win", "loss") and 0 <= r["engine"]["value_head"] <= 1
        assert r["rave"]["move_label"] in ("win", "loss")
    for s in report["depths"].values():
        assert s["engine"]["value_right"] <= s["labelled"]
        assert s["engine"]["winning_move"] <= s["engine"]["won"]
    assert "[1/" in res.stderr  # progress


def test_bench_settles_open_moves(tiny, tmp_path):
    """A player's move the labels leave open in a won position is settled by the solver after
    the move (``--settle``), and settled right; with ``--settle 0`` it stays open."""
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    label_suite(suite, nodes=2_000_000)
    lines = (suite / LABELS).read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]
    for r in rows:  # forget every winning move: each won position's moves are open
        if r["result"] == "win":
            r["open"], r["wins"], r["losses"] = sorted(r["open"] + r["wins"] + r["losses"]), [], []
    (suite / LABELS).write_text("\n".join([lines[0]] + [json.dumps(r) for r in rows]) + "\n")
    won = {r["id"] for r in rows if r["result"] == "win"}
    assert won
    args = ("--seconds", "0.05", "--no-rave", "--json", "--nodes", "1000")
    open_run = json.loads(_bench(suite, *args, "--settle", "0").stdout)
    assert all(r["engine"]["move_label"] == "open" for r in open_run["rows"] if r["id"] in won)
    res = _bench(suite, *args, "--settle", "2000000")
    assert res.exit_code == 0, res.output
    positions = {p.id: p for p in load_positions(suite)[1]}
    for r in json.loads(res.stdout)["rows"]:
        if r["id"] not in won:
            continue
        assert r["engine"]["settled"] and r["engine"]["move_label"] in ("win", "loss")
        board = positions[r["id"]].board()
        board.play(coords.from_gtp(r["engine"]["move"], board.size))
        truth = "win" if _negamax(board, {}) == -1 else "loss"
        assert r["engine"]["move_label"] == truth


@pytest.mark.parametrize("damage", ["missing", "not-json", "no-header", "bad-move", "labels"])
def test_bad_suite_is_one_line_and_exit_2(tiny, tmp_path, damage):
    suite = tmp_path / "suite"
    shutil.copytree(tiny, suite)
    path = suite / POSITIONS
    lines = path.read_text().splitlines()
    if damage == "missing":
        path.unlink()
    elif damage == "not-json":
        path.write_text("\n".join(lines[:2] + ["{oops"] + lines[3:]))
    elif damage == "no-header":
        path.write_text("\n".join(lines[1:]))
    elif damage == "bad-move":
        row = json.loads(lines[1])
        row["moves"] = row["moves"].replace(":", ":Z", 1)
        path.write_text("\n".join([lines[0], json.dumps(row)] + lines[2:]))
    else:
        (suite / LABELS).write_text('{"format": "nogobot-endgame-labels"}\n{"id": 3}\n')
    res = _bench(suite, "--nodes", "10", "--no-engine", "--no-rave")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert "Traceback" not in res.output
    with pytest.raises(SuiteError):
        load_positions(suite) if damage != "labels" else load_labels(suite)


def test_build_refuses_a_missing_source(tmp_path):
    res = CliRunner().invoke(main, ["bench", "endgame-build", "--source", str(tmp_path / "no"),
                                    "--out", str(tmp_path / "s")])
    assert res.exit_code == 2


# -- the shipped suite ------------------------------------------------------------------------


def test_shipped_suite_is_whole_and_its_positions_are_real():
    folder = shipped_suite()
    header, positions = load_positions(folder)
    assert header["depths"] == [30, 32, 34, 36] and len(positions) == header["positions"]
    for d in header["depths"]:
        assert sum(p.depth == d for p in positions) >= 100
    assert len({p.id for p in positions}) == len(positions)
    games = {}
    for p in positions:
        b = p.board()  # the moves are legal and lead to the stored board
        assert int((b.stones == 0).sum()) == p.depth and not b.is_terminal()
        assert p.id.startswith(f"{p.depth}-") and position_key(b).startswith(p.id[3:])
        assert p.source["move"] == len(p.moves)
        games.setdefault((p.source["file"], p.source["game"]), set()).add(p.split)
    assert all(len(s) == 1 for s in games.values())
    assert "bench endgame-build" in header["command"] and "--seed" in header["command"]


def test_shipped_labels_belong_to_the_suite():
    folder = shipped_suite()
    header, labels = load_labels(folder)
    if not labels:
        pytest.skip("no labels yet")
    ids = {p.id: p for p in load_positions(folder)[1]}
    assert header["budget_nodes"] > 0
    for lab in labels.values():
        p = ids[lab["id"]]
        assert lab["depth"] == p.depth
        if lab["result"] == "unknown":
            assert lab["winner"] is None and not lab["wins"]
        else:
            side = "B" if p.to_move == 1 else "W"
            assert (lab["winner"] == side) == (lab["result"] == "win")
        if lab["result"] == "loss":
            assert not lab["wins"] and not lab["open"]


def test_timed_solver_with_and_without_a_clock_of_its_own(tiny, monkeypatch):
    """``solve_within`` gives a solver with ``max_seconds`` the time; one without gets node
    budgets sized to it at the rate it measures."""
    from nogobot.engine import solver as solver_module
    from nogobot.tools.endgame_bench import solve_within

    board = load_positions(tiny)[1][0].board()
    calls = []

    class NodesOnly:
        def __init__(self, entries):
            pass

        def solve(self, board, max_nodes):
            calls.append(max_nodes)
            return solver_module.SolveResult(solver_module.UNKNOWN, -1, max_nodes, {})

    monkeypatch.setattr(solver_module, "Solver", NodesOnly)
    result, nodes, seconds = solve_within(board, 0.2, None)
    assert result == solver_module.UNKNOWN and len(calls) >= 2 and nodes == sum(calls)
    assert calls[0] == max(int(solver_module.SOLVER_NODES_PER_SECOND * 0.2 / 8), 1000)

    class Clocked(NodesOnly):
        def solve(self, board, max_nodes, max_seconds=None):
            calls.append(max_seconds)
            return solver_module.SolveResult(solver_module.WIN, 0, 5, {0: solver_module.WIN})

    monkeypatch.setattr(solver_module, "Solver", Clocked)
    calls.clear()
    assert solve_within(board, 0.2, None)[:2] == (solver_module.WIN, 5) and calls == [0.2]
