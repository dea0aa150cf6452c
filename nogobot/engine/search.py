"""The search driver: runs the batched MCTS over one board to a limit and reports it.

``Searcher`` owns a search tree (with reuse across moves), the evaluation cache and the batch
buffers, and drives ``mcts.py``'s kernels: select a batch of leaves → one network call →
expand and back up. It stops on a playout or time limit, on a caller's ``stop`` event (GoGui
interrupt, analysis), when the ``should_stop`` hook says so (the time manager's hook), or at once
when the result is proven (the endgame solver, ``solver.py``, answers near the end). The network
calls are made by ``driver.BatchedSearches``. Its callers: the GTP player (``player.py``),
analysis, self-play, gating and the benchmarks.

The search's vocabulary lives here too: ``SearchLimits`` (when to stop), ``SearchProgress``
(what the stop hook sees), ``SearchResult`` and ``ChildStats`` (what a search found) and
``SearchHooks`` (the watchers of one search).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..game import coords
from ..game.board import Board
from ..net.driver import IN_FLIGHT, run_search
from . import mcts
from .lanes import Lanes
from .mcts import EvalCache, SearchConfig, Tree
from .playout import rollout_scratch
from .solver import LOSS, WIN, Solver, solver_budget, solver_reach, solver_seconds

if TYPE_CHECKING:
    from .gumbel import GumbelRoot

# The most one leaf proof may take, whatever the machine: its node budget (5,000 by default)
# is about 18 ms at the nominal rate.
LEAF_PROOF_SECONDS = 0.05


@dataclass
class SearchLimits:
    """When to stop: whichever comes first (None = no limit of that kind)."""

    playouts: int | None = None  # new playouts in this search
    visits: int | None = None  # root visits, counting those reused from the previous move
    seconds: float | None = None


@dataclass
class ChildStats:
    move: int
    visits: int
    q: float  # mean value for the side to move at the root, in [-1, 1]
    prior: float
    proof: int  # +1 proven win for the root's side to move by this move, -1 proven loss, 0


@dataclass
class SearchResult:
    move: int
    visits: int  # root visits after the search
    playouts: int  # playouts done by this search
    nn_evals: int
    seconds: float
    value: float  # root value for the side to move, [-1, 1]
    reason: str  # why the search stopped
    children: list[ChildStats] = field(default_factory=list)
    pv: list[int] = field(default_factory=list)
    proven: int = 0  # +1 the side to move wins with best play, -1 loses, 0 unknown
    solver_try: tuple[int, float] | None = None  # a failed solver try's nodes and seconds

    @property
    def winrate(self) -> float:
        return 0.5 * (self.value + 1.0)


@dataclass
class SearchHooks:
    """What a watcher gives a search (the GTP layer: GoGui interrupt, live graphics, analysis
    lines). The callbacks get the result so far and the search's ``SearchLimits``."""

    stop: threading.Event | None = None  # once set, the search ends with what it has
    on_progress: Callable[[SearchResult, SearchLimits], None] | None = None
    progress_interval: float = 0.5  # seconds between on_progress calls
    on_done: Callable[[SearchResult, SearchLimits], None] | None = None  # the final result


@dataclass
class SearchProgress:
    """What the time manager's hook sees between batches."""

    elapsed: float
    playouts: int
    root_visits: int
    best_visits: int
    second_visits: int
    best_is_highest_q: bool
    root_value: float  # for the side to move, [-1, 1]


