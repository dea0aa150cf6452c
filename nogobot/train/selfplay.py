"""Self-play games with the real search, written as game shards (npz + SGF).

One game = one shard ``<stem>.npz`` (training arrays) + ``<stem>.sgf`` (the record), both written
atomically (tmp file, then ``os.replace``; the .npz last, so an .npz on disk is a finished game).
Shard arrays, one row per recorded position, everything from the side to move:

==============  =================  ====================================================
key             dtype / shape      meaning
==============  =================  ====================================================
planes          uint8 [n,C,N,N]    input planes (``nogobot.net.features``)
policy          float16 [n,N*N]    visits (pruned when enabled), or the Gumbel improved policy
policy_weight   float32 [n]        1 = full search (a policy target), 0 = fast search
moves           int16 [n]          the move played
aux             int16 [n,2]        the next two moves (-1 past the end; auxiliary heads)
value           float32 [n]        1 if the side to move won
root_value      float32 [n]        the search's root win probability for the side to move
score           float32 [n]        ±min(margin, 5)/5
dominion        int8 [n,N,N]       final ownership, +1 = the side to move's
size, plies...  scalars            board size, game length, winner, model name, seed
==============  =================  ====================================================

Move choice (NoGoZero+): the first ``temperature_moves`` plies are sampled ∝ visits^(1/T), then
the most visited move. Root Dirichlet noise and the 1.03 root policy temperature are on.

Switches (so their effect can be measured): **playout cap randomisation** (KataGo: a fraction
of the moves get a full search and are policy targets, the others a fast search without noise and
with ``policy_weight`` 0) and **policy target pruning** (KataGo: visits that PUCT would not have
given a non-best child without exploration are removed from its target).

**Gumbel root** (``selfplay.gumbel``; Danihelka et al. 2022, ``nogobot.engine.gumbel``): the full
searches sample their candidate moves with Gumbel noise and spend their playouts by sequential
halving; the move played is the plan's, the policy target the improved policy softmax(logit +
σ(completed Q)) rather than visit counts, so that 16–64 playouts a move still teach a policy.
Dirichlet noise, the visit temperature and policy target pruning are off there (the Gumbel
sampling is the exploration); the fast searches of playout cap randomisation stay PUCT.

Workers: ``generate_games`` runs in-process for one worker, otherwise in ``spawn`` processes,
each with its own ``OnnxEvaluator``; torch is imported only for GPU self-play when onnxruntime
has no CUDA (``torch_eval``). Within a worker,
``selfplay.concurrent_games`` games share each network call (``play_games_batched``): on a GPU
(``--device cuda``: onnxruntime's CUDA/TensorRT providers) that turns batches of 8 leaves into
batches of hundreds.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.atomicio import write_atomic
from ..engine.gumbel import GumbelRoot, GumbelSettings, improved_policy
from ..engine.mcts import SearchConfig
from ..game import sgf
from ..game.board import Board
from ..net.features import board_planes
from .config import SelfPlayConfig


@dataclass
class GameData:
    arrays: dict
    sgf_text: str
    plies: int
    winner: int
    playouts: int
    seconds: float


class GameRecorder:
    """One game's shard arrays as it is played: each position's planes and search targets
    (``record``, before its move is played), then the outcome targets (``finish``). Self-play and
    expert iteration (``teacher.py``) write their shards through it, so the format has one owner."""

    def __init__(self, size: int):
        self.size = size
        self.t0 = time.perf_counter()
        self.planes, self.policy, self.weight, self.root_value = [], [], [], []
        self.moves, self.to_move = [], []

    def record(self, board: Board, policy: np.ndarray, weight: float, root_value: float,
               move: int) -> None:
        self.planes.append(board_planes(board).astype(np.uint8))
        self.policy.append(policy.astype(np.float16))
        self.weight.append(weight)
        self.root_value.append(root_value)
        self.moves.append(move)
        self.to_move.append(board.to_move)

    def finish(self, board: Board, name: str, playouts: int) -> GameData:
        """The finished game (``board`` at its end) as shard data; ``name`` plays both sides."""
        from .data import final_outcome, game_targets

        size, n = self.size, len(self.moves)
        winner, margin, own = final_outcome(board)
        tgt = game_targets(np.array(self.to_move), np.array(self.moves), winner, margin, own, size)
        arrays = {
            "planes": np.stack(self.planes) if n else np.zeros((0, 12, size, size), np.uint8),
            "policy": np.stack(self.policy) if n else np.zeros((0, size * size), np.float16),
            "policy_weight": np.array(self.weight, np.float32),
            "root_value": np.array(self.root_value, np.float32),
            "moves": np.array(self.moves, np.int16),
            **tgt,
            "size": np.int32(size), "plies": np.int32(n), "winner": np.int8(winner),
        }
        rec = sgf.record_of(board, black=name, white=name)
        return GameData(arrays, sgf.serialise(rec), n, winner, playouts,
                        time.perf_counter() - self.t0)


def search_config(sp: SelfPlayConfig) -> SearchConfig:
    return SearchConfig(c_puct=sp.c_puct, batch_size=sp.batch_size, max_tree_mb=sp.max_tree_mb,
                        cache_entries=1 << 14, dirichlet_alpha_81=sp.dirichlet_alpha_81,
                        dirichlet_weight=sp.dirichlet_weight,
                        root_policy_temp=sp.root_policy_temp, use_solver=sp.use_solver,
                        rollout_weight=0.0)  # targets from the network's own search


def prune_policy_target(visits, priors, q, c_puct: float) -> np.ndarray:
    """KataGo's policy target pruning. For every child but the most visited, remove up to
    sqrt(2·P·N) visits as long as its PUCT score Q + c·P·√N/(1+n) stays at or below the best
    child's; children left with a single visit are dropped. Returns pruned visits (float)."""
    visits = np.asarray(visits, np.float64).copy()
    priors = np.asarray(priors, np.float64)
    q = np.nan_to_num(np.asarray(q, np.float64), nan=-1.0)
    total = visits.sum()
    if total <= 0 or len(visits) < 2:
        return visits
    b = int(np.argmax(visits))
    sqrt_n = math.sqrt(total)
    best = q[b] + c_puct * priors[b] * sqrt_n / (1.0 + visits[b])
    for i in range(len(visits)):
        if i == b or visits[i] <= 0:
            continue
        gap = best - q[i]
        if gap <= 0:
            continue  # its value alone beats the best's PUCT: every visit was earned
        floor = max(visits[i] - math.sqrt(2.0 * priors[i] * total), 0.0)
        need = c_puct * priors[i] * sqrt_n / gap - 1.0  # fewest visits keeping PUCT <= best
        new = min(visits[i], max(floor, math.ceil(need)))
        visits[i] = 0.0 if new <= 1 else new
    return visits


