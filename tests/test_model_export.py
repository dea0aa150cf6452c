"""The torch network, checkpoints and ONNX export (skipped without the train extra).

Checks: NetConfig validation; output shapes on several board sizes; GARB blocks alternate and
give the trunk global context (a far-away stone changes a point beyond the convolutions' reach);
the multitask loss trains; checkpoints round-trip, embed their config, are written atomically
and fail clearly when corrupt; export writes .onnx + .yaml whose onnxruntime outputs match torch
on positions of sizes 7, 9 and 13 (<= 1e-4), refuses to write on a mismatch, and works from the
command line.
"""

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.net.features import LIBERTY_PLANES, NUM_PLANES, boards_planes  # noqa: E402
from nogobot.net.inference import OnnxEvaluator  # noqa: E402
from nogobot.train.export import (  # noqa: E402
    ExportError,
    export_checkpoint,
    export_net,
    random_positions,
)
from nogobot.train.model import (  # noqa: E402
    GARB,
    ExportNet,
    NetConfig,
    ResBlock,
    build_model,
    load_checkpoint,
    multitask_loss,
    save_checkpoint,
)

pytestmark = pytest.mark.torch
torch.set_num_threads(1)
TINY = NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8)


def tiny_net(seed: int = 0, cfg: NetConfig = TINY):
    """A tiny net with non-trivial batch-norm statistics (so export really folds them)."""
    torch.manual_seed(seed)
    net = build_model(cfg)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.randn(8, NUM_PLANES, 9, 9) * 2 + 0.5)
    return net.eval()


def test_config_validation_and_dict():
    with pytest.raises(ValueError):
        NetConfig(blocks=0)
    with pytest.raises(ValueError):
        NetConfig(channels=7)
    with pytest.raises(ValueError, match="unknown"):
        NetConfig.from_dict({"blocks": 2, "bogus": 1})
    assert NetConfig.from_dict({"blocks": 5, "channels": 32}).name == "b5c32"


@pytest.mark.parametrize("size", [5, 9, 19])
def test_output_shapes(size):
    net = tiny_net()
    out = net(torch.randn(3, NUM_PLANES, size, size))
    area = size * size
    assert out["policy"].shape == (3, area)
    assert out["aux_policy"].shape == (3, TINY.aux_heads, area)
    assert out["value_logit"].shape == (3,) and out["score"].shape == (3,)
    assert out["dominion_logit"].shape == (3, size, size)
    assert out["score"].abs().max() <= 5.0
    pol, val, dom, score = ExportNet(net)(torch.randn(2, NUM_PLANES, size, size))
    assert pol.shape == (2, area) and val.shape == (2,) and dom.shape == (2, size, size)
    assert 0 <= val.min() and val.max() <= 1 and dom.abs().max() <= 1


def test_garb_alternates_and_sees_the_whole_board():
    cfg = NetConfig(blocks=4, channels=8, head_channels=4, value_hidden=8)
    net = tiny_net(cfg=cfg)
    assert [type(b) for b in net.blocks] == [ResBlock, GARB, ResBlock, GARB]
    plain = tiny_net(cfg=NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8,
                                   garb=False))
    assert all(isinstance(b, ResBlock) for b in plain.blocks)
    # Receptive field of 2 blocks of 3x3 convs + stem is 5 points: only global pooling can
    # carry a corner stone to the opposite corner of a 19x19 board.
    x = torch.zeros(1, NUM_PLANES, 19, 19)
    x[:, 11] = 1
    y = x.clone()
    y[0, 0, 0, 0] = 1
    with torch.no_grad():
        far = lambda m, t: m.trunk(t)[0, :, 18, 18]  # noqa: E731
        assert not torch.allclose(far(net, x), far(net, y))
        assert torch.allclose(far(plain, x), far(plain, y))


def test_loss_decreases_on_a_fixed_batch():
    net = tiny_net()
    net.train()
    size, b = 7, 16
    g = torch.Generator().manual_seed(1)
    x = torch.randn(b, NUM_PLANES, size, size, generator=g)
    tgt = {
        "policy": torch.softmax(torch.randn(b, size * size, generator=g), 1),
        "value": torch.randint(0, 2, (b,), generator=g).float(),
        "score": torch.rand(b, generator=g) * 2 - 1,
        "dominion": torch.randint(-1, 2, (b, size, size), generator=g).float(),
        "aux_policy": torch.softmax(torch.randn(b, 2, size * size, generator=g), 2),
        "aux_mask": torch.ones(b, 2),
    }
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    first = None
    for _ in range(30):
        loss, terms = multitask_loss(net(x), tgt)
        assert set(terms) == {"policy", "value", "dominion", "score", "aux"}
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.8 * first


def test_checkpoint_round_trip(tmp_path):
    net = tiny_net()
    path = tmp_path / "sub" / "net.pt"
    save_checkpoint(path, net, training={"games": 3})
    assert path.is_file() and not list(path.parent.glob("*.tmp"))
    loaded, state = load_checkpoint(path)
    assert loaded.cfg == net.cfg and state["training"] == {"games": 3}
    x = torch.randn(2, NUM_PLANES, 7, 7)
    with torch.no_grad():
        for a, b in zip(ExportNet(net)(x), ExportNet(loaded)(x)):
            torch.testing.assert_close(a, b)


