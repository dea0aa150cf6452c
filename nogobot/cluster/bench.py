"""``nogobot bench selfplay``: self-play throughput with and without Ray, and driver ingest.

Set-ups, measured in one run on the same model and settings (``--repeats`` rounds, medians):

* plain: ``selfplay.generate_games`` with 1 worker (in this process) and 2 worker processes
  (spawned per call, as every training generation does);
* Ray: ``RayBackend.generate_games`` on a private local Ray with 1 and 2 actors. Actors are started
  and have played one game before timing: in a training run they live for the whole run.

The set-ups take turns, round after round, so that a shared machine's changing load falls on all
of them alike. Games per hour (median), per core, and "vs plain": the median over rounds of each
round's ratio to the plain set-up with as many cores (paired, so load drift cancels; the aim for
Ray: >= 0.9). On a busy machine wall-clock rates swing with other people's work, so the games
per CPU-hour are shown too: the CPU time of every process that plays or writes games (the
driver, its worker processes, the actors; not Ray's own daemons), which other load hardly
changes.
Then the driver's side: how many finished games per second it takes in from actors and writes
as shards (synthetic games: ``SyntheticActor`` streams one real game's shard bytes as fast as
Ray carries them), beside the bare atomic shard writes without Ray. That is where a cluster's
driver would saturate (docs/ray.md).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import ClusterError


@dataclass
class Synthetic:
    """A finished game to send again and again (it travels as ``selfplay``'s ``sp``)."""

    sgf_text: str
    npz: bytes
    plies: int
    concurrent_games: int = 1  # the batch per call is 2x this, as for real actors


class SyntheticActor:
    """Streams the same finished game for every job (the driver's ingest, nothing else)."""

    def __init__(self, device: str = "cpu", threads: int = 1):
        pass

    def hello(self) -> dict:
        from .connect import node_info

        return node_info()

    def selfplay(self, net, size, sp, jobs):
        for gid, _ in jobs:
            yield gid, sp.sgf_text, sp.npz, sp.plies


def _own_cpu() -> float:
    """CPU seconds of this process and of its children that ended (spawned workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def bench_selfplay(model: str, games: int = 8, playouts: int = 100, size: int = 9,
                   repeats: int = 3, with_ray: bool = True, ingest_games: int = 2000,
                   echo=print) -> dict:
    from ..train.config import SelfPlayConfig
    from ..train.selfplay import generate_games

    sp = SelfPlayConfig(playouts=playouts, playout_cap_randomisation=False)
    root = Path(tempfile.mkdtemp(prefix="nogobot-bench-selfplay-"))
    counter = iter(range(10**9))

    def stems(n: int) -> list[Path]:
        folder = root / f"r{next(counter):04d}"
        return [folder / f"g{i:05d}" for i in range(n)]

    echo(f"self-play: {Path(model).name}, {size}x{size}, {playouts} playouts per move, "
         f"{games} games per measurement; the set-ups take turns, {repeats} rounds (medians)")
    generate_games(model, stems(1), size, sp, 0)  # JIT and onnxruntime warm-up, untimed
    setups = [(f"plain, {w} worker process{'es' if w > 1 else ''}", f"plain{w}", w,
               lambda i, w=w: generate_games(model, stems(games), size, sp, 100 + i, workers=w),
               lambda: 0.0) for w in (1, 2)]
    backends = []
    if with_ray:
        from .connect import connect

        # 5 logical CPUs: the 1-actor and 2-actor pools (and the 2 synthetic actors) live side
        # by side, so that the set-ups can take turns (an idle actor costs nothing); one set-up
        # plays at a time. All start now: a node started later with other sources is refused.
        ray = connect("local", num_cpus=5, object_store_mb=200)
        from .training import RayBackend

        synthetic = RayBackend(max_actors=2, actor_class=SyntheticActor)
        synthetic.pool.wait_ready()

        for actors in (1, 2):
            backend = RayBackend(max_actors=actors)
            backend.pool.wait_ready()  # started and warm (a game each), untimed
            backend.generate_games(model, stems(actors), size, sp, 1)
            backends.append(backend)
            setups.append((f"Ray, {actors} actor{'s' if actors > 1 else ''}", f"ray{actors}",
                           actors, lambda i, b=backend: b.generate_games(model, stems(games),
                                                                         size, sp, 200 + i),
                           lambda b=backend: sum(ray.get([s.handle.cpu_seconds.remote()
                                                          for s in b.pool.slots]))))
    runs: dict[str, list] = {key: [] for _, key, _, _, _ in setups}
    cpu: dict[str, list] = {key: [] for _, key, _, _, _ in setups}
    for i in range(repeats):  # round robin: the machine's load drifts over all set-ups alike
        for _, key, _, fn, actor_cpu in setups:
            c0, a0, t0 = _own_cpu(), actor_cpu(), time.perf_counter()
            n = fn(i)
            wall = time.perf_counter() - t0
            if n != games:
                raise RuntimeError(f"{key}: expected {games} games, got {n}")
            runs[key].append(3600.0 * games / wall)
            cpu[key].append(3600.0 * games / (_own_cpu() - c0 + actor_cpu() - a0))
    out = {key: statistics.median(r) for key, r in runs.items()}
    echo(f"{'set-up':<26}{'games/hour':>11}{'per core':>9}{'vs plain':>9}"
         f"{'per CPU-hour':>13}{'vs plain':>9}")
    for label, key, cores, _, _ in setups:
        med = out[key]
        # Paired: each round's ratio to the plain set-up of the same round, then the median.
        ratio = statistics.median(r / p for r, p in zip(runs[key], runs[f"plain{cores}"]))
        per_cpu = statistics.median(cpu[key])
        cpu_ratio = per_cpu / statistics.median(cpu[f"plain{cores}"])
        out.update({f"{key}_vs_plain": ratio, f"{key}_per_cpu_hour": per_cpu,
                    f"{key}_cpu_vs_plain": cpu_ratio})
        echo(f"{label:<26}{med:>11.0f}{med / cores:>9.0f}{ratio:>9.2f}{per_cpu:>13.0f}"
             f"{cpu_ratio:>9.2f}   rounds: {', '.join(f'{r:.0f}' for r in runs[key])}")
    for backend in backends:
        backend.close()
    if with_ray and ingest_games:
        out.update(_bench_ingest(synthetic, model, size, sp, ingest_games, root, echo))
    return out


def _bench_ingest(backend, model, size, sp, n: int, root: Path, echo) -> dict:
    """Finished games per second into the driver: through Ray from ``backend``'s 2 synthetic
    actors, and bare shard writes."""
    import numpy as np

    from ..train.selfplay import write_shard_bytes

    one = root / "ingest-sample" / "g00000"
    from ..train.selfplay import generate_games

    generate_games(model, [one], size, sp, 7)
    sgf_text = one.with_suffix(".sgf").read_text()
    npz = one.with_suffix(".npz").read_bytes()
    with np.load(one.with_suffix(".npz")) as z:
        plies = int(z["plies"])
    t0 = time.perf_counter()
    bare = min(n, 500)
    for i in range(bare):
        write_shard_bytes(root / "ingest-bare" / f"g{i:05d}", sgf_text, npz)
    write_rate = bare / (time.perf_counter() - t0)
    backend.generate_games(model, [root / "ingest-warm" / "g0"], size,
                           Synthetic(sgf_text, npz, plies), 0)
    echo(f"driver ingest ({n} synthetic games of {plies} plies: {len(npz) / 1024:.1f} KiB "
         f"shard + {len(sgf_text)} B SGF): {write_rate:.0f} games/s bare atomic shard writes")
    out = {"ingest_write": write_rate}
    for slots in (1, 64):
        folder = root / f"ingest-ray-{slots}"
        t0 = time.perf_counter()
        got = backend.generate_games(model, [folder / f"g{i:05d}" for i in range(n)], size,
                                     Synthetic(sgf_text, npz, plies, slots), 0)
        rate = got / (time.perf_counter() - t0)
        if got != n:
            raise ClusterError(f"ingest: {got} of {n} synthetic games arrived")
        echo(f"  through Ray from 2 actors, {2 * slots} games per actor call "
             f"(concurrent_games {slots}): {rate:.0f} games/s")
        out[f"ingest_ray{slots}"] = rate
    backend.close()
    return out
