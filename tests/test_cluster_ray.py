"""Scale-out on Ray, on a two-node Ray cluster inside this machine (``ray.cluster_utils``,
started once for the module; 1 CPU and 100 MB of object store per node):

* a tiny training generation (configs/tiny.yaml, 100 games) whose worker node is removed while
  its actor has games in flight: the generation completes (self-play, training, gating over the
  actors), every game is written exactly once, the lost games were re-queued, and a node that
  joins afterwards gets games;
* ``nogobot train ladder --ray`` and a two-game ``nogobot tournament --ray`` over the same
  cluster: every game recorded once, with the node it ran on; a rerun resumes (plays nothing);
* bad input: a game needing more CPUs than any node has, a game that cannot get its cores
  because other work holds them (a short --reserve-timeout), and an actor whose nogobot differs
  from the driver's, each refused with one clear line.
"""

import json
import os
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # nodes on 127.0.0.1 only
ray = pytest.importorskip("ray")

from click.testing import CliRunner  # noqa: E402
from conftest import ROOT, TINY_CONFIG  # noqa: E402
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.tournament.folder import read_log  # noqa: E402

pytestmark = pytest.mark.slow
NODE = {"num_cpus": 1, "object_store_memory": 100 * 2**20}


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    worker = c.add_node(**NODE)
    ray.init(address=c.address, logging_level="WARNING", log_to_driver=False)
    yield c, worker
    ray.shutdown()
    c.shutdown()


def invoke(args, code=0):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == code, (r.output, r.exception)
    return r


def test_training_generation_survives_losing_a_node(cluster, tmp_path):
    pytest.importorskip("torch")
    from nogobot.cluster.training import RayBackend
    from nogobot.train.config import load_config
    from nogobot.train.loop import read_csv, train_command

    c, worker = cluster
    games = 100
    cfg = load_config(TINY_CONFIG, [f"selfplay.games_per_generation={games}"])
    run = tmp_path / "run"
    backend = RayBackend()
    pool = backend.pool
    result = {}

    def train():  # the driver, in a thread: the main thread must add the node (signals)
        try:
            train_command(cfg, run, device="cpu", generations=1, backend=backend)
        except BaseException as e:  # re-raised below
            result["error"] = e

    # The head node's CPU is held for the whole test, so the pool's actors can run only on
    # the worker node and, once it is gone, only on the node that joins: whatever games are
    # left after the removal must go to that node, however fast this machine plays them.
    head_hog = Hog.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
        node_id=c.head_node.node_id, soft=False)).remote()
    ray.get(head_hog.ping.remote())
    t = threading.Thread(target=train, daemon=True)
    t.start()
    try:
        joined = remove_worker_mid_generation(c, worker, pool, t, result)
    finally:
        ray.kill(head_hog)

    state = json.loads((run / "state.json").read_text())
    assert state["generation"] == 2 and state["games_total"] == games
    stems = {str(run / "games" / "gen0001" / f"g{i:05d}") for i in range(games)}
    # Every game written exactly once, by the driver, and only these.
    assert sorted(backend.written) == sorted(stems)
    assert {str(p.with_suffix("")) for p in (run / "games").rglob("*.npz")} == stems
    assert len(list((run / "games").rglob("*.sgf"))) == games
    assert pool.stats["requeued"] >= 1 and pool.stats["failures"] >= 1
    # The lost worker had delivered games; the node that joined later got games too.
    assert pool.by_node[worker.node_id] >= 1
    assert pool.by_node[joined] >= 1, dict(pool.by_node)
    assert [int(r["generation"]) for r in read_csv(run / "elo.csv")] == [1]  # gated on Ray
    backend.close()


@ray.remote(num_cpus=1)
class Hog:
    """Holds one CPU of a node until killed."""

    def ping(self):
        return 1


