"""Train the small default model from cheap greedy self-play (a few minutes, 1 thread).

    nogobot train bootstrap --out models/nogobot-b6c32-boot.onnx --minutes 9

1. **Data.** A one-ply *mobility* player plays itself (numba): each legal move is tried and scored
   (own legal moves − opponent legal moves afterwards; +1000 if the opponent is left with none,
   −1000 if we are); it plays from softmax(score / T). The first few moves of each game are
   uniformly random so games differ. Every position records the input planes, the greedy
   softmax (T = 1) as the policy target, the next two moves (auxiliary heads), and, once the game
   ends, the result (value), the margin (score) and the final ownership (dominion) as
   ``data.final_outcome`` defines them, all from the side to move.
2. **Training.** AdamW with a cosine schedule on the NoGoZero+ multitask loss, a random board
   symmetry per batch, one board size per batch, until the time budget runs out.
3. **Export** (parity-checked) with the training summary and a quick strength measurement (the
   net's raw policy, no search, vs the random and the greedy player) in the sidecar.

This model only has to be better than nothing; the self-play loop (a later issue) replaces it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch
from numba import njit

from ..game.board import (
    BLACK,
    LAST,
    LAST2,
    META_LEN,
    NLEGAL_B,
    TO_MOVE,
    WHITE,
    geometry,
    play_stone,
)
from ..net.features import NUM_PLANES, fill_planes
from .data import game_targets, training_batch
from .export import export_net
from .model import NetConfig, build_model, multitask_loss, save_checkpoint

WIN_SCORE = 1000.0


@njit(cache=True)
def _new_state(area, words):
    stones = np.zeros(area, np.int8)
    root = np.full(area, -1, np.int16)
    nxt = np.full(area, -1, np.int16)
    libs = np.zeros((area, words), np.uint64)
    legal = np.zeros((3, area), np.bool_)
    legal[1:] = True
    meta = np.zeros(META_LEN, np.int64)
    meta[TO_MOVE] = BLACK
    meta[LAST] = -1
    meta[LAST2] = -1
    meta[NLEGAL_B] = area
    meta[NLEGAL_B + 1] = area
    return stones, root, nxt, libs, legal, meta


@njit(cache=True)
def greedy_scores(stones, root, nxt, libs, legal, meta, nbr, zob):
    """One-ply mobility score of every point for the side to move (-inf where illegal)."""
    area = stones.shape[0]
    c = meta[TO_MOVE]
    out = np.full(area, -np.inf)
    s2, r2, n2, l2, g2, m2 = (stones.copy(), root.copy(), nxt.copy(), libs.copy(),
                              legal.copy(), meta.copy())
    for p in range(area):
        if not legal[c, p]:
            continue
        s2[:] = stones
        r2[:] = root
        n2[:] = nxt
        l2[:] = libs
        g2[:] = legal
        m2[:] = meta
        play_stone(s2, r2, n2, l2, g2, m2, nbr, zob, p, c)
        mine = m2[NLEGAL_B + c - 1]
        theirs = m2[NLEGAL_B + 2 - c]
        if theirs == 0:
            out[p] = WIN_SCORE
        elif mine == 0:
            out[p] = -WIN_SCORE
        else:
            out[p] = mine - theirs
    return out


@njit(cache=True)
def _softmax(scores, temp):
    m = np.max(scores)
    e = np.exp((scores - m) / temp)
    return e / np.sum(e)


@njit(cache=True)
def _sample(dist):
    u = np.random.random()
    acc = 0.0
    last = 0
    for p in range(dist.shape[0]):
        if dist[p] > 0:
            last = p
            acc += dist[p]
            if u < acc:
                return p
    return last


@njit(cache=True)
def play_greedy_game(size, nbr, zob, words, n_random, temp, planes, policy, moves):
    """Greedy self-play game; fills planes/policy/moves per ply. Returns
    (plies, winner, margin, ownership[P] with +1 black / -1 white / 0)."""
    area = size * size
    stones, root, nxt, libs, legal, meta = _new_state(area, words)
    ply = 0
    while True:
        c = meta[TO_MOVE]
        if meta[NLEGAL_B + c - 1] == 0:
            break
        fill_planes(stones, root, libs, legal, meta, size, planes[ply])
        scores = greedy_scores(stones, root, nxt, libs, legal, meta, nbr, zob)
        target = _softmax(scores, 1.0)
        policy[ply] = target
        if ply < n_random:
            n = meta[NLEGAL_B + c - 1]
            uni = np.zeros(area)
            for p in range(area):
                if legal[c, p]:
                    uni[p] = 1.0 / n
            p = _sample(uni)
        else:
            p = _sample(target if temp == 1.0 else _softmax(scores, temp))
        play_stone(stones, root, nxt, libs, legal, meta, nbr, zob, p, c)
        moves[ply] = p
        ply += 1
    loser = meta[TO_MOVE]
    winner = 3 - loser
    margin = meta[NLEGAL_B + winner - 1]
    own = np.zeros(area, np.int8)
    for p in range(area):
        s = stones[p]
        if s == BLACK:
            own[p] = 1
        elif s == WHITE:
            own[p] = -1
        elif legal[BLACK, p] and not legal[WHITE, p]:
            own[p] = 1
        elif legal[WHITE, p] and not legal[BLACK, p]:
            own[p] = -1
    return ply, winner, margin, own


def generate(size: int, games: int, seed: int, n_random: int = 4) -> dict:
    """Greedy self-play data for one board size, as compact arrays (planes stored as uint8)."""
    geo = geometry(size)
    area = size * size
    np.random.seed(seed)  # numba's generator
    rng = np.random.default_rng(seed)
    cap = area + 1
    g_planes = np.zeros((cap, NUM_PLANES, size, size), np.float32)
    g_policy = np.zeros((cap, area), np.float64)
    g_moves = np.zeros(cap, np.int64)
    cols = {k: [] for k in ("planes", "policy", "aux", "value", "score", "dominion", "game")}
    for g in range(games):
        temp = float(rng.choice([0.5, 1.0, 2.0]))
        plies, winner, margin, own = play_greedy_game(size, geo.nbr, geo.zobrist, geo.words,
                                                      n_random, temp, g_planes, g_policy, g_moves)
        n = plies
        to_move = np.where(np.arange(n) % 2 == 0, BLACK, WHITE)  # black first, alternate
        cols["planes"].append(g_planes[:n].astype(np.uint8))
        cols["policy"].append(g_policy[:n].astype(np.float16))
        for k, v in game_targets(to_move, g_moves[:n], winner, margin, own, size).items():
            cols[k].append(v)
        cols["game"].append(np.full(n, g, np.int32))
    return {k: np.concatenate(v) for k, v in cols.items()}


def evaluate_losses(model, data: dict, size: int, batch: int = 256) -> dict:
    """Held-out losses plus policy top-1 agreement with the greedy target and value accuracy."""
    model.eval()
    n = len(data["value"])
    sums: dict[str, float] = {}
    top1 = vacc = 0.0
    with torch.no_grad():
        for i in range(0, n, batch):
            idx = np.arange(i, min(i + batch, n))
            t = training_batch(data, idx, 0, size)
            out = model(t["planes"])
            _, terms = multitask_loss(out, t)
            for key, v in terms.items():
                sums[key] = sums.get(key, 0.0) + v * len(idx)
            top1 += float((out["policy"].argmax(1) == t["policy"].argmax(1)).sum())
            vacc += float(((out["value_logit"] > 0).float() == t["value"]).sum())
    model.train()
    res = {f"{k}_loss": round(v / n, 4) for k, v in sums.items()}
    res.update(policy_top1=round(top1 / n, 4), value_accuracy=round(vacc / n, 4), positions=n)
    return res


def play_policy_match(evaluator, opponent: str, size: int, games: int, seed: int) -> float:
    """Win rate of the net's raw policy (argmax over legal moves) vs 'random' or 'greedy'."""
    from ..game.board import Board
    from ..net.inference import priors

    geo = geometry(size)
    rng = np.random.default_rng(seed)
    wins = 0
    for g in range(games):
        b = Board(size)
        net_colour = BLACK if g % 2 == 0 else WHITE
        while not b.is_terminal():
            if b.to_move == net_colour:
                ev = evaluator.evaluate_boards([b])
                p = int(np.argmax(priors(ev.policy_logits[0], b.legal_mask())))
            elif opponent == "random":
                p = int(rng.choice(b.legal_moves()))
            else:
                sc = greedy_scores(*b.arrays(), geo.nbr, geo.zobrist)
                best = np.flatnonzero(sc == sc.max())
                p = int(rng.choice(best))
            b.play(p)
        wins += b.winner() == net_colour
    return wins / games


