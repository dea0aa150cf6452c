"""Self-play's evaluator: the one factory that chooses it (``self_play_evaluator``) and the torch
evaluator for CUDA machines whose onnxruntime has none (``TorchEvaluator``).

The engine always runs ONNX with onnxruntime; training may also use torch for self-play
inference. ``onnxruntime-gpu`` often installs without usable CUDA libraries (the
wheel and the system's CUDA/cuDNN must match), while torch's CUDA wheels bring their own. Then
self-play would silently run on the CPU. ``TorchEvaluator`` runs the same exported graph
(``model.ExportNet``) from the torch checkpoint of the best net instead, and checks at load time
that it agrees with the ONNX file self-play was asked to use (on fresh legal positions, CPU
onnxruntime as the reference), so a stale checkpoint can never stand in for another net.

torch is imported only when a GPU is wanted and onnxruntime cannot provide it: CPU self-play
workers import this module without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..net.inference import Evaluation, Evaluator, OnnxEvaluator, UniformEvaluator, check_planes

PARITY_TOLERANCE = 2e-3  # float32 GPU kernels (TF32 off) against CPU onnxruntime
GPU_PROVIDERS = {"CUDAExecutionProvider", "TensorrtExecutionProvider"}


def self_play_evaluator(model: str, device: str = "cpu", threads: int = 1,
                        checkpoint: str = "") -> Evaluator:
    """The evaluator a self-play worker uses for ``model`` (an .onnx path), decided here once:

    * no model (``""``): the uniform evaluator (the first generation);
    * ``device="cpu"``: onnxruntime on the CPU with ``threads`` threads;
    * a GPU wanted: onnxruntime on CUDA/TensorRT when it has them; else torch on CUDA from
      ``checkpoint`` (the same net's weights) when torch sees a GPU and the checkpoint's
      outputs match the ONNX file's; else onnxruntime on the CPU (``device="auto"``)."""
    if not model:
        return UniformEvaluator()
    if device == "cpu":
        return OnnxEvaluator(model, device="cpu", threads=threads)
    import onnxruntime as ort

    if GPU_PROVIDERS & set(ort.get_available_providers()):
        return OnnxEvaluator(model, device="auto", threads=threads)
    if checkpoint and Path(checkpoint).is_file():
        import torch

        if torch.cuda.is_available():
            try:
                return TorchEvaluator(checkpoint, "cuda", onnx_reference=model)
            except ValueError as e:
                print(f"nogobot: self-play on the CPU: {e}", file=sys.stderr)
    return OnnxEvaluator(model, device="auto", threads=threads)


class TorchEvaluator(Evaluator):
    """``evaluate(planes)`` with a torch checkpoint on ``device`` (the ExportNet outputs)."""

    name = "torch"

    def __init__(self, checkpoint, device: str = "cuda", onnx_reference=None):
        import torch

        from .model import ExportNet, load_checkpoint

        self.path = Path(checkpoint)
        net, _ = load_checkpoint(self.path)
        self.device = torch.device(device)
        self.net = ExportNet(net).to(self.device).eval()
        self.provider = f"torch {self.device}"
        if self.device.type == "cuda":  # exact float32, so parity holds
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        if onnx_reference is not None:
            self.check_against(onnx_reference)

    def evaluate(self, planes: np.ndarray) -> Evaluation:
        import torch

        x = torch.from_numpy(check_planes(planes)).to(self.device, non_blocking=True)
        with torch.inference_mode():
            out = self.net(x)
        return Evaluation(*(t.float().cpu().numpy() for t in out))

    def check_against(self, onnx_path, size: int = 9, positions: int = 8) -> float:
        """Largest output difference to ``onnx_path`` on random legal positions; raises
        ValueError naming both files when they are not the same net."""
        from ..net.features import boards_planes
        from .export import random_positions

        planes = boards_planes(random_positions(size, positions, np.random.default_rng(0)))
        ref = OnnxEvaluator(onnx_path, device="cpu", threads=1).evaluate(planes)
        got = self.evaluate(planes)
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(ref, got))
        if worst > PARITY_TOLERANCE:
            raise ValueError(f"{self.path} does not hold the net of {onnx_path} (outputs differ "
                             f"by {worst:.3g})")
        return worst
