"""numba's on-disk kernel cache: where it lives, and dropping it when it is stale.

Both run from ``nogobot/__init__.py``, before any kernel is defined (``tools.warmup`` compiles
and loads the kernels themselves):

* ``ensure_kernel_cache`` gives numba a writable cache when the install is read-only: numba
  itself falls back from ``__pycache__`` to ``~/.cache/numba``, but with no writable home either
  it refuses to define a ``cache=True`` kernel at all (``RuntimeError: no locator available``),
  so nogobot could not even be imported; a private directory under the temporary folder is then
  used instead.
* ``drop_stale_kernels`` guards against numba's one blind spot: it checks a cached kernel
  against its own source file only, so a kernel that calls one from another module
  (``rave_batch`` calls ``playout.policy_rollout``) keeps the callee's old machine code after
  that module changes, silently (a ``git pull`` on an editable install). When the sources of
  the modules with kernels change, every cached kernel of the package is dropped and compiled
  afresh.

Standard library only: importing numba here would cost every start-up a third of a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path


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
    package_dir = package_dir or Path(__file__).resolve().parents[1]
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


def cache_folder(source_dir: Path) -> Path:
    """Where numba caches the kernels of the modules in ``source_dir`` (its rule: beside them
    in ``__pycache__``, or a folder named after them under NUMBA_CACHE_DIR)."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    if not cache_dir:
        return source_dir / "__pycache__"
    # numba.core.caching.UserProvidedCacheLocator.get_suitable_cache_subpath, written out:
    # importing numba here would cost every start-up a third of a second (a test compares).
    folder = os.path.abspath(source_dir)
    digest = hashlib.sha1(folder.encode()).hexdigest()
    return Path(cache_dir) / f"{os.path.basename(folder)}_{digest}"


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
    package_dir = package_dir or Path(__file__).resolve().parents[1]
    try:
        stamp_path = cache_folder(package_dir) / STAMP_NAME
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
            folders = {cache_folder((package_dir / rel).parent) for rel, f in files.items()
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