DEFAULT_OUT = "models/nogobot-b6c32-boot.onnx"
DEFAULT_CHECKPOINT = "runs/bootstrap/model.pt"


@dataclass
class BootstrapSettings:
    """What `nogobot train bootstrap` trains (its options, with the same defaults)."""

    out: str = DEFAULT_OUT
    checkpoint: str = DEFAULT_CHECKPOINT
    blocks: int = 6
    channels: int = 32
    sizes: tuple[int, ...] = (7, 9, 11)
    games: tuple[int, ...] = (2000, 3000, 1000)  # per size
    minutes: float = 8.0  # training wall time
    batch: int = 128
    lr: float = 2e-3
    seed: int = 0
    eval_games: int = 100

    def command(self) -> str:
        """The command line that trains this (recorded in the sidecar, so it can be rerun)."""
        opts = {f.name: getattr(self, f.name) for f in fields(self)}
        return "nogobot train bootstrap " + " ".join(
            f"--{k.replace('_', '-')} {','.join(map(str, v)) if isinstance(v, tuple) else v}"
            for k, v in opts.items())


def bootstrap_if_default(init_checkpoint: str, echo=print) -> bool:
    """Write the bootstrap's checkpoint when a training config starts from it and it is not
    there yet (a fresh clone); False (nothing done) for any other missing checkpoint."""
    if Path(init_checkpoint).resolve() != Path(DEFAULT_CHECKPOINT).resolve():
        return False
    settings = BootstrapSettings(out=str(Path(DEFAULT_CHECKPOINT).with_name("boot.onnx")))
    echo(f"init_checkpoint {init_checkpoint} is not there yet: training it first with "
         f"`{settings.command()}` (about 9 minutes on one CPU thread)")
    run(settings)
    return True


