"""Where the games of a training run are played: the self-play backend seam of the loop.

``TrainingRun`` (loop.py) asks its backend for two things and never how they are done:

* ``generate_games(model, stems, size, sp, seed, progress, checkpoint)``: fill every missing
  shard ``<stem>.npz`` with a self-play game of the ONNX net ``model`` (``checkpoint``: its torch
  weights, for GPU self-play without onnxruntime-CUDA); ``progress(n)`` as games finish;
* ``play_gating(candidate, best, games, size, gating, seed, use_solver, progress)``: a match of
  the candidate net against the best, colours alternating (the candidate is black in game 0),
  returned as a ``match.MatchResult`` whose ``outcomes`` are in game order; the loop passes
  ``candidate_playouts`` only for a stage switch at equal compute (``gating.equal_compute``).

``LocalBackend`` (the default) is what one machine always did: worker processes for self-play
(``selfplay.generate_games``) and for gating (``match.play_match``). ``nogobot.cluster.RayBackend`` plays the
same games on Ray actors across a cluster (``nogobot train ... --ray``).
"""

from __future__ import annotations

from pathlib import Path


class LocalBackend:
    """Self-play and gating in ``workers`` processes on this machine."""

    def __init__(self, workers: int = 1, device: str = "cpu"):
        self.workers = workers
        self.device = device

    def generate_games(self, model: str, stems: list, size: int, sp, seed: int, progress=None,
                       checkpoint: str = "") -> int:
        from .selfplay import generate_games

        return generate_games(model, stems, size, sp, seed, workers=self.workers,
                              device=self.device, progress=progress, checkpoint=checkpoint)

    def play_gating(self, candidate: Path, best: Path, games: int, size: int, gating, seed: int,
                    use_solver: bool, progress=None, candidate_playouts: int | None = None):
        from .match import play_match

        # Gating games spread over the self-play workers, which are idle while it runs (on a
        # GPU machine 60 games took 87 s in one process against 14 s for 112 self-play games).
        return play_match((str(candidate), candidate_playouts or gating.playouts),
                          (str(best), gating.playouts), games, size, seed,
                          gating.temperature_moves, use_solver, workers=self.workers,
                          progress=progress)

    def close(self) -> None:
        """Nothing to release (worker pools end with each call)."""
