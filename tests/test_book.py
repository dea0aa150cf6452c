"""The opening book (nogobot.engine.book): a position and its 7 symmetric images share one entry and
each gets its own image of the move; the file round-trips and a bad one is refused naming it;
the builder searches each position once, resumes without searching again, and follows only the
engine's own moves; the engine answers book positions without searching; the CLI builds, shows
and refuses."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from nogobot.cli import main
from nogobot.engine.book import BookError, OpeningBook, book_positions, canonical
from nogobot.engine.mcts import SearchConfig
from nogobot.engine.player import MCTSAgent
from nogobot.game import coords
from nogobot.game.board import Board
from nogobot.net.features import transform_point
from nogobot.net.inference import UniformEvaluator


def random_board(size: int, plies: int, seed: int) -> Board:
    rng = np.random.default_rng(seed)
    b = Board(size)
    for _ in range(plies):
        legal = b.legal_moves()
        if legal.size == 0:
            break
        b.play(int(rng.choice(legal)))
    return b


def image(board: Board, k: int) -> Board:
    """The board with every move sent through symmetry k."""
    out = Board(board.size)
    for colour, p in board.moves:
        out.play(transform_point(p, board.size, k), colour)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_symmetric_positions_share_an_entry_and_get_their_own_move(seed):
    size = 9 if seed % 2 else 7
    board = random_board(size, 3 + seed, seed)
    move = int(board.legal_moves()[seed % board.num_legal()])
    book = OpeningBook(size)
    book.add(board, move, visits=100, winrate=0.6)
    # no symmetry maps this position onto itself, so each image has one right answer
    assert len({image(board, k).stones.tobytes() for k in range(8)}) == 8
    keys = {canonical(image(board, k))[0] for k in range(8)}
    assert keys == {canonical(board)[0]}
    for k in range(8):
        entry = book.lookup(image(board, k))
        assert entry is not None and entry.move == transform_point(move, size, k)
        assert (entry.visits, entry.winrate) == (100, 0.6)
    assert len(book) == 1
    # the other side to move is another position
    other = board.copy()
    other.to_move = 3 - board.to_move
    assert book.lookup(other) is None


def test_file_round_trip(tmp_path):
    book = OpeningBook(9, {"playouts": 5})
    for seed in range(5):
        b = random_board(9, seed, seed)
        book.add(b, int(b.legal_moves()[0]), 10 + seed, 0.5)
    path = tmp_path / "book.json"
    book.save(path)
    again = OpeningBook.load(path)
    assert again.entries == book.entries and again.built_with == {"playouts": 5}
    assert again.to_json() == book.to_json()


@pytest.mark.parametrize("content, words", [
    ("{not json", "invalid JSON"),
    (json.dumps({"format": 2, "size": 9, "positions": {}}), "not an opening book of format 1"),
    (json.dumps({"format": 1, "size": 40, "positions": {}}), "'size' must be a board size"),
    (json.dumps({"format": 1, "size": 9, "positions": {"9b:XO": {"move": "E5"}}}),
     "not a 9x9 position key"),
    (json.dumps({"format": 1, "size": 9, "positions": {"9b:" + "X" + "." * 80: {"move": "A9"}}}),
     "is not an empty point"),
    (json.dumps({"format": 1, "size": 9, "positions": {"9b:" + "." * 81: {"move": "Z1"}}}),
     "bad entry"),
])
def test_bad_files_are_refused_naming_them(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BookError) as e:
        OpeningBook.load(path)
    assert str(path) in str(e.value) and words in str(e.value)


def test_builder_follows_the_engines_moves_and_resumes():
    size = 5
    searched: list[Board] = []

    def search(board):  # the lowest legal point, a fixed fake "long search"
        searched.append(board.copy())
        return int(board.legal_moves()[0]), 50, 0.5

    def policy(board):  # the opponent's likeliest moves: the highest points first
        return np.arange(size * size, dtype=np.float64)

    book = OpeningBook(size)
    n = book_positions(search, policy, size, plies=4, width=2, first_width=3, book=book)
    assert n == len(searched) == len(book)
    # No position is searched twice, and every one is one the engine must answer: as black
    # (even plies) its earlier own moves are the book's; as white (odd plies) likewise.
    assert len({canonical(b)[0] for b in searched}) == len(searched)
    for b in searched:
        assert b.ply < 4
        engine = b.to_move
        replay = Board(size)
        for colour, p in b.moves:
            if colour == engine:
                assert p == book.lookup(replay).move  # the engine's moves come from the book
            replay.play(p, colour)
    plies = sorted(b.ply for b in searched)
    assert plies.count(0) == 1 and plies.count(1) <= 3 and 0 < plies.count(2) <= 2
    assert book_positions(search, policy, size, plies=4, width=2, first_width=3, book=book) == 0


def test_engine_answers_book_positions_without_searching():
    board = Board(9)
    board.play(coords.from_gtp("C2", 9))  # a stone on no axis of symmetry
    d4 = coords.from_gtp("D4", 9)
    book = OpeningBook(9)
    book.add(board, d4, 1000, 0.55)
    agent = MCTSAgent(UniformEvaluator(), config=SearchConfig(batch_size=4, max_tree_mb=4),
                      playouts=16, log=None, book=book)
    for k in range(8):
        assert agent.select_move(image(board, k)) == transform_point(d4, 9, k)
        assert agent.last_result is None  # no search was made
    board.play(coords.from_gtp("E5", 9))
    move = agent.select_move(board)  # not in the book: searched
    assert agent.last_result is not None and agent.last_result.playouts >= 16
    assert board.is_legal(move)


def test_cli_builds_shows_and_gtp_refuses_a_bad_book(tmp_path):
    out = tmp_path / "book.json"
    runner = CliRunner()
    args = ["book", "build", str(out), "--size", "5", "--plies", "2", "--width", "2",
            "--first-width", "2", "--playouts", "24"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "positions; ply 0 black to move" in first.output  # each search is reported
    book = OpeningBook.load(out)
    assert 1 <= len(book) <= 3
    again = runner.invoke(main, args)  # resumes: nothing left to search
    assert again.exit_code == 0 and "positions; ply" not in again.output
    assert OpeningBook.load(out).entries == book.entries
    shown = runner.invoke(main, ["book", "show", str(out)])
    assert shown.exit_code == 0 and shown.output.count("winrate") == len(book)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    refused = runner.invoke(main, ["gtp", "--book", str(bad)], input="name\n")
    assert refused.exit_code != 0 and str(bad) in refused.output
    assert "= nogobot" not in refused.output  # refused before it spoke GTP
    other = runner.invoke(main, args + ["--playouts", "30"])
    assert other.exit_code != 0 and "--playouts" in other.output
