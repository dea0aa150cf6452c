"""The endgame truth suite: its files, and building it from real games.

The suite is a folder (the shipped one is package data, ``endgame_suite/`` beside this module):

    positions.jsonl   a header line, then one position a line
    labels.jsonl      a header line (the labelling budget), then one label a line, by position id
    README.md         how it was made (written by ``build_suite``)
    baseline.json     optional: the bench's figures for the solver of the day the suite was made

A position is kept as the game's moves up to it (the network reads the last two moves), with
its board as text for checking, its depth (empty points), side to move, split and source (file,
game, move number). Its id is its depth and the start of its symmetry-canonical hash, so a
label stays attached to its position whatever the order of the file.

Building (``build_suite``) is deterministic given the games, whatever their files' names or
order: games are deduplicated by their symmetry-canonical move sequence, ranked by a hash of
that sequence with the seed, and the split (dev or test) is a hash of the sequence alone, so a
game feeds one split only. Each game gives at most one position: the ranked games are dealt to
the depths that still need positions, skipping terminal and duplicate positions (by the
canonical hash of stones and side to move).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.atomicio import write_atomic
from ..game import coords
from ..game.coords import BLACK, WHITE

DEPTHS = (30, 32, 34, 36)
SUITE_FORMAT = "nogobot-endgame-suite"
LABELS_FORMAT = "nogobot-endgame-labels"
POSITIONS, LABELS, README, BASELINE = "positions.jsonl", "labels.jsonl", "README.md", \
    "baseline.json"
_LETTER = {BLACK: "B", WHITE: "W"}
_COLOUR = {"B": BLACK, "W": WHITE}


class SuiteError(ValueError):
    """A suite or labels file that is missing or not readable (one line, naming the file)."""


@dataclass
class Position:
    id: str
    depth: int
    split: str
    size: int
    to_move: int
    moves: list[tuple[int, int]]  # (colour, flat point), from the setup on
    board_text: str  # rows top first, "/" between them
    source: dict
    setup: list[tuple[int, int]] = field(default_factory=list)
    first: int = BLACK  # the side to move after the setup

    def board(self):
        """The position as a ``Board`` with its moves' history (ValueError if they are not a
        legal game or do not end at ``board_text``)."""
        from ..game.board import Board

        if self.setup:
            grid = [["."] * self.size for _ in range(self.size)]
            for c, p in self.setup:
                r, col = coords.from_flat(p, self.size)
                grid[r][col] = "X" if c == BLACK else "O"
            b = Board.from_ascii("\n".join("".join(r) for r in grid), to_move=self.first)
        else:
            b = Board(self.size)
            b.to_move = self.first
        for c, p in self.moves:
            b.play(p, c)
        if board_text(b) != self.board_text or b.to_move != self.to_move:
            raise ValueError(f"{self.id}: its moves do not lead to its board")
        return b

    def to_json(self) -> dict:
        g = self.size
        out = {"id": self.id, "depth": self.depth, "split": self.split, "size": g,
               "to_move": _LETTER[self.to_move]}
        if self.setup:
            out["setup"] = [f"{_LETTER[c]} {coords.to_gtp(p, g)}" for c, p in self.setup]
            out["first"] = _LETTER[self.first]
        out["moves"] = " ".join(f"{_LETTER[c]}:{coords.to_gtp(p, g)}" for c, p in self.moves)
        out["board"] = self.board_text
        out["source"] = self.source
        return out

    @classmethod
    def from_json(cls, d: dict) -> Position:
        g = int(d["size"])

        def move(token: str, sep: str) -> tuple[int, int]:
            c, v = token.split(sep)
            return _COLOUR[c], coords.from_gtp(v, g)

        return cls(id=str(d["id"]), depth=int(d["depth"]), split=str(d["split"]), size=g,
                   to_move=_COLOUR[d["to_move"]],
                   moves=[move(t, ":") for t in d["moves"].split()],
                   board_text=str(d["board"]), source=dict(d["source"]),
                   setup=[move(t, " ") for t in d.get("setup", [])],
                   first=_COLOUR[d.get("first", "B")])


def board_text(board) -> str:
    n = board.size
    return "/".join("".join(".XO"[int(v)] for v in board.stones[r * n:(r + 1) * n])
                    for r in range(n))


def _symmetries(size: int) -> list[np.ndarray]:
    """The 8 board symmetries as point permutations (rotations, then transposed)."""
    grid = np.arange(size * size).reshape(size, size)
    out = []
    for k in range(8):
        a = np.rot90(grid, k % 4)
        out.append((a.T if k >= 4 else a).reshape(-1))
    return out


def position_key(board) -> str:
    """Hash of the stones and side to move, the same for all 8 symmetric boards."""
    s = np.asarray(board.stones)
    best = min(s[perm].tobytes() for perm in _symmetries(board.size))
    return hashlib.sha256(best + bytes([board.to_move])).hexdigest()[:16]


def game_key(size: int, setup, moves) -> str:
    """Hash of a game's setup and moves, the same for all 8 symmetric games."""
    texts = []
    for perm in _symmetries(size):
        inv = np.argsort(perm)  # where each point goes
        st = sorted((c, int(inv[p])) for c, p in setup)
        texts.append(repr((size, st, [(c, int(inv[p])) for c, p in moves])))
    return hashlib.sha256(min(texts).encode()).hexdigest()


