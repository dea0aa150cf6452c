"""Expert-iteration games (``nogobot selfplay --player rave``): rave's searches as targets.

Small boards and a few hundred simulations keep these to seconds; no network or torch needed."""

import numpy as np
from click.testing import CliRunner

from nogobot.agents.rave import RaveAgent
from nogobot.cli import main
from nogobot.game.board import Board
from nogobot.net.features import board_planes
from nogobot.train.data import load_shard
from nogobot.train.teacher import play_teacher_game, search_targets


def test_the_targets_are_the_searchs_visits_without_its_proven_losses():
    agent = RaveAgent(playouts=400, seed=3)
    rng = np.random.default_rng(0)
    board = Board(7)
    for _ in range(12):
        board.play(int(rng.choice(board.legal_moves())))
    move = int(agent.select_move(board))
    target, weight, value = search_targets(agent, move, 49)
    moves, visits, wins, won, lost = agent.root_statistics()
    assert weight == 1.0 and abs(float(target.sum()) - 1.0) < 1e-6
    assert set(np.flatnonzero(target)) <= set(board.legal_moves().tolist())
    keep = ~lost
    expected = np.zeros(49)
    expected[moves[keep]] = visits[keep] / visits[keep].sum()
    if won.any():  # a proven win teaches its move alone
        expected = np.eye(49)[move]
    np.testing.assert_allclose(target, expected, atol=1e-6)
    assert 0.0 <= value <= 1.0 and value == agent.last_result.winrate


def test_a_teacher_game_records_every_position_from_the_side_to_move():
    agent = RaveAgent(playouts=200, seed=1)
    game = play_teacher_game(agent, 5, np.random.default_rng(2), temperature_moves=4)
    a = game.arrays
    n = game.plies
    assert n == len(a["moves"]) == len(a["planes"]) == len(a["policy_weight"]) > 4
    # Replay the moves: each recorded position is the board before its move, and the value is 1
    # exactly when the side to move there won.
    board = Board(5)
    for i, m in enumerate(a["moves"]):
        np.testing.assert_array_equal(a["planes"][i], board_planes(board).astype(np.uint8))
        assert a["value"][i] == (1.0 if board.to_move == game.winner else 0.0)
        assert board.is_legal(int(m))
        board.play(int(m))
    assert board.is_terminal() and 3 - board.to_move == game.winner
    rows = a["policy"].astype(np.float64)
    full = a["policy_weight"] > 0
    np.testing.assert_allclose(rows[full].sum(axis=1), 1.0, atol=2e-3)
    assert ((a["root_value"] >= 0) & (a["root_value"] <= 1)).all()


