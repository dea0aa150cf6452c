"""SGF records (nogobot/sgf.py): round trips, coordinates, setup stones, comments, results,
and rejection of everything that is not a legal NoGo game."""

from __future__ import annotations

import random

import pytest

from nogobot.game import coords, sgf
from nogobot.game.board import BLACK, WHITE, Board


def random_game(size: int, seed: int, stop: int | None = None) -> Board:
    rng = random.Random(seed)
    b = Board(size)
    while not b.is_terminal() and (stop is None or b.ply < stop):
        b.play(int(rng.choice(list(b.legal_moves()))))
    return b


@pytest.mark.parametrize("size, seed", [(2, 0), (3, 1), (5, 2), (9, 3), (13, 4), (19, 5)])
def test_round_trip_of_finished_games(size, seed):
    board = random_game(size, seed)
    rec = sgf.record_of(board, black="nogobot", white="random",
                        comments={0: "first move", 2: "multi\nline [comment]"})
    assert rec.result == ("B+R" if board.to_move == WHITE else "W+R")
    text = sgf.serialise(rec)
    assert f"SZ[{size}]" in text and f"RE[{rec.result}]" in text and "PB[nogobot]" in text
    back = sgf.parse(text)
    assert back == rec
    replay = back.board()
    assert replay.to_ascii() == board.to_ascii() and replay.hash == board.hash
    assert replay.is_terminal()


def test_unfinished_game_has_no_result(tmp_path):
    board = random_game(7, 9, stop=10)
    rec = sgf.record_of(board)
    assert rec.result is None and "RE[" not in sgf.serialise(rec)
    sgf.save(rec, tmp_path / "g.sgf")
    back = sgf.load(tmp_path / "g.sgf")
    assert back.moves == board.moves
    assert back.board(upto=4).moves == board.moves[:4]
    assert back.board(upto=0).ply == 0


def test_coordinates_follow_sgf_convention():
    # SGF: column letter then row letter, row a = top. GTP A1 = bottom left.
    rec = sgf.parse("(;SZ[9];B[ai];W[ia];B[ee])")
    assert [coords.to_gtp(p, 9) for _, p in rec.moves] == ["A1", "J9", "E5"]
    assert [c for c, _ in rec.moves] == [BLACK, WHITE, BLACK]
    b = Board(9)
    b.play(coords.from_gtp("A1", 9))
    b.play(coords.from_gtp("J9", 9))
    assert ";B[ai];W[ia]" in sgf.serialise(sgf.record_of(b))


def test_setup_stones_and_player_to_move():
    rec = sgf.parse("(;SZ[3]AB[aa][bb]AW[cc]PL[W];W[ca])")
    assert sorted(rec.setup) == sorted([(BLACK, 0), (BLACK, 4), (WHITE, 8)])
    assert rec.first_to_move == WHITE
    board = rec.board(upto=0)
    assert board.to_ascii() == "X . .\n. X .\n. . O" and board.to_move == WHITE
    assert not board.can_undo()
    board = rec.board()
    assert board.to_ascii() == "X . O\n. X .\n. . O"
    again = sgf.parse(sgf.serialise(rec))
    assert again == rec


def test_first_mover_defaults():
    assert sgf.parse("(;SZ[3];W[aa])").board(upto=0).to_move == WHITE  # first move's colour
    assert sgf.parse("(;SZ[3])").board().to_move == BLACK


def test_comment_only_nodes_are_skipped():
    rec = sgf.parse("(;SZ[3]C[root];B[aa];C[just a comment];W[cc]C[reply])")
    assert len(rec.moves) == 2 and rec.comments == {1: "reply"}


@pytest.mark.parametrize("text, message", [
    ("(;SZ[3];B[ac];W[bc];W[ab])", "move 3 (W A2) is illegal in NoGo: it would capture"),
    ("(;SZ[3];W[ab];W[bc];B[ac])", "move 3 (B A1) is illegal in NoGo: it would be suicide"),
    ("(;SZ[3];B[ac];W[ac])", "move 2 (W A1) is illegal in NoGo: the point is occupied"),
    ("(;SZ[3];B[ac];W[])", "move 2 (W) is a pass: NoGo has no pass"),
    ("(;SZ[3];B[ac];W[tt])", "move 2 (W) is a pass"),  # tt is a pass up to 19x19
    ("(;SZ[3];B[zz])", "bad move"),
    ("(;SZ[20];B[aa])", "board size 20 outside 2..19"),
    ("(;SZ[1])", "board size 1 outside 2..19"),
    ("(;SZ[3]AB[ac]AW[ab][bc])", "setup stones: a block has no liberty"),
    ("(;SZ[3];B[aa];AB[bb])", "setup stones after the root"),
    ("nothing here", "not an SGF game"),
    ("", "not an SGF game"),
])
def test_rejects_what_is_not_a_legal_nogo_game(text, message):
    with pytest.raises(sgf.SgfError) as err:
        sgf.parse(text)
    assert message in str(err.value)


def test_capture_of_a_block_is_reported():
    # Black B1-C1 on 4x4 with white A1, B2, C2: white D1 captures two stones.
    text = "(;SZ[4];B[bd];B[cd];W[ad];W[bc];W[cc];W[dd])"
    with pytest.raises(sgf.SgfError, match=r"move 6 \(W D1\).*capture"):
        sgf.parse(text)


def test_load_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        sgf.load(tmp_path / "nope.sgf")


def test_fixture_files_of_the_conformance_suite():
    from nogobot.tools.conformance import CONFORMANCE_DIR

    here = CONFORMANCE_DIR / "sgf"
    assert sgf.load(here / "game3.sgf").board().is_terminal()
    assert sgf.load(here / "setup.sgf").setup
    for name in ("capture", "pass", "occupied", "size21", "garbage", "dead_setup"):
        with pytest.raises(sgf.SgfError):
            sgf.load(here / f"{name}.sgf")
