"""Tournament games on a Ray cluster: ``RayGames``, the runner's game executor (``--ray``).

Each game is a Ray task running the usual ``Referee`` on some node, inside a placement group of
one bundle of ``cores`` CPUs, where ``cores`` is the most threads either engine of the game was
given in the spec (one engine thinks at a time; give a pondering engine twice its threads). Ray
then schedules no other work of this cluster onto those cores while the game runs, which is what
keeps timed games fair (Ray accounts CPUs; it does not pin processes).

* Before any game: every node must run the driver's nogobot (``connect.probe_nodes``) and pass the
  runner's engine start-up check *on that node*; some node must have ``cores`` CPUs.
* A game waiting for its cores while the cluster's CPUs are taken by work other than this
  tournament's fails after ``reserve_timeout`` seconds with a message (rather than waiting
  forever); waiting behind this tournament's own games is normal and has no limit.
* A game lost with its node (crash, node removed) is played again elsewhere; its partial result
  is never written. The record of each game names the node it ran on (``node``), and the engines'
  stderr logs come back to the driver's ``logs/``.

Engines run on the nodes: ``nogobot ...`` commands use that node's Python; other paths and the
models an engine names must exist on every node at the paths the spec gives (relative paths
are taken from the directory the tournament runs in on the driver).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path

import ray
from ray import exceptions as rex
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import (
    NodeAffinitySchedulingStrategy,
    PlacementGroupSchedulingStrategy,
)

from ..core.atomicio import write_atomic
from ..tournament.referee import Interrupted
from ..tournament.runner import LocalGames, TournamentError, preflight
from .connect import alive_nodes, node_info, probe_nodes, where

GAME_RETRIES = 3


def _localise(spec, driver_python: str, driver_cwd: str):
    """The spec as this node must run it: the driver's Python -> this node's; engine working
    folders resolved against the driver's working folder (when this node has it)."""
    engines = {}
    for name, e in spec.engines.items():
        argv = list(e.argv)
        if argv and argv[0] == driver_python:
            argv[0] = sys.executable
        cwd = e.cwd
        if os.path.isdir(driver_cwd):
            cwd = os.path.join(driver_cwd, cwd or "")
        engines[name] = dataclasses.replace(e, argv=argv, cwd=cwd)
    return dataclasses.replace(spec, engines=engines)


def _remote_game(spec, task, driver_python: str, driver_cwd: str):
    """One game on this node: (GameResult, {log name: bytes}, node_info)."""
    import tempfile

    spec = _localise(spec, driver_python, driver_cwd)
    with tempfile.TemporaryDirectory(prefix="nogobot-game-") as d:
        out = Path(d)
        (out / "logs").mkdir()
        res, _ = LocalGames().play(spec, task, out, threading.Event(), None, set(),
                                   threading.Lock())
        logs = {p.name: p.read_bytes() for p in (out / "logs").iterdir()}
    return res, logs, node_info()


def _remote_preflight(spec, names, driver_python: str, driver_cwd: str):
    try:
        preflight(_localise(spec, driver_python, driver_cwd), names, 1)
    except TournamentError as e:
        return str(e)
    return None


def game_cores(spec, task) -> int:
    return max(spec.engines[task.black].threads, spec.engines[task.white].threads)