def remove_worker_mid_generation(c, worker, pool, t, result) -> str:
    """Remove the worker node while its actor has games in flight, add a fresh node, wait for
    the generation (thread ``t``) to finish; returns the fresh node's id."""
    deadline = time.monotonic() + 240
    while t.is_alive() and time.monotonic() < deadline:
        busy = [s for s in pool.slots if s.state == "busy" and s.jobs
                and s.info.get("node_id") == worker.node_id]
        if busy and pool.by_node[worker.node_id] >= 1:
            c.remove_node(worker)
            joined = c.add_node(**NODE).node_id
            break
        time.sleep(0.02)
    else:
        pytest.fail("the worker node never had games in flight")
    t.join(300)
    assert not t.is_alive() and "error" not in result, result
    return joined


def test_ladder_over_ray(cluster, tmp_path):
    from nogobot.net.inference import default_model_path

    c, _ = cluster
    out = tmp_path / "ladder.json"
    r = invoke(["train", "ladder", "random", "greedy", f"net={default_model_path()}",
                "--games", "2", "--size", "5", "--playouts", "8", "--ray", c.address,
                "--json", str(out)])
    assert "| net |" in r.output
    data = json.loads(out.read_text())
    wins = data["wins"]
    for i in range(3):
        for j in range(i + 1, 3):
            assert wins[i][j] + wins[j][i] == 2  # every game of every pairing, once


def test_two_game_tournament_over_ray_and_resume(cluster, tmp_path):
    c, _ = cluster
    spec = tmp_path / "two.yaml"
    spec.write_text("""
name: two
board_size: 5
games: 2
time: {kind: per_move, seconds: 2, tolerance: 1}
engines:
  random: nogobot agent random --seed {seed}
  greedy: nogobot agent greedy --seed {seed}
""")
    out = tmp_path / "out"
    r = invoke(["tournament", str(spec), "--out", str(out), "--ray", c.address])
    assert "game(s) fit at once" in r.output
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(tuple(x["key"]) for x in recs) == [("greedy", "random", 0),
                                                     ("greedy", "random", 1)]
    for x in recs:
        assert "node" in x and "127.0.0.1" in x["node"]
        assert (out / x["sgf"]).is_file()
        # The engines' logs, packed into logs.tar.gz when the run ends.
        assert read_log(out, f"{x['id']}-B.log") is not None
    r = invoke(["tournament", str(spec), "--out", str(out), "--ray", c.address])
    assert "already" in r.output
    assert len((out / "results.jsonl").read_text().splitlines()) == 2


def test_tournament_game_needing_more_cpus_than_any_node(cluster, tmp_path):
    c, _ = cluster
    spec = tmp_path / "big.yaml"
    spec.write_text("""
board_size: 5
games: 2
threads: 4
engines:
  random: nogobot agent random
  greedy: nogobot agent greedy
""")
    r = invoke(["tournament", str(spec), "--out", str(tmp_path / "o"), "--ray", c.address], 1)
    assert "needs 4 CPUs on one node" in r.output and "largest node" in r.output


def test_tournament_game_whose_cores_are_taken(cluster, tmp_path):
    c, _ = cluster

    hogs = [Hog.remote() for _ in range(int(ray.cluster_resources()["CPU"]))]
    ray.get([h.ping.remote() for h in hogs])  # every CPU of the cluster is held
    try:
        spec = tmp_path / "s.yaml"
        spec.write_text("board_size: 5\ngames: 2\nengines:\n  random: nogobot agent random\n"
                        "  greedy: nogobot agent greedy\n")
        t0 = time.monotonic()
        r = invoke(["tournament", str(spec), "--out", str(tmp_path / "o"), "--ray", c.address,
                    "--reserve-timeout", "3", "--no-check"], 1)
        assert "no node had 1 free CPU(s) for a game within 3 s" in r.output
        assert time.monotonic() - t0 < 60
    finally:
        for h in hogs:
            ray.kill(h)


