"""int8 nets for the CPU (``nogobot train quantize``): an exported net with its residual tower's
convolutions in int8 (onnxruntime's static quantization, QDQ format), written with its sidecar.

What is quantized, and why: only the convolutions inside the tower (the exporter's
``/blocks.N/`` nodes). The first convolution reads 0/1 planes and the heads end in the policy
logits and the value, and int8 there costs most of the agreement with the fp32 net; the adds,
pooling and fully connected layers stay fp32 (they cost little). Weights are per channel,
activations asymmetric, each range the 99.99th percentile of what it takes on calibration
positions. On a CPU with int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI) this runs about
twice the evaluations a second of fp32 in one thread; without them, much less (docs/results.md).

The positions come from games the net plays against itself by sampling its own policy, so the
command needs nothing but the net. Whole games are kept apart: the first half of the games
calibrates, the second half checks the result, and the sidecar's ``quantization`` section
records how often the int8 net's best legal move is the fp32 net's on those positions, with the
mean policy distance and the value's difference. A net below ``min_agreement`` is refused.
It is a net for play on the CPU, not a training checkpoint."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import logging
import tempfile
from pathlib import Path

import numpy as np

from .. import __version__
from ..game.board import Board
from ..net.features import boards_planes
from ..net.inference import priors
from ..net.modelfile import ModelError, check_model, write_model

TOWER_PREFIX = "/blocks."
PERCENTILE = 99.99
CALIBRATION_BATCH = 16


class QuantizeError(ValueError):
    """The net cannot be quantized (one line: the file and the problem)."""


def policy_games(evaluator, size: int, games: int, seed: int) -> list[list[Board]]:
    """The positions of ``games`` games the net plays by sampling its own policy (legal moves
    only), one list per game, from the empty board to the last position with a legal move."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        board, positions = Board(size), []
        while not board.is_terminal():
            positions.append(board.copy())
            legal = board.legal_moves()
            logits = evaluator.evaluate_boards([board]).policy_logits[0][legal]
            p = np.exp(logits - logits.max())
            board.play(int(rng.choice(legal, p=p / p.sum())))
        out.append(positions)
    return out


def _spread(games: list[list[Board]], count: int, rng) -> list[Board]:
    boards = [b for g in games for b in g]
    pick = rng.choice(len(boards), size=min(count, len(boards)), replace=False)
    return [boards[i] for i in sorted(pick)]


def agreement(fp32, int8, boards: list[Board]) -> dict:
    """How the int8 session's answers compare with the fp32 session's on ``boards``: the share
    whose best legal move is the same, the mean total-variation distance of the policies over
    legal moves, and the value's mean and largest absolute difference."""
    x = boards_planes(boards)
    pf, vf = fp32.run(["policy", "value"], {"planes": x})
    pq, vq = int8.run(["policy", "value"], {"planes": x})
    legal = np.stack([b.legal[b.to_move] != 0 for b in boards])
    pa, pb = priors(pf.reshape(legal.shape), legal), priors(pq.reshape(legal.shape), legal)
    same = int((pa.argmax(axis=1) == pb.argmax(axis=1)).sum())
    tv = 0.5 * np.abs(pa - pb).sum(axis=1)
    dv = np.abs(np.asarray(vf, np.float64).reshape(-1) - np.asarray(vq, np.float64).reshape(-1))
    return {"positions": len(boards), "top1": round(same / len(boards), 4),
            "policy_tv_mean": round(float(np.mean(tv)), 4),
            "value_diff_mean": round(float(dv.mean()), 4),
            "value_diff_max": round(float(dv.max()), 4)}


class _Reader:
    """onnxruntime's calibration data reader over a fixed array of planes."""

    def __init__(self, planes: np.ndarray):
        self._batches = iter([{"planes": planes[i:i + CALIBRATION_BATCH]}
                              for i in range(0, len(planes), CALIBRATION_BATCH)])

    def get_next(self):
        return next(self._batches, None)

    def rewind(self):  # onnxruntime may call it; one pass is all the percentile method needs
        pass


