"""Where the games of a training run are played: the self-play backend seam of the loop.

``TrainingRun`` (loop.py) asks its backend for three things and never how they are done:

* ``generate_games(model, stems, size, sp, seed, progress, checkpoint)``: fill every missing
  shard ``<stem>.npz`` with a self-play game of the ONNX net ``model`` (``checkpoint``: its torch
  weights, for GPU self-play without onnxruntime-CUDA); ``progress(n)`` as games finish;
* ``play_gating(candidate, best, games, size, gating, seed, use_solver, progress)``: a match of
  the candidate net against the best, colours alternating (the candidate is black in game 0),
  returned as a ``match.MatchResult`` whose ``outcomes`` are in game order; the loop passes
  ``candidate_playouts`` only for a stage switch at equal compute (``gating.equal_compute``);
* ``playing_net(model)``: the file its workers load for the net ``model`` (the gating's
  equal-compute ratio is measured on it).

``LocalBackend`` (the default) is what one machine always did: worker processes for self-play
(``selfplay.generate_games``) and for gating (``match.play_match``), on CPU workers in each
net's int8 encoding where ``selfplay.int8`` says so (``plays_int8``). ``nogobot.cluster.RayBackend``
plays the same games on Ray actors across a cluster (``nogobot train ... --ray``), in fp32.
"""

from __future__ import annotations

from pathlib import Path

from ..core import machine
from .runfiles import log

# The int8 encoding's calibration and check, smaller than `nogobot train quantize`'s defaults:
# it is made once per net for self-play and gating, where a few seconds matter.
INT8_GAMES = 16
INT8_POSITIONS = 256
INT8_MIN_AGREEMENT = 0.9


def plays_int8(setting: str, device: str) -> bool:
    """Whether this machine's workers play each net's int8 encoding (``selfplay.int8``): never
    off the CPU; "always"; "auto" where the CPU has int8 dot-product instructions."""
    if device != "cpu" or setting == "never":
        return False
    return setting == "always" or machine.int8_dot_product()


def _encodes(int8: Path, src: Path) -> bool:
    """Whether ``int8`` is a complete int8 encoding of the net in ``src`` (its sidecar names
    the source's sha256: a net exported again is quantized again)."""
    from ..net.modelfile import ModelError, read_sidecar

    try:
        source = (read_sidecar(int8).get("quantization") or {}).get("source") or {}
        return int8.is_file() and source.get("sha256") == read_sidecar(src).get("sha256")
    except ModelError:
        return False


class LocalBackend:
    """Self-play and gating in ``workers`` processes on this machine."""

    def __init__(self, workers: int = 1, device: str = "cpu", int8: bool = False):
        self.workers = workers
        self.device = device
        self.int8 = int8
        self._refused: set[str] = set()

    def playing_net(self, model) -> str:
        """``model`` itself, or with ``int8`` its int8 encoding ``NAME-int8.onnx`` beside it
        (quantized at its first use and written atomically, so a killed run reuses it; the
        file's integrity is the workers' ``check_model``'s). A net the quantizer refuses is
        played in fp32, and said once."""
        src = Path(model)
        if not self.int8 or src.suffix != ".onnx" or str(src) in self._refused:
            return str(model)
        out = src.with_name(f"{src.stem}-int8.onnx")
        if not _encodes(out, src):
            from .quantize import QuantizeError, quantize_net

            try:
                side = quantize_net(src, out, games=INT8_GAMES, positions=INT8_POSITIONS,
                                    min_agreement=INT8_MIN_AGREEMENT)
            except QuantizeError as e:
                self._refused.add(str(src))
                log(f"int8: {e}; its games are played in fp32")
                return str(model)
            log(f"int8: {out.name} plays for {src.name} (the same best move in "
                f"{side['quantization']['agreement']['top1']:.1%} of the checked positions)")
        return str(out)

    def generate_games(self, model: str, stems: list, size: int, sp, seed: int, progress=None,
                       checkpoint: str = "") -> int:
        from .selfplay import generate_games

        return generate_games(self.playing_net(model), stems, size, sp, seed,
                              workers=self.workers, device=self.device, progress=progress,
                              checkpoint=checkpoint)

    def play_gating(self, candidate: Path, best: Path, games: int, size: int, gating, seed: int,
                    use_solver: bool, progress=None, candidate_playouts: int | None = None):
        from .match import play_match

        # Gating games spread over the self-play workers, which are idle while it runs (on a
        # GPU machine 60 games took 87 s in one process against 14 s for 112 self-play games).
        return play_match((self.playing_net(candidate), candidate_playouts or gating.playouts),
                          (self.playing_net(best), gating.playouts), games, size, seed,
                          gating.temperature_moves, use_solver, workers=self.workers,
                          progress=progress)

    def close(self) -> None:
        """Nothing to release (worker pools end with each call)."""
