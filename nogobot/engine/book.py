"""The opening book: the first plies answered from long offline searches, without spending the
clock.

This module owns the book's file, its lookup and its building:

- **Positions, folded by symmetry.** A NoGo position is its stones and the side to move (no
  captures, no ko). Its key is the side to move and the stones under the one of the 8 board
  symmetries that gives the smallest string, so the 8 images of a position share one entry; a
  stored move is kept in that frame and turned back on lookup.
- **The file** (JSON, written atomically): ``{"format": 1, "size": 9, "built_with": {...},
  "positions": {key: {"move": "E5", "visits": N, "winrate": w}}}``. A book that cannot be read is
  refused with one line naming the file (``BookError``).
- **Building** (``build_book``, ``nogobot book build``): the engine's searches of the positions
  the engine can meet in its first ``plies`` plies, playing either colour: where the engine is
  to move only its book move is followed, where the opponent is to move its ``width`` likeliest
  moves by the network's policy are (all moves at ``first_width`` for the first ply). Every
  position is saved as soon as it is searched, so a killed build resumes where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.atomicio import write_atomic
from ..game import coords
from ..game.coords import BLACK

# numpy, the board and the symmetries (``features``) load when a position is looked up, not when
# the file is read: the GTP engine reads its book before it answers `name`, and must answer at
# once.
if TYPE_CHECKING:
    import numpy as np

    from ..game.board import Board

BOOK_FORMAT = 1
_STONE_CHARS = ".XO"  # empty, black, white (the board's stone codes 0, 1, 2)


class BookError(ValueError):
    """An opening book file cannot be used; the message names the file and the problem."""


def canonical(board: Board) -> tuple[str, int]:
    """(key, k): the position's key and the symmetry k that maps the board onto the key's
    frame (``features.transform_policy``'s k)."""
    from ..net.features import NUM_SYMMETRIES, symmetry_permutation

    best, best_k = None, 0
    stones = board.stones
    for k in range(NUM_SYMMETRIES):
        s = "".join(_STONE_CHARS[v] for v in stones[symmetry_permutation(board.size, k)])
        if best is None or s < best:
            best, best_k = s, k
    side = "b" if board.to_move == BLACK else "w"
    return f"{board.size}{side}:{best}", best_k


@dataclass
class BookEntry:
    move: int  # in the key's frame
    visits: int
    winrate: float


class OpeningBook:
    """Positions (folded by symmetry) and the move the engine plays in each."""

    def __init__(self, size: int, built_with: dict | None = None):
        self.size = size
        self.built_with = dict(built_with or {})
        self.entries: dict[str, BookEntry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, board: Board) -> BookEntry | None:
        """The book's entry for ``board`` with its move in the board's own frame (None when the
        position is not in the book, or the stored move is not legal there)."""
        if board.size != self.size:
            return None
        from ..net.features import symmetry_permutation

        key, k = canonical(board)
        e = self.entries.get(key)
        if e is None:
            return None
        move = int(symmetry_permutation(board.size, k)[e.move])
        if not board.is_legal(move):
            return None
        return BookEntry(move, e.visits, e.winrate)

    def add(self, board: Board, move: int, visits: int, winrate: float) -> None:
        """Store ``move`` (in the board's frame) for ``board``'s position."""
        from ..net.features import transform_point

        key, k = canonical(board)
        self.entries[key] = BookEntry(transform_point(move, board.size, k), int(visits),
                                      float(winrate))

    def describe(self) -> list[str]:
        """One line per position, fewest stones first: the side to move, the stones (in the
        key's frame) and the book's move with its search's win rate and visits."""
        lines = []
        for key, e in sorted(self.entries.items(), key=lambda kv: (-kv[0].count("."), kv[0])):
            head, _, stones = key.partition(":")
            black = [coords.to_gtp(i, self.size) for i, c in enumerate(stones) if c == "X"]
            white = [coords.to_gtp(i, self.size) for i, c in enumerate(stones) if c == "O"]
            side = "black" if head.endswith("b") else "white"
            lines.append(f"ply {len(black) + len(white)}, {side} to move; black "
                         f"{' '.join(black) or '-'}; white {' '.join(white) or '-'}: "
                         f"{coords.to_gtp(e.move, self.size)} winrate {e.winrate:.3f} "
                         f"visits {e.visits}")
        return lines

    # -- the file --------------------------------------------------------------------------
    def to_json(self) -> str:
        positions = {key: {"move": coords.to_gtp(e.move, self.size), "visits": e.visits,
                           "winrate": round(e.winrate, 4)}
                     for key, e in sorted(self.entries.items())}
        return json.dumps({"format": BOOK_FORMAT, "size": self.size,
                           "built_with": self.built_with, "positions": positions}, indent=1)

    def save(self, path) -> None:
        write_atomic(Path(path), self.to_json().encode("utf-8"))

    @classmethod
    def load(cls, path) -> "OpeningBook":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise BookError(f"{path}: no such opening book") from None
        except (OSError, UnicodeDecodeError) as e:
            raise BookError(f"{path}: cannot read the opening book ({e})") from None
        except json.JSONDecodeError as e:
            raise BookError(f"{path}: not an opening book (invalid JSON: {e})") from None
        if not isinstance(data, dict) or data.get("format") != BOOK_FORMAT:
            raise BookError(f"{path}: not an opening book of format {BOOK_FORMAT}")
        size = data.get("size")
        if not isinstance(size, int) or not 2 <= size <= 19:
            raise BookError(f"{path}: 'size' must be a board size in 2..19, not {size!r}")
        positions = data.get("positions")
        if not isinstance(positions, dict):
            raise BookError(f"{path}: needs a 'positions' mapping")
        book = cls(size, data.get("built_with") if isinstance(data.get("built_with"), dict)
                   else {})
        for key, v in positions.items():
            where = f"{path}: position {key!r}"
            head, _, stones = key.partition(":")
            if head not in (f"{size}b", f"{size}w") or len(stones) != size * size \
                    or set(stones) - set(_STONE_CHARS):
                raise BookError(f"{where}: not a {size}x{size} position key")
            try:
                move = coords.from_gtp(str(v["move"]), size)
                entry = BookEntry(move, int(v.get("visits", 0)), float(v.get("winrate", 0.5)))
            except (KeyError, TypeError, ValueError) as e:
                raise BookError(f"{where}: bad entry {v!r} ({e})") from None
            if not 0 <= move < size * size or stones[move] != ".":
                raise BookError(f"{where}: the move {v['move']} is not an empty point")
            book.entries[key] = entry
        return book


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


def opponent_moves(board: Board, priors: np.ndarray | None, width: int) -> list[int]:
    """The opponent's moves the book answers: the ``width`` likeliest by ``priors`` (all legal
    moves when ``priors`` is None or width covers them), one per symmetry class."""
    legal = [int(p) for p in board.legal_moves()]
    if priors is not None and width < len(legal):
        legal.sort(key=lambda p: -float(priors[p]))
    chosen, seen = [], set()
    for p in legal:
        child = board.copy()
        child.play(p)
        key = canonical(child)[0]
        if key in seen:
            continue
        seen.add(key)
        chosen.append(p)
        if len(chosen) >= width:
            break
    return chosen


def book_positions(search: Callable[[Board], tuple[int, int, float]],
                   policy: Callable[[Board], np.ndarray], size: int, plies: int, width: int,
                   first_width: int, book: OpeningBook,
                   on_position: Callable[[Board, BookEntry, bool], None] | None = None) -> int:
    """Fill ``book`` with the positions the engine meets in its first ``plies`` plies as
    either colour. ``search(board)`` -> (move, visits, winrate) is the engine's long search,
    ``policy(board)`` the network's priors over the points. Positions already in the book are
    not searched again. ``on_position(board, entry, searched)`` is called for each (to save and
    report). Returns the number of searches made."""
    searched = 0

    def answer(board: Board) -> int:
        nonlocal searched
        entry = book.lookup(board)
        fresh = entry is None
        if fresh:
            entry = BookEntry(*search(board))
            book.add(board, entry.move, entry.visits, entry.winrate)
            searched += 1
        if on_position is not None:
            on_position(board, entry, fresh)
        return entry.move

    from ..game.board import Board

    # The engine as black answers at even plies, as white at odd plies: follow its own move,
    # branch over the opponent's.
    for engine_colour_parity in (0, 1):
        frontier = [Board(size)]
        for ply in range(plies):
            nxt = []
            for board in frontier:
                if board.is_terminal():
                    continue
                if ply % 2 == engine_colour_parity:
                    child = board.copy()
                    child.play(answer(board))
                    nxt.append(child)
                else:
                    w = first_width if ply == 0 else width
                    for p in opponent_moves(board, policy(board), w):
                        child = board.copy()
                        child.play(p)
                        nxt.append(child)
            # Fold symmetric positions reached by different orders.
            unique = {}
            for b in nxt:
                unique.setdefault(canonical(b)[0], b)
            frontier = list(unique.values())
    return searched


def planned_positions(size: int, plies: int, width: int, first_width: int) -> int:
    """An upper bound on the positions a build searches (before symmetric folding)."""
    total = 0
    for parity in (0, 1):
        n = 1
        for ply in range(plies):
            if ply % 2 == parity:
                total += n
            else:
                n *= min(first_width if ply == 0 else width, size * size)
    return total


def build_book(out, model_path: str | None, size: int = 9, plies: int = 4, width: int = 8,
               first_width: int = 81, playouts: int = 20000, seed: int = 0,
               search: dict | None = None, threads: int | None = None,
               log: Callable[[str], None] | None = None) -> OpeningBook:
    """Build (or go on building) the book at ``out`` with the engine's search on the net at
    ``model_path``: ``playouts`` a position, ``search`` the ``mcts.SearchConfig`` settings (the
    engine's defaults otherwise: hybrid rollouts and the solver). The file is rewritten after
    every searched position."""
    from ..game.board import Board
    from ..net.features import board_planes
    from ..net.inference import load_evaluator, priors
    from .mcts import SearchConfig
    from .search import Searcher, SearchLimits

    out = Path(out)
    built_with = {"model": Path(model_path).name if model_path else "default",
                  "playouts": playouts, "plies": plies, "width": width,
                  "first_width": first_width, "search": dict(search or {})}
    if out.exists():
        book = OpeningBook.load(out)
        if book.size != size:
            raise BookError(f"{out}: a {book.size}x{book.size} book, not {size}x{size}")
        if book.built_with and book.built_with.get("playouts") != playouts:
            raise BookError(f"{out}: built at {book.built_with.get('playouts')} playouts a "
                            f"position; go on with the same --playouts, or start a new file")
    else:
        book = OpeningBook(size, built_with)
    evaluator = load_evaluator(model_path, threads=threads)
    config = SearchConfig(**(search or {}))

    def long_search(board: Board) -> tuple[int, int, float]:
        searcher = Searcher(evaluator, size, config, seed=seed)  # a fresh tree each position
        res = searcher.search(board, SearchLimits(playouts=playouts))
        return res.move, res.visits, res.winrate

    def policy(board: Board) -> np.ndarray:
        logits = evaluator.evaluate(board_planes(board)[None]).policy_logits[0]
        return priors(logits, board.legal_mask())

    def saved(board: Board, entry: BookEntry, fresh: bool) -> None:
        if fresh:
            book.save(out)
            if log is not None:
                log(f"book: {len(book)} positions; ply {board.ply} "
                    f"{'black' if board.to_move == BLACK else 'white'} to move after "
                    f"{' '.join(coords.to_gtp(p, size) for _, p in board.moves) or '(empty)'}: "
                    f"{coords.to_gtp(entry.move, size)} winrate {entry.winrate:.3f} "
                    f"visits {entry.visits}")

    book_positions(long_search, policy, size, plies, width, first_width, book, saved)
    book.save(out)
    return book
