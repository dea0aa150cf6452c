"""Joining a Ray cluster, and checking that every node runs the driver's nogobot.

``connect(address)``: ``"auto"`` joins the cluster this machine belongs to (``ray start`` was run
here), ``"local"`` starts a private single-node Ray on this machine, anything else is a head
address ``HOST:PORT`` (what ``ray start --head`` printed). An address nobody answers at fails in
seconds with one line (a TCP probe before ``ray.init``, which would otherwise retry for minutes).

A node whose nogobot differs from the driver's would play other rules or write other shards, so
every actor and probe reports ``node_info()`` (version, a hash of the package's source files,
node, host) and ``check_same_code`` refuses a mismatch with a message naming the node.
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import sys
import time
from pathlib import Path

from . import ClusterError, require_ray

PROBE_TIMEOUT_S = 3.0


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 (16 hex digits) over the relative path and bytes of every nogobot/*.py file."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def node_info() -> dict:
    """What this process is: nogobot version and code hash, Ray node id and IP, host, pid."""
    from .. import __version__

    info = {"version": __version__, "code": code_hash(), "host": socket.gethostname(),
            "pid": os.getpid(), "python": sys.version.split()[0]}
    try:
        import ray

        if ray.is_initialized():
            info["node_id"] = ray.get_runtime_context().get_node_id()
            info["ip"] = ray.util.get_node_ip_address()
    except ImportError:
        pass
    return info


def where(info: dict) -> str:
    """A node as people read it: ``host (ip, node 1a2b3c4d)``."""
    return f"{info.get('host', '?')} ({info.get('ip', '?')}, node {info.get('node_id', '?')[:8]})"


def check_same_code(info: dict, mine: dict | None = None) -> None:
    """Raise ClusterError unless ``info`` (a worker's ``node_info``) matches this process."""
    mine = mine or node_info()
    if (info["version"], info["code"]) != (mine["version"], mine["code"]):
        raise ClusterError(
            f"node {where(info)} runs nogobot {info['version']} (code {info['code']}) but the "
            f"driver runs {mine['version']} (code {mine['code']}): install the same nogobot "
            "on every node (same checkout, pip install -e .) and restart its `ray start`")


def _probe(address: str) -> None:
    """Fail fast (one line) when nothing listens at HOST:PORT."""
    host, sep, port = address.rpartition(":")
    if address.startswith("ray://"):
        host = host[len("ray://"):]
    if not sep or not port.isdigit() or not host:
        raise ClusterError(f"--ray {address}: not a Ray address; use auto, local or HOST:PORT "
                           "(the head's address printed by `ray start --head`)")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as e:
        why = "timed out" if isinstance(e, socket.timeout) else (e.strerror or str(e))
        raise ClusterError(f"cannot reach a Ray head at {address} ({why}); start one with "
                           "`ray start --head` there, or check the address and firewall") from None


def connect(address: str = "auto", num_cpus: int | None = None,
            object_store_mb: int | None = None):
    """Join (or start, for ``"local"``) a Ray cluster; returns the ``ray`` module.

    A process that is already connected (tests, a second command in one process) stays so."""
    if address == "local":
        # A private single-machine cluster listens on the loopback address only.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs = {"logging_level": "WARNING", "log_to_driver": False}
    if address == "local":
        kwargs.update(address="local", include_dashboard=False,
                      num_cpus=num_cpus or os.cpu_count() or 1)
        if object_store_mb:
            kwargs["object_store_memory"] = object_store_mb * 2**20
    elif address == "auto":
        kwargs["address"] = "auto"
    else:
        _probe(address)
        kwargs["address"] = address
    t0 = time.perf_counter()
    try:
        ray.init(**kwargs)
    except ConnectionError as e:
        if address == "auto":
            raise ClusterError("--ray auto: no Ray cluster runs on this machine; start one with "
                               "`ray start --head` (or use --ray local, or --ray HOST:PORT)") \
                from None
        raise ClusterError(f"--ray {address}: cannot join the cluster ({e}); if its head uses "
                           "token authentication, this machine needs the head's token "
                           "(~/.ray/auth_token, RAY_AUTH_MODE=token)") from None
    except (RuntimeError, ValueError) as e:
        raise ClusterError(f"--ray {address}: {str(e).splitlines()[0]}") from None
    res = ray.cluster_resources()
    print(f"ray: joined {len(alive_nodes(ray))} node(s), {res.get('CPU', 0):g} CPUs, "
          f"{res.get('GPU', 0):g} GPUs ({time.perf_counter() - t0:.1f} s)", file=sys.stderr,
          flush=True)
    return ray


def alive_nodes(ray) -> list[dict]:
    return [n for n in ray.nodes() if n.get("Alive")]


def probe_nodes(ray, timeout: float = 60.0) -> list[dict]:
    """``node_info()`` from a zero-CPU task pinned to every alive node, each checked against the
    driver's (ClusterError on a mismatch or a node that does not answer)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_retries=0)(node_info)
    nodes = alive_nodes(ray)
    refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
        n["NodeID"], soft=False)).remote() for n in nodes]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout)
    if len(ready) < len(refs):
        late = [n["NodeManagerAddress"] for n, r in zip(nodes, refs) if r not in ready]
        raise ClusterError(f"node(s) {', '.join(late)} did not answer within {timeout:g} s")
    infos = ray.get(refs)
    mine = node_info()
    for info in infos:
        check_same_code(info, mine)
    return infos
