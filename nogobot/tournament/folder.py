"""A match's results folder: what it holds, how it is kept consistent, and reading it in either
layout (what `review`, `timeplot` and `tournament pack` use).

Layout (since the opening-suite harness)::

    results.jsonl     one finished game per line (results.py); the commit point of a game
    games.sgf         every recorded game, one SGF collection, in results order (GN = game id)
    logs.tar.gz       the engines' stderr, ID-B.log / ID-W.log per game
    logs/             the logs of games being played (packed into logs.tar.gz when a run ends)
    standings.txt, summary.json

The older layout had ``sgf/ID.sgf`` per game and ``logs/`` loose; readers accept both, and
``pack_folder`` converts a folder (the SGF texts are copied unchanged into the collection, the
logs byte for byte into the archive).

Consistency: a game's SGF is added to ``games.sgf`` (atomically: a whole new file replaces the
old) before its line is appended to results.jsonl. A kill between the two leaves a game in the
collection that results.jsonl does not have; ``sync_collection`` (at every start) drops it, and
the game is played again.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import threading
from pathlib import Path

from ..core.atomicio import write_atomic, write_tmp
from ..game.sgf import split_collection  # the SGF side, shared with review and the tools

GAMES = "games.sgf"
LOG_ARCHIVE = "logs.tar.gz"


def read_games(folder: str | Path) -> list[tuple[str, bytes]]:
    """(name, SGF bytes) of every game in a results folder: ``games.sgf``'s games (name
    ``games.sgf#GN``), else ``sgf/*.sgf``, else ``*.sgf``. Unreadable collections raise
    ValueError naming the file."""
    folder = Path(folder)
    coll = folder / GAMES
    if coll.is_file():
        try:
            return [(f"{coll}#{gn}", text) for gn, text in split_collection(coll.read_bytes())]
        except ValueError as e:
            raise ValueError(f"{coll}: not a readable SGF collection: {e}") from None
    files = sorted((folder / "sgf").glob("*.sgf")) or sorted(folder.glob("*.sgf"))
    return [(str(f), f.read_bytes()) for f in files]


def read_log(folder: str | Path, name: str) -> str | None:
    """A game's engine log (``ID-B.log``) from ``logs/`` or from ``logs.tar.gz``; None if
    neither has it."""
    folder = Path(folder)
    loose = folder / "logs" / name
    if loose.is_file():
        return loose.read_text(errors="replace")
    archive = folder / LOG_ARCHIVE
    if archive.is_file():
        with tarfile.open(archive, "r:gz") as tar:
            try:
                f = tar.extractfile(f"logs/{name}")
            except KeyError:
                return None
            if f is not None:
                return f.read().decode("utf-8", "replace")
    return None


def read_records(folder: Path) -> list[dict]:
    """results.jsonl's complete lines, read without writing (a torn last line is skipped)."""
    out = []
    path = Path(folder) / "results.jsonl"
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


class GameCollection:
    """``games.sgf`` of a folder: games added one at a time, each a whole-file atomic rewrite."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / GAMES
        self._lock = threading.Lock()
        self._cache: list[tuple[str, bytes]] | None = None  # what the file holds, once read

    def _games(self) -> list[tuple[str, bytes]]:
        # Parsed once per run: parsing the whole collection again for every game would cost
        # seconds a game in a long match.
        if self._cache is None:
            self._cache = split_collection(self.path.read_bytes()) if self.path.is_file() else []
        return list(self._cache)

    def _write(self, games: list[tuple[str, bytes]]) -> None:
        write_atomic(self.path, b"\n".join(g.strip() for _, g in games) + b"\n")
        self._cache = list(games)

    def add(self, game_id: str, text: str | bytes) -> None:
        """Add (or replace) game ``game_id``."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        with self._lock:
            games = [g for g in self._games() if g[0] != game_id]
            self._write(games + [(game_id, data)])

    def sync(self, ids: list[str]) -> int:
        """Keep only the games in ``ids`` (results.jsonl's), in that order; returns how many
        were dropped (added by a run killed before their result line)."""
        with self._lock:
            if not self.path.is_file():
                return 0
            games = self._games()
            by_id = {gn: g for gn, g in games}
            kept = [(i, by_id[i]) for i in ids if i in by_id]
            if len(kept) != len(games) or [g for g, _ in games] != [i for i, _ in kept]:
                self._write(kept)
            return len(games) - len(kept)


