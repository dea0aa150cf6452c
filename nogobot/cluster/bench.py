"""``nogobot bench selfplay``: self-play throughput with and without Ray, and driver ingest.

Set-ups, measured in one run on the same model and settings (``--repeats`` rounds, medians):

* plain: ``selfplay.generate_games`` with 1 worker (in this process) and 2 worker processes
  (spawned per call, as every training generation does);
* Ray: ``RayBackend.generate_games`` on a private local Ray with 1 and 2 actors. Actors are started
  and have played one game before timing: in a training run they live for the whole run.

The set-ups take turns, round after round, so that a shared machine's changing load falls on all
of them alike. Games per hour (median), per core, and "vs plain": the median over rounds of each
round's ratio to the plain set-up with as many cores (paired, so load drift cancels; the aim for
Ray: >= 0.9).
Then the driver's side: how many finished games per second it takes in from actors and writes
as shards (synthetic games: ``SyntheticActor`` streams one real game's shard bytes as fast as
Ray carries them), beside the bare atomic shard writes without Ray. That is where a cluster's
driver would saturate (README "Scale-out on Ray").
"""

from __future__ import annotations

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
               lambda i, w=w: generate_games(model, stems(games), size, sp, 100 + i, workers=w))
              for w in (1, 2)]
    backends = []
    if with_ray:
        from .connect import connect

        # 5 logical CPUs: the 1-actor and 2-actor pools (and the 2 synthetic actors) live side
        # by side, so that the set-ups can take turns (an idle actor costs nothing); one set-up
        # plays at a time. All start now: a node started later with other sources is refused.
        connect("local", num_cpus=5, object_store_mb=200)
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
                                                                         size, sp, 200 + i)))
    runs: dict[str, list] = {key: [] for _, key, _, _ in setups}
    for i in range(repeats):  # round robin: the machine's load drifts over all set-ups alike
        for _, key, _, fn in setups:
            t0 = time.perf_counter()
            n = fn(i)
            if n != games:
                raise RuntimeError(f"{key}: expected {games} games, got {n}")
            runs[key].append(3600.0 * games / (time.perf_counter() - t0))
    out = {key: statistics.median(r) for key, r in runs.items()}
    echo(f"{'set-up':<28}{'games/hour':>12}{'per core':>10}{'vs plain':>10}  (each round)")
    for label, key, cores, _ in setups:
        med = out[key]
        # Paired: each round's ratio to the plain set-up of the same round, then the median.
        ratio = statistics.median(r / p for r, p in zip(runs[key], runs[f"plain{cores}"]))
        out[f"{key}_vs_plain"] = ratio
        echo(f"{label:<28}{med:>12.0f}{med / cores:>10.0f}{ratio:>10.2f}  "
             f"({', '.join(f'{r:.0f}' for r in runs[key])})")
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