def test_selfplay_with_rave_writes_shards_and_resumes(tmp_path):
    out = tmp_path / "rave"
    args = ["selfplay", "--player", "rave", "--games", "2", "--out", str(out),
            "--playouts", "150", "--size", "5", "--workers", "1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    shards = sorted(out.glob("g*.npz"))
    assert [p.stem for p in shards] == ["g00000", "g00001"]
    assert len(list(out.glob("g*.sgf"))) == 2
    first = shards[0].read_bytes()
    assert len(load_shard(shards[0])["value"]) > 0  # training reads it like any shard
    with np.load(shards[0]) as z:
        assert str(z["model"]) == "rave" and int(z["simulations"]) == 150
    # Rerunning adds games after the finished ones and never rewrites them.
    r = CliRunner().invoke(main, [*args[:4], "1", *args[5:]])
    assert r.exit_code == 0, r.output
    assert len(list(out.glob("g*.npz"))) == 3 and shards[0].read_bytes() == first


# -- late positions: the teacher aimed at the games a player lost -----------------------------

def _random_game(size: int, seed: int) -> Board:
    rng = np.random.default_rng(seed)
    board = Board(size)
    while not board.is_terminal():
        board.play(int(rng.choice(board.legal_moves())))
    return board


def _collection(tmp_path, games) -> "Path":
    """One SGF collection (as a results folder's games.sgf) of (board, black, white) games."""
    from nogobot.game import sgf

    path = tmp_path / "games.sgf"
    path.write_text("".join(sgf.serialise(sgf.record_of(b, black=pb, white=pw))
                            for b, pb, pw in games))
    return path


def _two_games(tmp_path):
    """Two finished 7x7 games: "eng" loses the first (as whichever colour lost) and wins the
    second; returns (collection, the first game's board, eng's colour in it)."""
    lost, won = _random_game(7, 1), _random_game(7, 2)
    loser1 = lost.to_move  # the side to move at the end has no move: it lost
    names1 = ("eng", "rave") if loser1 == 1 else ("rave", "eng")
    names2 = ("rave", "eng") if won.to_move == 1 else ("eng", "rave")
    return _collection(tmp_path, [(lost, *names1), (won, *names2)]), lost, loser1


def test_late_positions_come_from_the_lost_games_with_the_loser_to_move(tmp_path):
    from nogobot.train.teacher import late_positions

    path, lost, eng = _two_games(tmp_path)
    found = late_positions([path], 7, (10, 20), lost_by=("eng",), count=3, seed=5)
    assert 1 <= len(found) <= 3
    moves = [tuple(m) for m in lost.moves]
    for start in found:
        k = len(start.moves)
        assert 10 <= 49 - k <= 20  # no captures in NoGo: empty points = area - plies
        assert list(start.moves) == moves[:k]  # a prefix of the lost game
        assert start.board(7).to_move == eng and start.source.endswith("#1")
    assert found == late_positions([path], 7, (10, 20), lost_by=("eng",), count=3, seed=5)
    both = late_positions([tmp_path], 7, (10, 20), count=100, seed=5)  # a folder, no filter
    assert {s.source[-2:] for s in both} == {"#1", "#2"}
    assert late_positions([path], 7, (10, 20), lost_by=("nobody",)) == []
    assert late_positions([path], 9, (10, 20)) == []  # other sizes are left out


def test_a_teacher_game_from_a_start_records_the_positions_from_there(tmp_path):
    from nogobot.game import sgf
    from nogobot.train.teacher import StartPosition

    lost = _random_game(7, 1)
    start = StartPosition("t", tuple(tuple(m) for m in lost.moves[:20]))
    agent = RaveAgent(playouts=150, seed=2)
    game = play_teacher_game(agent, 7, np.random.default_rng(3), temperature_moves=2,
                             start=start)
    a = game.arrays
    board = start.board(7)
    np.testing.assert_array_equal(a["planes"][0], board_planes(board).astype(np.uint8))
    for m in a["moves"]:
        board.play(int(m))
    assert board.is_terminal() and 3 - board.to_move == game.winner
    rec = sgf.parse(game.sgf_text)  # the SGF is the whole game, the recorded moves first
    assert len(rec.moves) == 20 + game.plies == 20 + len(a["moves"])
    assert [tuple(m) for m in rec.moves[:20]] == list(start.moves)


def test_selfplay_from_positions_writes_shards_and_names_bad_input(tmp_path):
    path, lost, eng = _two_games(tmp_path)
    out = tmp_path / "late"
    args = ["selfplay", "--player", "rave", "--games", "3", "--out", str(out), "--playouts",
            "120", "--size", "7", "--positions", str(path), "--empty", "10-20", "--lost-by",
            "eng", "--per-record", "2"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    shards = sorted(out.glob("g*.npz"))
    assert len(shards) == 3
    for p in shards:
        with np.load(p) as z:
            start_ply = int(z["start_ply"])
            assert 29 <= start_ply <= 39 and str(z["start_source"]).endswith("#1")
            assert int(z["plies"]) == len(z["moves"]) <= 49 - start_ply
        # only the positions from the start on, and training reads them like any shard
        assert len(load_shard(p)["value"]) == int(np.load(p)["plies"]) > 0
    # A rerun resumes with the next starts; the finished shards stay as they were.
    first = shards[0].read_bytes()
    r = CliRunner().invoke(main, [*args[:4], "1", *args[5:]])
    assert r.exit_code == 0, r.output
    assert len(list(out.glob("g*.npz"))) == 4 and shards[0].read_bytes() == first
    base = args[3:]  # without --player rave
    cases = [(["--player", "net"], "for --player rave"), (["--empty", "x"], "LO-HI"),
             (["--empty", "30-20"], "LO <= HI")]
    for extra, words in cases:
        r = CliRunner().invoke(main, ["selfplay", *base, *extra] if extra[0] == "--player"
                               else [*args, *extra])
        assert r.exit_code != 0 and words in r.output, (extra, r.output)
    nobody = [a if a != "eng" else "nobody" for a in args]
    r = CliRunner().invoke(main, nobody)
    assert r.exit_code != 0 and "no 7x7 position" in r.output and "lost by nobody" in r.output
    assert len(list(out.glob("g*.npz"))) == 4  # refused input wrote nothing