def test_actor_with_other_code_is_refused(cluster):
    from nogobot.cluster import ClusterError
    from nogobot.cluster.actors import ActorPool

    class OldActor:  # defined here so Ray ships it by value
        def __init__(self, device="cpu", threads=1):
            pass

        def hello(self):
            from nogobot.cluster.connect import node_info

            return {**node_info(), "version": "0.0.1", "code": "0123456789abcdef"}

    pool = ActorPool(actor_class=OldActor, max_actors=1)
    with pytest.raises(ClusterError, match=r"runs nogobot 0\.0\.1 \(code 0123456789abcdef\) "
                                           r"but the driver runs"):
        list(pool.results("selfplay", [("g", 0)]))
    pool.close()


def test_cli_driver_killed_mid_generation_resumes(cluster, tmp_path):
    """`nogobot train CONFIG --run-dir D --ray ADDRESS` as its own process, killed with SIGKILL
    during self-play and rerun: the finished games stay byte for byte, none is written twice,
    and the generation completes (its actors die with the killed driver)."""
    pytest.importorskip("torch")
    import signal
    import subprocess
    import sys

    c, _ = cluster
    run = tmp_path / "run"
    games = 30
    cmd = [sys.executable, "-m", "nogobot", "train", str(TINY_CONFIG), "--run-dir", str(run),
           "--device", "cpu", "--generations", "1", "--ray", c.address,
           "--set", f"selfplay.games_per_generation={games}"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    folder = run / "games" / "gen0001"
    deadline = time.monotonic() + 240
    while len(list(folder.glob("*.npz"))) < 4 and time.monotonic() < deadline:
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    before = {f.name: f.read_bytes() for f in folder.glob("*.npz")}
    assert 4 <= len(before) < games
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming" in r.stderr and f"{len(before)}/{games}" in r.stderr
    after = {f.name: f.read_bytes() for f in folder.glob("*.npz")}
    assert len(after) == games and all(after[k] == v for k, v in before.items())
    state = json.loads((run / "state.json").read_text())
    assert state["generation"] == 2 and state["games_total"] == games


def test_gpu_actors_go_to_gpu_nodes_with_the_torch_weights(cluster, tmp_path):
    """--ray-device cuda: one actor per GPU, placed on the node that has it, sent the best net's
    torch weights (ckpt/best.pt) with the .onnx. This machine has no GPU: the node *declares*
    one, and the actor's evaluator falls back to the CPU, so this checks scheduling and what
    travels, not GPU speed."""
    pytest.importorskip("torch")
    import tempfile

    from nogobot.cluster.training import RayBackend
    from nogobot.train.config import load_config
    from nogobot.train.loop import TrainingRun

    c, _ = cluster
    cfg = load_config(TINY_CONFIG, [])
    run = TrainingRun(cfg, tmp_path / "run")
    run.initialise()
    gpu_node = c.add_node(num_cpus=1, num_gpus=1, object_store_memory=NODE["object_store_memory"])
    try:
        backend = RayBackend(device="cuda")
        stems = [tmp_path / "games" / f"g{i:05d}" for i in range(4)]
        best = run.dir / run.state["best"]
        n = backend.generate_games(str(best), stems, cfg.board_size, cfg.selfplay, 1,
                                   checkpoint=str(run.dir / "ckpt" / "best.pt"))
        assert n == 4 and all(s.with_suffix(".npz").is_file() for s in stems)
        assert dict(backend.pool.by_node) == {gpu_node.node_id: 4}
        assert len(backend.pool.slots) == 1  # one GPU in the cluster: one actor
        net = backend.net(best)
        cached = Path(tempfile.gettempdir()) / "nogobot-ray-nets" / net.sha[:24]
        assert (cached / f"{best.stem}.pt").read_bytes() == (run.dir / "ckpt" /
                                                             "best.pt").read_bytes()
        backend.close()
    finally:
        c.remove_node(gpu_node)
