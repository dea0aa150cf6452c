"""Game actors and the driver's work queue over them.

``GameActor`` is a Ray actor holding evaluators for the nets it was sent. Nets travel as
``NetRef``: the .onnx bytes and sidecar put in the object store once by the driver; an actor
fetches a net the first time a job names it (once per node: actors on one node share its object
store) and writes it to a node-local cache folder, since ``OnnxEvaluator`` reads files.

* ``selfplay(net, size, sp, jobs)`` plays a self-play game per job, ``sp.concurrent_games`` at a
  time sharing each network call (``selfplay.play_games_batched``), and *streams* each finished
  game back as soon as it ends: (game id, SGF text, .npz shard bytes, plies). Finished games are
  therefore never held hostage by a game still in play.
* ``match_games(jobs)`` plays refereed games between two players (gating, ladders) and streams
  (job id, winner colour, plies, ended by an illegal move).

``ActorPool.run(method, jobs, ...)`` hands batches of jobs to idle actors and collects streamed
results. Every job has an id chosen by the driver, and a result is accepted once per id, so a
game is never written twice. When an actor or its node dies, the jobs it held that had not come
back return to the front of the queue (only the games in play are lost, replayed elsewhere);
the actor is restarted by Ray (``max_restarts=-1``) where there is room and gets work when it
answers again. Every few seconds the pool compares its size with the cluster's CPUs (GPUs for GPU
actors) and starts actors for nodes that joined. Every actor's ``node_info`` is checked against
the driver's before it gets work.
"""

from __future__ import annotations

import collections
import os
import queue
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import ray
from ray import exceptions as rex

from . import ClusterError
from .connect import alive_nodes, check_same_code, node_info, where

MAINTAIN_EVERY_S = 2.0
STARVED_AFTER_S = 180.0  # jobs waiting and no actor able to start: the cluster has no room
MAX_ATTEMPTS = 5  # a job whose actor died this many times is not a node failure but a bug