def test_corrupt_checkpoint_names_the_file(tmp_path):
    path = tmp_path / "bad.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="bad.pt"):
        load_checkpoint(path)
    with pytest.raises(ExportError, match="bad.pt"):
        export_checkpoint(path, tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


def test_export_parity_and_sidecar(tmp_path):
    net = tiny_net(3)
    out = tmp_path / "tiny.onnx"
    meta = export_net(net, out, training={"board_sizes": [9], "games": 0})
    side = yaml.safe_load(out.with_suffix(".yaml").read_text())
    assert side == meta
    assert side["format_version"] == 1 and side["feature_version"] == 1
    assert side["planes"] == NUM_PLANES and (side["blocks"], side["channels"]) == (2, 8)
    assert side["board_sizes_trained"] == [9]
    assert side["export"]["parity_sizes"] == [7, 9, 13]
    assert side["export"]["parity_max_abs_diff"] <= 1e-4
    assert not list(tmp_path.glob("*.tmp"))
    # The engine's evaluator agrees with torch on fresh legal positions of each size.
    ev = OnnxEvaluator(out, device="cpu", threads=1)
    rng = np.random.default_rng(5)
    for size in (7, 9, 13):
        planes = boards_planes(random_positions(size, 5, rng))
        got = ev.evaluate(planes)
        with torch.no_grad():
            ref = [t.numpy() for t in ExportNet(net)(torch.from_numpy(planes))]
        for a, b in zip(ref, got):
            assert a.shape == b.shape
            assert np.max(np.abs(a - b)) <= 1e-4


def test_liberty_features_switch_hides_planes_4_to_7_in_torch_and_onnx(tmp_path):
    cfg = NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8,
                    liberty_features=False)
    blind = tiny_net(4, cfg=cfg)
    seeing = tiny_net(4)
    rng = np.random.default_rng(9)
    planes = boards_planes(random_positions(9, 6, rng))
    assert planes[:, list(LIBERTY_PLANES)].any()  # the positions do have liberty features
    no_libs = planes.copy()
    no_libs[:, list(LIBERTY_PLANES)] = 0.0
    with torch.no_grad():
        run = lambda m, x: m(torch.from_numpy(x))["policy"]  # noqa: E731
        assert torch.equal(run(blind, planes), run(blind, no_libs))
        assert not torch.allclose(run(seeing, planes), run(seeing, no_libs))
    # The mask is part of the exported graph: same 12-plane contract, same blindness.
    out = tmp_path / "blind.onnx"
    meta = export_net(blind, out, training={"board_sizes": [9], "games": 0})
    assert meta["liberty_features"] is False and meta["planes"] == NUM_PLANES
    ev = OnnxEvaluator(out, device="cpu", threads=1)
    for a, b in zip(ev.evaluate(planes), ev.evaluate(no_libs)):
        assert np.array_equal(a, b)


def test_export_refuses_on_mismatch(tmp_path):
    out = tmp_path / "m.onnx"
    out.write_bytes(b"previous model")
    with pytest.raises(ExportError, match="refusing"):
        export_net(tiny_net(), out, tol=-1.0)  # no difference can be <= -1
    assert out.read_bytes() == b"previous model"
    assert not out.with_suffix(".yaml").exists() and not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ExportError, match=".onnx"):
        export_net(tiny_net(), tmp_path / "m.bin")


def test_export_command(tmp_path):
    ckpt = tmp_path / "c.pt"
    save_checkpoint(ckpt, tiny_net(), training={"board_sizes": [7]})
    out = tmp_path / "cli.onnx"
    res = CliRunner().invoke(main, ["export", str(ckpt), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "parity" in res.output and out.is_file() and out.with_suffix(".yaml").is_file()
    bad = CliRunner().invoke(main, ["export", str(ckpt), "-o", str(out), "--tol", "-1"])
    assert bad.exit_code != 0 and "refusing" in bad.output


def test_torch_self_play_evaluator_matches_its_onnx_and_refuses_another(tmp_path):
    """GPU self-play without onnxruntime-CUDA runs the torch checkpoint (train/torch_eval.py);
    it must be the same net as the ONNX file self-play was given. Checked here on the CPU."""
    from nogobot.train.torch_eval import TorchEvaluator, self_play_evaluator

    net, other = tiny_net(5), tiny_net(6)
    save_checkpoint(tmp_path / "best.pt", net)
    save_checkpoint(tmp_path / "other.pt", other)
    export_net(net, tmp_path / "best.onnx", training={"board_sizes": [9], "games": 0})
    ev = TorchEvaluator(tmp_path / "best.pt", "cpu", onnx_reference=tmp_path / "best.onnx")
    planes = boards_planes(random_positions(9, 4, np.random.default_rng(2)))
    ref = OnnxEvaluator(tmp_path / "best.onnx", device="cpu", threads=1).evaluate(planes)
    for a, b in zip(ref, ev.evaluate(planes)):
        assert a.shape == b.shape and np.max(np.abs(a - b)) <= 1e-4
    with pytest.raises(ValueError, match="other.pt does not hold the net of .*best.onnx"):
        TorchEvaluator(tmp_path / "other.pt", "cpu", onnx_reference=tmp_path / "best.onnx")
    # Without a GPU the worker falls back to onnxruntime (never a wrong net, never a crash).
    if not torch.cuda.is_available():
        chosen = self_play_evaluator(str(tmp_path / "best.onnx"), "cuda", 1,
                                     str(tmp_path / "best.pt"))
        assert isinstance(chosen, OnnxEvaluator)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_torch_self_play_evaluator_on_cuda(tmp_path):
    net = tiny_net(7)
    save_checkpoint(tmp_path / "best.pt", net)
    export_net(net, tmp_path / "best.onnx", training={"board_sizes": [9], "games": 0})
    from nogobot.train.torch_eval import TorchEvaluator

    ev = TorchEvaluator(tmp_path / "best.pt", "cuda", onnx_reference=tmp_path / "best.onnx")
    assert "torch cuda" in ev.describe()