def pack_logs(folder: Path, ids: list[str] | None = None) -> int:
    """Move the loose ``logs/*.log`` of recorded games (``ids``; all when None) into
    ``logs.tar.gz`` (rewritten atomically with what it held), then delete them; returns the
    number packed. Logs of games not recorded (in flight when a run stopped) stay loose: the
    game is played again and overwrites them."""
    folder = Path(folder)
    loose_dir = folder / "logs"
    archive = folder / LOG_ARCHIVE
    wanted = None if ids is None else set(ids)
    loose = sorted(p for p in loose_dir.glob("*.log")
                   if wanted is None or p.name.rsplit("-", 1)[0] in wanted) \
        if loose_dir.is_dir() else []
    if not loose:
        return 0
    members: dict[str, tuple[tarfile.TarInfo, bytes]] = {}
    if archive.is_file():
        with tarfile.open(archive, "r:gz") as tar:
            for m in tar.getmembers():
                f = tar.extractfile(m)
                if f is not None:
                    members[m.name] = (m, f.read())
    for p in loose:
        data = p.read_bytes()
        info = tarfile.TarInfo(f"logs/{p.name}")
        info.size, info.mtime, info.mode = len(data), int(p.stat().st_mtime), 0o644
        members[info.name] = (info, data)
    buf = io.BytesIO()
    # mtime=0 in the gzip header: the same logs give the same bytes (no churn in git).
    import gzip

    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(members):
                info, data = members[name]
                tar.addfile(info, io.BytesIO(data))
    os.replace(write_tmp(archive, buf.getvalue()), archive)
    for p in loose:
        p.unlink()
    try:
        loose_dir.rmdir()  # only when empty
    except OSError:
        pass
    return len(loose)


def pack_folder(folder: str | Path) -> dict:
    """Convert an old-layout folder (``sgf/ID.sgf``, loose ``logs/``) in place: one collection
    in results order, the logs archived; each record's ``sgf`` field then names the
    collection. Returns counts; ValueError (one line) when something would be lost."""
    folder = Path(folder)
    results = folder / "results.jsonl"
    if not results.is_file():
        raise ValueError(f"{folder}: no results.jsonl (not a tournament results folder)")
    records = read_records(folder)
    texts = {}
    for r in records:
        gid = r.get("id")
        path = folder / r.get("sgf", f"sgf/{gid}.sgf")
        if path.is_file() and path.parent.name == "sgf":
            texts[gid] = path.read_bytes()
    coll = GameCollection(folder)
    existing = dict(coll._games())
    games = []
    for r in records:
        gid = r.get("id")
        data = texts.get(gid) or existing.get(gid)
        if data is None:
            raise ValueError(f"{folder}: game {gid} has no SGF (sgf/{gid}.sgf or in {GAMES})")
        gn = split_collection(data)[0][0]
        if gn != gid:  # old SGFs carry GN = id; say so if one does not
            raise ValueError(f"{folder}: sgf for {gid} names itself {gn!r}")
        games.append((gid, data))
    strays = sorted(p.name for p in (folder / "sgf").glob("*.sgf")
                    if p.stem not in {g for g, _ in games}) if (folder / "sgf").is_dir() else []
    if strays:
        raise ValueError(f"{folder}: sgf/ holds games that results.jsonl does not "
                         f"({', '.join(strays[:3])}...); nothing changed")
    coll._write(games)
    # Check the collection gives back every game before deleting anything.
    back = dict(split_collection(coll.path.read_bytes()))
    for gid, data in games:
        if split_collection(data)[0][1] != back.get(gid):
            raise ValueError(f"{folder}: game {gid} did not survive the collection; "
                             "the old files are kept")
    changed = False
    for r in records:
        if r.get("sgf") != GAMES:
            r["sgf"] = GAMES
            changed = True
    if changed:
        write_atomic(results, "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False)
                                      + "\n" for r in records))
    logs = pack_logs(folder)
    for gid in texts:
        (folder / "sgf" / f"{gid}.sgf").unlink()
    try:
        (folder / "sgf").rmdir()
    except OSError:
        pass
    return {"games": len(games), "logs": logs}