def run(settings: BootstrapSettings) -> None:
    """Generate the greedy games, train, export ``settings.out`` (and ``settings.checkpoint``),
    reporting progress on stdout."""
    torch.set_num_threads(1)
    torch.manual_seed(settings.seed)
    sizes, games = list(settings.sizes), list(settings.games)
    if len(sizes) != len(games):
        raise ValueError(f"{len(sizes)} board sizes but {len(games)} game counts")
    t0 = time.time()
    train, val = {}, {}
    for i, (size, n) in enumerate(zip(sizes, games)):
        d = generate(size, n, seed=settings.seed * 1000 + i)
        hold = d["game"] >= int(n * 0.95)  # last 5% of the games: validation
        train[size] = {k: v[~hold] for k, v in d.items()}
        val[size] = {k: v[hold] for k, v in d.items()}
        print(f"{size}x{size}: {n} games, {len(d['value'])} positions, "
              f"black wins {np.mean(d['value'][d['planes'][:, 10, 0, 0] == 1]):.3f}", flush=True)
    gen_seconds = time.time() - t0

    cfg = NetConfig(blocks=settings.blocks, channels=settings.channels)
    model = build_model(cfg)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=1e-4)
    rng = np.random.default_rng(settings.seed)
    counts = np.array([len(train[s]["value"]) for s in sizes], np.float64)
    budget = settings.minutes * 60
    t1 = time.time()
    step = 0
    samples = 0
    while True:
        frac = (time.time() - t1) / budget
        if frac >= 1:
            break
        for grp in opt.param_groups:  # cosine decay over the wall-clock budget
            grp["lr"] = settings.lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * frac)))
        size = sizes[rng.choice(len(sizes), p=counts / counts.sum())]
        idx = rng.integers(0, len(train[size]["value"]), settings.batch)
        t = training_batch(train[size], idx, int(rng.integers(8)), size)
        loss, terms = multitask_loss(model(t["planes"]), t)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        samples += settings.batch
        if step % 200 == 0:
            print(f"step {step} ({time.time() - t1:.0f}s) loss {loss.item():.3f} "
                  + " ".join(f"{k} {v:.3f}" for k, v in terms.items()), flush=True)
    train_seconds = time.time() - t1
    model.eval()
    val_metrics = {f"{s}x{s}": evaluate_losses(model, val[s], s) for s in sizes}
    print("validation:", val_metrics, flush=True)

    training = {
        "method": "supervised on greedy (one-ply mobility) self-play; see "
                  "nogobot/train/bootstrap.py",
        "command": settings.command(),
        "board_sizes": sizes,
        "games": dict(zip([f"{s}x{s}" for s in sizes], games)),
        "positions": int(sum(len(train[s]["value"]) for s in sizes)),
        "data_generation_seconds": round(gen_seconds, 1),
        "training_seconds": round(train_seconds, 1),
        "steps": step,
        "samples_seen": samples,
        "batch": settings.batch,
        "optimizer": f"AdamW lr {settings.lr} cosine, weight decay 1e-4",
        "torch_threads": 1,
        "seed": settings.seed,
        "validation": val_metrics,
    }
    save_checkpoint(settings.checkpoint, model, training=training)
    # Strength of the raw policy (no search): export to a scratch file, measure, then export
    # for real with the figures in the sidecar.
    from ..net.inference import OnnxEvaluator

    scratch = Path(settings.checkpoint).with_name(Path(settings.checkpoint).stem + "-scratch.onnx")
    export_net(model, scratch, training=training)
    ev = OnnxEvaluator(scratch, device="cpu", threads=1)
    strength = {"note": "raw policy argmax (no search), 9x9, colours alternate; greedy = the "
                        "one-ply mobility player of bootstrap.py (argmax, random ties)"}
    for opp in ("random", "greedy"):
        strength[f"win_rate_vs_{opp}"] = play_policy_match(ev, opp, 9, settings.eval_games,
                                                            settings.seed + 7)
        strength[f"games_vs_{opp}"] = settings.eval_games
    print("strength:", strength, flush=True)
    meta = export_net(model, settings.out, training=training, strength=strength)
    print(f"wrote {settings.out} ({Path(settings.out).stat().st_size} bytes), parity "
          f"{meta['export']['parity_max_abs_diff']:.2e}", flush=True)
