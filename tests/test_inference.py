"""The engine-side evaluators (nogobot.net.inference); no torch needed.

Checks: masked-softmax priors; UniformEvaluator; the default model loads and honours the output
contract on 7x7, 9x9 and 13x13; batched, padded (fixed batch sizes) and IOBinding runs agree with
single runs; every bad model file (missing, empty, truncated, corrupt, sidecar missing / corrupt /
of an unknown format / unknown feature version / wrong plane count) raises one ModelError naming
the file; asking for CUDA or TensorRT where they cannot run warns on stderr and falls back to the
CPU without printing on stdout; the engine's default is the int8 encoding exactly where the CPU
has int8 dot-product instructions, and that encoding answers as the default net does on most
positions; the inference module never imports torch. GPU tests skip when
onnxruntime cannot create a CUDA session.
"""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import yaml

from nogobot.core import machine
from nogobot.game.board import Board
from nogobot.net.features import NUM_PLANES, board_planes, boards_planes
from nogobot.net.inference import (
    Evaluation,
    ModelError,
    OnnxEvaluator,
    ProviderFallbackWarning,
    UniformEvaluator,
    default_model_path,
    load_evaluator,
    priors,
    read_sidecar,
)
from nogobot.net.modelfile import int8_model_path


def positions(size: int, count: int, seed: int = 0) -> list[Board]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        b = Board(size)
        for _ in range(int(rng.integers(0, size * size // 2))):
            if b.is_terminal():
                break
            b.play(int(rng.choice(b.legal_moves())))
        out.append(b)
    return out


@pytest.fixture(scope="module")
def model_path():
    path = default_model_path()
    assert path.is_file(), f"default model missing: {path}"
    return path


@pytest.fixture(scope="module")
def cpu_eval(model_path):
    return OnnxEvaluator(model_path, device="cpu", threads=1)


@pytest.fixture
def model_copy(model_path, tmp_path):
    """A private copy of the default model and its sidecar, to damage."""
    dst = tmp_path / "m.onnx"
    shutil.copy(model_path, dst)
    shutil.copy(model_path.with_suffix(".yaml"), dst.with_suffix(".yaml"))
    return dst


def edit_sidecar(path, **changes):
    side = path.with_suffix(".yaml")
    meta = yaml.safe_load(side.read_text())
    for k, v in changes.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    side.write_text(yaml.safe_dump(meta))


# -- priors and the uniform evaluator ---------------------------------------------------------

def test_priors_masked_softmax():
    logits = np.array([[1.0, 2.0, 3.0, 100.0], [0.0, 0.0, 0.0, 0.0], [5.0, 1.0, 1.0, 1.0]],
                      dtype=np.float32)
    mask = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)
    p = priors(logits, mask)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(p[0, :3], e / e.sum(), rtol=1e-6)
    assert p[0, 3] == 0
    assert np.all(p[1] == 0)  # no legal move: all zero, no NaN
    np.testing.assert_allclose(p[2], [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(priors(logits[0], mask[0]), p[0])
    with pytest.raises(ValueError):
        priors(logits, mask[:, :3])


def test_uniform_evaluator():
    ev = UniformEvaluator()
    out = ev.evaluate_boards(positions(7, 3))
    assert isinstance(out, Evaluation)
    assert out.policy_logits.shape == (3, 49) and np.all(out.policy_logits == 0)
    assert np.all(out.value == 0.5) and out.dominion.shape == (3, 7, 7)
    assert np.all(out.score == 0)
    with pytest.raises(ValueError, match="planes"):
        ev.evaluate(np.zeros((1, NUM_PLANES - 1, 7, 7), np.float32))


# -- the default model ------------------------------------------------------------------------

def test_default_model_sidecar(model_path):
    meta = read_sidecar(model_path)
    assert meta["planes"] == NUM_PLANES and meta["feature_version"] == 1
    assert meta["training"] and meta["board_sizes_trained"]
    assert model_path.stat().st_size < 2_000_000


@pytest.mark.parametrize("size", [7, 9, 13])
def test_output_contract(cpu_eval, size):
    boards = positions(size, 4, seed=size)
    out = cpu_eval.evaluate_boards(boards)
    assert out.policy_logits.shape == (4, size * size)
    assert out.value.shape == (4,) and out.score.shape == (4,)
    assert out.dominion.shape == (4, size, size)
    assert all(a.dtype == np.float32 for a in out)
    assert np.all((out.value >= 0) & (out.value <= 1))
    assert np.all(np.abs(out.dominion) <= 1) and np.all(np.abs(out.score) <= 5)
    assert np.all(np.isfinite(out.policy_logits))


def test_batch_equals_single_runs(cpu_eval):
    boards = positions(9, 6, seed=3)
    batch = cpu_eval.evaluate_boards(boards)
    for i, b in enumerate(boards):
        one = cpu_eval.evaluate(board_planes(b)[None])
        for a, c in zip(batch, one):
            np.testing.assert_allclose(a[i], c[0], atol=1e-5)
    empty = cpu_eval.evaluate(np.zeros((0, NUM_PLANES, 9, 9), np.float32))
    assert empty.policy_logits.shape == (0, 81)


def test_padded_batches_and_iobinding_agree(model_path, cpu_eval):
    planes = boards_planes(positions(9, 11, seed=4))
    ref = cpu_eval.evaluate(planes)
    padded = OnnxEvaluator(model_path, device="cpu", threads=1, batch_sizes=(4, 8),
                           iobinding=True)
    assert padded.batch_sizes == (4, 8)
    for n in (1, 3, 8, 11):  # 11 > 8: chunks of 8, the rest padded to 4
        out = padded.evaluate(planes[:n])
        assert out.policy_logits.shape == (n, 81)
        for a, c in zip(ref, out):
            np.testing.assert_allclose(a[:n], c, atol=1e-5)


def test_load_evaluator(model_path, tmp_path):
    assert isinstance(load_evaluator(None, device="cpu", threads=1), OnnxEvaluator)
    with pytest.raises(ModelError, match="nope.onnx"):
        load_evaluator(tmp_path / "nope.onnx")


# -- the engine's default: the default net, or its int8 encoding on a fast-int8 CPU -----------


@pytest.mark.parametrize("flags, fast", [("fpu sse2 avx2 avx512f avx512_vnni", True),
                                         ("fpu sse2 avx2 avx_vnni", True),
                                         ("fpu sse2 avx2 amx_int8 amx_tile", True),
                                         ("fpu sse2 avx2 fma avx512f", False),
                                         (None, False)])
def test_int8_dot_product_reads_the_cpu_flags(tmp_path, monkeypatch, flags, fast):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\n"
                    + (f"flags\t\t: {flags}\n" if flags else ""))
    monkeypatch.setattr(machine, "CPUINFO", str(info))
    machine.int8_dot_product.cache_clear()
    try:
        assert machine.int8_dot_product() is fast
        assert machine.cpu_name() == "Test CPU 9000"
    finally:
        machine.int8_dot_product.cache_clear()


@pytest.mark.parametrize("device", ["cpu", "auto"])
@pytest.mark.parametrize("fast_int8", [True, False])
def test_default_is_int8_where_the_cpu_has_int8_dot_products(monkeypatch, device, fast_int8):
    monkeypatch.setattr(machine, "int8_dot_product", lambda: fast_int8)
    ev = load_evaluator(None, device=device, threads=1)
    if ev.on_gpu:  # "auto" on a usable GPU plays the default net whatever the CPU
        assert ev.path == default_model_path()
        return
    assert ev.path == (int8_model_path() if fast_int8 else default_model_path())
    assert ev.name == ev.path.stem and ev.threads == 1
    # A named file is taken as given on any CPU.
    assert load_evaluator(default_model_path(), device="cpu", threads=1).path == \
        default_model_path()


def test_int8_encoding_agrees_with_the_default_net():
    """The shipped int8 net answers as the default net does on most positions (its sidecar
    records the agreement measured when it was made)."""
    boards = positions(9, 64, seed=3)
    fp32 = OnnxEvaluator(default_model_path(), device="cpu", threads=1).evaluate_boards(boards)
    int8 = OnnxEvaluator(int8_model_path(), device="cpu", threads=1).evaluate_boards(boards)
    assert read_sidecar(int8_model_path())["quantization"]["agreement"]["top1"] >= 0.9
    legal = [b.legal_moves() for b in boards]
    same = [int(m[np.argmax(f[m])] == m[np.argmax(q[m])]) for m, f, q in
            zip(legal, fp32.policy_logits, int8.policy_logits) if len(m)]
    assert np.mean(same) >= 0.8
    assert np.abs(fp32.value - int8.value).mean() < 0.05


# -- bad model files: one clear error naming the file -----------------------------------------

def test_missing_model(tmp_path):
    with pytest.raises(ModelError, match=r"missing\.onnx.*not found"):
        OnnxEvaluator(tmp_path / "missing.onnx")


def test_empty_model(model_copy):
    model_copy.write_bytes(b"")
    edit_sidecar(model_copy, sha256=None)
    with pytest.raises(ModelError, match=r"m\.onnx.*empty"):
        OnnxEvaluator(model_copy, device="cpu")


def test_truncated_model_caught_by_checksum(model_copy):
    data = model_copy.read_bytes()
    model_copy.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match=r"m\.onnx.*sha256"):
        OnnxEvaluator(model_copy, device="cpu")


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_model_without_checksum(model_copy, damage):
    data = model_copy.read_bytes()
    model_copy.write_bytes(data[: len(data) // 3] if damage == "truncate" else b"\x08\xff" * 999)
    edit_sidecar(model_copy, sha256=None)
    with pytest.raises(ModelError, match=r"m\.onnx.*not a valid ONNX model"):
        OnnxEvaluator(model_copy, device="cpu")


def test_missing_sidecar(model_copy):
    model_copy.with_suffix(".yaml").unlink()
    with pytest.raises(ModelError, match=r"m\.onnx.*sidecar m\.yaml is missing"):
        OnnxEvaluator(model_copy)


@pytest.mark.parametrize("text, problem", [
    ("planes: [1, 2\n  bad: {", "not valid YAML"),
    ("- just\n- a list\n", "not a YAML mapping"),
])
def test_corrupt_sidecar(model_copy, text, problem):
    model_copy.with_suffix(".yaml").write_text(text)
    with pytest.raises(ModelError, match=r"m\.yaml.*" + problem):
        OnnxEvaluator(model_copy)


@pytest.mark.parametrize("changes, problem", [
    ({"feature_version": 99}, "unknown feature version 99"),
    ({"feature_version": None}, "unknown feature version None"),
    ({"planes": 7}, "expects 7 input planes"),
    ({"format_version": 42}, "unknown sidecar format_version 42"),
])
def test_incompatible_sidecar(model_copy, changes, problem):
    edit_sidecar(model_copy, **changes)
    with pytest.raises(ModelError, match=r"m\.(onnx|yaml).*" + problem):
        OnnxEvaluator(model_copy)


# -- provider selection -------------------------------------------------------------------------

def _cuda_usable(model_path) -> bool:
    ev = OnnxEvaluator(model_path, device="auto", threads=1)
    return ev.on_gpu


def test_bad_device_name(model_path):
    with pytest.raises(ValueError, match="device"):
        OnnxEvaluator(model_path, device="tpu")


@pytest.mark.parametrize("device", ["cuda", "tensorrt"])
def test_gpu_request_falls_back_to_cpu(model_path, capfd, device):
    if _cuda_usable(model_path):
        pytest.skip("a GPU is usable here: no fallback to test")
    capfd.readouterr()
    with pytest.warns(ProviderFallbackWarning, match=f"{device}.*running on the CPU"):
        ev = OnnxEvaluator(model_path, device=device, threads=1, fp16=True)
    assert ev.provider == "CPUExecutionProvider" and not ev.on_gpu and not ev.fp16
    assert ev.batch_sizes == () and not ev.iobinding
    out = ev.evaluate_boards(positions(9, 2))
    assert out.policy_logits.shape == (2, 81)
    captured = capfd.readouterr()
    assert captured.out == ""  # onnxruntime's fallback notices must never reach stdout (GTP)


def test_auto_is_silent_on_cpu(model_path, capfd):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = OnnxEvaluator(model_path, device="auto", threads=1)
    assert capfd.readouterr().out == ""
    assert ev.provider in ("CPUExecutionProvider", "CUDAExecutionProvider")


def test_gpu_library_preload_is_quiet(model_path, monkeypatch, capfd):
    """The CUDA libraries of pip's nvidia packages are preloaded once before a GPU session; what
    onnxruntime prints about missing ones never reaches stdout and ends up in the warning."""
    import onnxruntime as ort

    from nogobot.net import inference

    calls = []

    def fake_preload():
        calls.append(1)
        print("Failed to load libcublas.so.13: not here")
        print("Please follow the install guide")

    monkeypatch.setattr(ort, "preload_dlls", fake_preload, raising=False)
    monkeypatch.setattr(inference, "_gpu_library_notes", None)
    if _cuda_usable(model_path):
        pytest.skip("a GPU is usable here: no fallback to test")
    capfd.readouterr()
    with pytest.warns(ProviderFallbackWarning, match="libcublas.so.13: not here"):
        OnnxEvaluator(model_path, device="cuda", threads=1)
    OnnxEvaluator(model_path, device="cpu", threads=1)
    assert calls == [1]  # once per process, and never for a CPU session
    assert capfd.readouterr().out == ""


def test_engine_never_imports_torch():
    code = ("import sys, nogobot.net.inference, nogobot.net.features, nogobot.tools.bench_nn; "
            "e = nogobot.net.inference.load_evaluator(None, device='cpu', threads=1); "
            "assert 'torch' not in sys.modules and 'nogobot.train' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.gpu
def test_gpu_matches_cpu(model_path, cpu_eval):
    if not _cuda_usable(model_path):
        pytest.skip("no usable CUDA provider")
    gpu = OnnxEvaluator(model_path, device="cuda")
    planes = boards_planes(positions(9, 5, seed=9))
    # The CUDA provider convolves in TF32: logits differ by a few 1e-3 (sp7 on an H200).
    for a, b in zip(cpu_eval.evaluate(planes), gpu.evaluate(planes)):
        np.testing.assert_allclose(a, b, atol=1e-2)
    half = OnnxEvaluator(model_path, device="cuda", fp16=True)
    for a, b in zip(cpu_eval.evaluate(planes), half.evaluate(planes)):
        np.testing.assert_allclose(a, b, atol=5e-2)
