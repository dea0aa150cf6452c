"""`nogobot train bootstrap` is an ordinary subcommand, and a training config that starts from
the bootstrap's checkpoint works from a fresh clone: `train run` writes that checkpoint first and
says so. Budgets are tiny (a few greedy games, seconds of training) so each test takes seconds."""

import shutil

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TINY = ["--sizes", "5,7", "--games", "6,6", "--minutes", "0.02", "--eval-games", "2",
        "--blocks", "1", "--channels", "8"]


def test_bootstrap_subcommand_writes_net_checkpoint_and_its_command(tmp_path):
    from nogobot.cli import main

    out, ckpt = tmp_path / "boot.onnx", tmp_path / "b" / "model.pt"
    r = CliRunner().invoke(main, ["train", "bootstrap", "--out", str(out), "--checkpoint",
                                  str(ckpt), *TINY])
    assert r.exit_code == 0, r.output
    assert ckpt.is_file() and out.is_file()
    meta = yaml.safe_load(out.with_suffix(".yaml").read_text())
    assert meta["training"]["command"].startswith("nogobot train bootstrap --out ")
    assert "--sizes 5,7" in meta["training"]["command"]
    assert meta["training"]["board_sizes"] == [5, 7]
    bad = CliRunner().invoke(main, ["train", "bootstrap", "--sizes", "5,x"])
    assert bad.exit_code != 0 and "expected comma-separated integers" in bad.output
    bad = CliRunner().invoke(main, ["train", "bootstrap", "--sizes", "5,7", "--games", "3"])
    assert bad.exit_code != 0 and "2 board sizes but 1 game counts" in bad.output


def test_cpu_config_from_a_fresh_clone_bootstraps_itself(tmp_path, monkeypatch):
    from nogobot.cli import main
    from nogobot.train import bootstrap

    cfg = yaml.safe_load((ROOT / "configs/cpu.yaml").read_text())
    if cfg.get("init_checkpoint") != bootstrap.DEFAULT_CHECKPOINT:
        pytest.skip("cpu.yaml no longer starts from the bootstrap checkpoint")
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)  # a fresh clone: no runs/ at all
    real_run = bootstrap.run

    def tiny_run(settings):  # the same bootstrap, on a budget of seconds
        settings.sizes, settings.games, settings.minutes = (9,), (6,), 0.02
        settings.eval_games = 2
        real_run(settings)

    monkeypatch.setattr(bootstrap, "run", tiny_run)
    r = CliRunner().invoke(main, ["train", "configs/cpu.yaml", "--run-dir", "runs/cpu1",
                                  "--generations", "0"])
    assert r.exit_code == 0, r.output
    assert "is not there yet: training it first with `nogobot train bootstrap" in r.output
    assert (tmp_path / "runs/bootstrap/model.pt").is_file()
    assert (tmp_path / "runs/bootstrap/boot.onnx").is_file()
    assert (tmp_path / "runs/cpu1/state.json").is_file()
    # Any other missing init checkpoint is still an error naming it.
    r = CliRunner().invoke(main, ["train", "configs/cpu.yaml", "--run-dir", "runs/x",
                                  "--set", "init_checkpoint=nope.pt"])
    assert r.exit_code != 0 and "init_checkpoint nope.pt: no such file" in r.output
