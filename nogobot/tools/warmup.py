"""Loading numba's kernels once per process, and compiling them once per install.

numba compiles every kernel (``cache=True``) the first time a process uses it and writes the
result to its cache (``__pycache__`` beside the source, or ``NUMBA_CACHE_DIR``); later processes
only load it. Compiling takes tens of seconds on a 2-core machine, loading well under a second
(docs/results.md, "Start-up, measured").

* ``nogobot warmup`` compiles ahead of time, at a moment the user chooses (the README's set-up
  command runs it), and also the baselines' kernels and a load of the shipped network.
* ``nogobot gtp`` starts ``start(kind)`` in a background thread at start-up, so ``name`` answers
  at once, and the network player's factory calls ``wait("search")`` before it returns: a
  search never starts before its kernels are ready, so compilation is never paid inside a
  search's time (the first move's search only competes with ``later`` loading beside it).
* A cold cache is announced once on stderr (``announce``), before compiling.
* Where the cache lives and when it is stale is ``core.kernelcache``'s (run by
  ``nogobot/__init__.py`` before any kernel is defined).

Kinds: ``rules`` (board.py: the referee, greedy), ``search`` (rules + features + the MCTS
kernels of a first move: what the network player waits for), ``later`` (tree reuse and the
endgame solver, loaded in the background right after ``search``), ``solver`` (the endgame
solver alone, with its clock: what `nogobot solve` loads before its clock starts), ``agents``
(the rollout, alphabeta and rave baselines).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

KINDS = ("rules", "search", "later", "solver", "agents")
COLD_MESSAGE = ("nogobot: compiling the search kernels, first run only (about two minutes on 2 "
                "cores; `nogobot warmup` does it ahead of time)...")

_lock = threading.Lock()
_events: dict[str, threading.Event] = {}
_announced = False


def _entry_kernels(kind: str) -> list:
    """The numba dispatchers whose cache entries show whether ``kind`` is compiled."""
    from ..game import board

    kernels = [board.play_stone]  # the entry points called from Python (callees come with them)
    if kind == "search":
        from ..engine import mcts
        from ..net import features

        kernels += [features.fill_planes, mcts.select_batch, mcts.expand_and_backup]
    elif kind in ("later", "solver"):
        from ..engine import mcts, solver

        kernels += [solver.solve_root, solver.order_root]
        if kind == "later":
            kernels += [mcts.reroot, mcts.abandon]
    elif kind == "agents":
        from ..agents import alphabeta, rave_kernels, rollout

        kernels += [rollout.uct_batch, alphabeta.search_root, rave_kernels.rave_batch,
                    rave_kernels.compact_subtree]
    return kernels


def cold(kind: str) -> bool | None:
    """True when some kernel of ``kind`` has no usable entry in numba's on-disk cache (this
    process would compile it), False when all have one, None when that cannot be told."""
    try:
        for k in _entry_kernels(kind):
            if k.signatures:  # already compiled or loaded in this process
                continue
            if not _cache_index(k):
                return True
        return False
    except Exception:  # noqa: BLE001 -- numba internals: only the announcement depends on it
        return None


def _cache_index(kernel) -> dict:
    """The entries of ``kernel``'s on-disk cache index ({} when missing or stale).

    numba has no public way to ask whether a kernel would load from its cache without loading
    it, so this one line reads numba's private index; ``cold`` turns any change in numba's
    internals into "cannot tell" (None), and only the cold-cache announcement depends on it."""
    return kernel._cache._cache_file._load_index()


def announce(log: Callable[[str], None] | None = None) -> None:
    """Say once per process, on stderr (or ``log``), that kernels are being compiled."""
    global _announced
    with _lock:
        if _announced:
            return
        _announced = True
    (log or (lambda m: print(m, file=sys.stderr, flush=True)))(COLD_MESSAGE)


def _run_rules() -> None:
    from ..game.board import Board

    b = Board(9)
    for _ in range(6):
        b.play(int(b.legal_moves()[0]))
    b.is_legal(int(b.legal_moves()[0]), b.to_move)
    b.copy().undo()
    b.num_legal(3 - b.to_move)


def _searcher():
    from ..engine.mcts import SearchConfig
    from ..engine.search import Searcher
    from ..net.inference import UniformEvaluator

    return Searcher(UniformEvaluator(), 9, SearchConfig(batch_size=4, max_tree_mb=4), seed=0)


def _run_search() -> None:
    """A tiny search: the kernels of a first move (rules, features, select, expand)."""
    from ..engine.search import SearchLimits
    from ..game.board import Board
    from ..net.features import boards_planes

    boards_planes([Board(9)])
    _searcher().search(Board(9), SearchLimits(playouts=32))


def _run_later() -> None:
    """The kernels a first move does not need: tree reuse (reroot), giving up a batch in
    flight (abandon), the endgame solver."""
    import numpy as np

    from ..engine import mcts

    from ..engine.search import SearchLimits
    from ..game.board import Board

    s, b = _searcher(), Board(9)
    b.play(s.search(b, SearchLimits(playouts=32)).move)
    b.play(int(b.legal_moves()[0]))
    s.search(b, SearchLimits(playouts=32))  # reuses the subtree: reroot
    mcts.abandon(s.tree.arrays(), 0, s.leaves)  # a search closed with a batch in the network
    rng = np.random.default_rng(0)
    end = Board(9)
    while not end.is_terminal() and end.geo.area - end.ply > 18:
        moves = end.legal_moves()
        end.play(int(moves[rng.integers(len(moves))]))
    if not end.is_terminal():
        s.search(end, SearchLimits(playouts=8))  # the exact solver runs first here
    _run_solver()  # its clock, which a search by playouts never reads


def _run_solver() -> None:
    """A 3x3 solve that reads its clock at every node: the solver's kernels and the
    object-mode block of its clock, which numba compiles in each process on first use."""
    from ..engine.solver import Solver
    from ..game.board import Board

    Solver(1 << 8, clock_every=1).solve(Board(3), 10**6, max_seconds=60.0)


def _run_agents() -> None:
    from ..agents.registry import make_agent
    from ..game.board import Board

    for name, opts in (("rollout", {"playouts": 50}), ("alphabeta", {"depth": 2}),
                       ("rave", {"playouts": 50})):
        make_agent(name, seed=0, **opts).select_move(Board(9), 0.05)


_RUN = {"rules": _run_rules, "search": _run_search, "later": _run_later,
        "solver": _run_solver, "agents": _run_agents}


def load(kind: str, log: Callable[[str], None] | None = None) -> float:
    """Compile or load ``kind``'s kernels now (once per process; other callers wait for the
    first). Announces a cold cache first. Returns the seconds this call took."""
    t0 = time.perf_counter()
    with _lock:
        event = _events.get(kind)
        owner = event is None
        if owner:
            event = _events[kind] = threading.Event()
    if not owner:
        event.wait()
        return time.perf_counter() - t0
    try:
        if cold(kind):
            announce(log)
        if kind != "rules":
            load("rules", log)
        _RUN[kind]()
    finally:
        event.set()  # a failure is not retried: the caller's own use will raise it properly
    return time.perf_counter() - t0


def start(kind: str, log: Callable[[str], None] | None = None) -> threading.Thread:
    """``load(kind)`` in a daemon thread (the process can still exit while it compiles); after
    ``search``, also ``later`` (what the first move does not need)."""

    def run() -> None:
        try:
            load(kind, log)
            if kind == "search":
                load("later", log)
        except Exception as e:  # noqa: BLE001 -- the first real use reports it
            (log or (lambda m: print(m, file=sys.stderr)))(f"nogobot: warm-up failed: {e}")

    t = threading.Thread(target=run, name=f"warmup-{kind}", daemon=True)
    t.start()
    return t


def wait(kind: str, log: Callable[[str], None] | None = None) -> float:
    """Block until ``kind``'s kernels are ready (loading them here if nobody started to). For
    ``search``, also until ``later`` when that has to be compiled: a first search beside the
    compiler would get a fraction of the CPU (loading it from the cache takes a few ms)."""
    seconds = load(kind, log)
    if kind == "search" and cold("later"):
        seconds += load("later", log)
    return seconds