class Searcher:
    """A reusable MCTS over one board size."""

    def __init__(self, evaluator, size: int = 9, config: SearchConfig | None = None,
                 seed: int | None = None, cache: EvalCache | None = None,
                 solver: Solver | None = None):
        """``cache`` and ``solver`` may be shared with other searchers of this board size
        (analysis: every query's searcher; positions that recur cost no network call); by
        default the searcher has its own (a solver only when ``config.use_solver`` or leaf proofs
        are on)."""
        from ..game.board import geometry

        self.evaluator = evaluator
        self.config = config or SearchConfig()
        self.size = size
        self.geo = geometry(size)
        self.rng = np.random.default_rng(seed)
        cfg = self.config
        self.tree = Tree(cfg.max_tree_mb << 20)
        self._spare: Tree | None = None  # allocated on the first reuse (reroot needs a target)
        self.cache = cache if cache is not None else EvalCache(self.geo.area, cfg.cache_entries)
        # The leaves' nodes and the batch rows the kernels fill, a pair per batch in the
        # network at once (``lanes.Lanes``); lane 0's are the searcher's own.
        self.lanes = Lanes(cfg.batch_size, self.geo.area, self.geo.words, size)
        self.leaves, self.batch = self.lanes.buffers[0]
        self._root_hash: int | None = None
        self._root_moves: list[tuple[int, int]] = []
        self._noise_applied = False
        if solver is None and (cfg.use_solver or cfg.leaf_proof_empty > 0):
            solver = Solver(1 << 20, threads=cfg.solver_threads)
        self.solver = solver
        self._solved: dict[int, int] = {}  # root move -> WIN/LOSS for the root player
        self._leaf_deadline: float | None = None  # when leaf proofs stop (``search``'s limit)
        # The kernels' copy of the settings (``mcts.kernel_settings``): changed through the
        # setters below, read by the ``mcts.CF_*`` and ``mcts.CI_*`` indices.
        self.cfg_f, self.cfg_i = mcts.kernel_settings(cfg)
        self.rollout_scratch = rollout_scratch(size)  # hybrid leaf evaluation's workspace
        # numba's generator is one per thread, shared by every searcher there: each batch reseeds
        # it from this searcher's own stream, so concurrent searches (analysis, self-play) give
        # the same results as each alone.
        self._rollout_seed0 = self._rollout_seed = int(self.rng.integers(1 << 31))

    # -- settings ------------------------------------------------------------------------------
    def set_c_puct(self, value: float) -> None:
        """The exploration constant of this and later searches (the tree is kept)."""
        self.config.c_puct = value
        self.cfg_f[mcts.CF_C_PUCT] = value

    @property
    def c_puct(self) -> float:
        """The exploration constant the kernels use."""
        return float(self.cfg_f[mcts.CF_C_PUCT])

    # -- tree reuse ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the tree: the next search starts from a fresh root (no reuse). The cache and
        the solver's table are kept."""
        self.tree.reset()
        self._noise_applied = False
        self._root_hash = None
        self._rollout_seed = self._rollout_seed0  # a search from a fresh tree is reproducible

    def _move_root(self, board: Board) -> None:
        """Make the tree's root correspond to ``board``, keeping the subtree when possible."""
        moves = board.moves
        k = len(moves) - len(self._root_moves)
        reusable = (self._root_hash is not None and 0 <= k <= 8
                    and moves[:len(self._root_moves)] == self._root_moves)
        if reusable and k > 0:
            prefix = board.copy()
            for _ in range(k):
                prefix.undo()
            reusable = prefix.hash == self._root_hash
            for colour, p in moves[len(moves) - k:]:
                if not reusable:
                    break
                reusable = colour == prefix.to_move and self._descend(p)
                prefix.play(p, colour)
        elif reusable:
            reusable = board.hash == self._root_hash
        if not reusable:
            self.reset()
        self._root_hash = board.hash
        self._root_moves = list(moves)

    def _descend(self, p: int) -> bool:
        t = self.tree
        kids = t.children(0)
        hits = np.flatnonzero((kids.move == p) & (kids.node >= 0))
        if hits.size == 0:
            return False  # never visited: nothing to keep
        spare = self._spare
        if spare is None or spare.node_capacity < t.nodes or spare.edge_capacity < t.edges:
            spare = self._spare = Tree(t.max_bytes, nodes=t.nodes, edges=t.edges)
        spare.reset()
        mcts.reroot(t.arrays(), spare.arrays(), int(kids.node[hits[0]]))
        self.tree, self._spare = self._spare, t
        self._noise_applied = False
        return True

    # -- search --------------------------------------------------------------------------------
    def _grow_for_batch(self) -> bool:
        """Make room for one batch: a new node per walk and every expansion it may do (the
        room ``mcts.select_batch`` insists on), the batch in the network included. False at
        the memory bound."""
        walks = self.lanes.walks_to_room()
        return self.tree.grow(nodes_needed=walks, edges_needed=walks * self.geo.area)

    def _step(self, board: Board, walks: int | None = None):
        """One batch (a generator): select leaves (at most ``walks`` walks when given), ``yield``
        their planes and receive the network's ``Evaluation``, expand and back up. Returns
        (playouts, nn evals). A pipelining driver may answer ``IN_FLIGHT`` instead: the next
        step selects into another lane, each answer from then on is the evaluation of the
        oldest batch in the network, and a step with no leaves of its own yields ``None`` to
        wait for it (``lanes.py``)."""
        lane = self.lanes.free()
        leaves, batch = self.lanes.buffers[lane]
        self._grow_for_batch()  # before the batch, so expansions only fail at the memory bound
        if self.cfg_f[mcts.CF_ROLLOUT_WEIGHT] > 0:
            self._rollout_seed = (self._rollout_seed * 1103515245 + 12345) & 0x7FFFFFFF
            mcts.seed_kernels(self._rollout_seed)
        n, done = mcts.select_batch(self.tree.arrays(), self.cache.arrays(), board.arrays(),
                                    self.geo.nbr, self.geo.zobrist, self.size, self.cfg_f,
                                    self.cfg_i, leaves if walks is None else leaves[:walks],
                                    batch, self.rollout_scratch)
        reply = None
        if n > 0:
            reply = yield self.lanes.launch(lane, n, self._prove_leaves(n, batch))
        elif self.lanes.flying:
            reply = yield None
        evaluated = 0
        if reply is not None and reply is not IN_FLIGHT:
            evaluated = self.lanes.back_up(self.tree, self.cache, self.cfg_f, reply)
        return evaluated + done, evaluated

    def _land(self):
        """Back up the batches still in the network (a generator): (playouts, nn evals)."""
        evaluated = 0
        while self.lanes.flying:
            evaluated += self.lanes.back_up(self.tree, self.cache, self.cfg_f, (yield None))
        return evaluated, evaluated

    def _prove_leaves(self, n: int, batch: tuple) -> list[tuple[int, int]]:
        """Leaf proofs (``SearchConfig.leaf_proof_empty``): the rows of the n pending leaves
        that the solver settles within ``leaf_proof_nodes`` nodes, with WIN or LOSS for the side
        to move there. The solver's table is the one its root calls use (positions recur), and
        each call is held to LEAF_PROOF_SECONDS whatever the machine's node rate, and none
        runs past the search's time limit."""
        cfg = self.config
        if cfg.leaf_proof_empty <= 0 or self.solver is None:
            return []
        state = batch[:mcts.B_PLANES]
        empties = (state[0][:n] == 0).sum(axis=1)
        proven = []
        for b in np.flatnonzero(empties <= cfg.leaf_proof_empty):
            seconds = LEAF_PROOF_SECONDS
            if self._leaf_deadline is not None:
                seconds = min(seconds, self._leaf_deadline - time.perf_counter())
                if seconds <= 0:
                    break
            leaf = Board.from_state(self.size, [a[b] for a in state])
            result = self.solver.solve(leaf, cfg.leaf_proof_nodes, same_generation=True,
                                       max_seconds=seconds).result
            if result != 0:
                proven.append((int(b), int(result)))
        return proven

    def _maybe_add_noise(self, board: Board) -> None:
        cfg = self.config
        t = self.tree
        if self._noise_applied or cfg.dirichlet_weight <= 0 or t.first[0] < 0:
            return
        n = int(t.nchild[0])
        if n > 0:
            alpha = cfg.dirichlet_alpha_81 * 81 / n
            noise = self.rng.dirichlet([alpha] * n).astype(np.float32)
            mcts.add_root_noise(t.arrays(), noise, cfg.dirichlet_weight)
        self._noise_applied = True

    def search(self, board: Board, limits: SearchLimits,
               stop: threading.Event | None = None,
               should_stop: Callable[[SearchProgress], str | None] | None = None,
               on_progress: Callable[[SearchResult], None] | None = None,
               progress_interval: float = 0.5) -> SearchResult:
        """Search ``board`` (to move: board.to_move) until a limit, the stop event, the hook, or
        a proof ends it."""
        return run_search(self.evaluator, self.search_steps(board, limits, stop, should_stop,
                                                            on_progress, progress_interval),
                          lanes=self.config.lanes)

    def search_steps(self, board: Board, limits: SearchLimits,
                     stop: threading.Event | None = None,
                     should_stop: Callable[[SearchProgress], str | None] | None = None,
                     on_progress: Callable[[SearchResult], None] | None = None,
                     progress_interval: float = 0.5, root: GumbelRoot | None = None):
        """``search`` as a generator that does not call the network itself: it yields each
        batch of input planes and expects the ``Evaluation`` to be sent back; it returns the
        ``SearchResult``. Self-play drives many of these at once so that one network call
        serves the leaves of many games (``driver.BatchedSearches``).

        With ``root`` (a ``gumbel.GumbelRoot``) the root's children are visited as its plan
        says (sequential halving), and the search ends when the plan is done; the result's
        move is still the most visited, ``root.move_index`` gives the plan's."""
        if board.size != self.size:
            raise ValueError(f"searcher is for {self.size}x{self.size}, board is {board.size}")
        t0 = time.perf_counter()
        # Leaf proofs end by the search's own limit (a batch may hand the solver many leaves).
        self._leaf_deadline = None if limits.seconds is None else t0 + limits.seconds
        self._move_root(board)
        empties = board.geo.area - board.ply
        weight = self.config.rollout_weight_at(empties, board.geo.area)
        self.cfg_f[mcts.CF_ROLLOUT_WEIGHT] = weight
        if board.num_legal() == 0:
            return self._result(board, 0, 0, 0.0, "no legal move")
        if board.num_legal() == 1 and limits.playouts is None and limits.visits is None:
            # Forced: no thinking needed (a playout limit asks for search, e.g. analysis/tests).
            return self._result(board, 0, 0, time.perf_counter() - t0, "only move")
        playouts = evals = 0
        reason = "limit"
        next_report = t0 + progress_interval
        self._solved = {}
        tried = None
        cfg = self.config
        tries, cap, share = solver_reach(limits, cfg.solver_from, cfg.solver_long_from,
                                         cfg.solver_max_nodes)
        if cfg.use_solver and self.solver is not None and empties <= tries:
            budget = solver_budget(limits, cap, cfg.solver_rate, share) * self.solver.threads
            seconds = solver_seconds(limits, share)
            solved = self.solver.solve(board, budget, self._root_visits(board),
                                       max_seconds=seconds)
            self._solved = {m: r for m, r in solved.move_results.items() if r != 0}
            if solved.result == LOSS and cfg.resist:
                # Every move loses: play the one an imperfect opponent is likeliest to answer
                # wrongly, with what is left of the solver's budget (the clock is otherwise
                # idle from here; docs/results.md, "Endgame solver, measured").
                left = None if seconds is None else max(seconds - solved.seconds, 0.0)
                chance = self.solver.resist(board, solved.move_nodes, budget - solved.nodes,
                                            left)
                if chance is not None:
                    solved.move = chance[0]
            if solved.result != 0:
                return self._solver_result(board, solved, time.perf_counter() - t0)
            tried = (solved.nodes, solved.seconds)
        t = self.tree
        try:
            while True:
                walks = None
                if root is not None and t.first[0] >= 0 and t.nchild[0] > 0:
                    _, priors, visits, q, proof, _ = self.root_arrays()
                    root.start(priors)
                    plan = root.next(visits, q, proof, playouts, len(self.leaves))
                    if plan is None:
                        reason = "gumbel"
                        break
                    self.cfg_i[mcts.CI_FORCED_CHILD], walks = plan
                try:
                    did, nn = yield from self._step(board, walks)
                finally:
                    self.cfg_i[mcts.CI_FORCED_CHILD] = -1
                t = self.tree
                playouts += did
                evals += nn
                self._maybe_add_noise(board)
                if self._solved:
                    self._mark_solved()
                now = time.perf_counter()
                elapsed = now - t0
                if t.proof[0] != 0:
                    reason = "proven " + ("win" if t.proof[0] > 0 else "loss")
                    break
                if limits.playouts is not None and playouts >= limits.playouts:
                    reason = "playouts"
                    break
                if limits.visits is not None and t.N[0] >= limits.visits:
                    reason = "visits"
                    break
                if limits.seconds is not None and elapsed >= limits.seconds:
                    reason = "time"
                    break
                if stop is not None and stop.is_set():
                    reason = "interrupted"
                    break
                if t.info[mcts.I_FULL] and not self._grow_for_batch():
                    # At the memory bound more playouts could not expand anything: bank the time.
                    reason = "tree full"
                    break
                if should_stop is not None:
                    why = should_stop(self._progress(elapsed, playouts))
                    if why:
                        reason = why
                        break
                if on_progress is not None and now >= next_report:
                    on_progress(self._result(board, playouts, evals, elapsed, "running"))
                    next_report = now + progress_interval
            did, nn = yield from self._land()  # batches a pipelining driver still evaluates
            playouts += did
            evals += nn
        finally:
            self.lanes.abandon(self.tree)  # closed mid-batch (an error, or the driver gave up)
        result = self._result(board, playouts, evals, time.perf_counter() - t0, reason)
        result.solver_try = tried
        return result

    def _root_visits(self, board: Board) -> np.ndarray | None:
        """The reused tree's visit counts of the root's moves, for the solver to try the
        likeliest moves first; None when the tree has too few to say (the solver's own order
        is better then)."""
        t = self.tree
        kids = t.children(0)
        if len(kids) == 0 or int(kids.N.sum()) < 100:
            return None
        visits = np.zeros(board.geo.area, np.float64)
        visits[kids.move] = kids.N
        return visits

    def _mark_solved(self) -> None:
        """Let the solver's per-move results flow into the tree (MCTS-solver proofs)."""
        t = self.tree
        for k, m in enumerate(t.children(0).move):
            r = self._solved.get(int(m))
            if r is not None:
                c = t.child_node(0, k)
                if c >= 0:
                    t.proof[c] = -r  # a child's proof is for ITS side to move
        self._solved = {}

    def _solver_result(self, board: Board, solved, seconds: float) -> SearchResult:
        value = 1.0 if solved.result == WIN else -1.0
        children = [ChildStats(m, 0, float(r), 0.0, r) for m, r in solved.move_results.items()]
        reason = "solver: " + ("win" if solved.result == WIN else "loss") + \
                 f" ({solved.nodes:,} nodes)"
        self.reset()  # the tree no longer matches the play; rebuild from here
        return SearchResult(solved.move, 0, 0, 0, seconds, value, reason, children,
                            [solved.move], solved.result)

    def _progress(self, elapsed: float, playouts: int) -> SearchProgress:
        t = self.tree
        kids = t.children(0)
        n = len(kids)
        visits = kids.N
        order = np.argsort(-visits)
        best = int(order[0]) if n else 0
        second = int(visits[order[1]]) if n > 1 else 0
        q = np.where(visits > 0, kids.W / np.maximum(visits, 1), -2.0)
        root_value = -float(t.W[0]) / t.N[0] if t.N[0] else 0.0
        return SearchProgress(elapsed, playouts, int(t.N[0]), int(visits[best]) if n else 0,
                              second, bool(n == 0 or int(np.argmax(q)) == best), root_value)

    # -- results -------------------------------------------------------------------------------
    def root_arrays(self):
        """The root's moves as arrays, in prior order: (moves, priors, visits, mean value for
        the side to move at the root (NaN where unvisited), proof for that side), and the
        network's own value of the root for the side to move, in [-1, 1]."""
        kids = self.tree.children(0)
        q = np.where(kids.N > 0, kids.W / np.maximum(kids.N, 1), np.nan)
        return kids.move, kids.prior, kids.N, q, -kids.proof, float(self.tree.value[0])

    def children(self) -> list[ChildStats]:
        moves, priors, visits, q, proof, _ = self.root_arrays()
        return [ChildStats(int(m), int(n), float(v), float(p), int(f))
                for m, p, n, v, f in zip(moves, priors, visits, q, proof)]

    def principal_variation(self, max_len: int = 20) -> list[int]:
        return mcts.principal_variation(self.tree, 0, max_len)

    def _choose(self, board: Board, children: list[ChildStats], temperature: float) -> int:
        if not children:
            moves = board.legal_moves()
            return int(moves[0]) if moves.size else coords.RESIGN
        wins = [c for c in children if c.proof == 1]
        if wins:
            return wins[0].move
        alive = [c for c in children if c.proof != -1] or children
        visits = np.array([c.visits for c in alive], np.float64)
        if temperature > 0 and visits.sum() > 0:
            w = visits ** (1.0 / temperature)
            return alive[int(self.rng.choice(len(alive), p=w / w.sum()))].move
        best = max(alive, key=lambda c: (c.visits, c.prior))
        return best.move

    def _result(self, board: Board, playouts: int, evals: int, seconds: float, reason: str,
                temperature: float = 0.0) -> SearchResult:
        t = self.tree
        if board.num_legal() == 0:
            return SearchResult(coords.RESIGN, 0, playouts, evals, seconds, -1.0, reason, proven=-1)
        children = self.children()
        if board.num_legal() == 1 and not children:
            move = int(board.legal_moves()[0])
        else:
            move = self._choose(board, children, temperature)
        value = -float(t.W[0]) / t.N[0] if t.N[0] else 0.0
        return SearchResult(move, int(t.N[0]), playouts, evals, seconds, value, reason,
                            children, self.principal_variation(), int(t.proof[0]))

    def pick(self, board: Board, result: SearchResult, temperature: float) -> int:
        """Re-pick a move from the current tree with a visit temperature (self-play)."""
        return self._choose(board, self.children(), temperature)
