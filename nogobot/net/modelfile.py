"""A model's files, checked without numpy, numba or onnxruntime (the commands do it at start-up).

A nogobot network is NAME.onnx plus its sidecar NAME.yaml (format and feature version, plane
count, sha256 of the .onnx, how it was trained). ``check_model`` refuses, with one ``ModelError``
naming the file and the problem, a missing or empty .onnx, a missing or corrupt sidecar, an
unknown format or feature version, a wrong plane count, a checksum mismatch (a truncated or
replaced file), and a file that is not an ONNX protobuf with the ``planes`` input and the four
outputs (``onnx_io`` walks the protobuf wire format itself). It takes a few ms, so ``nogobot gtp``
still answers ``name`` at once; onnxruntime loads the network later (``inference``).

Which file a ``--model`` value means is ``resolve_model``'s answer: a path, or the name of a
shipped net. The wheel carries two: the default net and its int8 encoding (``nogobot train
quantize``), which the engine plays by default on a CPU with int8 dot-product instructions
(``default_engine_models``; the choice itself is ``inference.load_evaluator``'s). The
repository keeps them once, in the top-level ``models/`` beside the other released nets; a
wheel carries them as package data in ``nogobot/models/``, so an installed package works from
any directory (``packagedata``).

``FEATURE_VERSION`` and ``NUM_PLANES`` are the input contract of ``features.py``; they are
defined here so that checking a model needs no numba.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import yaml

from ..core import machine
from ..core.atomicio import write_tmp
from ..core.packagedata import data_dir

FEATURE_VERSION = 1
NUM_PLANES = 12
SIDECAR_FORMAT_VERSION = 1
KNOWN_SIDECAR_FORMATS = (1,)
DEFAULT_MODEL_NAME = "nogobot-b6c32-sp10"
# The default net with its tower's convolutions in int8: the engine's default on a CPU with
# int8 dot-product instructions, where it runs about twice the evaluations a second.
INT8_MODEL_NAME = "nogobot-b6c32-sp10-int8"
# The nets a wheel carries: pyproject.toml's package-data for nogobot.models names their files.
SHIPPED_MODEL_NAMES = (DEFAULT_MODEL_NAME, INT8_MODEL_NAME)
OUTPUT_NAMES = ("policy", "value", "dominion", "score")


class ModelError(RuntimeError):
    """A model file or its sidecar cannot be used; the message names the file and the problem."""


def sidecar_path(model_path) -> Path:
    return Path(model_path).with_suffix(".yaml")


def write_model(model_path, data: bytes, meta: dict) -> None:
    """Write NAME.onnx (``data``) and its sidecar NAME.yaml (``meta``), both complete before
    either is put in place, so a reader never sees one without the other."""
    path = Path(model_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    tmp_model = write_tmp(path, data)
    tmp_side = write_tmp(sidecar_path(path), text.encode())
    os.replace(tmp_model, path)
    os.replace(tmp_side, sidecar_path(path))


def read_sidecar(model_path) -> dict:
    """Load and validate NAME.yaml beside NAME.onnx; raises ModelError."""
    side = sidecar_path(model_path)
    if not side.is_file():
        raise ModelError(f"{model_path}: its sidecar {side.name} is missing (every model ships "
                         "with a YAML sidecar; re-export it with `nogobot export`)")
    try:
        meta = yaml.safe_load(side.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ModelError(f"{side}: sidecar is not valid YAML ({e})") from None
    if not isinstance(meta, dict):
        raise ModelError(f"{side}: sidecar is not a YAML mapping")
    fmt = meta.get("format_version")
    if fmt not in KNOWN_SIDECAR_FORMATS:
        raise ModelError(f"{side}: unknown sidecar format_version {fmt!r} "
                         f"(this nogobot reads {list(KNOWN_SIDECAR_FORMATS)})")
    fv = meta.get("feature_version")
    if fv != FEATURE_VERSION:
        raise ModelError(f"{model_path}: unknown feature version {fv!r} (this nogobot computes "
                         f"feature version {FEATURE_VERSION}); use a model exported for it")
    planes = meta.get("planes")
    if planes != NUM_PLANES:
        raise ModelError(f"{model_path}: the model expects {planes!r} input planes, "
                         f"feature version {FEATURE_VERSION} has {NUM_PLANES}")
    return meta


def check_model(model_path) -> tuple[dict, bytes]:
    """Validate a model's files without onnxruntime: (sidecar dict, model bytes) or ModelError.

    Cheap enough for start-up (a few ms for the shipped 0.6 MB net), so every command refuses a
    bad model before it speaks its protocol: the .onnx must exist and be non-empty, its sidecar
    must be valid, the sha256 recorded there must match, and the file must parse as an ONNX
    protobuf whose graph has the ``planes`` input and the four outputs (``onnx_io``). A
    truncated file fails the checksum, or, without one, the structure check."""
    path = Path(model_path)
    if not path.exists():
        raise ModelError(f"{path}: model file not found")
    if not path.is_file():
        raise ModelError(f"{path}: not a model file (a directory?)")
    meta = read_sidecar(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"{path}: cannot read the model ({e.strerror or e})") from None
    if not data:
        raise ModelError(f"{path}: model file is empty")
    want = meta.get("sha256")
    if want and hashlib.sha256(data).hexdigest() != want:
        raise ModelError(f"{path}: contents do not match the sha256 in "
                         f"{sidecar_path(path).name} (truncated, corrupt or replaced "
                         "file; re-export or re-download both files)")
    try:
        planes, outputs = onnx_io(data)
    except ValueError as e:
        raise ModelError(f"{path}: not a valid ONNX model ({e})") from None
    if planes is None:
        raise ModelError(f"{path}: the graph has no input 'planes' [B, C, H, W]")
    if len(planes) != 4:
        raise ModelError(f"{path}: input 'planes' has {len(planes)} dimensions, not 4")
    if isinstance(planes[1], int) and planes[1] != NUM_PLANES:
        raise ModelError(f"{path}: the graph takes {planes[1]} planes, feature version "
                         f"{FEATURE_VERSION} has {NUM_PLANES}")
    missing = [n for n in OUTPUT_NAMES if n not in outputs]
    if missing:
        raise ModelError(f"{path}: outputs {missing} missing (has {outputs})")
    return meta, data


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("malformed varint")


def _fields(buf: bytes, start: int, end: int):
    """(field number, value) of one protobuf message in buf[start:end]; a length-delimited
    value is its (start, end). Raises ValueError on anything malformed or cut short."""
    i = start
    while i < end:
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError(f"field number 0 at byte {i}")
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire in (1, 5):
            value, i = None, i + (8 if wire == 1 else 4)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = (i, i + n), i + n
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
        if i > end:
            raise ValueError(f"truncated: a field ends at byte {i}, the data at byte {end}")
        yield number, value


def onnx_io(data: bytes) -> tuple[list | None, list[str]]:
    """Walk an ONNX ModelProto's wire format (no onnx package): the ``planes`` input's dims
    (ints, or names for symbolic dims; None if absent) and the graph's output names. Only the
    fields nogobot needs are decoded; the whole message and its graph must parse to the end."""
    graph = None
    for number, value in _fields(data, 0, len(data)):
        if number == 7:  # ModelProto.graph
            graph = value
    if graph is None:
        raise ValueError("no graph")
    planes, outputs = None, []
    for number, value in _fields(data, *graph):
        if number not in (11, 12):  # GraphProto.input, GraphProto.output (ValueInfoProto)
            continue
        name, dims = "", []
        for f, v in _fields(data, *value):
            if f == 1:
                name = data[v[0]:v[1]].decode("utf-8", "replace")
            elif f == 2:  # TypeProto
                for tf, tv in _fields(data, *v):
                    if tf == 1:  # tensor_type
                        for sf, sv in _fields(data, *tv):
                            if sf == 2:  # shape
                                dims = [_dim(data, dv) for df, dv in _fields(data, *sv)
                                        if df == 1]
        if number == 12:
            outputs.append(name)
        elif name == "planes":
            planes = dims
    return planes, outputs


def _dim(data: bytes, span: tuple[int, int]):
    for f, v in _fields(data, *span):
        if f == 1:
            return v
        if f == 2:
            return data[v[0]:v[1]].decode("utf-8", "replace")
    return "?"


def shipped_models_dir() -> Path:
    """The folder of the shipped nets: ``nogobot/models/`` in an installed wheel (the shipped
    nets only), else the checkout's top-level ``models/`` (every released net; only the
    shipped ones answer to a name, so a checkout and a wheel accept the same names)."""
    return data_dir("models", f"{DEFAULT_MODEL_NAME}.onnx")


def shipped_model_names() -> list[str]:
    """The names ``--model NAME`` accepts: the shipped nets whose .onnx is present."""
    folder = shipped_models_dir()
    return [n for n in SHIPPED_MODEL_NAMES if (folder / f"{n}.onnx").is_file()]


def resolve_model(spec: str | os.PathLike | None) -> Path:
    """The .onnx file a ``--model`` value means: None (or "") is the shipped default net; an
    existing file or directory is taken as given (``check_model`` judges it); otherwise the
    name of a shipped net, with or without ``.onnx`` (``nogobot-b6c32-sp10``). Raises
    ModelError naming the shipped nets when the value is neither a file nor such a name.

    A file wins over a shipped name, so a model in the working directory can always be
    chosen by its path."""
    folder = shipped_models_dir()
    if spec is None or str(spec) == "":
        return folder / (DEFAULT_MODEL_NAME + ".onnx")
    path = Path(spec)
    if path.exists():
        return path
    name = path.name[:-len(".onnx")] if path.name.endswith(".onnx") else path.name
    if str(spec) in (name, name + ".onnx") and name in shipped_model_names():
        return folder / (name + ".onnx")
    shipped = ", ".join(shipped_model_names()) or "none"
    raise ModelError(f"{spec}: model file not found, and no shipped net has that name "
                     f"(shipped: {shipped}; --model takes an .onnx file or one of these names)")


def default_model_path() -> Path:
    """The default net, <DEFAULT_MODEL_NAME>.onnx among the shipped nets (it may be missing
    from a broken install: ``check_model`` and ``inference.load_evaluator`` say so)."""
    return resolve_model(None)


def int8_model_path() -> Path:
    """The default net's int8 encoding, <INT8_MODEL_NAME>.onnx among the shipped nets."""
    return shipped_models_dir() / f"{INT8_MODEL_NAME}.onnx"


def default_engine_models() -> list[Path]:
    """The files the engine's default (no ``--model``) may load on this machine: the default
    net, and its int8 encoding where the CPU has int8 dot-product instructions and the file is
    there. Start-up checks all of them; ``inference.load_evaluator`` picks one by device."""
    int8 = int8_model_path()
    fast = machine.int8_dot_product() and int8.is_file()
    return [default_model_path()] + ([int8] if fast else [])
