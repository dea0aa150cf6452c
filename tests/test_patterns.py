"""rave's 3x3 pattern table: codes, symmetry, the table file, the tree priors and the fit."""

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from nogobot.agents import patterns as pt
from nogobot.agents.rave import PRIOR_VISITS, RaveAgent
from nogobot.cli import main
from nogobot.game.board import Board
from nogobot.net.features import symmetry_permutation


def _codes(board: Board) -> np.ndarray:
    out = np.zeros(board.geo.area, dtype=np.int64)
    pt.position_codes(board.stones, board.root, board.libs, board.legal,
                      pt.ring_table(board.size), pt.SLOT_MAP, pt.PLACE, board.to_move, out)
    return out


def _random_moves(size: int, seed: int, plies: int) -> list[int]:
    rng = np.random.default_rng(seed)
    board, moves = Board(size), []
    for _ in range(plies):
        legal = board.legal_moves()
        if len(legal) == 0:
            break
        moves.append(int(rng.choice(legal)))
        board.play(moves[-1])
    return moves


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(0, 60), k=st.integers(0, 7),
       size=st.sampled_from([5, 7, 9]))
def test_a_moves_code_is_the_same_under_every_board_symmetry(seed, plies, k, size):
    moves = _random_moves(size, seed, plies)
    where = np.argsort(symmetry_permutation(size, k))  # where each point goes
    a, b = Board(size), Board(size)
    for m in moves:
        a.play(m)
        b.play(int(where[m]))
    ca, cb = _codes(a), _codes(b)
    assert np.array_equal(ca, cb[where])
    assert np.array_equal(ca >= 0, a.legal_mask())  # a code exactly for each legal move
    assert ca.max() < pt.NUM_CODES


def test_the_code_tells_an_eye_from_a_contested_point_and_the_edge_from_the_centre():
    board = Board.from_ascii("""
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_move=1)
    codes = _codes(board)
    assert codes[0] & 1 == 1  # the corner eye: only black may play it (safe)
    assert codes[12] & 1 == 0  # the centre: contested
    assert codes[12] != codes[14]  # no edge around the centre, one beside (2, 4)
    assert len({codes[p] for p in (8, 16, 18)}) == 1  # empty rings, no edge: one pattern
    assert codes[6] != codes[8]  # beside the two black stones


def test_a_table_round_trips_and_a_bad_file_is_named(tmp_path):
    table = pt.PatternTable([3, 10, 99], [0.5, -1.0, 2.0], [0.1, -0.2], [0, 0.3, 0.2, 0.4])
    path = tmp_path / "t.npz"
    table.save(path)
    back = pt.PatternTable.load(path)
    assert np.array_equal(back.codes, table.codes) and np.allclose(back.extra, table.extra)
    assert pt.lookup(back.codes, 10) == 1 and pt.lookup(back.codes, 11) == -1
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.npz: not a pattern table"):
        pt.PatternTable.load(bad)
    with pytest.raises(ValueError, match="sorted"):
        pt.PatternTable([10, 3], [0.0, 0.0], [0, 0], [0, 0, 0, 0])
    shipped = pt.default_table()
    assert len(shipped.codes) > 1000 and np.all(np.diff(shipped.codes) > 0)


def test_the_tree_priors_follow_the_pattern_weights():
    """One simulation from the empty 5x5 board: each root child's prior AMAF value is 0.5 plus
    the scale times its logit above the children's mean (clipped), and the best-liked pattern
    gets the highest prior."""
    board = Board(5)
    codes = _codes(board)
    distinct = np.unique(codes)
    weights = np.linspace(-1.0, 1.0, len(distinct)).astype(np.float32)
    table = pt.PatternTable(distinct, weights, [0.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    agent = RaveAgent(playouts=1, seed=3, pattern_prior=0.2, patterns=table, solver=False,
                      warmup=False)
    agent.select_move(board)
    tree = agent._trees[0]
    move, first, nchild = tree.arrays[0], tree.arrays[1], tree.arrays[2]
    AN, AW = tree.arrays[7], tree.arrays[8]
    f, k = int(first[0]), int(nchild[0])
    logit = {int(c): float(w) for c, w in zip(distinct, weights)}
    mean = np.mean([logit[int(codes[move[j]])] for j in range(f, f + k)])
    checked = 0
    for j in range(f, f + k):
        if AN[j] != PRIOR_VISITS:  # the simulation's own AMAF update moved this one
            continue
        want = min(max(0.5 + 0.2 * (logit[int(codes[move[j]])] - mean), 0.05), 0.95)
        assert AW[j] / AN[j] == pytest.approx(want, abs=1e-5)
        checked += 1
    assert checked >= 10


def test_rave_with_pattern_priors_plays_legal_moves_to_the_end():
    board = Board(7)
    agent = RaveAgent(playouts=300, seed=5, pattern_prior=0.1, warmup=False)
    while not board.is_terminal():
        move = agent.select_move(board)
        assert board.is_legal(move)
        board.play(move)


def test_the_fit_learns_which_pattern_the_search_chooses(tmp_path):
    """Games whose every target is one pattern's move: the fit gives that pattern the top
    weight, and `nogobot train patterns` writes a table rave loads."""
    from nogobot.train.patterns import fit_table, game_shards, pattern_examples

    size, area = 5, 25
    folder = tmp_path / "games" / "gen0001"
    folder.mkdir(parents=True)
    favourite = None
    for g in range(6):
        moves = _random_moves(size, 100 + g, 14)
        board, policy = Board(size), []
        for m in moves:
            codes = _codes(board)
            # The target: the legal move whose code is least (a fixed kind of move).
            legal = np.flatnonzero(codes >= 0)
            pick = legal[np.argmin(codes[legal])]
            favourite = codes[pick] if favourite is None else favourite
            target = np.zeros(area, np.float16)
            target[pick] = 1.0
            policy.append(target)
            board.play(m)
        np.savez(folder / f"g{g:05d}.npz", moves=np.array(moves, np.int16),
                 policy=np.array(policy), policy_weight=np.ones(len(moves), np.float32),
                 size=np.int32(size))
    shards = game_shards([str(tmp_path)])
    assert len(shards) == 6
    examples = pattern_examples(shards, size)
    assert examples["codes"].shape == (len(examples["target"]), area)
    table, report = fit_table(examples, min_count=1, epochs=30, holdout=0.0)
    assert report["positions"] == len(examples["codes"])
    top = table.codes[np.argmax(table.weights)]
    chosen = {int(np.min(np.where(c >= 0, c, np.iinfo(np.int64).max)))
              for c in examples["codes"]}
    assert top in chosen
    out = tmp_path / "table.npz"
    r = CliRunner().invoke(main, ["train", "patterns", str(tmp_path), "-o", str(out),
                                  "--size", "5", "--min-count", "1", "--epochs", "2"])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and len(pt.PatternTable.load(out).codes) > 0
    bad = CliRunner().invoke(main, ["train", "patterns", str(folder / "g00000.npz"), "-o",
                                    str(out), "--size", "9"])
    assert bad.exit_code != 0 and "no fully searched 9x9 positions" in bad.output
