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
(``nogobot train ... --from-games DIR``, or a campaign's ``replay.extra_games``), so the network
learns the value that rollouts count and a network trained on 100-200-playout self-play misreads
(how many safe points each side keeps).

Late positions (``late_positions``): instead of the empty board, each game may start from a
position of a recorded game (tournament SGFs) with a given number of empty points, by default
from games a named player lost, and rave plays it out from there. The shard holds the positions
from the start on (its SGF the whole game, the recorded moves first). That aims the teacher at
the late middle game, where the network's value misreads the games it loses (docs/training.md,
"Value calibration").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..agents.rave import RaveAgent
from ..game import sgf
from ..game.board import BLACK, Board
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
    starts: list | None = None  # per stem: a StartPosition to play from (None: the empty board)


@dataclass(frozen=True)
class StartPosition:
    """A teacher game's first position: ``moves`` (colour, point) played from the empty board,
    taken from ``source`` (a record's name)."""

    source: str
    moves: tuple

    def board(self, size: int) -> Board:
        return sgf.GameRecord(size=size, moves=list(self.moves)).board()


def late_positions(paths, size: int, empty: tuple[int, int], lost_by=(), count: int = 1,
                   seed: int = 0) -> list[StartPosition]:
    """Start positions from the SGF records behind ``paths`` (files, collections such as a
    results folder's ``games.sgf``, or folders of them): from each game, ``count`` positions
    drawn at random among those with ``empty[0]``-``empty[1]`` empty points. With ``lost_by``
    (names as in SGF PB/PW), only games that one of them lost, and only positions with the
    loser to move: the value the loser's net read there was wrong.

    Records with set-up stones are left out (a start is a move list from the empty board)."""
    from .calibration import Skipped, record_files, record_winner, sgf_records

    lo, hi = empty
    rng = np.random.default_rng(seed)
    skipped = Skipped()
    out = []
    area = size * size
    for path in record_files(paths):
        if path.suffix != ".sgf":
            continue
        for name, rec in sgf_records(path, size, skipped):
            if rec.setup:
                continue
            winner = record_winner(rec, rec.board())
            if winner is None:
                continue
            loser = rec.white if winner == BLACK else rec.black
            if lost_by and loser not in lost_by:
                continue
            plies = [k for k, (colour, _) in enumerate(rec.moves)
                     if lo <= area - k <= hi and (not lost_by or colour != winner)]
            for k in rng.permutation(plies)[:count]:
                out.append(StartPosition(name, tuple(rec.moves[:int(k)])))
    return out


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
                      temperature_moves: int = 8, start: StartPosition | None = None) -> GameData:
    """One game of ``agent`` against itself, from the empty board or from ``start`` (its first
    ``temperature_moves`` plies from there sampled); returns its shard data (``selfplay``'s
    format: the positions from the start on)."""
    agent.forget()
    game = GameRecorder(size)
    board = Board(size) if start is None else start.board(size)
    first = board.ply
    area = size * size
    simulations = 0
    while not board.is_terminal():
        move = int(agent.select_move(board))
        simulations += agent.last_result.simulations
        target, w, value = search_targets(agent, move, area)
        if board.ply - first < temperature_moves and w > 0 and value < 1.0:
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
    starts = job.starts or [None] * len(job.stems)
    for stem, start in zip(map(Path, job.stems), starts):
        if stem.with_suffix(".npz").exists():
            continue
        game = play_teacher_game(agent, job.size, rng, job.temperature_moves, start)
        extra = {"model": TEACHER, "seed": job.seed, "simulations": job.simulations}
        if start is not None:
            extra.update(start_source=start.source, start_ply=len(start.moves))
        write_shard(stem, game, extra)
        written += 1
        if progress is not None:
            progress(1)
    return written


def _worker(job: TeacherJob) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_teacher_job(job)


def generate_teacher_games(stems: list, size: int, simulations: int, seed: int,
                           workers: int = 1, temperature_moves: int = 8,
                           progress=None, starts: list | None = None) -> int:
    """Fill every missing shard in ``stems`` with a rave self-play game (``workers``
    processes, each with every ``workers``-th stem and its own seed); returns games written.
    ``starts``: a StartPosition per stem (in step with ``stems``) to play from."""
    pairs = [(str(s), p) for s, p in zip(stems, starts or [None] * len(stems))
             if not Path(s).with_suffix(".npz").exists()]
    if not pairs:
        return 0
    workers = max(1, min(workers, len(pairs)))
    jobs = [TeacherJob([s for s, _ in pairs[i::workers]], size, simulations, seed * 1000 + i,
                       temperature_moves, [p for _, p in pairs[i::workers]])
            for i in range(workers)]
    stems = [s for s, _ in pairs]
    if workers == 1:
        return run_teacher_job(jobs[0], progress)
    return run_pool(_worker, jobs, stems, progress)
