"""Opening suites: SGF collections of start positions, read for a match, made by `nogobot openings`.

A suite is one SGF file holding a collection of games; each game is a start position given as
its main line of moves (``B[]``/``W[]``, black first, alternating: NoGo has no pass). The referee
plays those moves on its board and relays them to both engines with ``play`` before the first
``genmove``; a match plays every opening twice, colours swapped (runner.py pairs games 2j and
2j+1), so the opening's own bias cancels out within the pair.

``spec: openings: NAME`` resolves a name (``default``, ``9x9``) to a suite shipped in the package
(``nogobot/openings/``), anything else to a file (relative to the spec's folder).

``make_suite`` builds a balanced, diverse suite from the engine's own analysis: random legal
plies (``min_plies``..``max_plies``, uniform), positions deduplicated under the 8 symmetries of
the board, each searched by the analysis engine at ``playouts`` visits, kept when the side to
move's win rate lies in the band (default 0.40-0.60). Candidates are drawn from one seeded
generator and kept in draw order, so the same arguments (and net) give the same suite.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..game import coords

PACKAGE_SUITES = {"default": "nogo9-default.sgf", "9x9": "nogo9-default.sgf"}
SUITE_DIR = Path(__file__).resolve().parent.parent / "openings"


class OpeningError(ValueError):
    """A suite that cannot be used; the message names the file (and the game)."""


@dataclass(frozen=True)
class Opening:
    name: str  # the game's GN, else "opening N"
    moves: tuple[str, ...]  # GTP vertices, black first, alternating


def resolve_suite(value: str, base: Path | None = None) -> Path:
    """The suite file a spec's ``openings:`` names: a shipped suite's name, or a path relative
    to ``base`` (the spec's folder)."""
    if value in PACKAGE_SUITES:
        return SUITE_DIR / PACKAGE_SUITES[value]
    p = Path(value)
    return p if p.is_absolute() or base is None else base / p


def load_suite(path: str | Path, size: int) -> list[Opening]:
    """Every game of an SGF collection as an Opening on a ``size`` board, each checked legal
    by board.py; OpeningError (naming the file and game) otherwise."""
    from sgfmill import sgf, sgf_grammar

    from ..game.board import Board

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise OpeningError(f"{path}: cannot read the opening suite: {e.strerror}") from None
    try:
        trees = sgf_grammar.parse_sgf_collection(data)
    except ValueError as e:
        raise OpeningError(f"{path}: not an SGF collection: {e}") from None
    out = []
    for i, tree in enumerate(trees, start=1):
        where = f"{path}: game {i}"
        try:
            game = sgf.Sgf_game.from_coarse_game_tree(tree)
        except ValueError as e:
            raise OpeningError(f"{where}: {e}") from None
        if game.get_size() != size:
            raise OpeningError(f"{where}: a {game.get_size()}x{game.get_size()} position, but "
                               f"the match is on {size}x{size}")
        root = game.get_root()
        if root.has_setup_stones():
            raise OpeningError(f"{where}: setup stones (AB/AW) are not supported; give the "
                               "opening as moves")
        board = Board(size)
        moves = []
        for k, node in enumerate(game.get_main_sequence()[1:]):
            colour, rc = node.get_move()
            if colour is None:
                continue
            expect = "b" if k % 2 == 0 else "w"
            if rc is None or colour != expect:
                raise OpeningError(f"{where}: move {k + 1} must be a {expect.upper()} move on the "
                                   "board (openings alternate from black; NoGo has no pass)")
            p = (size - 1 - rc[0]) * size + rc[1]  # sgfmill rows count from the bottom
            if not board.is_legal(p):
                raise OpeningError(f"{where}: move {k + 1} ({coords.to_gtp(p, size)}) is "
                                   "illegal")
            board.play(p)
            moves.append(coords.to_gtp(p, size))
        if board.num_legal() == 0:
            raise OpeningError(f"{where}: the game is already over after the opening")
        name = root.get("GN") if root.has_property("GN") else f"opening {i}"
        out.append(Opening(name, tuple(moves)))
    if not out:
        raise OpeningError(f"{path}: the suite holds no games")
    return out


# -- making a suite ------------------------------------------------------------------------


def canonical(stones: np.ndarray, size: int) -> bytes:
    """The smallest of the position's 8 symmetric images: equal for positions alike under a
    rotation or reflection (the side to move follows from the number of stones)."""
    grid = np.asarray(stones, dtype=np.int8).reshape(size, size)
    images = []
    for k in range(4):
        r = np.rot90(grid, k)
        images += [r.tobytes(), np.ascontiguousarray(r.T).tobytes()]
    return min(images)


def random_opening(rng: np.random.Generator, size: int, plies: int) -> list[int] | None:
    """``plies`` uniformly random legal moves from the empty board (None if the game ends)."""
    from ..game.board import Board

    board = Board(size)
    moves = []
    for _ in range(plies):
        legal = board.legal_moves()
        if len(legal) == 0:
            return None
        p = int(legal[rng.integers(len(legal))])
        board.play(p)
        moves.append(p)
    return moves


@dataclass
class Candidate:
    index: int  # draw order
    moves: list[int]
    winrate: float | None = None  # for the side to move, after the search


def draw_candidates(rng: np.random.Generator, size: int, count: int, min_plies: int,
                    max_plies: int, seen: set[bytes], start: int = 0) -> list[Candidate]:
    """``count`` new positions, none alike (under symmetry) to each other or to ``seen``."""
    from ..game.board import Board

    out: list[Candidate] = []
    tries = 0
    while len(out) < count and tries < 50 * count:
        tries += 1
        moves = random_opening(rng, size, int(rng.integers(min_plies, max_plies + 1)))
        if moves is None:
            continue
        board = Board(size)
        for p in moves:
            board.play(p)
        if board.num_legal() == 0:
            continue
        key = canonical(board.stones[:size * size], size)
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(start + len(out), moves))
    return out


