"""Fitting rave's 3×3 pattern table from self-play games (``nogobot train patterns``).

What this module owns: turning game shards into pattern examples (``pattern_examples``: each
position's legal moves as pattern codes and nearness to the last two moves, with the search's
visit distribution as target) and fitting a ``patterns.PatternTable`` to them
(``fit_table``): a softmax over the legal moves whose logit is the pattern's weight plus the
nearness weight, trained on the soft targets with Adam and a small L2 penalty (Coulom's
generalized Bradley-Terry model of move choice, fitted by gradient instead of MM). A pattern
seen fewer than ``min_count`` times among the legal moves shares the unknown weight of its
kind (contested or safe).

Only positions searched in full (``policy_weight`` > 0) are used: the others' visit counts
come from the small searches of playout-cap randomization and are noisy targets.
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..agents.patterns import PLACE, SLOT_MAP, PatternTable, position_codes, ring_table
from ..game.board import LAST, LAST2, Board


def game_shards(paths, last_generations: int | None = None) -> list[str]:
    """The .npz game shards under ``paths`` (run directories, ``games/`` folders, generation
    folders or shard files); with ``last_generations``, only the newest generations' folders."""
    shards: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            shards.append(path)
            continue
        games = os.path.join(path, "games")
        base = games if os.path.isdir(games) else path
        gens = sorted(g for g in glob.glob(os.path.join(base, "gen*")) if os.path.isdir(g))
        if gens:
            if last_generations:
                gens = gens[-last_generations:]
            for g in gens:
                shards += sorted(glob.glob(os.path.join(g, "*.npz")))
        else:
            shards += sorted(glob.glob(os.path.join(base, "*.npz")))
    return shards


def pattern_examples(shards, size: int = 9) -> dict:
    """Per fully searched position of each ``size`` game: ``codes`` (int64 [n, area], -1 where
    illegal), ``near`` (int8 [n, area]: 1 next to the last move, 2 next to the mover's own last
    one) and ``target`` (float32 [n, area], the visit distribution on the legal moves)."""
    ring = ring_table(size)
    area = size * size
    around = [set(int(x) for x in ring[p] if x >= 0) for p in range(area)]
    codes, nears, targets = [], [], []
    out = np.zeros(area, dtype=np.int64)
    for path in shards:
        try:
            with np.load(path) as d:
                if "moves" not in d.files or int(d["size"]) != size:
                    continue
                moves = d["moves"]
                policy = d["policy"].astype(np.float32)
                weight = d["policy_weight"] if "policy_weight" in d.files \
                    else np.ones(len(moves), np.float32)
        except (OSError, ValueError, KeyError, EOFError) as e:
            raise ValueError(f"{path}: not a nogobot game shard ({e})") from None
        board = Board(size)
        for i, m in enumerate(moves):
            c = board.to_move
            if weight[i] > 0:
                position_codes(board.stones, board.root, board.libs, board.legal, ring,
                               SLOT_MAP, PLACE, c, out)
                target = np.where(out >= 0, policy[i], 0.0).astype(np.float32)
                total = target.sum()
                if total > 0:
                    near = np.zeros(area, dtype=np.int8)
                    for bit, last in ((1, int(board.meta[LAST])), (2, int(board.meta[LAST2]))):
                        if last >= 0:
                            for q in around[last]:
                                near[q] |= bit
                    codes.append(out.copy())
                    nears.append(near)
                    targets.append(target / total)
            board.play(int(m))
    if not codes:
        raise ValueError(f"no fully searched {size}x{size} positions in {len(shards)} shards")
    return {"codes": np.array(codes), "near": np.array(nears), "target": np.array(targets)}


def fit_table(examples: dict, min_count: int = 5, epochs: int = 8, l2: float = 1e-4,
              lr: float = 0.05, batch: int = 4096, holdout: float = 0.1, seed: int = 0,
              threads: int = 1, log=None) -> tuple[PatternTable, dict]:
    """Fit a pattern table; returns it and a report (held-out cross-entropy and top-1 agreement
    with the search's most visited move, and the uniform policy's cross-entropy)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    codes, near, target = examples["codes"], examples["near"], examples["target"]
    n = len(codes)
    order = np.random.default_rng(seed).permutation(n)
    n_val = int(n * holdout) if n >= 10 else 0
    val, train = order[:n_val], order[n_val:]
    legal = codes >= 0
    seen, count = np.unique(codes[train][legal[train]], return_counts=True)
    kept = seen[count >= min_count]
    pad = len(kept) + 2  # classes: 0/1 unknown contested/safe, 2.. kept patterns, pad illegal
    if len(kept):
        at = np.clip(np.searchsorted(kept, codes), 0, len(kept) - 1)
        found = (kept[at] == codes) & legal
    else:
        at, found = np.zeros_like(codes), np.zeros_like(legal)
    cls = np.where(found, at + 2, np.where(legal, codes & 1, pad)).astype(np.int64)
    X = torch.from_numpy(cls)
    NR = torch.from_numpy(near.astype(np.int64))
    Y = torch.from_numpy(target.astype(np.float32))
    w = torch.zeros(pad + 1, requires_grad=True)
    v = torch.zeros(4, requires_grad=True)
    opt = torch.optim.Adam([w, v], lr=lr)

    def log_probs(ix):
        x = X[ix]
        return torch.log_softmax((w[x] + v[NR[ix]]).masked_fill(x == pad, -1e9), dim=1)

    train_t = torch.from_numpy(train)
    for epoch in range(epochs):
        perm = train_t[torch.randperm(len(train_t))]
        for b in range(0, len(perm), batch):
            ix = perm[b:b + batch]
            loss = -(Y[ix] * log_probs(ix)).sum(1).mean() + l2 * (w[2:pad] ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if log is not None:
            log(f"epoch {epoch + 1}/{epochs}: train loss {loss.item():.3f}")
    report = {"positions": n, "patterns_seen": int(len(seen)), "patterns_kept": int(len(kept))}
    if n_val:
        with torch.no_grad():
            ix = torch.from_numpy(val)
            lp = log_probs(ix)
            report["holdout_cross_entropy"] = float(-(Y[ix] * lp).sum(1).mean())
            report["holdout_top1"] = float((lp.argmax(1) == Y[ix].argmax(1)).float().mean())
            report["uniform_cross_entropy"] = float(np.mean(np.log(legal[val].sum(1))))
    weights = w.detach().numpy()
    table = PatternTable(kept, weights[2:pad], weights[:2], v.detach().numpy())
    return table, report