class RayGames:
    """Tournament games as Ray tasks with reserved cores (see the module docstring)."""

    def __init__(self, jobs: int | None = None, reserve_timeout: float = 60.0):
        self.jobs = jobs
        self.reserve_timeout = reserve_timeout
        self.python, self.cwd = sys.executable, os.getcwd()
        self._game = ray.remote(max_retries=0)(_remote_game)
        self._running = 0
        self._lock = threading.Lock()
        self._failed: Exception | None = None
        self._refs: set = set()
        self._nodes: list = []
        self._nodes_at = -1e9

    # -- size -----------------------------------------------------------------------------
    def capacity(self, cores: int) -> int:
        """Games of ``cores`` CPUs the alive nodes hold at once (node list cached 2 s: every
        waiting game asks each second)."""
        with self._lock:
            if time.monotonic() > self._nodes_at + 2.0:
                self._nodes, self._nodes_at = alive_nodes(ray), time.monotonic()
            nodes = self._nodes
        return sum(int(n["Resources"].get("CPU", 0) // cores) for n in nodes)

    def workers(self, jobs: int) -> int:
        # Games in flight: --jobs, else room for growth (games wait for cores inside Ray).
        return self.jobs or min(256, max(4, 4 * self.capacity(1)))

    def check(self, spec, names, jobs, console) -> None:
        need = max(spec.engines[n].threads for n in names)
        nodes = alive_nodes(ray)
        biggest = max((n["Resources"].get("CPU", 0) for n in nodes), default=0)
        if biggest < need:
            raise TournamentError(
                f"a game needs {need} CPUs on one node (its engines' threads) but the largest "
                f"node of the cluster has {biggest:g}; lower `threads` in the spec or add a "
                "bigger node")
        console.print(f"ray: {len(nodes)} node(s); each game reserves up to {need} CPU(s), "
                      f"{self.capacity(need)} game(s) fit at once", highlight=False)

    def preflight(self, spec, names, jobs) -> None:
        probe_nodes(ray)
        remote = ray.remote(num_cpus=0, max_retries=0)(_remote_preflight)
        nodes = alive_nodes(ray)
        refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(spec, names, self.python, self.cwd) for n in nodes]
        problems = [f"on node {n['NodeManagerAddress']} ({n['NodeID'][:8]}): {p}"
                    for n, p in zip(nodes, ray.get(refs)) if p]
        if problems:
            raise TournamentError("\n".join(problems))

    # -- one game -----------------------------------------------------------------------------
    def _reserve(self, cores: int, stop: threading.Event):
        """A ready placement group of one ``cores``-CPU bundle (see the module docstring)."""
        pg = placement_group([{"CPU": cores}], strategy="STRICT_PACK")
        deadline = time.monotonic() + self.reserve_timeout
        while not ray.wait([pg.ready()], timeout=1.0)[0]:
            if stop.is_set() or self._failed:
                remove_placement_group(pg)
                raise Interrupted()
            with self._lock:
                running = self._running
            behind_our_games = running >= self.capacity(cores)
            if behind_our_games:
                deadline = time.monotonic() + self.reserve_timeout
            elif time.monotonic() > deadline:
                remove_placement_group(pg)
                free = ray.available_resources().get("CPU", 0)
                err = TournamentError(
                    f"no node had {cores} free CPU(s) for a game within "
                    f"{self.reserve_timeout:g} s (cluster: {free:g} of "
                    f"{ray.cluster_resources().get('CPU', 0):g} CPUs free, {self._running} "
                    "games of this tournament running): other work holds the cores; free "
                    "them or add a node")
                self._failed = err
                raise err
        return pg

    def play(self, spec, task, out: Path, stop: threading.Event, on_move, live, live_lock):
        if self._failed:
            raise Interrupted()
        cores = game_cores(spec, task)
        for attempt in range(GAME_RETRIES):
            pg = self._reserve(cores, stop)
            with self._lock:
                self._running += 1
            ref = self._game.options(
                num_cpus=cores, scheduling_strategy=PlacementGroupSchedulingStrategy(
                    pg, placement_group_bundle_index=0)).remote(spec, task, self.python,
                                                                self.cwd)
            self._refs.add(ref)
            try:
                while not ray.wait([ref], timeout=0.5)[0]:
                    if stop.is_set():
                        ray.cancel(ref, force=True)
                        raise Interrupted()
                res, logs, info = ray.get(ref)
            except rex.RayTaskError as e:
                raise TournamentError(f"game {task.game_id} failed on its node: "
                                      f"{str(e).strip().splitlines()[-1]}") from None
            except rex.RayError as e:  # the node or the worker died: play it again
                print(f"ray: game {task.game_id} lost with its node ({type(e).__name__}); "
                      "playing it again", file=sys.stderr, flush=True)
                continue
            finally:
                self._refs.discard(ref)
                with self._lock:
                    self._running -= 1
                remove_placement_group(pg)
            for name, data in logs.items():
                write_atomic(out / "logs" / name, data)
            return res, {"node": where(info)}
        raise TournamentError(f"game {task.game_id} was lost with its node {GAME_RETRIES} "
                              "times; giving up")

    def cancel(self) -> None:
        for ref in list(self._refs):
            ray.cancel(ref, force=True)