def play_selfplay_game(searcher, size: int, sp: SelfPlayConfig, rng: np.random.Generator,
                       name: str = "nogobot") -> GameData:
    """One self-play game with ``searcher`` (a ``search.Searcher``); returns its shard data."""
    from ..net.driver import run_search

    return run_search(searcher.evaluator, play_game_steps(searcher, size, sp, rng, name))


def play_game_steps(searcher, size: int, sp: SelfPlayConfig, rng: np.random.Generator,
                    name: str = "nogobot"):
    """``play_selfplay_game`` as a generator: yields the planes of each network batch, expects the
    ``Evaluation`` sent back, returns the ``GameData`` (see ``Searcher.search_steps``)."""
    from ..engine.search import SearchLimits

    game = GameRecorder(size)
    board = Board(size)
    area = size * size
    total_playouts = 0
    while not board.is_terminal():
        full = (not sp.playout_cap_randomisation) or rng.random() < sp.full_search_fraction
        gumbel = full and sp.gumbel
        searcher.config.dirichlet_weight = sp.dirichlet_weight if full and not gumbel else 0.0
        n = sp.playouts if full else sp.fast_playouts
        root = GumbelRoot(n, rng, GumbelSettings(sp.gumbel_m, sp.gumbel_c_visit,
                                                 sp.gumbel_c_scale)) if gumbel else None
        res = yield from searcher.search_steps(board, SearchLimits(playouts=n), root=root)
        total_playouts += res.playouts
        children = [c for c in res.children if c.visits > 0]
        target = np.zeros(area, np.float32)
        w = 0.0
        if root is not None and root.g is not None and not res.reason.startswith("solver"):
            moves, priors, visits, q, proof, net_value = searcher.root_arrays()
            target[moves] = improved_policy(root.logits, visits, q, priors, net_value,
                                            root.settings)
            w = 1.0
            move = int(moves[root.move_index(visits, q, proof)])
        elif children and not res.reason.startswith("solver"):
            visits = np.array([c.visits for c in children], np.float64)
            if sp.policy_target_pruning and full:
                visits = prune_policy_target(visits, [c.prior for c in children],
                                             [c.q for c in children], sp.c_puct)
            for c, v in zip(children, visits):
                target[c.move] = v
            w = 1.0 if full else 0.0
            temp = sp.temperature if board.ply < sp.temperature_moves else 0.0
            move = searcher.pick(board, res, temp)
        else:  # solved position (or nothing searched): the solver's move; a proven win is
            move = res.move  # a sharp target, anything else teaches nothing
            target[move] = 1.0
            w = 1.0 if res.proven == 1 else 0.0
        value = 1.0 if res.proven == 1 else 0.0 if res.proven == -1 else res.winrate
        s = target.sum()
        if s > 0:
            target /= s
        else:
            target[move], w = 1.0, 0.0
        game.record(board, target, w, value, move)
        board.play(move)
    return game.finish(board, name, total_playouts)


