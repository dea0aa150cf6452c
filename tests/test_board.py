"""The NoGo rules core (board.py).

Checks, with ASCII fixtures: capture and suicide are illegal, multi-stone blocks, edges and
corners, last-liberty cases, game end. With property tests over thousands of random games on
several sizes, at every ply: every block has a liberty; the incremental legal masks, liberty sets
and liberty counts equal a naive flood-fill oracle for both colours; undo restores hash, masks and
blocks exactly; a point illegal for a colour never becomes legal while empty; the Zobrist hash
equals one recomputed from scratch; the game ends exactly when the side to move has no move.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nogobot.game import coords
from nogobot.game.board import (
    BLACK, EMPTY, WHITE, Board, IllegalMove, geometry, legal_counts_after)
from nogobot.game.naive_rules import naive_is_legal, naive_legal_mask


def pt(board, vertex):
    return coords.from_gtp(vertex, board.size)


# ---------------------------------------------------------------- ASCII fixtures


def test_empty_board_all_legal_black_first():
    b = Board(9)
    assert b.to_move == BLACK
    assert b.num_legal(BLACK) == b.num_legal(WHITE) == 81
    assert not b.is_terminal() and b.winner() == EMPTY


def test_capture_is_illegal():
    b = Board.from_ascii("""
        . X . .
        X O X .
        . . . .
        . . . .
    """, to_move=BLACK)
    b2 = pt(b, "B2")
    assert b.block_liberties(pt(b, "B3")) == [b2]  # the O stone's last liberty
    assert not b.is_legal(b2, BLACK)  # filling it would capture
    assert b.is_legal(b2, WHITE)  # white extends to A2, C2, B1


def test_capture_and_suicide_cases():
    b = Board.from_ascii("""
        . X O .
        X O . .
        . X . .
        . . . .
    """, to_move=BLACK)
    c3 = pt(b, "C3")
    assert b.block_liberties(pt(b, "B3")) == [c3]
    assert not b.is_legal(c3, BLACK)  # captures B3
    assert b.is_legal(c3, WHITE)  # connects B3 and C4, keeping D4, D3, C2
    a4 = pt(b, "A4")
    assert b.block_liberties(pt(b, "B4")) == [a4]
    assert not b.is_legal(a4, WHITE)  # no liberty of its own and captures B4
    assert b.is_legal(a4, BLACK)  # joins B4 and A3, which keep A2


def test_from_ascii_rejects_dead_block():
    with pytest.raises(ValueError):
        Board.from_ascii("""
            O X .
            X . .
            . . .
        """)


def test_multi_stone_block_last_liberty_capture_and_suicide():
    b = Board.from_ascii("""
        O O . X .
        X X X X .
        . . . . .
        . . . . .
        . . . . .
    """, to_move=BLACK)
    c5 = pt(b, "C5")
    assert b.block_of(pt(b, "A5")) == [0, 1]
    assert b.block_liberties(pt(b, "A5")) == [c5]
    assert not b.is_legal(c5, BLACK)  # captures the two-stone block
    assert not b.is_legal(c5, WHITE)  # fills its own last liberty: suicide
    # Black's big block keeps plenty of liberties; E5 corner legal for both.
    assert b.is_legal(pt(b, "E5"), BLACK) and b.is_legal(pt(b, "E5"), WHITE)


def test_corner_suicide_and_edge():
    b = Board.from_ascii("""
        . X . .
        X . . .
        . . . .
        . . . .
    """, to_move=WHITE)
    assert not b.is_legal(pt(b, "A4"), WHITE)  # corner surrounded by black: suicide
    assert b.is_legal(pt(b, "A4"), BLACK)  # black fills own eye: block keeps liberties
    h = b.hash
    with pytest.raises(IllegalMove):
        b.play(pt(b, "A4"), WHITE)
    assert b.stones[0] == EMPTY and b.hash == h and b.ply == 2  # unchanged


def test_occupied_is_illegal_and_play_raises_without_change():
    b = Board(5)
    b.play(12)
    h, m = b.hash, b.legal_mask(WHITE)
    for c in (BLACK, WHITE):
        assert not b.is_legal(12, c)
    with pytest.raises(IllegalMove):
        b.play(12)
    assert b.hash == h and np.array_equal(b.legal_mask(WHITE), m) and b.ply == 1


def test_game_end_and_winner_2x2():
    b = Board(2)
    b.play(0)
    b.play(3)
    b.play(1)  # both blocks are now down to the liberty A1 (point 2)
    assert b.to_ascii() == "X X\n. O"
    assert not b.is_legal(2, WHITE)  # would capture the X block
    assert b.is_terminal() and b.winner() == BLACK


def test_ascii_round_trip():
    text = "X . O\n. X .\n. . ."
    b = Board.from_ascii(text)
    assert b.to_ascii() == text
    assert b.to_move == WHITE  # black has one more stone


def test_hash_depends_on_position_not_order():
    a, b = Board(7), Board(7)
    for p in (10, 20, 30, 31):
        a.play(p)
    for p in (30, 31, 10, 20):
        b.play(p)
    assert a.hash == b.hash
    b.undo()
    assert a.hash != b.hash


def test_undo_empty_history_raises():
    with pytest.raises(IndexError):
        Board(9).undo()


def test_size_limits():
    for bad in (0, 1, 20, 25):
        with pytest.raises(ValueError):
            Board(bad)
    assert Board(19).geo.words == 6


# ---------------------------------------------------------------- random-game properties


def naive_liberties(stones, size):
    """Map point -> frozenset of liberties of its block, by flood fill."""
    nbr = geometry(size).nbr
    out = {}
    for p in np.flatnonzero(stones):
        if p in out:
            continue
        block, libs, stack = {int(p)}, set(), [int(p)]
        while stack:
            q = stack.pop()
            for r in nbr[q]:
                if r < 0:
                    continue
                if stones[r] == EMPTY:
                    libs.add(int(r))
                elif stones[r] == stones[p] and int(r) not in block:
                    block.add(int(r))
                    stack.append(int(r))
        for q in block:
            out[q] = frozenset(libs)
    return out


def scratch_hash(board):
    z = board.geo.zobrist
    h = 0
    for p in np.flatnonzero(board.stones):
        h ^= int(z[board.stones[p], p])
    if board.to_move == WHITE:
        h ^= int(z[0, board.geo.area])
    return h & 0xFFFFFFFFFFFFFFFF


def check_position(board, deep=True):
    nbr = board.geo.nbr
    for c in (BLACK, WHITE):
        naive = naive_legal_mask(board.stones.copy(), nbr, c)
        assert np.array_equal(board.legal[c], naive), f"mask mismatch for {c}\n{board}"
        assert board.num_legal(c) == int(naive.sum())
    if not deep:
        return
    libs = naive_liberties(board.stones, board.size)
    counts = board.liberty_counts()
    for p, ls in libs.items():
        assert len(ls) >= 1, "a block without liberty"
        assert counts[p] == len(ls)
    for p in set(int(r) for r in board.root[board.stones != EMPTY]):
        assert frozenset(board.block_liberties(p)) == libs[p]
    assert board.hash == scratch_hash(board)


def play_random_game(size, rng, deep=True, undo_every=7):
    board = Board(size)
    illegal_since = {BLACK: set(), WHITE: set()}
    ply = 0
    while not board.is_terminal():
        check_position(board, deep=deep)
        for c in (BLACK, WHITE):
            now_illegal = set(np.flatnonzero(~board.legal[c] & (board.stones == EMPTY)).tolist())
            # Once illegal for c while empty, a point never becomes legal again.
            assert illegal_since[c] <= now_illegal | set(np.flatnonzero(board.stones).tolist())
            illegal_since[c] |= now_illegal
        moves = board.legal_moves()
        p = int(rng.choice(moves))
        if ply % undo_every == 3:
            before = [a.copy() for a in board.arrays()]
            board.play(p)
            board.undo()
            for a, b in zip(before, board.arrays()):
                assert np.array_equal(a, b), "undo did not restore the state exactly"
        board.play(p)
        ply += 1
    check_position(board, deep=deep)
    # The game ends with the side to move having no legal move at all (naive oracle agrees).
    c = board.to_move
    assert not any(naive_is_legal(board.stones.copy(), board.geo.nbr, q, c)
                   for q in range(board.geo.area))
    assert board.winner() == 3 - c
    return board


@pytest.mark.parametrize("size,games", [
    (2, 300), (3, 500), (4, 500), (5, 500), (7, 300), (13, 20),
    # The pure-Python oracle is slow on big boards: 15-30 s each on a loaded box.
    pytest.param(9, 600, marks=pytest.mark.slow), pytest.param(19, 6, marks=pytest.mark.slow)])
def test_random_games_match_naive_oracle(size, games):
    rng = np.random.default_rng(size * 1000 + games)
    for g in range(games):
        play_random_game(size, rng, deep=(g % 5 == 0))


@settings(max_examples=60, deadline=None)
@given(size=st.integers(2, 11), seed=st.integers(0, 2**32 - 1))
def test_property_random_game(size, seed):
    play_random_game(size, np.random.default_rng(seed), deep=True, undo_every=2)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(2, 9), seed=st.integers(0, 2**32 - 1), back=st.integers(1, 30))
def test_undo_many_restores_exactly(size, seed, back):
    rng = np.random.default_rng(seed)
    board = Board(size)
    snapshots = []
    while not board.is_terminal():
        snapshots.append(([a.copy() for a in board.arrays()], board.hash))
        board.play(int(rng.choice(board.legal_moves())))
    for _ in range(min(back, len(snapshots))):
        board.undo()
        arrays, h = snapshots.pop()
        assert board.hash == h
        for a, b in zip(arrays, board.arrays()):
            assert np.array_equal(a, b)


def check_counts_after(size, rng):
    """Along a random game: for every legal move at every ply, ``legal_counts_after`` gives
    the legal counts that playing the move leaves."""
    board = Board(size)
    nbr = board.geo.nbr
    while not board.is_terminal():
        c = board.to_move
        stones, root, _, libs, legal, meta = board.arrays()
        for p in board.legal_moves():
            after = board.copy()
            after.play(int(p))
            want = (after.num_legal(BLACK), after.num_legal(WHITE))
            got = legal_counts_after(stones, root, libs, legal, meta, nbr, int(p), c)
            assert tuple(int(x) for x in got) == want, (board.to_ascii(), int(p))
        board.play(int(rng.choice(board.legal_moves())))


@settings(max_examples=60, deadline=None)
@given(size=st.integers(2, 11), seed=st.integers(0, 2**32 - 1))
def test_legal_counts_after_a_move_match_playing_it(size, seed):
    check_counts_after(size, np.random.default_rng(seed))


@pytest.mark.parametrize("size,games", [(5, 40), (9, 12), (19, 1)])
def test_legal_counts_after_on_larger_boards(size, games):
    rng = np.random.default_rng(size)
    for _ in range(games):
        check_counts_after(size, rng)


def test_kernel_playouts_are_legal_games():
    """random_playouts leaves its input untouched and black wins about half on 9x9."""
    from nogobot.game.board import random_playouts

    b = Board(9)
    before = [a.copy() for a in b.arrays()]
    g = b.geo
    wins = random_playouts(*b.arrays(), g.nbr, g.zobrist, 2000, 7)
    for x, y in zip(before, b.arrays()):
        assert np.array_equal(x, y)
    assert 850 < wins < 1150  # ~50% (49–52.5% reported); 2000 games, > 4 sigma margin


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([5, 7, 9]), st.floats(0.5, 0.9))
def test_independent_regions_never_interact(seed, size, fill):
    """Play in one region of ``independent_regions`` leaves every other region's legality (both
    colours, checked by the naive rules) as it was, and regions only ever split."""
    rng = np.random.default_rng(seed)
    b = Board(size)
    while b.ply < fill * size * size and not b.is_terminal():
        b.play(int(rng.choice(b.legal_moves())))
    regions = b.independent_regions()
    assert sorted(p for r in regions for p in r) == sorted(
        int(p) for p in np.flatnonzero(b.stones == EMPTY))
    region_of = {p: i for i, r in enumerate(regions) for p in r}
    for c in (BLACK, WHITE):
        for m in (int(p) for p in b.legal_moves(c)):
            after = b.copy()
            after.play(m, c)
            for p, i in region_of.items():
                if i != region_of[m]:
                    for colour in (BLACK, WHITE):
                        assert naive_is_legal(after.stones, b.geo.nbr, p, colour) == \
                            naive_is_legal(b.stones, b.geo.nbr, p, colour)
            for r in after.independent_regions():
                assert len({region_of[p] for p in r}) == 1


def test_independent_regions_split_at_a_wall():
    """A wall of one colour's stones with liberties on one side only splits the board."""
    b = Board.from_ascii("""
        .....
        XXXXX
        OOOOO
        .....
        .....""", to_move=BLACK)
    assert sorted(map(sorted, b.independent_regions())) == [list(range(5)),
                                                           list(range(15, 25))]
    joined = Board.from_ascii("""
        .....
        XXXX.
        OOOOO
        .....
        .....""", to_move=BLACK)
    assert len(joined.independent_regions()) == 1
