"""Training and ladders on Ray: the loop's backend (``train/backend.py``) and a ladder executor.

``RayBackend`` plays what ``LocalBackend`` plays, on ``GameActor``s across the cluster:

* self-play: one job per missing shard, its id the shard's stem (assigned by the driver); each
  finished game streams back as .npz bytes + SGF text and the driver writes it with
  ``selfplay.write_shard_bytes`` (atomic, as always) unless that id was already written. So the
  run directory lives on the driver alone and resume after a kill is what it always was: a
  generation plays the shards that are missing.
* gating: one job per game (candidate black in even games), spread over the actors; the results
  are put back in game order for the Elo updates.
* nets: each .onnx (with its sidecar; with ``best.pt`` for GPU actors) goes into the object store
  once (``NetRef``) and actors fetch it when a job first names it.

The learner stays in the driver process (``--device`` as without Ray).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import ray

from ..train.match import match_jobs, match_result
from .actors import ActorPool, NetRef


class RayBackend:
    """Self-play and gating on Ray actors (``device="cuda"``: one GPU per actor)."""

    def __init__(self, device: str = "cpu", max_actors: int | None = None, actor_class=None):
        self.device = device
        gpu = device == "cuda"
        self.pool = ActorPool(device="cuda" if gpu else "cpu", cpus=1, gpus=1 if gpu else 0,
                              max_actors=max_actors, actor_class=actor_class)
        self._nets: dict[str, NetRef] = {}
        self.written: list[str] = []  # shard stems written by this backend, in order (tests)

    def net(self, path, checkpoint: str = "") -> NetRef:
        """The net at ``path`` in the object store (put there once per path: run nets are
        written once and never change)."""
        path = Path(path)
        ref = self._nets.get(str(path))
        if ref is None:
            onnx = path.read_bytes()
            pt = None
            if self.pool.gpus and checkpoint and Path(checkpoint).is_file():
                pt = Path(checkpoint).read_bytes()
            data = {"onnx": onnx, "yaml": path.with_suffix(".yaml").read_text(), "pt": pt}
            sha = hashlib.sha256(onnx + (pt or b"")).hexdigest()
            ref = self._nets[str(path)] = NetRef(path.stem, sha, ray.put(data))
        return ref

    def playing_net(self, model) -> str:
        """The net itself: the actors' machines may differ, so they play in fp32."""
        return str(model)

    def generate_games(self, model: str, stems: list, size: int, sp, seed: int, progress=None,
                       checkpoint: str = "") -> int:
        from ..train.selfplay import write_shard_bytes

        todo = [Path(s) for s in stems if not Path(s).with_suffix(".npz").exists()]
        if not todo:
            return 0
        net = self.net(model, checkpoint)
        jobs = [(str(stem), seed + 7919 * i) for i, stem in enumerate(todo)]

        def write(result) -> None:
            gid, sgf_text, npz, _plies = result
            stem = Path(gid)
            if stem.with_suffix(".npz").exists():
                return  # written before (a resumed generation): never twice
            write_shard_bytes(stem, sgf_text, npz)
            self.written.append(gid)
            if progress is not None:
                progress(1)

        slots = max(1, sp.concurrent_games)
        return self.pool.run("selfplay", jobs, write, args=(net, size, sp), batch=2 * slots)

    def play_gating(self, candidate: Path, best: Path, games: int, size: int, gating, seed: int,
                    use_solver: bool, progress=None, candidate_playouts: int | None = None):
        cand, champ = self.net(candidate), self.net(best)
        jobs = match_jobs(size, (cand, candidate_playouts or gating.playouts),
                          (champ, gating.playouts), games, seed, gating.temperature_moves,
                          use_solver)
        results: dict[int, tuple] = {}

        def take(r) -> None:
            results[r[0]] = r[1:]
            if progress is not None:
                progress(1)

        self.pool.run("match_games", jobs, take)
        return match_result(cand.name, champ.name, results)

    def close(self) -> None:
        self.pool.close()


class LadderOnRay:
    """``run_ladder``'s executor: every game of every pairing is a job on the actors; a
    pairing's ``MatchResult`` is yielded when its last game is in."""

    def __init__(self, backend: RayBackend, use_solver: bool = True):
        self.backend = backend
        self.use_solver = use_solver

    def __call__(self, pairings: list):
        jobs, need = [], {}
        for i, j, spec_i, spec_j, games, size, playouts, temperature_moves, seed in pairings:
            pi, pj = (self.backend.net(s) if s.endswith(".onnx") else s for s in (spec_i, spec_j))
            need[(i, j)] = games
            jobs += [((i, j, k), p) for k, p in match_jobs(
                size, (pi, playouts), (pj, playouts), games, seed, temperature_moves,
                self.use_solver)]
        got: dict[tuple, dict] = {p: {} for p in need}
        for r in self.backend.pool.results("match_games", jobs):
            (i, j, k), rest = r[0], r[1:]
            got[(i, j)][k] = rest
            if len(got[(i, j)]) == need[(i, j)]:
                yield match_result(str(i), str(j), got[(i, j)])
