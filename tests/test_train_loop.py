"""End to end on the tiny config (5x5, 1-block net, a few playouts; well under a minute):

* `nogobot train configs/tiny.yaml --run-dir D`: self-play -> train (two curriculum stages) ->
  export -> gate, twice; the run directory holds shards, checkpoints, nets, CSVs and state;
* the engine loads the trained nets (OnnxEvaluator + MCTSAgent) and plays legal games;
* `nogobot train report D` draws the PNG; `nogobot selfplay` (2 worker processes) writes a
  dataset; `--from-games` trains supervised on it;
* resume after kill -9: a subprocess run is killed during self-play and again later; rerunning
  keeps every finished game byte for byte, never repeats a generation, and finishes.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402
from conftest import ROOT, TINY_CONFIG  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.engine.player import MCTSAgent  # noqa: E402
from nogobot.game.board import Board  # noqa: E402
from nogobot.net.features import boards_planes  # noqa: E402
from nogobot.net.inference import OnnxEvaluator  # noqa: E402
from nogobot.train.loop import read_csv  # noqa: E402
from nogobot.train.model import load_checkpoint  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def invoke(args):
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny") / "run"
    invoke(["train", str(TINY_CONFIG), "--run-dir", str(d), "--device", "cpu"])
    return d


def test_run_directory_after_two_generations(run_dir):
    state = json.loads((run_dir / "state.json").read_text())
    assert state["generation"] == 3 and state["phase"] == "selfplay"
    assert state["games_total"] == 8
    assert len(list((run_dir / "games").rglob("*.npz"))) == 8
    assert len(list((run_dir / "games").rglob("*.sgf"))) == 8
    assert (run_dir / "ckpt" / "stage0.pt").exists() and (run_dir / "ckpt" / "stage1.pt").exists()
    elo = read_csv(run_dir / "elo.csv")
    assert [int(r["generation"]) for r in elo] == [1, 2]
    gens = read_csv(run_dir / "generations.csv")
    assert [int(r["generation"]) for r in gens] == [1, 2]
    metrics = read_csv(run_dir / "metrics.csv")
    assert {r["net"] for r in metrics} == {"b1c8", "b2c8"}  # both curriculum stages trained
    assert (run_dir / state["best"]).exists()
    if any(r["accepted"] == "True" for r in elo):
        assert (run_dir / "ckpt" / "best.pt").exists()
    # The tiny config plateaus after one failure: generation 2 gates the stage-1 net.
    assert gens[1]["stage"] == ("1" if gens[0]["accepted"] == "False" else "0")


def test_engine_plays_legal_games_with_the_trained_nets(run_dir):
    nets = sorted((run_dir / "nets").glob("*.onnx"))
    assert len(nets) >= 2
    for net, size in ((nets[-1], 5), (nets[-1], 7)):
        ev = OnnxEvaluator(net, device="cpu", threads=1)
        agent = MCTSAgent(ev, size=size, playouts=16, seconds=None, seed=1, log=None)
        b = Board(size)
        while not b.is_terminal():
            b.play(agent.select_move(b))  # raises IllegalMove if the engine misbehaves
        assert b.winner() in (1, 2)


def test_report_png(run_dir):
    r = CliRunner().invoke(main, ["train", "report", str(run_dir)])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert r.exit_code != 0 and "matplotlib" in r.output
        return
    assert r.exit_code == 0, r.output
    png = run_dir / "report.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "generations" in r.output


def test_selfplay_dataset_then_from_games(run_dir, tmp_path):
    best = run_dir / json.loads((run_dir / "state.json").read_text())["best"]
    out = tmp_path / "data"
    invoke(["selfplay", "--model", str(best), "--games", "2", "--out", str(out),
            "--playouts", "8", "--size", "5", "--workers", "2", "--no-solver"])
    assert len(list(out.glob("g*.npz"))) == 2 and len(list(out.glob("g*.sgf"))) == 2
    # SGF only (as from another program) -> supervised training, no self-play.
    sgf_only = tmp_path / "sgf"
    sgf_only.mkdir()
    for p in out.glob("*.sgf"):
        (sgf_only / p.name).write_bytes(p.read_bytes())
    d = tmp_path / "sup"
    invoke(["train", str(TINY_CONFIG), "--run-dir", str(d), "--from-games", str(sgf_only),
            "--from-games-steps", "3", "--generations", "0"])
    state = json.loads((d / "state.json").read_text())
    assert state["from_games"]["sgf"] == 2 and state["generation"] == 1
    assert (d / "nets" / "gen0000-s0.onnx").exists()
    assert [r["net"] for r in read_csv(d / "metrics.csv")][0] == "supervised"


def test_window_from_seeds_a_new_run_with_the_old_runs_games(run_dir, tmp_path):
    d = tmp_path / "seeded"
    r = invoke(["train", str(TINY_CONFIG), "--run-dir", str(d), "--window-from", str(run_dir),
                "--set", "replay.window_games=5", "--generations", "0"])
    old = sorted((run_dir / "games").rglob("*.npz"))
    seeded = sorted((d / "games").rglob("*.npz"))
    # the old run's newest 5 games, in their order, under games/gen0000/ (before generation 1)
    assert [p.relative_to(d / "games" / "gen0000") for p in seeded] == \
        [p.relative_to(run_dir / "games") for p in old[-5:]]
    assert all(p.read_bytes() == q.read_bytes() for p, q in zip(seeded, old[-5:]))
    assert all(p.with_suffix(".sgf").exists() for p in seeded)
    assert "5 games of" in r.output
    assert json.loads((d / "state.json").read_text())["generation"] == 1
    # a later generation's games sort after them, so they are the first to leave the window
    assert sorted([*seeded, d / "games" / "gen0001" / "g00000.npz"])[-1].parent.name == "gen0001"
    # a run that has started keeps its games: the option is only noted
    again = invoke(["train", str(TINY_CONFIG), "--run-dir", str(d), "--window-from",
                    str(run_dir), "--generations", "0"])
    assert "--window-from ignored" in again.output
    assert sorted((d / "games").rglob("*.npz")) == seeded


def test_an_averaged_run_plays_and_keeps_the_average(run_dir, tmp_path):
    """With training.average_decay the run's checkpoints hold the average as the net that
    plays and the trained weights beside it; its nets are exported from the average."""
    d = tmp_path / "averaged"
    invoke(["train", str(TINY_CONFIG), "--run-dir", str(d), "--window-from", str(run_dir),
            "--set", "training.average_decay=0.5", "--generations", "1"])
    model, state = load_checkpoint(d / "ckpt" / "stage0.pt")
    played, trained = model.state_dict(), state["trained"]
    assert any(not torch.equal(played[k], trained[k]) for k in played
               if played[k].is_floating_point())
    # The exported net computes what the average computes, not what the trained weights do.
    planes = boards_planes([Board(5)])
    onnx_policy = OnnxEvaluator(d / "nets" / "gen0001-s0.onnx", device="cpu").evaluate(
        planes).policy_logits
    trained_net = type(model)(model.cfg).eval()
    trained_net.load_state_dict(trained)
    with torch.no_grad():
        x = torch.from_numpy(planes)
        want, other = model(x)["policy"].numpy(), trained_net(x)["policy"].numpy()
    assert abs(onnx_policy - want).max() < 1e-4 < abs(onnx_policy - other).max()


def test_window_from_a_folder_without_games_is_refused(tmp_path):
    (tmp_path / "empty" / "games").mkdir(parents=True)
    r = CliRunner().invoke(main, ["train", str(TINY_CONFIG), "--run-dir", str(tmp_path / "new"),
                                  "--window-from", str(tmp_path / "empty"), "--generations", "0"])
    assert r.exit_code != 0
    assert "holds no finished game" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "new" / "state.json").exists()


def _digest(folder: Path) -> dict:
    """Digests of the FINISHED games' files (an .npz on disk marks a finished game; an .sgf
    without its .npz belongs to a game that was in play when the run was killed)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix in (".npz", ".sgf") and p.with_suffix(".npz").exists()}


