"""The files an engine command names (nets, opening books) and their content hashes.

A results record keeps the sha256 of each such file (``files``), so a resumed match compares
nets by content, not by path: a net moved to another folder with the same bytes resumes, a
different net behind the same or another path is refused. A command is otherwise compared
word for word.
"""

from __future__ import annotations

import hashlib
import shlex
import threading
from pathlib import Path

SUFFIXES = (".onnx", ".json")  # a net, an opening book
OPTIONS = ("--model", "--book")  # their value is such a file, or a net's name

_cache: dict[tuple, str] = {}
_lock = threading.Lock()


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def named(command: str) -> list[tuple[int, str]]:
    """(word index, file) for each file ``command`` names: a word ending in a net's or book's
    suffix, or the value of ``--model``/``--book`` (also as ``--model=VALUE``)."""
    words = _words(command)
    out = []
    for i, w in enumerate(words):
        value = w.split("=", 1)[1] if w.startswith(OPTIONS) and "=" in w else w
        if value.endswith(SUFFIXES) or (i > 0 and words[i - 1] in OPTIONS):
            out.append((i, value))
    return out


def sha256(name: str, cwd: str | None = None) -> str | None:
    """The file's sha256 (hex), or None when ``name`` is no file (relative to ``cwd``)."""
    path = Path(cwd or ".") / name
    try:
        st = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return None
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _cache:
            return _cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    with _lock:
        _cache[key] = h.hexdigest()
    return _cache[key]


def pins(command: str, cwd: str | None = None) -> dict[str, str]:
    """{file as the command names it: sha256} for the files it names that exist."""
    out = {}
    for _, name in named(command):
        digest = sha256(name, cwd)
        if digest is not None:
            out[name] = digest
    return out


def mismatch(recorded: str, pinned: dict[str, str], now: str,
             cwd: str | None = None) -> str | None:
    """Why ``now`` is not the engine that played as ``recorded`` (with the hashes ``pinned``
    then), or None when it is: the same words, but for named files with the same bytes."""
    old, new = _words(recorded), _words(now)
    files_old, files_new = dict(named(recorded)), dict(named(now))
    if len(old) != len(new):
        return ""
    for i, (a, b) in enumerate(zip(old, new)):
        if i not in files_old or i not in files_new:
            if a != b:
                return ""
            continue
        fa, fb = files_old[i], files_new[i]
        if a.replace(fa, "") != b.replace(fb, ""):  # --model=X against --book=X
            return ""
        was, is_ = pinned.get(fa), sha256(fb, cwd)
        if was is None:
            if fa == fb:
                continue  # recorded before hashes were kept: the path is all there is
            return f"{fa} has no recorded hash to compare {fb} with"
        if is_ is None:
            if fa == fb:
                continue  # gone from here: the start-up check says so if a game needs it
            return f"{fb} is not there (it held sha256 {was[:12]})"
        if was != is_:
            return (f"{fb} (sha256 {is_[:12]}) is not the file that played as {fa} "
                    f"(sha256 {was[:12]})")
    return None
