"""Expert-iteration games (``nogobot selfplay --player rave``): rave's searches as targets.

Small boards and a few hundred simulations keep these to seconds; no network or torch needed."""

import numpy as np
from click.testing import CliRunner

from nogobot.agents.rave import RaveAgent
from nogobot.board import Board
from nogobot.cli import main
from nogobot.features import board_planes
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