def _start(d: Path, generations: int) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "nogobot", "train", str(TINY_CONFIG),
                             "--run-dir", str(d), "--device", "cpu", "--generations",
                             str(generations)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _kill_when(proc: subprocess.Popen, cond, timeout: float = 120.0) -> bool:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if cond():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    pytest.fail("the training run made no progress")


def test_resume_after_kill(tmp_path):
    d = tmp_path / "run"
    # 1) kill -9 during the first self-play phase, once a game is written
    p = _start(d, 3)
    killed = _kill_when(p, lambda: any((d / "games").rglob("*.npz")) if (d / "games").exists()
                        else False)
    assert killed, p.stderr.read().decode()[-2000:]
    before = _digest(d / "games")
    assert before
    # 2) rerun; kill -9 again once generation 1 has been gated
    p = _start(d, 3)
    _kill_when(p, lambda: (d / "elo.csv").exists())
    middle = _digest(d / "games")
    assert all(middle.get(k) == v for k, v in before.items())  # nothing finished was lost
    ckpt_gen1 = (d / "ckpt" / "stage0.pt").read_bytes()
    # 3) rerun to the end
    p = _start(d, 3)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()[-3000:]
    assert "resuming" in err.decode()
    after = _digest(d / "games")
    assert all(after.get(k) == v for k, v in middle.items())
    assert len([k for k in after if k.endswith(".npz")]) == 12  # 3 generations x 4 games
    state = json.loads((d / "state.json").read_text())
    assert state["generation"] == 4 and state["games_total"] == 12
    assert [int(r["generation"]) for r in read_csv(d / "elo.csv")] == [1, 2, 3]
    assert [int(r["generation"]) for r in read_csv(d / "generations.csv")] == [1, 2, 3]
    assert (d / "ckpt" / "stage0.pt").read_bytes() != ckpt_gen1  # training went on
    assert not list(d.rglob("*.tmp"))


@pytest.mark.parametrize("config,failures,generation,gated", [
    ("campaign.yaml", 0, 5, 0),        # the current stage until it plateaus...
    ("campaign.yaml", 3, 5, 1),        # ...then the next stage's net, trained all along
    ("campaign.yaml", 0, 8, 1),        # and every 8th generation
    ("campaign-cpu.yaml", 0, 5, 0),
    ("campaign-cpu.yaml", 3, 5, 0),    # the next stage is not trained: never gated
    ("campaign-cpu.yaml", 30, 8, 0),
])
def test_the_next_stage_is_gated_only_where_it_is_trained(config, failures, generation, gated):
    from types import SimpleNamespace

    from nogobot.train.config import load_config
    from nogobot.train.loop import TrainingRun

    cfg = load_config(Path(__file__).resolve().parents[1] / "configs" / "campaign" / config)
    state = {"stage": 0, "failures": failures, "generation": generation}
    assert TrainingRun.gate_stage(SimpleNamespace(cfg=cfg, state=state)) == gated