def log(msg: str) -> None:
    print(f"ray: {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class NetRef:
    """A net in the object store: ``ref`` holds {"onnx", "yaml", "pt"} (``pt``: torch weights
    for GPU actors, else None). Nested in this object, the ref is not fetched with every call."""

    name: str
    sha: str
    ref: object


def _cached_net(net: NetRef) -> Path:
    """The net's .onnx on this node (written once per node from the object store)."""
    folder = Path(tempfile.gettempdir()) / "nogobot-ray-nets" / net.sha[:24]
    path = folder / f"{net.name}.onnx"
    if not path.is_file():
        data = ray.get(net.ref)
        folder.mkdir(parents=True, exist_ok=True)
        files = [(path.with_suffix(".yaml"), data["yaml"].encode()), (path, data["onnx"])]
        if data.get("pt"):
            files.insert(0, (path.with_suffix(".pt"), data["pt"]))
        for target, blob in files:  # the .onnx last: it marks a complete net
            # A tmp name of this process's own: two actors of one node may write at once.
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(blob)
            os.replace(tmp, target)
    return path


def _stream(work):
    """Run ``work(emit)`` in a thread and yield what it emits as it emits it (so a callback
    API, ``play_games_batched``'s ``finished``, becomes a Ray streaming generator)."""
    q: queue.Queue = queue.Queue()
    end, failed = object(), []

    def run():
        try:
            work(q.put)
        except BaseException as e:  # re-raised in the actor's method below
            failed.append(e)
        finally:
            q.put(end)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    while (item := q.get()) is not end:
        yield item
    th.join()
    if failed:
        raise failed[0]


class GameActor:
    """One self-play / match worker (one CPU, or one GPU with ``device="cuda"``)."""

    def __init__(self, device: str = "cpu", threads: int = 1):
        self.device = device
        self.threads = threads
        self._evaluators: dict[str, object] = {}

    def hello(self) -> dict:
        return node_info()

    def cpu_seconds(self) -> float:
        """CPU time this actor's process has used (``nogobot bench selfplay``)."""
        t = os.times()
        return t.user + t.system

    def _evaluator(self, net: NetRef):
        ev = self._evaluators.get(net.sha)
        if ev is None:
            from ..train.torch_eval import self_play_evaluator

            path = _cached_net(net)
            pt = path.with_suffix(".pt")
            self._evaluators.clear()  # one net at a time: the best moves on
            ev = self._evaluators[net.sha] = self_play_evaluator(
                str(path), self.device, self.threads, str(pt) if pt.is_file() else "")
        return ev

    def selfplay(self, net: NetRef, size: int, sp, jobs: list):
        """Yield (game id, sgf, npz bytes, plies) per job ((id, seed)) as games finish."""
        from ..train.selfplay import play_games_batched, shard_npz

        evaluator = self._evaluator(net)
        seed = int(jobs[0][1])

        def work(emit):
            def finished(gid, game):
                emit((gid, game.sgf_text, shard_npz(game, {"model": net.name, "seed": seed}),
                      game.plies))

            play_games_batched(evaluator, [gid for gid, _ in jobs], size, sp, seed, net.name,
                               finished)

        yield from _stream(work)

    def match_games(self, jobs: list):
        """Yield (job id, winner colour, plies, illegal) per job: (id, (size, black, white)),
        each player (spec or NetRef, playouts, temperature_moves, seed, use_solver)."""
        from ..train.match import play_match_job

        for job_id, (size, black, white) in jobs:
            local = [(str(_cached_net(spec)) if isinstance(spec, NetRef) else spec, *rest)
                     for spec, *rest in (black, white)]
            yield play_match_job((job_id, (size, *local)))


@dataclass
class _Slot:
    handle: object
    number: int
    state: str = "starting"  # starting -> idle <-> busy; down (restarting) -> idle
    ping: object = None  # an ObjectRef of hello() while starting/down
    gen: object = None  # the streaming call while busy
    jobs: dict = field(default_factory=dict)  # jobs handed over and not yet back
    info: dict = field(default_factory=dict)
    retry_at: float = 0.0


class ActorPool:
    """``GameActor``s across the cluster (one per ``cpus`` CPUs, or per ``gpus`` GPUs)."""

    def __init__(self, device: str = "cpu", cpus: float = 1, gpus: float = 0,
                 max_actors: int | None = None, threads: int = 1, actor_class=None):
        self.device, self.cpus, self.gpus, self.threads = device, cpus, gpus, threads
        self.max_actors = max_actors
        self.slots: list[_Slot] = []
        self.mine = node_info()
        self._remote = ray.remote(actor_class or GameActor).options(
            num_cpus=cpus, num_gpus=gpus, max_restarts=-1, max_task_retries=0)
        self._next_maintain = 0.0
        self.stats = collections.Counter()  # results, requeued, failures, duplicates
        self._attempts: collections.Counter = collections.Counter()
        self.by_node: collections.Counter = collections.Counter()

    # -- size -----------------------------------------------------------------------------
    def capacity(self) -> int:
        """Actors the alive nodes hold (each node separately: an actor is never split)."""
        res, need = ("GPU", self.gpus) if self.gpus else ("CPU", self.cpus)
        n = sum(int(node["Resources"].get(res, 0) // need) for node in alive_nodes(ray))
        return min(n, self.max_actors) if self.max_actors else n

    def _maintain(self) -> None:
        now = time.monotonic()
        if now < self._next_maintain:
            return
        self._next_maintain = now + MAINTAIN_EVERY_S
        want = self.capacity()
        grow = bool(self.slots)
        while sum(s.state != "dead" for s in self.slots) < want:
            slot = _Slot(self._remote.remote(self.device, self.threads), len(self.slots))
            slot.ping = slot.handle.hello.remote()
            self.slots.append(slot)
            if grow:
                log(f"the cluster has room for {want} actors: actor {slot.number} started")
        for s in self.slots:
            if s.state == "down" and s.ping is None and now >= s.retry_at:
                s.ping = s.handle.hello.remote()

    def _answer(self, s: _Slot) -> None:
        """A ping came back: the actor is (again) ready, still restarting, or gone."""
        ref, s.ping = s.ping, None
        try:
            info = ray.get(ref)
        except rex.ActorUnavailableError:
            s.state, s.retry_at = "down", time.monotonic() + MAINTAIN_EVERY_S
            return
        except rex.RayActorError as e:
            s.state = "dead"
            log(f"actor {s.number} is gone ({type(e).__name__})")
            return
        check_same_code(info, self.mine)
        if s.state == "down":
            log(f"actor {s.number} is back on {where(info)}")
        s.info, s.state = info, "idle"

    def _fail(self, s: _Slot, pending: collections.deque, err: Exception) -> None:
        lost = list(s.jobs.items())
        for job_id, payload in reversed(lost):
            self._attempts[job_id] += 1
            if self._attempts[job_id] >= MAX_ATTEMPTS:
                raise ClusterError(f"job {job_id} failed {MAX_ATTEMPTS} times (last on "
                                   f"{where(s.info)}: {type(err).__name__}); giving up")
            pending.appendleft((job_id, payload))
        self.stats["requeued"] += len(lost)
        self.stats["failures"] += 1
        log(f"actor {s.number} on {where(s.info)} failed ({type(err).__name__}): "
            f"{len(lost)} job(s) in flight re-queued")
        s.jobs, s.gen = {}, None
        s.state, s.retry_at = "down", time.monotonic() + MAINTAIN_EVERY_S

    def wait_ready(self, timeout: float = 120.0) -> int:
        """Start the actors the cluster has room for and wait until they answer (benchmarks
        time games, not start-ups); returns how many are ready."""
        self._next_maintain = 0.0
        self._maintain()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pings = [s.ping for s in self.slots if s.ping is not None]
            if not pings:
                break
            for ref in ray.wait(pings, num_returns=len(pings), timeout=1.0)[0]:
                self._answer(next(s for s in self.slots if s.ping is ref))
        return sum(s.state == "idle" for s in self.slots)

    # -- work -----------------------------------------------------------------------------
    def run(self, method: str, jobs: list, on_result, args: tuple = (), batch: int = 1) -> int:
        """``on_result(r)`` for each of ``results(...)``; returns how many there were."""
        n = 0
        for r in self.results(method, jobs, args, batch):
            on_result(r)
            n += 1
        return n

    def results(self, method: str, jobs: list, args: tuple = (), batch: int = 1):
        """Run every job ((id, payload), ids unique) on the actors, ``batch`` jobs per call of
        ``method(*args, [(id, payload)...])``, which streams results whose first element is the
        job id; yields each id's result once, as it arrives."""
        pending = collections.deque(jobs)
        done: set = set()
        starved_since = None
        while pending or any(s.state == "busy" for s in self.slots):
            self._maintain()
            alive = [s for s in self.slots if s.state in ("idle", "busy")]
            for s in self.slots:
                if s.state == "idle" and pending:
                    n = max(1, min(batch, -(-len(pending) // max(1, len(alive)))))
                    take = [pending.popleft() for _ in range(min(n, len(pending)))]
                    s.jobs = dict(take)
                    s.gen = getattr(s.handle, method).remote(*args, [(i, p) for i, p in take])
                    s.state = "busy"
            waits = {id(x): s for s in self.slots for x in (s.gen, s.ping) if x is not None}
            if not alive:
                starved_since = starved_since or time.monotonic()
                if time.monotonic() - starved_since > STARVED_AFTER_S:
                    raise ClusterError(
                        f"no actor could start in {STARVED_AFTER_S:g} s: the cluster has no "
                        f"free {'GPU' if self.gpus else 'CPU'} for one (resources "
                        f"available now: {ray.available_resources()})")
            else:
                starved_since = None
            if not waits:
                time.sleep(0.2)
                continue
            objs = [x for s in self.slots for x in (s.gen, s.ping) if x is not None]
            ready, _ = ray.wait(objs, num_returns=1, timeout=1.0)
            if ready and len(objs) > 1:  # take everything that is ready in one go
                ready, _ = ray.wait(objs, num_returns=len(objs), timeout=0)
            for x in ready:
                s = waits[id(x)]
                if x is s.ping:
                    self._answer(s)
                    continue
                try:
                    ref = next(s.gen)
                except StopIteration:
                    if s.jobs:  # cannot happen unless the method skipped a job
                        pending.extendleft(s.jobs.items())
                    s.jobs, s.gen, s.state = {}, None, "idle"
                    continue
                try:
                    result = ray.get(ref)
                except rex.RayTaskError as e:  # the game code raised: not a node failure
                    raise ClusterError(f"{method} on {where(s.info)} failed: "
                                       f"{str(e).strip().splitlines()[-1]}") from None
                except rex.RayError as e:  # the actor, its node or the object is gone
                    self._fail(s, pending, e)
                    continue
                job_id = result[0]
                s.jobs.pop(job_id, None)
                if not s.jobs:  # the whole batch is back: the actor is free (its call ends
                    s.gen, s.state = None, "idle"  # on its own; the next one queues behind)
                if job_id in done:
                    self.stats["duplicates"] += 1
                    continue
                done.add(job_id)
                self.stats["results"] += 1
                self.by_node[s.info.get("node_id", "?")] += 1
                yield result

    def close(self) -> None:
        for s in self.slots:
            ray.kill(s.handle)
        self.slots = []
