"""Input planes and board symmetries (nogobot.net.features).

Checks: every plane on small ASCII boards, one plane at a time; last-move planes and colour plane
after real moves; the numba kernel writing into a row of a larger (padded) batch buffer; the 8
symmetries round-trip on planes and policies and agree with the point map; and features commute
with symmetries (features of a transformed game == transformed features).
"""

import numpy as np
import pytest

from nogobot.game import coords
from nogobot.game.board import BLACK, WHITE, Board
from nogobot.net.features import (
    FEATURE_VERSION,
    NUM_PLANES,
    NUM_SYMMETRIES,
    PLANE_NAMES,
    board_planes,
    boards_planes,
    fill_planes,
    inverse_symmetry,
    symmetry_permutation,
    transform_planes,
    transform_point,
    transform_policy,
    untransform_planes,
    untransform_policy,
)

POS = """
. X O .
X O . .
. X . .
. . . .
"""  # 3 black, 2 white: white to move


def grid(text: str) -> np.ndarray:
    return np.array([[int(ch) for ch in row.split()] for row in text.strip().splitlines()],
                    dtype=np.float32)


def plane(board: Board, name: str) -> np.ndarray:
    return board_planes(board)[PLANE_NAMES.index(name)]


def test_constants():
    assert FEATURE_VERSION == 1
    assert NUM_PLANES == len(PLANE_NAMES) == 12


@pytest.mark.parametrize("name, expected", [
    ("own_stones", "0 0 1 0\n0 1 0 0\n0 0 0 0\n0 0 0 0"),
    ("opp_stones", "0 1 0 0\n1 0 0 0\n0 1 0 0\n0 0 0 0"),
    # White may not play A4 (would capture B4); (1,2) is legal: it joins both white stones.
    ("own_legal", "0 0 0 1\n0 0 1 1\n1 0 1 1\n1 1 1 1"),
    # Black may not play (1,2): it would capture the white stone at (1,1).
    ("opp_legal", "1 0 0 1\n0 0 0 1\n1 0 1 1\n1 1 1 1"),
    # White (1,1) has one liberty, (1,2); white (0,2) has two, (0,3) and (1,2).
    ("own_lib1", "0 0 0 0\n0 0 1 0\n0 0 0 0\n0 0 0 0"),
    ("own_lib2", "0 0 0 1\n0 0 1 0\n0 0 0 0\n0 0 0 0"),
    # Black (0,1) has one liberty (0,0); black (1,0) has two, (0,0) and (2,0); black (2,1) three.
    ("opp_lib1", "1 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0"),
    ("opp_lib2", "1 0 0 0\n0 0 0 0\n1 0 0 0\n0 0 0 0"),
    ("last_move", "0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0"),
    ("last_move2", "0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0"),
    ("black_to_move", "0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0"),
    ("on_board", "1 1 1 1\n1 1 1 1\n1 1 1 1\n1 1 1 1"),
])
def test_planes_on_ascii_board(name, expected):
    b = Board.from_ascii(POS)
    assert b.to_move == WHITE
    np.testing.assert_array_equal(plane(b, name), grid(expected))


def test_views_swap_with_side_to_move():
    white = board_planes(Board.from_ascii(POS, to_move=WHITE))
    black = board_planes(Board.from_ascii(POS, to_move=BLACK))
    for a, b in ((0, 1), (2, 3), (4, 6), (5, 7)):
        np.testing.assert_array_equal(white[a], black[b])
        np.testing.assert_array_equal(white[b], black[a])
    assert black[10].min() == black[10].max() == 1.0


def test_shared_liberty_marks_every_plane():
    # The point (0,1) is the only liberty of black (0,0) and one of the two of white (0,2).
    b = Board.from_ascii("""
        X . O
        O . .
        . . .
    """, to_move=BLACK)
    x = board_planes(b)
    idx = {n: i for i, n in enumerate(PLANE_NAMES)}
    assert x[idx["own_lib1"], 0, 1] == 1  # black (0,0): liberty (0,1) only
    assert x[idx["opp_lib2"], 0, 1] == 1  # white (0,2): liberties (0,1), (1,2)
    assert x[idx["opp_lib2"], 1, 2] == 1
    assert x[idx["opp_lib2"], 0, 0] == 0
    # White (1,0) has liberties (2,0), (1,1): two.
    assert x[idx["opp_lib2"], 2, 0] == 1 and x[idx["opp_lib2"], 1, 1] == 1


