"""`nogobot train quantize`: an exported net's int8 version for the CPU (skipped without the
train extra).

Checks: the games it calibrates on are legal games to their end; the result passes the engine's
model check (sidecar, sha256, graph) and loads in its evaluator; exactly the tower's
convolutions are quantized (the first convolution and the heads keep fp32 weights); its answers
stay near the fp32 net's and the agreement the sidecar records is what a recount finds; a net
below the wanted agreement is refused and nothing is written; a quantized, corrupt or
overwritten source, and a failure inside onnxruntime's quantizer, are refused in one line;
the command works from the CLI; a training run's local backend plays each net's int8 encoding
exactly where ``selfplay.int8`` and the CPU say so, quantizes a net once and reuses it, and plays
a refused net in fp32.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.game.board import Board  # noqa: E402
from nogobot.net.inference import OnnxEvaluator  # noqa: E402
from nogobot.net.modelfile import check_model  # noqa: E402
from nogobot.core import machine  # noqa: E402
from nogobot.train import backend  # noqa: E402
from nogobot.train.config import ConfigError, load_config  # noqa: E402
from nogobot.train.export import export_net  # noqa: E402
from nogobot.train.model import NetConfig, build_model  # noqa: E402
from nogobot.train.quantize import (QuantizeError, agreement, policy_games,  # noqa: E402
                                    quantize_net)

pytestmark = pytest.mark.torch
torch.set_num_threads(1)
TINY = NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """A tiny net with batch-norm statistics of its own, exported to tiny.onnx."""
    torch.manual_seed(5)
    model = build_model(TINY)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(8, 12, 9, 9))
    model.eval()
    out = tmp_path_factory.mktemp("nets") / "tiny.onnx"
    export_net(model, out, training={"board_sizes": [9], "selfplay_games": 10}, sizes=(9,))
    return out


def weights_of(path, prefix):
    """The initializer names feeding the convolutions whose node names start with prefix, and
    whether each is stored as float."""
    m = onnx.load(str(path))
    inits = {i.name: i for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    found = {}
    for node in m.graph.node:
        if node.op_type != "Conv" or not node.name.startswith(prefix):
            continue
        w = node.input[1]
        if w in producers and producers[w].op_type == "DequantizeLinear":
            w = producers[w].input[0]
        found[node.name] = inits[w].data_type == onnx.TensorProto.FLOAT
    return found


def test_policy_games_are_legal_games_to_the_end(net):
    ev = OnnxEvaluator(net, device="cpu", threads=1)
    games = policy_games(ev, 9, 3, seed=1)
    assert len(games) == 3
    for positions in games:
        assert positions[0].ply == 0
        assert [b.ply for b in positions] == list(range(len(positions)))
        assert not any(b.is_terminal() for b in positions)  # each has a move to sample
    assert policy_games(ev, 9, 3, seed=1)[2][-1].ply == games[2][-1].ply  # seeded


def test_the_tower_is_int8_and_the_rest_fp32(net, tmp_path):
    out = tmp_path / "tiny-int8.onnx"
    meta = quantize_net(net, out, games=6, positions=64, min_agreement=0.0)
    check_model(out)  # sidecar present, sha256 matches, graph has the contract's outputs
    q = meta["quantization"]
    assert q["source"]["sha256"] == check_model(net)[0]["sha256"]
    assert q["calibration"]["games"] == 3 and q["agreement"]["games"] == 3
    tower = weights_of(out, "/blocks.")
    assert tower and not any(tower.values())  # every tower convolution reads int8 weights
    ends = {k: v for k, v in weights_of(out, "/").items() if k not in tower}
    assert any(k.startswith("/stem") for k in ends) and any(k.startswith("/policy") for k in ends)
    assert all(ends.values())  # the first convolution and the heads stay fp32
    fp32 = OnnxEvaluator(net, device="cpu", threads=1)
    int8 = OnnxEvaluator(out, device="cpu", threads=1)
    boards = [b for g in policy_games(fp32, 9, 2, seed=9) for b in g][::4]
    a, b = fp32.evaluate_boards(boards), int8.evaluate_boards(boards)
    assert not np.array_equal(a.value, b.value)  # a different graph...
    assert np.abs(a.value - b.value).max() < 0.1  # ...that answers nearly alike
    recount = agreement(fp32.session, int8.session, boards)
    assert 0.0 <= recount["top1"] <= 1.0 and recount["positions"] == len(boards)
    itself = agreement(fp32.session, fp32.session, boards)
    assert itself["top1"] == 1.0 and itself["value_diff_max"] == 0.0


def test_refusals_write_nothing(net, tmp_path):
    out = tmp_path / "x.onnx"
    top1 = quantize_net(net, out, games=6, positions=64, min_agreement=0.0)[
        "quantization"]["agreement"]["top1"]
    with pytest.raises(QuantizeError, match="already quantized"):
        quantize_net(out, tmp_path / "y.onnx", games=6, positions=64)
    if top1 < 1.0:  # the same seed makes the same net: asking for more is refused
        with pytest.raises(QuantizeError, match="agrees with the fp32 net's in only"):
            quantize_net(net, tmp_path / "z.onnx", games=6, positions=64,
                         min_agreement=top1 + 1e-3)
        assert not (tmp_path / "z.onnx").exists()
    with pytest.raises(QuantizeError, match="overwrite the source"):
        quantize_net(net, net, games=6, positions=64)
    with pytest.raises(QuantizeError, match="must end in .onnx"):
        quantize_net(net, tmp_path / "z.bin", games=6, positions=64)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(net.read_bytes()[:-10])  # truncated: its sha256 no longer matches
    (tmp_path / "broken.yaml").write_text(net.with_suffix(".yaml").read_text())
    with pytest.raises(QuantizeError, match="broken.onnx"):
        quantize_net(broken, tmp_path / "z.onnx", games=6, positions=64)
    assert not (tmp_path / "z.onnx").exists()


def test_quantize_command(net, tmp_path):
    out = tmp_path / "cli-int8.onnx"
    res = CliRunner().invoke(main, ["train", "quantize", str(net), "-o", str(out), "--games",
                                    "4", "--positions", "32", "--min-agreement", "0"])
    assert res.exit_code == 0, res.output
    assert "best move as fp32's in" in res.output and "of 32 positions of 2 games" in res.output
    board = Board(9)
    assert OnnxEvaluator(out, device="cpu", threads=1).evaluate_boards([board]).value.shape == (1,)
    res = CliRunner().invoke(main, ["train", "quantize", str(out), "-o", str(tmp_path / "y.onnx")])
    assert res.exit_code != 0 and "already quantized" in res.output


def test_a_quantizer_failure_is_one_line(net, tmp_path, monkeypatch):
    import onnxruntime.quantization as q

    def boom(*args, **kwargs):
        raise RuntimeError("unsupported graph\nsecond line")

    monkeypatch.setattr(q, "quantize_static", boom)
    with pytest.raises(QuantizeError, match="could not quantize it .RuntimeError: unsupported"):
        quantize_net(net, tmp_path / "z.onnx", games=4, positions=16)
    assert not (tmp_path / "z.onnx").exists()


@pytest.mark.parametrize("setting, device, fast, plays", [
    ("auto", "cpu", True, True), ("auto", "cpu", False, False), ("always", "cpu", False, True),
    ("never", "cpu", True, False), ("always", "cuda", True, False), ("auto", "cuda", True, False)])
def test_which_machines_play_int8(monkeypatch, setting, device, fast, plays):
    monkeypatch.setattr(machine, "int8_dot_product", lambda: fast)
    assert backend.plays_int8(setting, device) is plays


def test_selfplay_int8_setting_is_checked(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("selfplay:\n  int8: auto\n")
    assert load_config(cfg).selfplay.int8 == "auto"
    assert load_config(tmp_path / "c.yaml", ["selfplay.int8=never"]).selfplay.int8 == "never"
    cfg.write_text("selfplay:\n  int8: yes\n")  # YAML's yes is a boolean, not a setting
    with pytest.raises(ConfigError, match="selfplay.int8"):
        load_config(cfg)


def test_local_backend_plays_each_nets_int8_encoding_once_made(net, tmp_path, monkeypatch):
    src = tmp_path / "gen0003-s0.onnx"
    src.write_bytes(net.read_bytes())
    src.with_suffix(".yaml").write_text(net.with_suffix(".yaml").read_text())
    monkeypatch.setattr(backend, "INT8_GAMES", 4)
    monkeypatch.setattr(backend, "INT8_POSITIONS", 32)
    monkeypatch.setattr(backend, "INT8_MIN_AGREEMENT", 0.0)
    assert backend.LocalBackend(int8=False).playing_net(src) == str(src)
    local = backend.LocalBackend(int8=True)
    assert local.playing_net("random") == "random"  # a baseline agent, not a net
    played = local.playing_net(src)
    assert played == str(tmp_path / "gen0003-s0-int8.onnx")
    meta, _ = check_model(played)
    assert meta["quantization"]["source"]["sha256"] == check_model(src)[0]["sha256"]
    assert meta["quantization"]["calibration"]["games"] == 2
    made = (tmp_path / "gen0003-s0-int8.onnx").stat().st_mtime_ns
    assert backend.LocalBackend(int8=True).playing_net(src) == played  # a resumed run
    assert (tmp_path / "gen0003-s0-int8.onnx").stat().st_mtime_ns == made


def test_local_backend_plays_a_refused_net_in_fp32(net, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(backend, "INT8_GAMES", 4)
    monkeypatch.setattr(backend, "INT8_POSITIONS", 32)
    monkeypatch.setattr(backend, "INT8_MIN_AGREEMENT", 1.01)
    local = backend.LocalBackend(int8=True)
    assert local.playing_net(net) == str(net)
    assert local.playing_net(net) == str(net)
    err = capsys.readouterr().err
    assert err.count("played in fp32") == 1 and not list(net.parent.glob("*-int8.*"))