def _quiet():
    """onnxruntime's quantizer prints progress and advice on stdout and the root logger."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    stack.callback(root.setLevel, level)
    return stack


def quantize_net(src, out, games: int = 64, positions: int = 512, seed: int = 0,
                 min_agreement: float = 0.9) -> dict:
    """Write ``src``'s int8 net to ``out`` (.onnx + sidecar, ``modelfile.write_model``) and
    return the sidecar; ``games`` self-play games by the net's policy, half to calibrate and
    half to check, ``positions`` positions from each half."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    from ..net.inference import OnnxEvaluator

    src, out = Path(src), Path(out)
    if out.suffix != ".onnx":
        raise QuantizeError(f"{out}: the output file must end in .onnx")
    if out.resolve() == src.resolve():
        raise QuantizeError(f"{out}: the output would overwrite the source net")
    if games < 2 or positions < 1:
        raise QuantizeError("quantizing needs at least two games and one position")
    try:
        meta, data = check_model(src)
    except ModelError as e:
        raise QuantizeError(str(e)) from None
    if meta.get("quantization"):
        raise QuantizeError(f"{src}: already quantized")
    tower = [n.name for n in onnx.load_from_string(data).graph.node
             if n.op_type == "Conv" and n.name.startswith(TOWER_PREFIX)]
    if not tower:
        raise QuantizeError(f"{src}: no tower convolutions ({TOWER_PREFIX}N/...) to quantize; "
                            "only nets exported by `nogobot export` are supported")
    size = int((meta.get("board_sizes_trained") or [9])[0])
    evaluator = OnnxEvaluator(src, device="cpu", threads=1, warmup_size=size)
    played = policy_games(evaluator, size, games, seed)
    rng = np.random.default_rng(seed)
    half = len(played) // 2
    calibration = _spread(played[:half], positions, rng)
    check = _spread(played[half:], positions, rng)

    with tempfile.TemporaryDirectory(prefix="nogobot-quantize-") as tmp:
        fp32_path, int8_path = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        fp32_path.write_bytes(data)
        try:
            with _quiet():
                quantize_static(str(fp32_path), str(int8_path),
                                _Reader(boards_planes(calibration)),
                                quant_format=QuantFormat.QDQ, per_channel=True,
                                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                                op_types_to_quantize=["Conv"], nodes_to_quantize=tower,
                                calibrate_method=CalibrationMethod.Percentile,
                                extra_options={"CalibPercentile": PERCENTILE})
        except Exception as e:  # onnxruntime's quantizer raises its own and generic types
            raise QuantizeError(f"{src}: onnxruntime could not quantize it "
                                f"({type(e).__name__}: {str(e).strip()[:200]})") from None
        model = onnx.load(str(int8_path))
    for prop in model.metadata_props:
        if prop.key == "name":
            prop.value = out.stem
    qdata = model.SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    int8 = ort.InferenceSession(qdata, so, providers=["CPUExecutionProvider"])
    agreed = agreement(evaluator.session, int8, check)
    if agreed["top1"] < min_agreement:
        raise QuantizeError(f"{src}: the int8 net's best move agrees with the fp32 net's in "
                            f"only {agreed['top1']:.1%} of {agreed['positions']} positions "
                            f"(at least {min_agreement:.0%} wanted); not written")
    side = {k: v for k, v in meta.items() if k not in ("strength", "export", "sha256")}
    side.update(
        name=out.stem, strength=None,
        quantization={
            "method": f"onnxruntime {ort.__version__} static int8, QDQ: the {len(tower)} tower "
                      "convolutions (per-channel int8 weights, uint8 activations, percentile "
                      f"{PERCENTILE} ranges); the first convolution, the heads, adds, pooling "
                      "and fully connected layers fp32",
            "source": {"name": meta.get("name", src.stem), "sha256": meta.get("sha256")},
            "calibration": {"games": half, "positions": len(calibration), "seed": seed,
                            "from": "games the net played by sampling its own policy"},
            "agreement": {"games": len(played) - half, **agreed}},
        export={"quantized_by": f"nogobot {__version__} (nogobot train quantize)",
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")},
        sha256=hashlib.sha256(qdata).hexdigest())
    write_model(out, qdata, side)
    return side
