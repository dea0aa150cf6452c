"""NoGo game records in SGF (read and write via sgfmill; legality always checked by board.py).

A :class:`GameRecord` holds what nogobot needs from an SGF file: board size, optional setup
stones (AB/AW in the root), the main line of moves as ``(colour, flat point)``, player names,
the result (``B+R`` / ``W+R``: NoGo has no score, the loser is the side left without a legal
move, which "resigns"), and optional per-move comments (``C[]``).

Reading rejects anything that is not a legal NoGo game: a pass, a move off the board, a move
that captures or is suicide, setup stones outside the root, a setup block without liberty.
The error (:class:`SgfError`) names the move number, colour and vertex.

Coordinates: sgfmill uses (row, col) with row 0 at the *bottom*; nogobot's flat points count
rows from the top. The conversion happens only in ``_to_flat`` / ``from_flat`` below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sgfmill import sgf

from .. import __version__
from . import coords
from .coords import BLACK, WHITE  # not from board.py, which is imported lazily

_COLOUR_OF = {"b": BLACK, "w": WHITE}
_LETTER_OF = {BLACK: "b", WHITE: "w"}


class SgfError(ValueError):
    """The data is not a readable SGF record of a legal NoGo game."""


@dataclass
class GameRecord:
    """A NoGo game: size, setup stones, moves and game info. Moves are (colour, flat point)."""

    size: int = 9
    moves: list[tuple[int, int]] = field(default_factory=list)
    setup: list[tuple[int, int]] = field(default_factory=list)
    first_to_move: int | None = None  # PL[] of the root, if any
    black: str | None = None
    white: str | None = None
    result: str | None = None
    comments: dict[int, str] = field(default_factory=dict)  # move index (0-based) -> text

    def board(self, upto: int | None = None):
        """The position after the setup and the first ``upto`` moves (all when None).

        Raises SgfError naming the first illegal move."""
        from .board import Board  # lazy: keeps GTP start-up free of numba

        size = self.size
        if not coords.MIN_SIZE <= size <= coords.MAX_SIZE:
            raise SgfError(f"board size {size} outside {coords.MIN_SIZE}..{coords.MAX_SIZE}")
        first = self.first_to_move
        if first is None:
            first = self.moves[0][0] if self.moves else BLACK
        if self.setup:
            grid = [["."] * size for _ in range(size)]
            for colour, p in self.setup:
                row, col = coords.from_flat(p, size)
                grid[row][col] = "X" if colour == BLACK else "O"
            try:
                board = Board.from_ascii("\n".join("".join(r) for r in grid), to_move=first)
            except ValueError as e:
                raise SgfError(f"setup stones: {e}") from None
        else:
            board = Board(size)
            board.to_move = first
        moves = self.moves if upto is None else self.moves[:max(0, upto)]
        for i, (colour, p) in enumerate(moves, start=1):
            if not board.is_legal(p, colour):
                why = _why_illegal(board, p, colour)
                raise SgfError(f"move {i} ({_LETTER_OF[colour].upper()} "
                               f"{coords.to_gtp(p, size)}) is illegal in NoGo: {why}")
            board.play(p, colour)
        return board


def _why_illegal(board, p: int, colour: int) -> str:
    """Explain an illegal move (legality itself was decided by board.py)."""
    if board.stones[p]:
        return "the point is occupied"
    for q in board.geo.nbr[p]:
        if q >= 0 and board.stones[q] == 3 - colour and board.block_liberties(q) == [p]:
            return "it would capture"
    return "it would be suicide"


def _to_flat(rc: tuple[int, int], size: int) -> int:
    row, col = rc
    return coords.to_flat(size - 1 - row, col, size)


def from_flat(p: int, size: int) -> tuple[int, int]:
    row, col = coords.from_flat(p, size)
    return size - 1 - row, col


def parse(data: bytes | str) -> GameRecord:
    """SGF text -> GameRecord (main line only), every move checked with the NoGo rules."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise SgfError(f"not an SGF game: {e}") from None
    size = game.get_size()
    if not coords.MIN_SIZE <= size <= coords.MAX_SIZE:
        raise SgfError(f"board size {size} outside {coords.MIN_SIZE}..{coords.MAX_SIZE}")
    root = game.get_root()
    rec = GameRecord(size=size)
    try:
        black, white, _ = root.get_setup_stones()
    except ValueError as e:
        raise SgfError(f"bad setup stones: {e}") from None
    rec.setup = ([(BLACK, _to_flat(rc, size)) for rc in sorted(black)]
                 + [(WHITE, _to_flat(rc, size)) for rc in sorted(white)])
    for prop, attr in (("PB", "black"), ("PW", "white"), ("RE", "result")):
        if root.has_property(prop):
            setattr(rec, attr, root.get(prop))
    if root.has_property("PL"):
        rec.first_to_move = _COLOUR_OF.get(root.get("PL"))
    for number, node in enumerate(game.get_main_sequence()[1:], start=1):
        if node.has_setup_stones():
            raise SgfError(f"node {number}: setup stones after the root are not supported")
        try:
            colour, rc = node.get_move()
        except ValueError as e:
            raise SgfError(f"node {number}: bad move (off the board or malformed) {e}".rstrip()
                           ) from None
        if colour is None:
            continue  # a node without a move (comment only)
        if rc is None:
            raise SgfError(f"move {len(rec.moves) + 1} ({colour.upper()}) is a pass: "
                           "NoGo has no pass")
        if node.has_property("C"):
            rec.comments[len(rec.moves)] = node.get("C")
        rec.moves.append((_COLOUR_OF[colour], _to_flat(rc, size)))
    rec.board()  # validates every move; raises SgfError
    return rec