# --------------------------------------------------------------------------------------------
# Shards on disk
# --------------------------------------------------------------------------------------------


def shard_npz(game: GameData, extra: dict | None = None) -> bytes:
    """The bytes of a game's .npz shard (its arrays plus ``extra`` scalars), compressed."""
    import io

    buf = io.BytesIO()
    arrays = dict(game.arrays)
    for k, v in (extra or {}).items():
        arrays[k] = np.array(v)
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def write_shard_bytes(stem: Path, sgf_text: str, npz: bytes) -> Path:
    """Write ``stem``.sgf then ``stem``.npz atomically; returns the .npz path. (Ray actors
    send ``shard_npz`` bytes, and the driver writes them here.)"""
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(stem.with_suffix(".sgf"), sgf_text)
    path = stem.with_suffix(".npz")
    write_atomic(path, npz)
    return path


def write_shard(stem: Path, game: GameData, extra: dict | None = None) -> Path:
    """Write ``stem``.sgf then ``stem``.npz atomically; returns the .npz path."""
    return write_shard_bytes(stem, game.sgf_text, shard_npz(game, extra))


@dataclass
class GameJob:
    """What a worker needs to play games: a model, settings and the shard stems to fill."""

    model: str  # ONNX path ("" = uniform evaluator)
    size: int
    selfplay: SelfPlayConfig
    stems: list[str]
    seed: int
    device: str = "cpu"
    threads: int = 1
    checkpoint: str = ""  # torch weights of ``model``: GPU self-play when onnxruntime lacks CUDA


def run_job(job: GameJob, progress=None) -> int:
    """Play one game per stem (skipping stems whose .npz exists); returns games written.

    ``selfplay.concurrent_games`` games are in play at once, and one network call evaluates
    the leaves of all of them (``play_games_batched``); ``torch_eval.self_play_evaluator``
    chooses the evaluator."""
    from .torch_eval import self_play_evaluator  # imports torch only for a torch GPU net

    evaluator = self_play_evaluator(job.model, job.device, job.threads, job.checkpoint)
    name = Path(job.model).stem if job.model else "uniform"
    stems = [Path(s) for s in job.stems if not Path(s).with_suffix(".npz").exists()]

    def finished(stem: Path, game: GameData) -> None:
        write_shard(stem, game, {"model": name, "seed": job.seed})
        if progress is not None:
            progress(game)

    return play_games_batched(evaluator, stems, job.size, job.selfplay, job.seed, name,
                              finished)


