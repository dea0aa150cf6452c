"""Training data: what a finished game teaches, how it is stored, how it is batched.

One module for the whole pipeline, used by the bootstrap, self-play, the replay window and
``--from-games``:
- **targets**: ``game_targets`` turns one finished game into per-position targets (auxiliary
  next moves, value, score, dominion, all from the side to move); ``final_outcome`` reads the
  winner, margin and ownership off a finished ``Board``; ``record_arrays`` does both for an SGF
  record (one-hot policy on the moves played).
- **shards**: a game's arrays in one .npz (``KEYS``; self-play writes them, ``load_shard`` reads
  and validates them); ``concat`` groups many by board size.
- **batches**: ``training_batch`` gives torch tensors under one board symmetry (torch is
  imported there only, so self-play and the engine's tools can use the rest without it).
"""

from __future__ import annotations

import numpy as np

from ..game.board import BLACK, WHITE
from ..net.features import transform_planes, transform_policy

KEYS = ("planes", "policy", "policy_weight", "aux", "value", "score", "dominion", "root_value")
OPTIONAL = ("policy_weight", "root_value")  # older shards lack them: filled in by load_shard


def load_shard(path) -> dict:
    """Arrays of one .npz shard (only the training keys), validated for shape agreement."""
    with np.load(path) as z:
        d = {k: z[k] for k in KEYS if k in z.files}
    missing = [k for k in KEYS if k not in d and k not in OPTIONAL]
    if missing:
        raise ValueError(f"{path}: not a nogobot game shard (missing {missing})")
    n = len(d["value"])
    if "policy_weight" not in d:
        d["policy_weight"] = np.ones(n, np.float32)
    if "root_value" not in d:  # no search value recorded: the game result stands in
        d["root_value"] = d["value"].astype(np.float32)
    if any(len(v) != n for v in d.values()):
        raise ValueError(f"{path}: arrays of different lengths")
    return d


def shard_size(d: dict) -> int:
    """The board size of a shard's arrays."""
    return int(d["planes"].shape[-1])


def concat(parts: list[dict]) -> dict[int, dict]:
    """Concatenate shards, grouped by board size."""
    by_size: dict[int, list[dict]] = {}
    for d in parts:
        if len(d["value"]):
            by_size.setdefault(shard_size(d), []).append(d)
    return {s: {k: np.concatenate([d[k] for d in ds]) for k in KEYS}
            for s, ds in by_size.items()}


def game_targets(to_move: np.ndarray, moves: np.ndarray, winner: int, margin: int,
                 own: np.ndarray, size: int, aux_moves: int = 2) -> dict:
    """Per-position targets of one finished game, each from the view of the side to move then.

    ``to_move`` [n] colour to move at each recorded position, ``moves`` [n] the move played
    there, ``winner`` the winning colour, ``margin`` the winner's legal-move count at the end,
    ``own`` [P] final ownership (+1 black, -1 white, 0 neither; as ``final_outcome`` defines
    it). Returns ``aux`` int16 [n, aux_moves] (the next moves, -1 past the end),
    ``value`` float32 [n] (1 = won), ``score`` float32 [n] (±min(margin, 5)/5) and
    ``dominion`` int8 [n, N, N]."""
    to_move = np.asarray(to_move)
    moves = np.asarray(moves)
    n = len(to_move)
    sign = np.where(to_move == BLACK, 1, -1)
    won = to_move == winner
    aux = np.full((n, aux_moves), -1, np.int16)
    for j in range(1, aux_moves + 1):
        aux[: max(n - j, 0), j - 1] = moves[j:n]
    return {
        "aux": aux,
        "value": won.astype(np.float32),
        "score": (np.where(won, 1.0, -1.0) * min(int(margin), 5) / 5.0).astype(np.float32),
        "dominion": (sign[:, None] * np.asarray(own)[None, :]).reshape(n, size, size)
        .astype(np.int8),
    }


def final_outcome(board) -> tuple[int, int, np.ndarray]:
    """(winner, margin, ownership[P]) of a finished ``Board``, as
    bootstrap.play_greedy_game computes them.

    Also usable on an unfinished record (e.g. a game lost on time): the winner is then the
    caller's business; margin and ownership are read from the position as it stands."""
    winner = 3 - board.to_move
    margin = board.num_legal(winner)
    lb, lw = board.legal[BLACK], board.legal[WHITE]
    own = np.where(board.stones == BLACK, 1, np.where(board.stones == WHITE, -1, 0))
    own = np.where((board.stones == 0) & lb & ~lw, 1, own)
    own = np.where((board.stones == 0) & lw & ~lb, -1, own)
    return winner, int(margin), own.astype(np.int8)


def record_arrays(rec) -> dict | None:
    """Training arrays of one ``sgf.GameRecord`` (policy = the move played, one-hot).

    The winner is the side left without a legal move when the record ends there, else the
    record's RE[] (B+.../W+...); a record with neither is skipped (None)."""
    from ..net.features import board_planes

    board = rec.board(upto=0)
    size = rec.size
    area = size * size
    planes, policy, moves, to_move = [], [], [], []
    for colour, p in rec.moves:
        if board.to_move != colour:
            board.to_move = colour
        planes.append(board_planes(board).astype(np.uint8))
        pol = np.zeros(area, np.float16)
        pol[p] = 1.0
        policy.append(pol)
        moves.append(p)
        to_move.append(colour)
        board.play(p, colour)
    if not moves:
        return None
    winner, margin, own = final_outcome(board)
    if not board.is_terminal():
        res = (rec.result or "").strip().upper()
        if not res or res[0] not in "BW":
            return None
        winner = 1 if res[0] == "B" else 2
        margin = board.num_legal(winner)
    tgt = game_targets(np.array(to_move), np.array(moves), winner, margin, own, size)
    n = len(moves)
    return {"planes": np.stack(planes), "policy": np.stack(policy),
            "policy_weight": np.ones(n, np.float32), **tgt,
            "root_value": tgt["value"].astype(np.float32)}


def positions(data: dict[int, dict]) -> int:
    """Positions in arrays grouped by board size (``concat``'s result)."""
    return int(sum(len(d["value"]) for d in data.values()))


def training_batch(data: dict, idx: np.ndarray, k: int, size: int) -> dict:
    """Torch tensors for positions ``idx`` of one board size under symmetry ``k`` (0-7):
    planes, policy and auxiliary-move targets (one-hot planes), value, score, dominion."""
    import torch

    area = size * size
    pol = transform_policy(data["policy"][idx].astype(np.float32), k)
    aux_idx = data["aux"][idx].astype(np.int64)
    aux = np.zeros((len(idx), 2, area), np.float32)
    mask = aux_idx >= 0
    b, j = np.nonzero(mask)
    aux[b, j, aux_idx[b, j]] = 1.0
    return {
        "planes": torch.from_numpy(transform_planes(data["planes"][idx].astype(np.float32), k)),
        "policy": torch.from_numpy(pol),
        "aux_policy": torch.from_numpy(transform_policy(aux, k)),
        "aux_mask": torch.from_numpy(mask.astype(np.float32)),
        "value": torch.from_numpy(data["value"][idx]),
        "score": torch.from_numpy(data["score"][idx].astype(np.float32)),
        "dominion": torch.from_numpy(transform_planes(data["dominion"][idx].astype(np.float32), k)),
    }
