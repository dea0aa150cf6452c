"""Expert-iteration games: the classical ``rave`` agent plays itself and teaches the network.

``nogobot selfplay --player rave`` writes the same game shards as the network's self-play
(``selfplay.py``: one ``gNNNNN.npz`` + ``gNNNNN.sgf`` per game, written atomically, a run
resumable by rerunning it), but every move is a ``rave`` search of ``simulations`` simulations
(tens of thousands, against the network's hundreds of playouts), and its targets are that
search's:

- policy: the root's visit distribution (a proven win: its move, one-hot; a position where every
  move is proven lost, or with a single legal move, is no policy target);
- root value: the root's win rate for the side to move (1 or 0 once proven);
- value, score, ownership and the next moves: the game's outcome, as in self-play.

The first ``temperature_moves`` plies are sampled in proportion to the visits so that games
differ; after that rave plays its own choice. Training reads the shards like any other
(``nogobot train ... --from-games DIR``, or mixed into a replay window), so the network learns
the value that rollouts count and a network trained on 100-200-playout self-play misreads
(issue 19: "the net misreads how many safe points each side keeps").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..agents.rave import RaveAgent
from ..board import Board
from .selfplay import GameData, GameRecorder, run_pool, write_shard

TEACHER = "rave"


@dataclass
class TeacherJob:
    """One worker's share: the shard stems to fill, their board size and the search's size."""

    stems: list[str]
    size: int
    simulations: int
    seed: int
    temperature_moves: int = 8


def search_targets(agent: RaveAgent, move: int, area: int) -> tuple[np.ndarray, float, float]:
    """(policy target, its weight, root value) of the search that just chose ``move``."""
    result = agent.last_result
    target = np.zeros(area, np.float32)
    if result.reason == "win-at-once":
        target[move] = 1.0
        return target, 1.0, 1.0
    if result.reason == "only-move":
        target[move] = 1.0
        return target, 0.0, float(result.winrate)
    moves, visits, wins, proven_win, proven_loss = agent.root_statistics()
    if proven_win.any():
        target[move] = 1.0
        return target, 1.0, 1.0
    if proven_loss.all():
        target[move] = 1.0
        return target, 0.0, 0.0
    keep = ~proven_loss  # a proven loss is never the move to learn, whatever its visits
    target[moves[keep]] = visits[keep]
    total = float(target.sum())
    if total <= 0:
        target[move] = 1.0
        return target, 0.0, float(result.winrate)
    return target / total, 1.0, float(result.winrate)


def play_teacher_game(agent: RaveAgent, size: int, rng: np.random.Generator,
                      temperature_moves: int = 8) -> GameData:
    """One game of ``agent`` against itself; returns its shard data (``selfplay``'s format)."""
    agent.forget()
    game = GameRecorder(size)
    board = Board(size)
    area = size * size
    simulations = 0
    while not board.is_terminal():
        move = int(agent.select_move(board))
        simulations += agent.last_result.simulations
        target, w, value = search_targets(agent, move, area)
        if board.ply < temperature_moves and w > 0 and value < 1.0:
            move = int(rng.choice(area, p=target / target.sum()))
        game.record(board, target, w, value, move)
        board.play(move)
    return game.finish(board, TEACHER, simulations)


def run_teacher_job(job: TeacherJob, progress=None) -> int:
    """Play one game per stem whose .npz is missing; returns the games written."""
    # No endgame solver: its answers carry no search, and the targets are the search's.
    agent = RaveAgent(playouts=job.simulations, seed=job.seed, solver=False)
    rng = np.random.default_rng(job.seed)
    written = 0
    for stem in map(Path, job.stems):
        if stem.with_suffix(".npz").exists():
            continue
        game = play_teacher_game(agent, job.size, rng, job.temperature_moves)
        write_shard(stem, game, {"model": TEACHER, "seed": job.seed,
                                 "simulations": job.simulations})
        written += 1
        if progress is not None:
            progress(1)
    return written


def _worker(job: TeacherJob) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_teacher_job(job)


def generate_teacher_games(stems: list, size: int, simulations: int, seed: int,
                           workers: int = 1, temperature_moves: int = 8,
                           progress=None) -> int:
    """Fill every missing shard in ``stems`` with a rave self-play game (``workers``
    processes, each with every ``workers``-th stem and its own seed); returns games written."""
    stems = [str(s) for s in stems if not Path(s).with_suffix(".npz").exists()]
    if not stems:
        return 0
    workers = max(1, min(workers, len(stems)))
    jobs = [TeacherJob(stems[i::workers], size, simulations, seed * 1000 + i, temperature_moves)
            for i in range(workers)]
    if workers == 1:
        return run_teacher_job(jobs[0], progress)
    return run_pool(_worker, jobs, stems, progress)