def split_of(key: str) -> str:
    return "dev" if int(hashlib.sha256(("split:" + key).encode()).hexdigest(), 16) % 2 == 0 \
        else "test"


# -- reading and writing a suite ------------------------------------------------------------


def _read_jsonl(path: Path, fmt: str) -> tuple[dict, list[dict]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"{path}: cannot be read: {e}") from None
    rows = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise SuiteError(f"{path}: line {i} is not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise SuiteError(f"{path}: line {i} is not a JSON object")
        rows.append(row)
    if not rows or rows[0].get("format") != fmt:
        raise SuiteError(f"{path}: not a {fmt} file (its first line is not its header)")
    return rows[0], rows[1:]


def load_positions(folder: str | Path) -> tuple[dict, list[Position]]:
    """(header, positions) of the suite in ``folder``; SuiteError naming the file and line."""
    path = Path(folder) / POSITIONS
    header, rows = _read_jsonl(path, SUITE_FORMAT)
    out = []
    for i, row in enumerate(rows, start=2):
        try:
            out.append(Position.from_json(row))
        except (KeyError, ValueError, TypeError) as e:
            raise SuiteError(f"{path}: line {i} is not a position ({type(e).__name__}: {e})") \
                from None
    return header, out


def load_labels(folder: str | Path, missing_ok: bool = True) -> tuple[dict, dict[str, dict]]:
    """(header, labels by position id); no labels file gives ({}, {}) when ``missing_ok``."""
    path = Path(folder) / LABELS
    if missing_ok and not path.exists():
        return {}, {}
    header, rows = _read_jsonl(path, LABELS_FORMAT)
    labels = {}
    for i, row in enumerate(rows, start=2):
        if "id" not in row or row.get("result") not in ("win", "loss", "unknown"):
            raise SuiteError(f"{path}: line {i} is not a label (id, result win|loss|unknown)")
        labels[row["id"]] = row
    return header, labels


def write_jsonl(path: Path, header: dict, rows: list[dict]) -> None:
    """The whole file at once, atomically (a kill leaves the old file or the new one)."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header, *rows])
    write_atomic(path, text)


def shipped_suite() -> Path:
    """The suite the package carries (a real folder: the package is never zip-imported)."""
    from importlib import resources

    return Path(str(resources.files("nogobot.tools").joinpath("endgame_suite")))


# -- building ---------------------------------------------------------------------------------


def _sgf_files(sources: list[str]) -> list[Path]:
    files: set[Path] = set()
    for s in sources:
        p = Path(s)
        if p.is_dir():
            files.update(f for f in p.rglob("*.sgf") if f.is_file())
        elif p.is_file():
            files.add(p)
        else:
            raise SuiteError(f"{s}: no such file or folder")
    return sorted(files, key=str)


def read_games(sources: list[str], size: int, log=None):
    """(source records, games): every readable ``size``×``size`` game of the SGF files (single
    games or collections) under ``sources``, each as a dict with its record and where it is."""
    from ..game import sgf
    from ..game.sgf import split_collection

    records, games = [], []
    for f in _sgf_files(sources):
        data = f.read_bytes()
        try:
            texts = split_collection(data)
        except ValueError:
            texts = []
        kept = bad = 0
        for i, (gn, text) in enumerate(texts):
            try:
                rec = sgf.parse(text)
            except sgf.SgfError:
                bad += 1
                continue
            if rec.size != size:
                continue
            kept += 1
            games.append({"rec": rec, "file": f.as_posix(), "game": gn or str(i)})
        records.append({"path": f.as_posix(), "sha256": hashlib.sha256(data).hexdigest(),
                        "games": kept, "unreadable": bad + (0 if texts else 1)})
        if log is not None and len(records) % 20 == 0:
            log(f"read {len(records)} files, {len(games)} games")
    return records, games


def build_suite(sources: list[str], out: str | Path, *, per_depth: int = 120,
                depths: tuple[int, ...] = DEPTHS, seed: int = 20261128, size: int = 9,
                command: str = "", log=None) -> dict:
    """Sample the suite from the games under ``sources`` into the folder ``out`` (positions
    and README; labels are ``label_suite``'s). Returns the header."""
    records, games = read_games(sources, size, log)
    by_key: dict[str, dict] = {}
    for g in games:
        rec = g["rec"]
        key = game_key(size, rec.setup, rec.moves)
        if key not in by_key or (g["file"], g["game"]) < (by_key[key]["file"],
                                                           by_key[key]["game"]):
            by_key[key] = {**g, "key": key}
    ranked = sorted(by_key.values(),
                    key=lambda g: hashlib.sha256(f"{seed}:{g['key']}".encode()).hexdigest())
    want = {d: per_depth for d in depths}
    seen: set[str] = set()
    chosen: list[Position] = []
    for g in ranked:
        open_depths = sorted((d for d in depths if want[d] > 0), key=lambda d: (-want[d], d))
        if not open_depths:
            break
        pos = _take(g, open_depths, size, seen)
        if pos is not None:
            want[pos.depth] -= 1
            chosen.append(pos)
    chosen.sort(key=lambda p: (p.depth, p.id))
    splits = {s: sum(p.split == s for p in chosen) for s in ("dev", "test")}
    header = {"format": SUITE_FORMAT, "version": 1, "size": size, "depths": list(depths),
              "per_depth": per_depth, "seed": seed, "command": command,
              "positions": len(chosen), "splits": splits,
              "per_depth_found": {str(d): per_depth - want[d] for d in depths},
              "games_read": len(games), "games_distinct": len(by_key), "sources": records}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / POSITIONS, header, [p.to_json() for p in chosen])
    write_atomic(out / README, readme_text(header))
    return header


def _take(g: dict, depths: list[int], size: int, seen: set[str]) -> Position | None:
    """The game's position at the first of ``depths`` where it has a new, unfinished one."""
    rec = g["rec"]
    area = size * size
    for depth in depths:
        played = area - len(rec.setup) - depth  # each move fills one point
        if played < 0 or played >= len(rec.moves):  # the game ended before (or at) it
            continue
        board = rec.board(played)
        if board.is_terminal():
            continue
        key = position_key(board)
        if key in seen:
            continue
        seen.add(key)
        first = rec.first_to_move or (rec.moves[0][0] if rec.moves else BLACK)
        return Position(
            id=f"{depth}-{key[:12]}", depth=depth, split=split_of(g["key"]), size=size,
            to_move=board.to_move, moves=list(rec.moves[:played]), board_text=board_text(board),
            source={"file": g["file"], "game": g["game"], "move": played,
                    "players": f"{rec.black or '?'} (B) vs {rec.white or '?'} (W)",
                    "result": rec.result or "?"},
            setup=list(rec.setup), first=first)
    return None


def readme_text(header: dict) -> str:
    counts = ", ".join(f"{n} at {d}" for d, n in header["per_depth_found"].items())
    files = len(header["sources"])
    return f"""# Endgame truth suite

{header['size']}x{header['size']} NoGo positions at {', '.join(map(str, header['depths']))} empty
points ({counts}; {header['splits']['dev']} dev, {header['splits']['test']} test), each from a
real game: the ledger's SGF collections and self-play. What `nogobot bench endgame` measures
against; docs/endgame.md has the figures.

## How it was made

    {header['command']}

from {header['games_read']} games in {files} SGF files ({header['games_distinct']} distinct
under the board's symmetries; every file with its SHA-256 is in the header line of
`positions.jsonl`). Deterministic given those games, whatever the files are called: games are
ranked by a hash of their symmetry-canonical moves with the seed ({header['seed']}); each gives
at most one position, dealt to the depth that needs one most; terminal and duplicate positions
(same stones and side to move under a symmetry) are skipped. The split (dev or test) is a hash
of the game's moves, so no game feeds both. Each position carries its game's moves, so the
suite needs none of its sources; only a rebuild does (a source under `data/` or `runs/` is a
local self-play folder, outside git). The side to move is each position's `to_move`: in a game
without setup stones on an odd board, White at an even number of empty points.

## Files

- `positions.jsonl`: header line, then per position: `id` (depth and canonical hash), `depth`,
  `split`, `to_move`, `moves` (the game up to the position, `B:D5 W:C3 ...`), `board` (rows top
  first, `X` black, `O` white), `source` (`file`, `game`, `move`: moves played before it).
- `labels.jsonl`: header line with the solver's budget, then per position: `result` for the side
  to move (`win`, `loss`, `unknown`: not settled within the budget, kept and counted), `winner`
  (`B`, `W` or null), `wins`/`losses`/`open` (root moves proven winning, losing, not settled),
  `complete` (every winning move known), `nodes`, `seconds`, `budget` (nodes for the verdict
  and for the other winning moves) and `solver` (a hash of the solver's source). Made and
  resumed by `nogobot bench endgame-label` (it keeps what is labelled and relabels with
  `--redo`).
- `baseline.json`: `nogobot bench endgame --json` output for the solver the suite was labelled
  with, printed beside later runs at the same budget.
"""
