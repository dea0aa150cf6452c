"""`nogobot train average`: the weight average of exported nets (skipped without the train
extra).

Checks: the averaged net's ONNX weights are the element-wise mean of its sources' (BatchNorm
statistics and the exporter's folded convolutions included); the result passes the engine's
model check (sidecar, sha256, graph), loads in its evaluator and plays differently from its
first source; nets of
different architectures, a single net and a corrupt source are refused in one line naming the
file; the command works from the CLI.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.game.board import Board  # noqa: E402
from nogobot.net.inference import OnnxEvaluator  # noqa: E402
from nogobot.net.modelfile import check_model  # noqa: E402
from nogobot.train.average import AverageError, average_nets  # noqa: E402
from nogobot.train.export import export_net  # noqa: E402
from nogobot.train.model import NetConfig, build_model  # noqa: E402

pytestmark = pytest.mark.torch
torch.set_num_threads(1)
TINY = NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8)


def exported(tmp_path, name, seed, cfg=TINY, games=100):
    """A tiny net with its own weights and batch-norm statistics, exported to NAME.onnx."""
    torch.manual_seed(seed)
    net = build_model(cfg)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.randn(8, 12, 9, 9) * 2 + seed)
    net.eval()
    out = tmp_path / f"{name}.onnx"
    export_net(net, out, training={"board_sizes": [9], "selfplay_games": games}, sizes=(9,))
    return out


def initializers(path):
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}


def test_the_average_is_the_mean_of_the_weights(tmp_path):
    a, b, c = (exported(tmp_path, n, s, games=g) for n, s, g in
               (("a", 1, 100), ("b", 2, 148), ("c", 3, 196)))
    out = tmp_path / "avg.onnx"
    meta = average_nets([a, b, c], out, note="three generations")
    check_model(out)  # sidecar present, sha256 matches, graph has the contract's outputs
    assert meta["training"]["selfplay_games"] == 196
    assert [s["name"] for s in meta["training"]["averaged"]] == ["a", "b", "c"]
    assert meta["training"]["note"] == "three generations"
    srcs = [initializers(p) for p in (a, b, c)]
    got = initializers(out)
    assert got.keys() == srcs[0].keys()
    assert any("running_mean" in k for k in got)  # BatchNorm statistics are averaged too
    assert any(not k.startswith("net.") for k in got)  # and the convolutions BatchNorm was folded into
    for k, v in got.items():
        if v.dtype.kind == "f":
            np.testing.assert_allclose(v, np.mean([s[k] for s in srcs], axis=0), rtol=1e-6,
                                       atol=1e-7)
    # Not the same net as any source: the outputs differ from the first one's.
    board = Board(9)
    board.play(40)
    avg = OnnxEvaluator(out, device="cpu", threads=1).evaluate_boards([board])
    first = OnnxEvaluator(a, device="cpu", threads=1).evaluate_boards([board])
    assert not np.allclose(avg.policy_logits, first.policy_logits)


def test_refuses_what_cannot_be_averaged(tmp_path):
    a = exported(tmp_path, "a", 1)
    b = exported(tmp_path, "b", 2)
    wide = exported(tmp_path, "wide", 3, cfg=NetConfig(blocks=2, channels=16, head_channels=4,
                                                      value_hidden=8))
    with pytest.raises(AverageError, match="wide.onnx: a different network"):
        average_nets([a, wide], tmp_path / "x.onnx")
    with pytest.raises(AverageError, match="at least two"):
        average_nets([a], tmp_path / "x.onnx")
    b.write_bytes(b.read_bytes()[:-10])  # truncated: its sha256 no longer matches
    with pytest.raises(AverageError, match="b.onnx"):
        average_nets([a, b], tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


def test_average_command(tmp_path):
    a = exported(tmp_path, "a", 1)
    b = exported(tmp_path, "b", 2)
    out = tmp_path / "swa.onnx"
    res = CliRunner().invoke(main, ["train", "average", str(a), str(b), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "the mean of 2 nets" in res.output
    check_model(out)
    res = CliRunner().invoke(main, ["train", "average", str(a), "-o", str(out)])
    assert res.exit_code != 0 and "at least two" in res.output
