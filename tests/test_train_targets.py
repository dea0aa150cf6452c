"""The efficiency switches of issue 14: value targets mixed with the root search value
(``training.value_target_mix``) and KataGo's soft policy head (``network.soft_policy``)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import TINY_CONFIG  # noqa: E402

from nogobot.train.config import TrainingConfig  # noqa: E402
from nogobot.train.model import (  # noqa: E402
    NetConfig,
    build_model,
    multitask_loss,
    save_checkpoint,
    soft_policy_target,
)
from nogobot.train.replay import ReplayBuffer, load_shard, sample_batch  # noqa: E402
from nogobot.train.trainer import Trainer, loss_weights  # noqa: E402

pytestmark = pytest.mark.torch
torch.set_num_threads(1)
TINY = dict(blocks=1, channels=8, head_channels=4, value_hidden=8)


def test_shards_record_the_root_search_value(selfplay_shards):
    for p in sorted(selfplay_shards.folder.rglob("*.npz")):
        d = load_shard(p)
        rv = d["root_value"]
        assert rv.shape == d["value"].shape and rv.dtype == np.float32
        assert np.all((rv >= 0) & (rv <= 1))
        # A uniform net's search is not the game result: the two targets really differ.
        assert not np.array_equal(rv, d["value"])
        # The last mover won, and the search saw it coming (a position with one winning reply
        # is solved or the only move's value is a win).
        assert rv[-1] > 0.5


def test_value_mix_blends_result_and_search_value():
    size, n = 3, 6
    value = np.array([1, 0, 1, 0, 1, 0], np.float32)
    root = np.array([0.8, 0.3, 0.6, 0.1, 0.9, 0.5], np.float32)
    data = {size: {
        "planes": np.arange(n, dtype=np.uint8)[:, None, None, None] * np.ones((1, 12, size, size),
                                                                            np.uint8),
        "policy": np.tile(np.eye(9, dtype=np.float16)[0], (n, 1)),
        "policy_weight": np.ones(n, np.float32), "aux": np.full((n, 2), -1, np.int16),
        "value": value, "root_value": root, "score": np.zeros(n, np.float32),
        "dominion": np.zeros((n, size, size), np.int8)}}
    for lam in (0.0, 0.5, 1.0):
        t = sample_batch(data, 32, np.random.default_rng(2), symmetries=False, value_mix=lam)
        idx = t["planes"][:, 0, 0, 0].long().numpy()  # plane value = row index
        want = (1 - lam) * value[idx] + lam * root[idx]
        np.testing.assert_allclose(t["value"].numpy(), want, atol=1e-6)


def test_old_shards_without_root_value_fall_back_to_the_result(tmp_path, selfplay_shards):
    src = sorted(selfplay_shards.folder.rglob("*.npz"))[0]
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files if k != "root_value"}
    np.savez(tmp_path / "old.npz", **arrays)
    d = load_shard(tmp_path / "old.npz")
    np.testing.assert_array_equal(d["root_value"], d["value"])
    data = ReplayBuffer(tmp_path, 10).load()
    assert "root_value" in data[5]


def test_soft_policy_target_flattens_and_keeps_the_row_mass():
    p = torch.tensor([[0.9, 0.1, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.8, 0.2, 0.0, 0.0]])
    s = soft_policy_target(p)
    np.testing.assert_allclose(s.sum(1).numpy(), [1.0, 0.0, 2.0], atol=1e-6)
    assert float(s[0, 1] / s[0, 0]) == pytest.approx((0.1 / 0.9) ** 0.25, rel=1e-5)
    assert float(s[0, 2]) == 0.0  # unsearched moves stay out of the target


def test_soft_policy_head_is_trained_but_not_exported(tmp_path):
    from nogobot.train.export import export_net

    cfg = NetConfig(**TINY, soft_policy=True)
    net = build_model(cfg).eval()
    x = torch.zeros(2, 12, 5, 5)
    out = net(x)
    assert out["soft_policy"].shape == (2, 25) and out["aux_policy"].shape == (2, 2, 25)
    tgt = {"policy": torch.eye(25)[:2], "value": torch.tensor([1.0, 0.0]),
           "dominion": torch.zeros(2, 5, 5), "score": torch.zeros(2)}
    w = loss_weights(TrainingConfig(soft_policy_weight=8.0))
    total, terms = multitask_loss(out, tgt, w)
    _, terms_no = multitask_loss({k: v for k, v in out.items() if k != "soft_policy"}, tgt, w)
    assert "soft_policy" in terms and "soft_policy" not in terms_no
    assert float(total.detach()) == pytest.approx(
        sum(w[k] * v for k, v in terms.items()), rel=1e-5)
    # The exported graph keeps the 4-output contract and the main policy plane.
    path = tmp_path / "soft.onnx"
    export_net(net, path, sizes=[5])
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [o.name for o in sess.get_outputs()] == ["policy", "value", "dominion", "score"]
    pol = sess.run(None, {"planes": x.numpy()})[0]
    np.testing.assert_allclose(pol, out["policy"].detach().numpy(), atol=1e-4)


def test_a_checkpoint_without_the_soft_plane_warm_starts_one_with_it(tmp_path):
    old = build_model(NetConfig(**TINY))
    save_checkpoint(tmp_path / "old.pt", old)
    t = Trainer(NetConfig(**TINY, soft_policy=True), TrainingConfig())
    assert t.init_from(tmp_path / "old.pt") == []
    x = torch.randn(3, 12, 5, 5)
    old.eval()
    t.model.eval()
    with torch.no_grad():
        a, b = old(x), t.model(x)
    for k in ("policy", "aux_policy", "value_logit"):
        torch.testing.assert_close(a[k], b[k])


# --------------------------------------------------------------------------------------------
# The curriculum's stage switch: distillation from the generator, gating at equal compute
# --------------------------------------------------------------------------------------------

def test_distill_targets_at_full_weight_are_the_teachers_legal_policy_and_value():
    from nogobot.game.board import Board
    from nogobot.net.features import board_planes
    from nogobot.train.trainer import distill_targets

    teacher = build_model(NetConfig(**TINY)).eval()
    b = Board(5)
    for m in (0, 6, 12, 18):
        b.play(m)
    planes = torch.from_numpy(np.stack([board_planes(b)]).astype(np.float32))
    batch = {"planes": planes, "policy": torch.zeros(1, 25), "value": torch.ones(1)}
    out = distill_targets(teacher, batch, 1.0)
    legal = planes[0, 2].flatten() > 0
    assert float(out["policy"][0][~legal].abs().sum()) == 0.0  # occupied/illegal: no mass
    assert float(out["policy"][0].sum()) == pytest.approx(1.0, abs=1e-5)
    with torch.no_grad():
        t = teacher(planes)
    want = torch.softmax(t["policy"][0][legal], 0)
    torch.testing.assert_close(out["policy"][0][legal], want)
    assert float(out["value"][0]) == pytest.approx(float(torch.sigmoid(t["value_logit"][0])))
    half = distill_targets(teacher, batch, 0.5)
    assert float(half["value"][0]) == pytest.approx(0.5 + 0.5 * float(out["value"][0]))


def test_a_distilled_student_moves_towards_its_teacher(selfplay_shards):
    data = ReplayBuffer(selfplay_shards.folder, 10).load()
    teacher = build_model(NetConfig(blocks=1, channels=8, head_channels=4, value_hidden=8,
                                    garb=False)).eval()
    with torch.no_grad():  # a decided teacher: far from a fresh net's flat policy
        teacher.policy.conv_out.weight.mul_(40.0)
    t = Trainer(NetConfig(blocks=2, channels=8, head_channels=4, value_hidden=8),
                TrainingConfig(lr=0.05, momentum=0.8, batch_size=32, symmetries=False), seed=1)
    probe = sample_batch(data, 64, np.random.default_rng(9), symmetries=False)

    def kl() -> float:
        from nogobot.train.trainer import distill_targets

        tgt = distill_targets(teacher, probe, 1.0)["policy"]
        with torch.no_grad():
            logp = torch.log_softmax(t.model.eval()(probe["planes"])["policy"], 1)
        return float((tgt * (torch.log(tgt.clamp(min=1e-12)) - logp)).sum(1).mean())

    before = kl()
    t.train(data, 60, teacher=teacher, distill=1.0)
    assert kl() < 0.7 * before


def test_stage_switch_gates_with_more_games_at_equal_compute(tmp_path):
    """A plateaued stage 0 gates the stage-1 net with ``stage_switch_games`` games and, at
    equal compute, fewer playouts for the slower net; stage 1 trained with a teacher."""
    from pathlib import Path

    from nogobot.train.backend import LocalBackend
    from nogobot.train.config import load_config
    from nogobot.train.loop import TrainingRun
    from nogobot.train.match import MatchResult

    cfg = load_config(TINY_CONFIG, overrides=[
        "gating.equal_compute=true", "gating.stage_switch_games=6", "gating.games=2",
        "curriculum.distill_weight=0.5", "network.stages.1.channels=64",
        "network.stages.1.blocks=4"])

    class Recorder(LocalBackend):
        calls: list = []

        def play_gating(self, candidate, best, games, size, gating, seed, use_solver,
                        progress=None, candidate_playouts=None):
            self.calls.append((Path(candidate).name, games, candidate_playouts))
            return MatchResult("c", "b", wins=0, losses=games, outcomes=[False] * games)

    run = TrainingRun(cfg, tmp_path / "run", backend=Recorder())
    run.initialise()
    run.run(generations=2)
    calls = Recorder.calls
    assert calls[0] == ("gen0001-s0.onnx", 2, None)  # the same stage: as configured
    name, games, playouts = calls[1]  # stage 0 plateaued after one failure
    assert name == "gen0002-s1.onnx" and games == 6
    assert 1 <= playouts < cfg.gating.playouts  # a 4x64 net is slower than a 1x8 one
    assert run.trainer(1).meta["steps"] == 2 * cfg.training.steps_per_generation


def test_the_next_stage_is_tried_on_schedule_without_same_stage_gating(tmp_path):
    from nogobot.train.config import load_config
    from nogobot.train.loop import TrainingRun

    cfg = load_config(TINY_CONFIG, overrides=["gating.games=0", "gating.stage_switch_games=2",
                                              "curriculum.try_next_every=2"])
    run = TrainingRun(cfg, tmp_path / "run")
    run.initialise()
    run.run(generations=2)
    from nogobot.train.loop import read_csv

    gens = read_csv(run.dir / "generations.csv")
    assert [r["stage"] for r in gens] == ["0", "1"]  # gen 1 as usual, gen 2 tries stage 1
    elo = read_csv(run.dir / "elo.csv")
    assert int(elo[0]["wins"]) + int(elo[0]["losses"]) == 0  # same stage: accepted unplayed
    assert int(elo[1]["wins"]) + int(elo[1]["losses"]) == 2  # the stage switch is played


def test_campaign_snapshot_resumes_in_a_new_run_directory(tmp_path):
    """snapshot -> a new run from the campaign folder keeps the weights, the optimiser state,
    the step counters and the self-play games counted so far."""
    from click.testing import CliRunner

    from nogobot.cli import main
    from nogobot.train.campaign import read_campaign
    from nogobot.train.config import load_config
    from nogobot.train.loop import TrainingRun

    cfg = load_config(TINY_CONFIG, overrides=["gating.games=0"])
    first = TrainingRun(cfg, tmp_path / "a")
    first.initialise()
    first.run(generations=1)
    for note in ("first stretch.", "second stretch."):  # a note adds to the line's history
        r = CliRunner().invoke(main, ["train", "snapshot", str(tmp_path / "a"),
                                      str(tmp_path / "camp"), "--note", note])
        assert r.exit_code == 0, r.output
    camp = read_campaign(tmp_path / "camp")
    assert camp["note"] == "first stretch. second stretch."
    assert camp["selfplay_games"] == 4 and camp["generations"] == 1 and camp["stage"] == 0
    cfg2 = load_config(TINY_CONFIG, overrides=["gating.games=0",
                                               f"init_checkpoint={tmp_path / 'camp'}"])
    second = TrainingRun(cfg2, tmp_path / "b")
    second.initialise()
    a, b = first.trainer(0), second.trainer(0)
    assert b.meta["steps"] == a.meta["steps"] == cfg.training.steps_per_generation
    for p, q in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(p, q)
    assert b.opt.state_dict()["state"]  # momentum buffers came along
    second.run(generations=1)
    camp2 = __import__("yaml").safe_load(
        (second.dir / "nets" / "gen0001-s0.yaml").read_text())["training"]
    assert camp2["selfplay_games"] == 8  # 4 before + 4 in this run
    bad = CliRunner().invoke(main, ["train", "snapshot", str(tmp_path / "nope"),
                                    str(tmp_path / "c")])
    assert bad.exit_code != 0 and "state.json" in bad.output


def test_ledger_plot_and_its_errors(tmp_path):
    pytest.importorskip("matplotlib")
    from click.testing import CliRunner

    from nogobot.cli import main

    led = tmp_path / "ledger.yaml"
    led.write_text("anchor: a\nnets:\n"
                   "  - {name: a, selfplay_games: 100, elo: 0}\n"
                   "  - {name: b, selfplay_games: 300, elo: 120, elo_ci: [60, 180]}\n"
                   "  - {name: c, selfplay_games: 300, elo: 80, line: arm}\n")
    r = CliRunner().invoke(main, ["train", "report", str(led)])
    assert r.exit_code == 0, r.output
    png = tmp_path / "ledger.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    led.write_text("nets:\n  - {name: a, elo: 0}\n")
    r = CliRunner().invoke(main, ["train", "report", str(led)])
    assert r.exit_code != 0 and "nets[0] needs 'selfplay_games'" in r.output


def test_extra_games_train_beside_the_window_and_a_missing_folder_is_named(tmp_path):
    """replay.extra_games (e.g. the teacher's late-position games) join every generation's
    training data; a path that is not there stops the run before it writes anything."""
    from nogobot.train.config import ConfigError, load_config
    from nogobot.train.data import load_shard
    from nogobot.train.loop import TrainingRun, read_csv
    from nogobot.train.teacher import generate_teacher_games

    size = load_config(TINY_CONFIG).board_size
    extra = tmp_path / "teacher"
    assert generate_teacher_games([extra / "g00000", extra / "g00001"], size, 100, seed=1) == 2
    cfg = load_config(TINY_CONFIG, overrides=["gating.games=0",
                                              f"replay.extra_games=['{extra}']"])
    assert cfg.replay.extra_games == [str(extra)]
    run = TrainingRun(cfg, tmp_path / "run")
    run.initialise()
    run.run(generations=1)
    window = sum(len(load_shard(p)["value"]) for p in (run.dir / "games").rglob("*.npz"))
    added = sum(len(load_shard(p)["value"]) for p in extra.glob("*.npz"))
    rows = read_csv(run.dir / "metrics.csv")
    assert window > 0 and added > 0
    assert {int(r["positions"]) for r in rows} == {window + added}

    bad = load_config(TINY_CONFIG, overrides=[f"replay.extra_games=['{tmp_path / 'nope'}']"])
    with pytest.raises(ConfigError, match="replay.extra_games: .*nope: no such file"):
        TrainingRun(bad, tmp_path / "run2")
    assert not (tmp_path / "run2").exists()
    with pytest.raises(ConfigError, match="expected a list of paths"):
        load_config(TINY_CONFIG, overrides=["replay.extra_games=3"])
