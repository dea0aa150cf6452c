"""Checkpoint -> ONNX model + YAML sidecar, checked against torch before anything is written.

``nogobot export CHECKPOINT -o models/NAME.onnx`` calls ``export_checkpoint``:

1. rebuild the net from the config embedded in the checkpoint (eval mode);
2. export ``ExportNet`` with the classic TorchScript exporter (``dynamo=False``: it needs only
   torch and onnx, not onnxscript) at opset 17, dynamic batch, height and width;
3. run onnxruntime (CPU) and torch on positions from random games of sizes 7, 9 and 13 and
   refuse (``ExportError``, nothing written) if any output differs by more than ``tol``;
4. write NAME.onnx and NAME.yaml atomically (``modelfile.write_model``; the sidecar records
   the sha256 of the .onnx so the engine detects a truncated or swapped file).
"""

from __future__ import annotations

import datetime
import hashlib
import io
import warnings
from pathlib import Path

import numpy as np
import torch

from .. import __version__
from ..game.board import Board
from ..net.features import FEATURE_VERSION, NUM_PLANES, boards_planes
from ..net.inference import SIDECAR_FORMAT_VERSION
from ..net.modelfile import write_model
from .model import EXPORT_OUTPUTS, ExportNet, NogoNet, load_checkpoint

OPSET = 17
PARITY_SIZES = (7, 9, 13)
PARITY_TOL = 1e-4


class ExportError(RuntimeError):
    """The exported model does not match torch (or cannot be exported); nothing was written."""


def random_positions(size: int, count: int, rng: np.random.Generator) -> list[Board]:
    """``count`` positions from random games played with the rules (never terminal ones)."""
    out = []
    while len(out) < count:
        b = Board(size)
        target = int(rng.integers(0, size * size * 2 // 3 + 1))
        while b.ply < target:
            moves = b.legal_moves()
            if len(moves) == 0:
                break
            b.play(int(rng.choice(moves)))
        if not b.is_terminal():
            out.append(b)
    return out


def onnx_bytes(net: NogoNet, opset: int = OPSET, metadata: dict | None = None) -> bytes:
    """Serialise the exported contract of ``net`` (eval mode) to ONNX bytes."""
    net = net.eval()
    wrapper = ExportNet(net).eval()
    dummy = torch.zeros(2, net.cfg.input_planes, 9, 9)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter announces its own deprecation
        torch.onnx.export(
            wrapper, (dummy,), buf, dynamo=False, opset_version=opset,
            input_names=["planes"], output_names=list(EXPORT_OUTPUTS),
            dynamic_axes={
                "planes": {0: "B", 2: "H", 3: "W"},
                "policy": {0: "B", 1: "HW"},
                "value": {0: "B"},
                "dominion": {0: "B", 1: "H", 2: "W"},
                "score": {0: "B"},
            },
            do_constant_folding=True,
        )
    data = buf.getvalue()
    import onnx  # part of the train extra

    model = onnx.load_from_string(data)
    onnx.checker.check_model(model)
    for k, v in (metadata or {}).items():
        prop = model.metadata_props.add()
        prop.key, prop.value = str(k), str(v)
    model.doc_string = "nogobot NoGo network; see the YAML sidecar"
    return model.SerializeToString()


def parity_check(net: NogoNet, data: bytes, sizes=PARITY_SIZES, per_size: int = 6,
                 tol: float = PARITY_TOL, seed: int = 0) -> float:
    """Max |onnxruntime - torch| over all outputs on random legal positions; raises ExportError
    when above ``tol``."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    wrapper = ExportNet(net.eval()).eval()
    rng = np.random.default_rng(seed)
    worst = 0.0
    for size in sizes:
        planes = boards_planes(random_positions(size, per_size, rng))
        with torch.no_grad():
            ref = [t.numpy() for t in wrapper(torch.from_numpy(planes))]
        got = sess.run(list(EXPORT_OUTPUTS), {"planes": planes})
        for name, a, b in zip(EXPORT_OUTPUTS, ref, got):
            if a.shape != b.shape:
                raise ExportError(f"output {name} on {size}x{size}: onnxruntime shape {b.shape}, "
                                  f"torch {a.shape}")
            diff = float(np.max(np.abs(a - b)))
            if not diff <= tol:  # also catches NaN
                raise ExportError(f"output {name} on {size}x{size} differs from torch by {diff:.3g}"
                                  f" (> {tol:g}); refusing to write the model")
            worst = max(worst, diff)
    return worst


def sidecar(net: NogoNet, name: str, data: bytes, training: dict, parity: float,
            sizes, strength=None) -> dict:
    """The YAML sidecar describing an exported model (what the engine checks on load)."""
    cfg = net.cfg
    return {
        "format_version": SIDECAR_FORMAT_VERSION,
        "name": name,
        "feature_version": cfg.feature_version,
        "planes": cfg.input_planes,
        "blocks": cfg.blocks,
        "channels": cfg.channels,
        "garb": cfg.garb,
        "liberty_features": cfg.liberty_features,
        "net_config": {k: v for k, v in cfg.__dict__.items()},
        "parameters": int(sum(p.numel() for p in net.parameters())),
        "inputs": {"planes": "float32 [B, C, H, W]"},
        "outputs": {
            "policy": "float32 [B, H*W] logits (illegal moves not masked)",
            "value": "float32 [B] win probability for the side to move",
            "dominion": "float32 [B, H, W] in [-1, 1], +1 = side to move owns the point",
            "score": "float32 [B] expected final margin in [-5, 5] for the side to move",
        },
        "board_sizes_trained": list(training.get("board_sizes", [])),
        "training": training,
        "strength": strength,
        "export": {
            "opset": OPSET,
            "parity_sizes": list(sizes),
            "parity_max_abs_diff": float(parity),
            "nogobot_version": __version__,
            "torch_version": str(torch.__version__),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        },
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _plain(x):
    """YAML-safe copy: numpy scalars/arrays, tuples and str subclasses to plain Python."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, str):
        return str(x)
    return x


def export_net(net: NogoNet, out, training: dict | None = None, sizes=PARITY_SIZES,
               tol: float = PARITY_TOL, strength=None) -> dict:
    """Export ``net`` to ``out`` (.onnx) + sidecar (.yaml) after the parity check; returns the
    sidecar dict. Nothing is written when the check fails."""
    out = Path(out)
    if out.suffix != ".onnx":
        raise ExportError(f"{out}: the output file must end in .onnx")
    if net.cfg.feature_version != FEATURE_VERSION or net.cfg.input_planes != NUM_PLANES:
        raise ExportError("the net's feature version / planes differ from nogobot.net.features")
    training = dict(training or {})
    data = onnx_bytes(net, metadata={"feature_version": net.cfg.feature_version,
                                     "planes": net.cfg.input_planes, "name": out.stem})
    parity = parity_check(net, data, sizes=sizes, tol=tol)
    meta = sidecar(net, out.stem, data, training, parity, sizes, strength)
    meta = _plain(meta)
    write_model(out, data, meta)
    return meta


def export_checkpoint(checkpoint, out, sizes=PARITY_SIZES, tol: float = PARITY_TOL,
                      strength=None) -> dict:
    """Load a checkpoint (config embedded) and export it; see ``export_net``."""
    try:
        net, state = load_checkpoint(checkpoint)
    except ValueError as e:
        raise ExportError(str(e)) from None
    return export_net(net, out, training=state.get("training", {}), sizes=sizes, tol=tol,
                      strength=strength)