def play_games_batched(evaluator, stems: list, size: int, sp: SelfPlayConfig, seed: int,
                       name: str, finished) -> int:
    """Self-play a game for every stem, ``sp.concurrent_games`` at a time in this thread.

    Each game is a ``play_game_steps`` generator with its own ``Searcher`` (tree, cache, rng),
    driven by ``driver.BatchedSearches``: every round, each game in play selects one batch of
    leaves; their planes go to the network in ONE call (up to concurrent_games × batch_size
    positions: what keeps a GPU busy), and each game gets its slice of the result.
    ``finished(stem, game)`` is called as games end; an error in a game is raised. With
    concurrent_games = 1 this is exactly the sequential loop."""
    from ..engine.search import Searcher
    from ..net.driver import BatchedSearches

    slots = max(1, min(sp.concurrent_games, len(stems)))
    searchers = [Searcher(evaluator, size, search_config(sp), seed=seed + 7919 * k)
                 for k in range(slots)]
    rngs = [np.random.default_rng(seed + 7919 * k) for k in range(slots)]
    todo = list(stems)
    driver = BatchedSearches(evaluator)  # each search's tag: (slot, stem)
    done = 0

    def start(slot: int) -> None:
        """Start the next game in ``slot``, running it to its first network batch."""
        while todo:
            stem = todo.pop(0)
            ended = driver.start(play_game_steps(searchers[slot], size, sp, rngs[slot], name),
                                 (slot, stem))
            if ended is None:
                return
            end(ended)  # a game that never needed the network

    def end(game) -> None:
        nonlocal done
        if game.error is not None:
            raise game.error
        finished(game.tag[1], game.result)
        done += 1

    for slot in range(slots):
        start(slot)
    while len(driver):
        for game in driver.step():
            end(game)
            start(game.tag[0])
    return done


def _worker(job: GameJob) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_job(job)


def generate_games(model: str, stems: list, size: int, sp: SelfPlayConfig, seed: int,
                   workers: int = 1, device: str = "cpu", progress=None,
                   checkpoint: str = "") -> int:
    """Fill every missing shard in ``stems`` with a self-play game of ``model``.

    ``progress(n_done_now)`` is called as games finish (from the parent process). Each worker
    gets every ``workers``-th stem and its own seed; killed workers lose only the game in play."""
    stems = [str(s) for s in stems if not Path(s).with_suffix(".npz").exists()]
    if not stems:
        return 0
    workers = max(1, min(workers, len(stems)))
    if workers == 1:
        return run_job(GameJob(model, size, sp, stems, seed, device, checkpoint=checkpoint),
                       progress=(lambda g: progress(1)) if progress else None)
    jobs = [GameJob(model, size, sp, stems[i::workers], seed * 1000 + i, device,
                    checkpoint=checkpoint) for i in range(workers)]
    return run_pool(_worker, jobs, stems, progress)


def run_pool(worker, jobs: list, stems: list, progress=None) -> int:
    """Run ``worker(job)`` for every job in its own ``spawn`` process (each returns the games
    it wrote), calling ``progress(n)`` from this process as the stems' .npz shards appear."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(len(jobs)) as pool:
        result = pool.map_async(worker, jobs)
        seen = 0
        while not result.ready():
            result.wait(0.5)
            now = sum(Path(s).with_suffix(".npz").exists() for s in stems)
            if progress is not None and now > seen:
                progress(now - seen)
            seen = now
        total = sum(result.get())
        if progress is not None and total > seen:
            progress(total - seen)
    return total
