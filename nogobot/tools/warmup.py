"""Loading numba's kernels once per process, and compiling them once per install.

numba compiles every kernel (``cache=True``) the first time a process uses it and writes the
result to its cache (``__pycache__`` beside the source, or ``NUMBA_CACHE_DIR``); later processes
only load it. Compiling takes tens of seconds on a 2-core machine, loading well under a second
(docs/results.md, "Start-up, measured").

* ``nogobot warmup`` compiles ahead of time, at a moment the user chooses (the README's set-up
  command runs it), and also the baselines' kernels and a load of the shipped network.
* ``nogobot gtp`` starts ``start(kind)`` in a background thread at start-up, so ``name`` answers
  at once, and the network player's factory calls ``wait("search")`` before it returns: a
  search never starts before its kernels are ready, so compilation is never paid inside a
  search's time (the first move's search only competes with ``later`` loading beside it).
* A cold cache is announced once on stderr (``announce``), before compiling.
* ``ensure_kernel_cache`` (run by ``nogobot/__init__.py``, before any kernel is defined) gives
  numba a writable cache when the install is read-only: numba itself falls back from
  ``__pycache__`` to ``~/.cache/numba``, but with no writable home either it refuses to define
  a ``cache=True`` kernel at all (``RuntimeError: no locator available``), so nogobot could not
  even be imported; a private directory under the temporary folder is then used instead.
* ``drop_stale_kernels`` (also run by ``nogobot/__init__.py``) guards against numba's one blind
  spot: it checks a cached kernel against its own source file only, so a kernel that calls one
  from another module (``rave_batch`` calls ``playout.policy_rollout``) keeps the callee's old
  machine code after that module changes, silently (a ``git pull`` on an editable install).
  When the sources of the modules with kernels change, every cached kernel of the package is
  dropped and compiled afresh.

Kinds: ``rules`` (board.py: the referee, greedy), ``search`` (rules + features + the MCTS
kernels of a first move: what the network player waits for), ``later`` (tree reuse and the
endgame solver, loaded in the background right after ``search``), ``agents`` (the rollout,
alphabeta and rave baselines).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

KINDS = ("rules", "search", "later", "agents")
COLD_MESSAGE = ("nogobot: compiling the search kernels, first run only (half a minute on 2 "
                "cores; `nogobot warmup` does it ahead of time)...")

_lock = threading.Lock()
_events: dict[str, threading.Event] = {}
_announced = False


def _writable_dir(folder: Path, private: bool = False) -> bool:
    """numba's own test (``_CacheLocator.ensure_cache_path``): create the folder, write a file.
    ``private``: also owned by this user and writable by nobody else, as a folder in a shared
    temporary directory must be (numba loads pickles and machine code from its cache)."""
    try:
        folder.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        if private and hasattr(os, "getuid"):
            st = folder.stat()
            return st.st_uid == os.getuid() and not st.st_mode & 0o022
        return True
    except OSError:
        return False


def _user_cache_dirs() -> list[tuple[Path, bool]]:
    """Where kernels are cached when the package's ``__pycache__`` is read-only, best first,
    each with whether it must be private: numba's own user-wide folder on Linux, then one in the
    shared temporary directory."""
    folders = []
    try:
        home_cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        folders.append((Path(home_cache) / "numba", False))
    except RuntimeError:  # no home directory known
        pass
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    folders.append((Path(tempfile.gettempdir()) / f"nogobot-numba-{user}", True))
    return folders


def ensure_kernel_cache(package_dir: Path | None = None,
                        candidates: list[tuple[Path, bool]] | None = None) -> str | None:
    """Point numba at a writable cache directory (``NUMBA_CACHE_DIR``, inherited by the engines
    and workers this process starts) when the package's own ``__pycache__`` is not writable,
    e.g. a wheel installed into a read-only site-packages. Nothing changes when that folder is
    writable or the user set NUMBA_CACHE_DIR. Returns the folder chosen, or None.

    Must run before numba defines a ``cache=True`` kernel (it picks the folder then); a numba
    already imported gets its config updated too."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    package_dir = package_dir or Path(__file__).resolve().parent.parent
    if _writable_dir(package_dir / "__pycache__"):
        return None
    candidates = _user_cache_dirs() if candidates is None else candidates
    chosen = next((folder for folder, private in candidates if _writable_dir(folder, private)),
                  None)
    if chosen is None:  # nothing shared is usable: a fresh private folder (compiles each time)
        chosen = Path(tempfile.mkdtemp(prefix="nogobot-numba-"))
    os.environ["NUMBA_CACHE_DIR"] = str(chosen)
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = str(chosen)
    return str(chosen)