def split_collection(data: bytes) -> list[tuple[str, bytes]]:
    """(GN or "", SGF text) of every game of a collection, each as its own SGF text (not
    checked as NoGo: ``parse`` does that). ValueError for text that is not SGF."""
    from sgfmill import sgf_grammar

    out = []
    for tree in sgf_grammar.parse_sgf_collection(data):
        game = sgf.Sgf_game.from_coarse_game_tree(tree)
        root = game.get_root()
        out.append((root.get("GN") if root.has_property("GN") else "", game.serialise()))
    return out


def load(path: str | Path) -> GameRecord:
    """Read and validate an SGF file (OSError if it cannot be read, SgfError if invalid)."""
    return parse(Path(path).read_bytes())


def serialise(rec: GameRecord) -> str:
    """GameRecord -> SGF text (FF[4], GM[1] so Go viewers display it, KM[0])."""
    game = sgf.Sgf_game(rec.size)
    root = game.get_root()
    root.set("AP", ("nogobot", __version__))
    root.set("KM", 0.0)
    for prop, value in (("PB", rec.black), ("PW", rec.white), ("RE", rec.result)):
        if value:
            root.set(prop, value)
    if rec.setup:
        root.set_setup_stones(
            [from_flat(p, rec.size) for c, p in rec.setup if c == BLACK],
            [from_flat(p, rec.size) for c, p in rec.setup if c == WHITE])
        if rec.first_to_move is not None:
            root.set("PL", _LETTER_OF[rec.first_to_move])
    for i, (colour, p) in enumerate(rec.moves):
        node = game.extend_main_sequence()
        node.set_move(_LETTER_OF[colour], from_flat(p, rec.size))
        if rec.comments.get(i):
            node.set("C", rec.comments[i])
    return game.serialise().decode("utf-8")


def save(rec: GameRecord, path: str | Path) -> None:
    Path(path).write_text(serialise(rec), encoding="utf-8")


def result_of(board) -> str | None:
    """``B+R`` / ``W+R`` once the side to move is stuck (it lost), else None."""
    if not board.is_terminal():
        return None
    return "W+R" if board.to_move == BLACK else "B+R"


def record_of(board, *, setup: list[tuple[int, int]] | None = None,
              first_to_move: int | None = None, black: str | None = None,
              white: str | None = None, comments: dict[int, str] | None = None) -> GameRecord:
    """The GameRecord of a Board's game (its moves; setup stones must be given if any)."""
    return GameRecord(size=board.size, moves=list(board.moves), setup=list(setup or []),
                      first_to_move=first_to_move, black=black, white=white,
                      result=result_of(board), comments=dict(comments or {}))
