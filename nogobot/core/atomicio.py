"""Atomic file writes: the one place that writes a file so that a kill never leaves half of it.

The bytes go to ``NAME.tmp`` beside the target, are flushed and fsynced, and the tmp file is then
renamed over the target with ``os.replace`` (atomic within one directory): a reader sees the old
file or the new one, never a torn one. A kill between the two steps leaves only a ``*.tmp`` file
(the training loop deletes those when a run resumes).

``write_atomic`` does both steps. ``write_tmp`` does only the first, for a caller that puts
several files in place together (the ONNX model and its sidecar). Writers that produce a whole
file themselves (``torch.save``, ``savefig``) write into a ``BytesIO`` and pass its bytes.

Standard library only: the engine path (which never imports torch) uses it too.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_tmp(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path``'s tmp file (``NAME.tmp``), fsynced; returns the tmp path,
    which the caller moves into place with ``os.replace(tmp, path)``."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return tmp


def write_atomic(path: str | os.PathLike, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one atomic step."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    os.replace(write_tmp(path, data), path)