def make_suite(evaluate: Callable[[list[list[str]]], list[float]], *, size: int = 9,
               count: int = 60, min_plies: int = 2, max_plies: int = 6,
               band: tuple[float, float] = (0.40, 0.60), seed: int = 1,
               max_candidates: int | None = None,
               progress: Callable[[str], None] | None = None) -> list[Candidate]:
    """``count`` balanced openings. ``evaluate(list of GTP move lists)`` returns each
    position's win rate for the side to move (the analysis engine's search).

    Candidates are drawn and searched in rounds until ``count`` fall in ``band``; raises
    OpeningError when ``max_candidates`` (default 20 x count) are spent first."""
    rng = np.random.default_rng(seed)
    seen: set[bytes] = set()
    kept: list[Candidate] = []
    drawn = 0
    limit = max_candidates or 20 * count
    while len(kept) < count:
        if drawn >= limit:
            raise OpeningError(f"only {len(kept)} of {drawn} positions had a win rate in "
                               f"{band[0]:.2f}-{band[1]:.2f}; widen the band or allow more "
                               "candidates")
        need = count - len(kept)
        # Roughly half of random openings land in the band; draw a little more than needed.
        batch = draw_candidates(rng, size, min(limit - drawn, max(8, 2 * need)), min_plies,
                                max_plies, seen, start=drawn)
        if not batch:
            raise OpeningError("no new distinct positions can be drawn; use more plies")
        drawn += len(batch)
        rates = evaluate([[coords.to_gtp(p, size) for p in c.moves] for c in batch])
        for c, w in zip(batch, rates):
            c.winrate = w
            if band[0] <= w <= band[1] and len(kept) < count:
                kept.append(c)
        if progress is not None:
            progress(f"{drawn} positions searched, {len(kept)}/{count} kept")
    return kept


def suite_sgf(openings: list[Candidate], size: int, made_by: str, prefix: str) -> str:
    """The suite as an SGF collection: GN ``PREFIX-NNN``, GC saying what made it, C giving the
    searched win rate."""
    from sgfmill import sgf

    date = _dt.date.today().isoformat()
    parts = []
    for k, c in enumerate(openings, start=1):
        game = sgf.Sgf_game(size)
        root = game.get_root()
        root.set("GN", f"{prefix}-{k:03d}")
        root.set("RU", "NoGo")
        root.set("DT", date)
        root.set("GC", made_by)
        mover = "black" if len(c.moves) % 2 == 0 else "white"
        root.set("C", f"{len(c.moves)} plies; {mover} to move, win rate {c.winrate:.3f}")
        for i, p in enumerate(c.moves):
            r, col = divmod(p, size)
            game.extend_main_sequence().set_move("b" if i % 2 == 0 else "w",
                                                 (size - 1 - r, col))
        parts.append(game.serialise().decode("utf-8").strip())
    return "\n".join(parts) + "\n"


def analysis_evaluator(engine, size: int, visits: int
                       ) -> Callable[[list[list[str]]], list[float]]:
    """``make_suite``'s ``evaluate`` on a ``nogobot.analysis.engine.AnalysisEngine`` (one query per
    position, all searched at once; the win rate is the side to move's)."""
    from ..analysis.engine import analyse

    def evaluate(positions: list[list[str]]) -> list[float]:
        queries = [{"id": str(i), "boardXSize": size, "maxVisits": visits,
                    "moves": [["B" if k % 2 == 0 else "W", v] for k, v in enumerate(pos)]}
                   for i, pos in enumerate(positions)]
        rates: dict[int, float] = {}
        for ans in analyse(engine, queries):
            if "rootInfo" in ans:
                rates[int(ans["id"])] = float(ans["rootInfo"]["winrate"])
            elif "error" in ans:
                raise OpeningError(f"the analysis failed: {ans['error']}")
        return [rates[i] for i in range(len(positions))]

    return evaluate
