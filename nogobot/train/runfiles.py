"""The files of a training run directory, written so that a killed run leaves whole lines
and whole files (``append_csv``, ``write_json``), read back by the loop, gating and the report
(``read_csv``); ``log`` is the run's one line of progress on stderr."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from pathlib import Path

from ..core.atomicio import write_atomic


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def write_json(path: Path, obj) -> None:
    write_atomic(path, json.dumps(obj, indent=1))


def append_csv(path: Path, fields: list[str], rows: list[dict]) -> None:
    """Append rows (header on a new file); one write + fsync, so a kill leaves whole lines."""
    new = not path.exists()

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore")
    if new:
        w.writeheader()
    for r in rows:
        w.writerow(r)
    with open(path, "a", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())
        f.flush()
        os.fsync(f.fileno())


def read_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="") as f:
        return [r for r in csv.DictReader(f) if None not in r.values()]
