"""The replay window: game shards on disk -> training arrays in memory -> symmetric batches.

``ReplayBuffer`` keeps the most recent ``window_games`` shards (ordered by generation, then game
index, as their file names sort), loads each file once and concatenates per board size.
``load_games`` reads existing game records for ``--from-games``: SGF files (through
``data.record_arrays``: one-hot policy targets on the moves played) and our .npz shards alike.
Targets, shards and batches themselves are defined in ``data.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import concat, load_shard, record_arrays, training_batch


class ReplayBuffer:
    """Most recent ``window`` game shards under ``root`` (recursively), cached in memory."""

    def __init__(self, root, window: int):
        self.root = Path(root)
        self.window = window
        self._cache: dict[str, dict] = {}

    def shard_paths(self) -> list[Path]:
        return sorted(self.root.rglob("*.npz"))

    def load(self, extra: list[dict] | None = None) -> dict[int, dict]:
        paths = self.shard_paths()[-self.window:]
        keep = {str(p) for p in paths}
        for k in list(self._cache):
            if k not in keep:
                del self._cache[k]
        parts = []
        for p in paths:
            d = self._cache.get(str(p))
            if d is None:
                try:
                    d = self._cache[str(p)] = load_shard(p)
                except (OSError, ValueError, KeyError) as e:
                    # A damaged shard costs one game, never the run.
                    import sys

                    print(f"warning: skipping {p}: {e}", file=sys.stderr)
                    continue
            parts.append(d)
        return concat(parts + list(extra or []))

    def games(self) -> int:
        return len(self.shard_paths())


def sample_batch(data: dict[int, dict], batch: int, rng: np.random.Generator,
                 symmetries: bool = True, value_mix: float = 0.0) -> dict:
    """A batch of torch tensors from one board size (chosen ∝ positions), under one random
    symmetry. The policy target rows are rescaled so the policy loss averages over the
    positions that have a policy target (``policy_weight`` 1) only. ``value_mix`` = λ makes
    the value target (1-λ)·result + λ·root search value: the game result is one noisy draw,
    the search's value at that position a lower-variance (but biased) estimate of it."""
    import torch

    sizes = sorted(data)
    counts = np.array([len(data[s]["value"]) for s in sizes], np.float64)
    size = sizes[int(rng.choice(len(sizes), p=counts / counts.sum()))]
    d = data[size]
    idx = rng.integers(0, len(d["value"]), batch)
    k = int(rng.integers(8)) if symmetries else 0
    t = training_batch(d, idx, k, size)
    w = torch.from_numpy(d["policy_weight"][idx].astype(np.float32))
    scale = w * (len(idx) / max(float(w.sum()), 1.0))
    t["policy"] = t["policy"] * scale[:, None]
    if value_mix > 0:
        root = torch.from_numpy(d["root_value"][idx].astype(np.float32))
        t["value"] = (1.0 - value_mix) * t["value"] + value_mix * root
    # The auxiliary moves come from every position (they are moves actually played).
    return t


# --------------------------------------------------------------------------------------------
# Existing game records (--from-games)
# --------------------------------------------------------------------------------------------


def load_games(path) -> tuple[list[dict], dict]:
    """Arrays from SGF files and/or .npz shards under ``path`` (a file or a directory).

    Returns (list of per-game arrays, summary counts). Unreadable/illegal records are skipped
    and counted."""
    from ..game import sgf

    path = Path(path)
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".sgf", ".npz"))
    else:
        raise FileNotFoundError(f"{path}: no such file or directory")
    # A directory of our own shards has both g.sgf and g.npz: read the .npz (richer targets).
    npz_stems = {p.with_suffix("") for p in files if p.suffix == ".npz"}
    out, counts = [], {"sgf": 0, "npz": 0, "skipped": 0}
    for p in files:
        try:
            if p.suffix == ".npz":
                out.append(load_shard(p))
                counts["npz"] += 1
            elif p.with_suffix("") not in npz_stems:
                d = record_arrays(sgf.load(p))
                if d is None:
                    counts["skipped"] += 1
                    continue
                out.append(d)
                counts["sgf"] += 1
        except (OSError, ValueError) as e:  # SgfError is a ValueError
            counts["skipped"] += 1
            import sys

            print(f"warning: skipping {p}: {e}", file=sys.stderr)
    return out, counts
