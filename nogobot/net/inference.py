"""Network inference for the engine: the ``Evaluator`` interface and its implementations (the
driver that feeds searches to them is ``driver.py``).

Never imports torch or ``nogobot.train``: the bot runs on numpy + numba + onnxruntime alone.

Contract (docs/engine.md, "The network"): ``evaluate(planes)`` takes float32 [B, C, H, W] planes
from ``nogobot.net.features`` and returns an ``Evaluation``:

* ``policy_logits`` float32 [B, H*W], raw logits, illegal moves NOT masked (use ``priors``);
* ``value``         float32 [B], probability that the side to move wins;
* ``dominion``      float32 [B, H, W] in [-1, 1], +1 = the side to move will own the point;
* ``score``         float32 [B] expected final margin for the side to move, in [-5, 5].

``OnnxEvaluator`` loads NAME.onnx and checks its sidecar NAME.yaml (format version, feature
version, plane count, sha256 of the .onnx); every loading problem raises one ``ModelError`` naming
the file. The checks of the files themselves are ``modelfile.check_model`` (no numpy, numba or
onnxruntime: the commands run it at start-up, before they speak their protocol).

Device choice (``device=``):

* ``"cpu"``: CPU provider with ORT_ENABLE_ALL, intra-op threads = ``threads`` (default: all
  cores), inter-op 1, sequential execution, spinning off unless ``spin`` (search threads share
  the cores). Exact batch shapes (batching does not raise CPU throughput).
* ``"cuda"``: CUDA provider (+ fp16 by converting the graph, when ``onnx`` is installed), IOBinding
  and batches padded up to fixed ``batch_sizes`` so cuDNN algorithms are chosen once per shape.
* ``"tensorrt"``: TensorRT provider (fp16 flag, engine cache beside the model), CUDA, then CPU.
* ``"auto"`` (default): CUDA when onnxruntime can actually create it, else CPU, silently.

``load_evaluator(None)``, the engine's default, loads the default net, or its int8 encoding
where the network runs on a CPU with int8 dot-product instructions (x86 VNNI or AMX: about twice
the evaluations a second in one thread); a named file is always loaded as given.

When ``"cuda"`` or ``"tensorrt"`` is asked for but cannot be used (onnxruntime-gpu on a machine
without a GPU or without the CUDA libraries), the evaluator warns once on stderr
(``ProviderFallbackWarning``) and runs on the CPU: a tournament engine keeps playing. The
CUDA libraries of pip's nvidia packages are preloaded first (``_preload_gpu_libraries``).

Searches never call the network themselves: a search is a generator that yields the input planes
of its next batch of leaves and is sent their ``Evaluation`` (``driver.py``).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from .features import FEATURE_VERSION, NUM_PLANES, boards_planes
from .modelfile import (
    DEFAULT_MODEL_NAME,
    KNOWN_SIDECAR_FORMATS,
    OUTPUT_NAMES,
    SIDECAR_FORMAT_VERSION,
    ModelError,
    check_model,
    default_engine_models,
    default_model_path,
    onnx_io,
    read_sidecar,
    sidecar_path,
)

DEVICES = ("auto", "cpu", "cuda", "tensorrt")
GPU_BATCH_SIZES = (1, 8, 16, 32, 64, 128, 256)


class ProviderFallbackWarning(UserWarning):
    """The requested GPU provider could not be used; running on the CPU instead."""


class Evaluation(NamedTuple):
    policy_logits: np.ndarray  # [B, H*W]
    value: np.ndarray  # [B] win probability of the side to move
    dominion: np.ndarray  # [B, H, W] in [-1, 1]
    score: np.ndarray  # [B] in [-5, 5]

    def slice(self, start: int, stop: int) -> "Evaluation":
        """Rows start..stop of every output (one game's share of a shared batch)."""
        return Evaluation(*(a[start:stop] for a in self))


def priors(policy_logits: np.ndarray, legal_mask: np.ndarray) -> np.ndarray:
    """Softmax of the logits over legal points only ([P] or [B, P]); rows with no legal point
    are all zero."""
    logits = np.asarray(policy_logits, dtype=np.float32)
    mask = np.asarray(legal_mask, dtype=bool)
    if mask.shape != logits.shape:
        raise ValueError(f"legal mask shape {mask.shape} != logits shape {logits.shape}")
    masked = np.where(mask, logits, -np.inf)
    top = np.max(masked, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(mask, np.exp(masked - top), 0.0).astype(np.float32)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def check_planes(planes) -> np.ndarray:
    """``planes`` as contiguous float32 [B, NUM_PLANES, H, W]; ValueError for any other shape."""
    x = np.ascontiguousarray(planes, dtype=np.float32)
    if x.ndim != 4 or x.shape[1] != NUM_PLANES:
        raise ValueError(f"planes must be float32 [B, {NUM_PLANES}, H, W], got shape {x.shape}")
    return x


class Evaluator:
    """Base class: ``evaluate(planes) -> Evaluation``; see the module docstring for shapes."""

    name = "evaluator"
    provider = "none"
    path: Path | None = None  # the model file, for evaluators that load one
    threads = 0  # CPU threads of the network's session (0: not a CPU session)
    on_gpu = False
    int8 = False  # an int8 encoding of a net (its sidecar has a ``quantization`` section)

    def evaluate(self, planes: np.ndarray) -> Evaluation:
        raise NotImplementedError

    def evaluate_boards(self, boards) -> Evaluation:
        """Evaluate ``Board`` objects of one size (convenience; the search fills planes itself)."""
        return self.evaluate(boards_planes(boards))

    def describe(self) -> str:
        return f"{self.name} ({self.provider})"


class UniformEvaluator(Evaluator):
    """No network: uniform policy, value 0.5, zero dominion and score (tests, no-model fallback)."""

    name = "uniform"
    provider = "numpy"

    def evaluate(self, planes: np.ndarray) -> Evaluation:
        x = check_planes(planes)
        b, _, h, w = x.shape
        return Evaluation(np.zeros((b, h * w), np.float32), np.full(b, 0.5, np.float32),
                          np.zeros((b, h, w), np.float32), np.zeros(b, np.float32))


# --------------------------------------------------------------------------------------------
# Model files
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_provider_probe():
    """onnxruntime prints EP fallback notices on stdout (which would corrupt GTP) and logs
    library-load errors while probing GPU providers; send the first to stderr, mute the second."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        ort.set_default_logger_severity(2)


_gpu_library_notes: str | None = None


def _preload_gpu_libraries(ort) -> str:
    """Load the CUDA/cuDNN libraries of pip's nvidia packages (``onnxruntime-gpu[cuda,cudnn]``)
    before a GPU session is made, as onnxruntime's ``preload_dlls`` does: without it the CUDA
    provider finds them only on LD_LIBRARY_PATH. Once per process; what it reports (the libraries
    it could not load) is kept for the fallback warning, never printed."""
    global _gpu_library_notes
    if _gpu_library_notes is None:
        out = io.StringIO()
        preload = getattr(ort, "preload_dlls", None)
        if preload is not None:
            with contextlib.redirect_stdout(out):
                try:
                    preload()
                except Exception as e:  # a broken CUDA install must not stop a CPU fallback
                    print(f"Failed to preload: {type(e).__name__}: {e}")
        _gpu_library_notes = " ".join(
            line.strip() for line in out.getvalue().splitlines() if line.startswith("Failed"))
    return _gpu_library_notes


class OnnxEvaluator(Evaluator):
    """onnxruntime session on a nogobot ONNX model (see the module docstring)."""

    def __init__(self, path, device: str = "auto", threads: int | None = None,
                 fp16: bool = False, batch_sizes: Sequence[int] | None = None,
                 spin: bool = False, iobinding: bool | None = None, warmup_size: int = 9):
        import onnxruntime as ort

        if device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, not {device!r}")
        self.path = Path(path)
        self.meta, data = check_model(self.path)
        self.name = str(self.meta.get("name", self.path.stem))
        self.int8 = bool(self.meta.get("quantization"))
        self.threads = int(threads) if threads else (os.cpu_count() or 1)
        self.requested_device = device
        self.fp16 = False
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self.session = self._make_session(ort, data, so, device, fp16)
        self.provider = self.session.get_providers()[0]
        self.on_gpu = self.provider != "CPUExecutionProvider"
        self._check_io()
        if batch_sizes is None:
            batch_sizes = GPU_BATCH_SIZES if self.on_gpu else ()
        self.batch_sizes = tuple(sorted({int(b) for b in batch_sizes if int(b) > 0}))
        self.iobinding = self.on_gpu if iobinding is None else bool(iobinding)
        self._device_type = "cuda" if self.on_gpu else "cpu"
        self._pad: dict[tuple, np.ndarray] = {}
        self._warm_up(warmup_size)

    # -- construction -----------------------------------------------------------------------
    def _make_session(self, ort, data: bytes, so, device: str, fp16: bool):
        available = ort.get_available_providers()
        cpu = ["CPUExecutionProvider"]
        cuda_opts = {"cudnn_conv_use_max_workspace": "1", "do_copy_in_default_stream": "1"}
        if device == "cpu":
            providers = cpu
        elif device == "tensorrt":
            cache = self.path.parent / ".trt_cache"
            trt = {"trt_fp16_enable": "True" if fp16 else "False",
                   "trt_engine_cache_enable": "True", "trt_engine_cache_path": str(cache),
                   "trt_profile_min_shapes": f"planes:1x{NUM_PLANES}x5x5",
                   "trt_profile_opt_shapes": f"planes:64x{NUM_PLANES}x9x9",
                   "trt_profile_max_shapes": f"planes:256x{NUM_PLANES}x19x19"}
            providers = [("TensorrtExecutionProvider", trt), ("CUDAExecutionProvider", cuda_opts)]
            providers += cpu
        elif device == "cuda" or "CUDAExecutionProvider" in available:
            providers = [("CUDAExecutionProvider", cuda_opts)] + cpu
        else:
            providers = cpu
        gpu_wanted = providers != cpu
        notes = _preload_gpu_libraries(ort) if gpu_wanted else ""
        if gpu_wanted and fp16 and device != "tensorrt":
            data = self._to_fp16(data)
        try:
            with _quiet_provider_probe() if gpu_wanted else contextlib.nullcontext():
                sess = ort.InferenceSession(data, so, providers=providers)
        except Exception as e:  # onnxruntime raises its own exception types
            if gpu_wanted:
                if device != "auto":
                    warnings.warn(f"nogobot: could not create a {device} session for "
                                  f"{self.path.name} ({str(e).strip()[:200]}); trying the CPU",
                                  ProviderFallbackWarning, stacklevel=3)
                return self._make_session(ort, self.path.read_bytes(), so, "cpu", False)
            raise ModelError(f"{self.path}: not a valid ONNX model for onnxruntime "
                             f"({type(e).__name__}: {str(e).strip()[:300]})") from None
        sess.disable_fallback()  # a failing GPU run must raise, not print on stdout and retry
        got = sess.get_providers()[0]
        if device in ("cuda", "tensorrt") and got == "CPUExecutionProvider":
            libs = "CUDA/cuDNN/TensorRT" if device == "tensorrt" else "CUDA/cuDNN"
            warnings.warn(
                f"nogobot: device {device!r} requested for {self.path.name} but onnxruntime "
                f"could not create it (no GPU, or {libs} libraries missing; available: "
                f"{', '.join(available)}{'; ' + notes[:200] if notes else ''}); running on "
                "the CPU",
                ProviderFallbackWarning, stacklevel=3)
        elif device == "tensorrt" and got != "TensorrtExecutionProvider":
            warnings.warn(f"nogobot: TensorRT unavailable for {self.path.name}; using {got}",
                          ProviderFallbackWarning, stacklevel=3)
        self.fp16 = bool(fp16) and got != "CPUExecutionProvider"
        if fp16 and got == "CPUExecutionProvider" and device != "cpu":
            # The fp16 graph (if converted) is not what we want on the CPU: rebuild in fp32.
            return self._make_session(ort, self.path.read_bytes(), so, "cpu", False)
        return sess

    def _to_fp16(self, data: bytes) -> bytes:
        """fp16 graph with fp32 inputs/outputs for the CUDA provider (needs the onnx package)."""
        try:
            import onnx
            from onnxruntime.transformers.float16 import convert_float_to_float16
        except ImportError:
            warnings.warn("nogobot: fp16 needs the onnx package (train extra); using fp32",
                          ProviderFallbackWarning, stacklevel=4)
            return data
        model = convert_float_to_float16(onnx.load_from_string(data), keep_io_types=True)
        return model.SerializeToString()

    def _check_io(self) -> None:
        inputs = self.session.get_inputs()
        if len(inputs) != 1 or inputs[0].name != "planes" or len(inputs[0].shape) != 4:
            raise ModelError(f"{self.path}: expected one input 'planes' [B, C, H, W], found "
                             f"{[(i.name, i.shape) for i in inputs]}")
        c = inputs[0].shape[1]
        if isinstance(c, int) and c != NUM_PLANES:
            raise ModelError(f"{self.path}: the graph takes {c} planes, feature version "
                             f"{FEATURE_VERSION} has {NUM_PLANES}")
        names = [o.name for o in self.session.get_outputs()]
        missing = [n for n in OUTPUT_NAMES if n not in names]
        if missing:
            raise ModelError(f"{self.path}: outputs {missing} missing (has {names})")

    def _warm_up(self, size: int) -> None:
        """First runs allocate and pick kernels; do them now, not during the first move."""
        for b in self.batch_sizes or (1,):
            self.evaluate(np.zeros((b, NUM_PLANES, size, size), np.float32))

    # -- running ----------------------------------------------------------------------------
    def _run(self, x: np.ndarray) -> list[np.ndarray]:
        if self.iobinding:
            io = self.session.io_binding()
            io.bind_cpu_input("planes", x)
            for name in OUTPUT_NAMES:
                io.bind_output(name, self._device_type)
            self.session.run_with_iobinding(io)
            return io.copy_outputs_to_cpu()
        return self.session.run(OUTPUT_NAMES, {"planes": x})

    def _run_padded(self, x: np.ndarray) -> list[np.ndarray]:
        """Run at the smallest fixed batch size >= B (in chunks of the largest one)."""
        b = x.shape[0]
        top = self.batch_sizes[-1]
        if b > top:
            parts = [self._run_padded(x[i:i + top]) for i in range(0, b, top)]
            return [np.concatenate(p) for p in zip(*parts)]
        size = next(s for s in self.batch_sizes if s >= b)
        if size == b:
            return self._run(x)
        key = (size,) + x.shape[1:]
        buf = self._pad.get(key)
        if buf is None:
            buf = self._pad[key] = np.zeros(key, np.float32)
        buf[:b] = x
        return [o[:b] for o in self._run(buf)]

    def evaluate(self, planes: np.ndarray) -> Evaluation:
        x = check_planes(planes)
        b, _, h, w = x.shape
        if b == 0:
            return Evaluation(np.zeros((0, h * w), np.float32), np.zeros(0, np.float32),
                              np.zeros((0, h, w), np.float32), np.zeros(0, np.float32))
        outs = self._run_padded(x) if self.batch_sizes else self._run(x)
        pol, val, dom, score = (np.asarray(o, dtype=np.float32) for o in outs)
        return Evaluation(pol.reshape(b, h * w), val.reshape(b), dom.reshape(b, h, w),
                          score.reshape(b))

    def describe(self) -> str:
        dev = self.provider.replace("ExecutionProvider", "")
        extra = f", {self.threads} threads" if not self.on_gpu else (", fp16" if self.fp16 else "")
        return f"{self.name} ({dev}{extra})"


def load_evaluator(path=None, **kwargs) -> Evaluator:
    """The evaluator for ``path``. An explicit path must load (ModelError otherwise).

    None is the engine's default: the default net on a GPU, its int8 encoding where the network
    runs on a CPU with int8 dot-product instructions (``modelfile.default_engine_models``), the
    default net elsewhere. A missing default model falls back to UniformEvaluator with a
    warning on stderr, so the engine still plays."""
    if path is not None:
        return OnnxEvaluator(path, **kwargs)
    path, *int8 = default_engine_models()
    if not Path(path).is_file():
        print(f"nogobot: no default model at {path}; using the uniform evaluator",
              file=sys.stderr)
        return UniformEvaluator()
    if int8 and kwargs.get("device", "auto") == "cpu":
        return OnnxEvaluator(int8[0], **kwargs)
    evaluator = OnnxEvaluator(path, **kwargs)
    if int8 and not evaluator.on_gpu:  # "auto" (or a GPU that fell back): the CPU plays
        return OnnxEvaluator(int8[0], **{**kwargs, "device": "cpu"})
    return evaluator
