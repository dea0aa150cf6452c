"""Weight averaging of exported nets (``nogobot train average``): the element-wise mean of the
weights of several ONNX nets of one graph (a run's successive generators), written as a new
model with its sidecar.

Why: with no same-stage gating the campaign's generator moves with each 48-game batch, and
single generations measure up and down by ~60 Elo against the same anchor; the mean of a
stretch of them (stochastic weight averaging, as KataGo ships its nets) keeps what they share.

The mean is taken over the ONNX graph's initializers, not over torch parameters: the exporter
folds some BatchNorms into the convolutions before them (initializers named ``onnx::Conv_N``),
so the graph is the one complete description of what the engine runs. Folded or not, each
weight is averaged as it stands (running statistics too), so the sources must share one graph:
the same operators, initializer names and shapes. The result is a net for play and measurement,
not a training checkpoint."""

from __future__ import annotations

import datetime
import hashlib
from pathlib import Path

import numpy as np

from .. import __version__
from ..net.modelfile import ModelError, check_model, write_model


class AverageError(ValueError):
    """The nets cannot be averaged (one line: the file and the problem)."""


def _load(path: Path):
    """(sidecar, onnx ModelProto) of one checked model file."""
    import onnx

    try:
        meta, data = check_model(path)
    except ModelError as e:
        raise AverageError(str(e)) from None
    return meta, onnx.load_from_string(data)


def _graph_signature(model) -> tuple:
    """What must be equal for two graphs to be averaged: operators and initializers."""
    return (tuple(n.op_type for n in model.graph.node),
            tuple((i.name, tuple(i.dims), i.data_type) for i in model.graph.initializer))


def average_nets(paths, out, note: str | None = None) -> dict:
    """Write the weight average of the ONNX nets ``paths`` to ``out`` (.onnx + sidecar,
    ``modelfile.write_model``) and return the sidecar."""
    from onnx import numpy_helper

    paths, out = [Path(p) for p in paths], Path(out)
    if len(paths) < 2:
        raise AverageError("averaging needs at least two nets")
    if out.suffix != ".onnx":
        raise AverageError(f"{out}: the output file must end in .onnx")
    loaded = [_load(p) for p in paths]
    (meta0, model), graph = loaded[0], _graph_signature(loaded[0][1])
    for p, (meta, m) in zip(paths[1:], loaded[1:]):
        if meta.get("net_config") != meta0.get("net_config") or _graph_signature(m) != graph:
            raise AverageError(f"{p}: a different network from {paths[0]} (architecture, "
                               f"operators or weights)")
    for i, init in enumerate(model.graph.initializer):
        arrays = [numpy_helper.to_array(m.graph.initializer[i]) for _, m in loaded]
        if arrays[0].dtype.kind == "f":
            mean = np.mean(np.stack(arrays), axis=0, dtype=np.float64).astype(arrays[0].dtype)
            init.CopyFrom(numpy_helper.from_array(mean, init.name))
    for prop in model.metadata_props:
        if prop.key == "name":
            prop.value = out.stem
    data = model.SerializeToString()

    training = {
        "method": f"the weight average of {len(paths)} nets of one graph (every initializer, "
                  f"BatchNorm statistics and folded convolutions included)",
        "averaged": [{"name": m.get("name", p.stem), "sha256": m.get("sha256")}
                     for p, (m, _) in zip(paths, loaded)],
    }
    trainings = [m.get("training") or {} for m, _ in loaded]
    if trainings[0].get("board_sizes"):
        training["board_sizes"] = list(trainings[0]["board_sizes"])
    games = [t.get("selfplay_games") for t in trainings]
    if all(isinstance(g, int) for g in games):
        training["selfplay_games"] = max(games)
    if note:
        training["note"] = note
    side = {k: v for k, v in meta0.items() if k not in ("training", "strength", "export",
                                                         "sha256")}
    side.update(name=out.stem, training=training, strength=None,
                export={"averaged_by": f"nogobot {__version__} (nogobot train average)",
                        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")},
                sha256=hashlib.sha256(data).hexdigest())
    write_model(out, data, side)
    return side