def test_last_moves_and_colour_after_play():
    b = Board(5)
    b.play(coords.from_gtp("C3", 5))
    b.play(coords.from_gtp("D4", 5))
    x = board_planes(b)
    assert b.to_move == BLACK
    last = np.zeros((5, 5)); last[1, 3] = 1   # D4
    last2 = np.zeros((5, 5)); last2[2, 2] = 1  # C3
    np.testing.assert_array_equal(x[8], last)
    np.testing.assert_array_equal(x[9], last2)
    assert np.all(x[10] == 1.0)
    assert x[0, 2, 2] == 1 and x[1, 1, 3] == 1


def test_fill_planes_into_padded_batch_row():
    b = Board.from_ascii(POS)
    buf = np.full((3, NUM_PLANES, 7, 7), 9.0, dtype=np.float32)
    fill_planes(b.stones, b.root, b.libs, b.legal, b.meta, b.size, buf[1])
    np.testing.assert_array_equal(buf[1, :, :4, :4], board_planes(b))
    assert np.all(buf[1, :, 4:, :] == 0) and np.all(buf[1, :, :, 4:] == 0)
    assert np.all(buf[0] == 9.0) and np.all(buf[2] == 9.0)


def test_boards_planes_requires_one_size():
    assert boards_planes([Board(5), Board(5)]).shape == (2, NUM_PLANES, 5, 5)
    with pytest.raises(ValueError):
        boards_planes([Board(5), Board(7)])


def random_game(size: int, plies: int, seed: int) -> Board:
    rng = np.random.default_rng(seed)
    b = Board(size)
    for _ in range(plies):
        moves = b.legal_moves()
        if len(moves) == 0:
            break
        b.play(int(rng.choice(moves)))
    return b


@pytest.mark.parametrize("k", range(NUM_SYMMETRIES))
def test_symmetry_round_trip(k):
    rng = np.random.default_rng(k)
    x = rng.random((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_array_equal(untransform_planes(transform_planes(x, k), k), x)
    v = rng.random((4, 49)).astype(np.float32)
    np.testing.assert_array_equal(untransform_policy(transform_policy(v, k), k), v)
    assert inverse_symmetry(inverse_symmetry(k)) == k


def test_symmetries_are_distinct_and_identity_first():
    x = np.arange(25).reshape(5, 5)
    images = {transform_planes(x, k).tobytes() for k in range(8)}
    assert len(images) == 8
    np.testing.assert_array_equal(transform_planes(x, 0), x)


@pytest.mark.parametrize("k", range(NUM_SYMMETRIES))
def test_policy_and_point_maps_agree(k):
    size = 5
    v = np.zeros(size * size)
    v[7] = 1.0
    t = symmetry_permutation(size, k)
    np.testing.assert_array_equal(transform_policy(v, k), v[t])
    assert transform_policy(v, k)[transform_point(7, size, k)] == 1.0
    planes = v.reshape(size, size)
    np.testing.assert_array_equal(transform_planes(planes, k).reshape(-1), transform_policy(v, k))


@pytest.mark.parametrize("size, plies, seed", [(5, 9, 1), (7, 20, 2), (9, 40, 3), (9, 55, 4)])
def test_features_commute_with_symmetries(size, plies, seed):
    b = random_game(size, plies, seed)
    x = board_planes(b)
    for k in range(NUM_SYMMETRIES):
        t = Board(size)
        for colour, p in b.moves:
            t.play(transform_point(p, size, k), colour)
        np.testing.assert_array_equal(board_planes(t), transform_planes(x, k),
                                      err_msg=f"symmetry {k}")