STAMP_NAME = "nogobot-kernels.json"


def _cache_folder(source_dir: Path) -> Path:
    """Where numba caches the kernels of the modules in ``source_dir`` (its rule: beside them
    in ``__pycache__``, or a folder named after them under NUMBA_CACHE_DIR)."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    if not cache_dir:
        return source_dir / "__pycache__"
    # numba.core.caching.UserProvidedCacheLocator.get_suitable_cache_subpath, written out:
    # importing numba here would cost every start-up a third of a second (a test compares).
    folder = os.path.abspath(source_dir)
    return Path(cache_dir) / f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"


def _source_hashes(package_dir: Path, known: dict) -> dict:
    """{relative path: [size, mtime_ns, sha1 of the source or "" when it has no kernel]} for
    every module of the package; a file whose size and time ``known`` records is not read."""
    files = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir).as_posix()
        st = path.stat()
        old = known.get(rel)
        if old is not None and old[:2] == [st.st_size, st.st_mtime_ns]:
            files[rel] = old
            continue
        data = path.read_bytes()
        files[rel] = [st.st_size, st.st_mtime_ns,
                      hashlib.sha1(data).hexdigest() if b"njit" in data else ""]
    return files


def drop_stale_kernels(package_dir: Path | None = None) -> bool:
    """Drop every cached kernel of the package when the source of any module with kernels has
    changed since the last check (module docstring); True when it dropped them. The check
    stats the package's files and reads only those changed. A cache folder that cannot be
    written is left as it is."""
    package_dir = package_dir or Path(__file__).resolve().parent.parent
    try:
        stamp_path = _cache_folder(package_dir) / STAMP_NAME
        try:
            stamp = json.loads(stamp_path.read_text())
            known, fingerprint = dict(stamp["files"]), stamp["kernels"]
        except (OSError, ValueError, KeyError, TypeError):
            known, fingerprint = {}, None  # first check: caches of unknown sources go too
        files = _source_hashes(package_dir, known)
        now = hashlib.sha1(json.dumps(sorted((rel, f[2]) for rel, f in files.items() if f[2]))
                           .encode()).hexdigest()
        dropped = False
        if now != fingerprint:
            folders = {_cache_folder((package_dir / rel).parent) for rel, f in files.items()
                       if f[2]}
            for folder in folders:
                for cached in list(folder.glob("*.nbi")) + list(folder.glob("*.nbc")):
                    cached.unlink(missing_ok=True)
                    dropped = True
        if now != fingerprint or files != known:
            stamp_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = stamp_path.with_name(f"{STAMP_NAME}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"kernels": now, "files": files}))
            os.replace(tmp, stamp_path)  # atomic: engines start beside each other
        return dropped
    except OSError:  # a read-only cache: numba's own checks are all there is
        return False


def _entry_kernels(kind: str) -> list:
    """The numba dispatchers whose cache entries show whether ``kind`` is compiled."""
    from ..game import board

    kernels = [board.play_stone]  # the entry points called from Python (callees come with them)
    if kind == "search":
        from ..engine import mcts
        from ..net import features

        kernels += [features.fill_planes, mcts.select_batch, mcts.expand_and_backup]
    elif kind == "later":
        from ..engine import mcts, solver

        kernels += [mcts.reroot, solver.solve_root, solver.order_root]
    elif kind == "agents":
        from ..agents import alphabeta, rave_kernels, rollout

        kernels += [rollout.uct_batch, alphabeta.search_root, rave_kernels.rave_batch,
                    rave_kernels.compact_subtree]
    return kernels


def cold(kind: str) -> bool | None:
    """True when some kernel of ``kind`` has no usable entry in numba's on-disk cache (this
    process would compile it), False when all have one, None when that cannot be told."""
    try:
        for k in _entry_kernels(kind):
            if k.signatures:  # already compiled or loaded in this process
                continue
            if not _cache_index(k):
                return True
        return False
    except Exception:  # noqa: BLE001 -- numba internals: only the announcement depends on it
        return None


def _cache_index(kernel) -> dict:
    """The entries of ``kernel``'s on-disk cache index ({} when missing or stale).

    numba has no public way to ask whether a kernel would load from its cache without loading
    it, so this one line reads numba's private index; ``cold`` turns any change in numba's
    internals into "cannot tell" (None), and only the cold-cache announcement depends on it."""
    return kernel._cache._cache_file._load_index()


def announce(log: Callable[[str], None] | None = None) -> None:
    """Say once per process, on stderr (or ``log``), that kernels are being compiled."""
    global _announced
    with _lock:
        if _announced:
            return
        _announced = True
    (log or (lambda m: print(m, file=sys.stderr, flush=True)))(COLD_MESSAGE)


def _run_rules() -> None:
    from ..game.board import Board

    b = Board(9)
    for _ in range(6):
        b.play(int(b.legal_moves()[0]))
    b.is_legal(int(b.legal_moves()[0]), b.to_move)
    b.copy().undo()
    b.num_legal(3 - b.to_move)


def _searcher():
    from ..engine.mcts import SearchConfig
    from ..engine.search import Searcher
    from ..net.inference import UniformEvaluator

    return Searcher(UniformEvaluator(), 9, SearchConfig(batch_size=4, max_tree_mb=4), seed=0)


def _run_search() -> None:
    """A tiny search: the kernels of a first move (rules, features, select, expand)."""
    from ..engine.search import SearchLimits
    from ..game.board import Board
    from ..net.features import boards_planes

    boards_planes([Board(9)])
    _searcher().search(Board(9), SearchLimits(playouts=32))


def _run_later() -> None:
    """The kernels a first move does not need: tree reuse (reroot), the endgame solver."""
    import numpy as np

    from ..engine.search import SearchLimits
    from ..game.board import Board

    s, b = _searcher(), Board(9)
    b.play(s.search(b, SearchLimits(playouts=32)).move)
    b.play(int(b.legal_moves()[0]))
    s.search(b, SearchLimits(playouts=32))  # reuses the subtree: reroot
    rng = np.random.default_rng(0)
    end = Board(9)
    while not end.is_terminal() and end.geo.area - end.ply > 18:
        moves = end.legal_moves()
        end.play(int(moves[rng.integers(len(moves))]))
    if not end.is_terminal():
        s.search(end, SearchLimits(playouts=8))  # the exact solver runs first here


def _run_agents() -> None:
    from ..agents.registry import make_agent
    from ..game.board import Board

    for name, opts in (("rollout", {"playouts": 50}), ("alphabeta", {"depth": 2}),
                       ("rave", {"playouts": 50})):
        make_agent(name, seed=0, **opts).select_move(Board(9), 0.05)


_RUN = {"rules": _run_rules, "search": _run_search, "later": _run_later,
        "agents": _run_agents}


def load(kind: str, log: Callable[[str], None] | None = None) -> float:
    """Compile or load ``kind``'s kernels now (once per process; other callers wait for the
    first). Announces a cold cache first. Returns the seconds this call took."""
    t0 = time.perf_counter()
    with _lock:
        event = _events.get(kind)
        owner = event is None
        if owner:
            event = _events[kind] = threading.Event()
    if not owner:
        event.wait()
        return time.perf_counter() - t0
    try:
        if cold(kind):
            announce(log)
        if kind != "rules":
            load("rules", log)
        _RUN[kind]()
    finally:
        event.set()  # a failure is not retried: the caller's own use will raise it properly
    return time.perf_counter() - t0


def start(kind: str, log: Callable[[str], None] | None = None) -> threading.Thread:
    """``load(kind)`` in a daemon thread (the process can still exit while it compiles); after
    ``search``, also ``later`` (what the first move does not need)."""

    def run() -> None:
        try:
            load(kind, log)
            if kind == "search":
                load("later", log)
        except Exception as e:  # noqa: BLE001 -- the first real use reports it
            (log or (lambda m: print(m, file=sys.stderr)))(f"nogobot: warm-up failed: {e}")

    t = threading.Thread(target=run, name=f"warmup-{kind}", daemon=True)
    t.start()
    return t


def wait(kind: str, log: Callable[[str], None] | None = None) -> float:
    """Block until ``kind``'s kernels are ready (loading them here if nobody started to). For
    ``search``, also until ``later`` when that has to be compiled: a first search beside the
    compiler would get a fraction of the CPU (loading it from the cache takes a few ms)."""
    seconds = load(kind, log)
    if kind == "search" and cold("later"):
        seconds += load("later", log)
    return seconds
