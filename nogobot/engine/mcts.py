"""Batched PUCT Monte-Carlo tree search over a preallocated struct-of-arrays tree (numba).

Notation follows the AlphaGo Zero paper: for a child a of node s,
``Q(s,a) = W(a)/N(a)`` and ``U(s,a) = c_puct · P(a) · sqrt(N(s)) / (1 + N(a))``; the child with
the highest ``Q + U`` is selected. Conventions:

* ``c_puct`` may grow with the parent's visits (AlphaZero's ``c_base``, KataGo's
  ``cpuctExplorationLog``): ``c_puct + c_puct_log · ln((N(s) + c_puct_base) / c_puct_base)``, so
  a node searched long explores more than one searched briefly; ``c_puct_log`` 0 keeps it fixed.
* ``W[n]`` sums values from the view of the player who MOVED INTO node n (the opponent of the
  side to move at n), so a parent reads its children's Q directly.
* A leaf's value ``v`` ∈ [-1, 1] is for the side to move there; the backup adds ``-v`` to the leaf,
  ``+v`` to its parent, and so on, alternating.
* Virtual loss: a node with ``VL`` selections in flight counts ``VL`` extra losses for its mover,
  ``Q = (W - VL)/(N + VL)``, so the leaves of one batch spread out (darkforest, minigo).
* Unvisited children get first-play urgency ``Q = Q(parent) - fpu_reduction``.
* **Edges and nodes** (lc0's layout): expanding a node writes one *edge* per legal move
  (prior ``P``, ``emove``, ``child`` = -1) as a contiguous block ``first[n] .. first[n] +
  nchild[n]`` sorted by prior (descending), so the PUCT scan is a tight loop and top-k pruning is
  a prefix. A child *node* (visits, value sums, proof: 36 B) is allocated only when selection
  first walks the edge, so an expansion costs 10 B per legal move instead of a full node each;
  most children are never visited.
* MCTS-solver: ``proof[n]`` is +1 when the side to move at n is proven to win, -1 proven to lose
  (a terminal node — no legal move — is -1). Proofs propagate up during backup; selection takes a
  proven win at once and avoids proven losses.

One search step (driven by ``search.py``): ``select_batch`` walks up to B leaves with virtual loss,
values terminal and cached leaves at once, and writes the others' positions into a batch buffer;
the caller runs the network on their feature planes; ``expand_and_backup`` expands them, stores
the evaluations in the cache, backs up and removes the virtual loss (``abandon`` removes it
from a batch never evaluated). Two batches may be pending at once: a walk that meets the other
batch's leaf counts as a collision, as within one. ``reroot`` keeps the
subtree of the move played (tree reuse) by compacting it into a fresh tree. Python code reads a
node's moves through ``Tree.children`` rather than the raw arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..game.board import (
    HASH,
    NLEGAL_B,
    TO_MOVE,
    copy_into,
    copy_rows_into,
    play_stone,
)
from ..net.features import NUM_PLANES, fill_planes
from .playout import policy_rollout

# Tree field indices in the int64 "info" array: nodes in use, "full" flag, edges in use.
I_COUNT, I_FULL, I_EDGES = 0, 1, 2

UNEXPANDED = -1

SELECT_PUCT, SELECT_UCB1_TUNED, SELECT_KL_UCB = 0, 1, 2

# The settings the kernels read travel as two arrays, ``cfg_f`` (floats) and ``cfg_i``
# (integers), built by ``kernel_settings`` and read by these indices; numba folds module-level
# integers into the compiled code as constants, and its on-disk cache keeps them.
(CF_C_PUCT, CF_FPU_REDUCTION, CF_VIRTUAL_LOSS, CF_ROOT_TEMP, CF_ROLLOUT_WEIGHT, CF_C_PUCT_LOG,
 CF_C_PUCT_BASE) = range(7)
CF_COUNT = 7
# CI_FORCED_CHILD: the root edge (its index among the root's moves) every walk of the batch
# takes, -1 for none; the Gumbel root's plan (``gumbel.GumbelRoot``) sets it.
CI_TOP_K, CI_SELECTION, CI_MAX_COLLISIONS, CI_ROLLOUT_COUNT, CI_FORCED_CHILD = range(5)
CI_COUNT = 5


@dataclass
class SearchConfig:
    """Search settings (self-play turns noise and temperature on)."""

    c_puct: float = 1.1
    # PUCT's constant at a node with N visits is c_puct + c_puct_log * ln((N + base) / base):
    # 0 keeps it fixed at every budget (the module's docstring).
    c_puct_log: float = 0.0
    c_puct_base: float = 500.0
    fpu_reduction: float = 0.2
    batch_size: int = 16
    # Batches a lone search (``Searcher.search``) may have in the network at once: 2 runs the
    # network on a thread of its own, one batch behind the tree's work, so the two overlap on
    # two cores (``driver.run_search``). Self-play and analysis drivers batch many searches.
    lanes: int = 1
    virtual_loss: float = 1.0
    max_tree_mb: int = 1024  # memory bound of one tree (nodes + edges), allocated on demand
    cache_entries: int = 1 << 16
    dirichlet_alpha_81: float = 0.03  # alpha = 0.03 * 81 / N_legal (NoGoZero+)
    dirichlet_weight: float = 0.0  # 0.25 in self-play, 0 in matches
    root_policy_temp: float = 1.0  # 1.03 in self-play (NoGoZero+)
    top_k: int = 0  # darkforest-style pruning: consider only the k best priors (0 = all)
    selection: int = SELECT_PUCT  # or SELECT_UCB1_TUNED / SELECT_KL_UCB (experiments)
    use_solver: bool = True  # exact endgame solver when few empty points remain
    # Empty points from which the search tries the solver first (None: solver.SOLVER_MAX_EMPTY;
    # the time plan counts the moves from there as the solver's tries).
    solver_from: int | None = None
    # The solver's largest node budget per move (None: solver.SOLVER_NODES). A move's share of
    # the clock gives it fewer on short clocks; a larger cap only acts on long ones.
    solver_max_nodes: int | None = None
    # Empty points from which a move with a minute or more of hard limit tries the solver, with
    # up to solver.SOLVER_LONG_NODES unless ``solver_max_nodes`` says otherwise (None:
    # solver.SOLVER_LONG_EMPTY; 0: no long tries).
    solver_long_from: int | None = None
    # Nodes a second a timed move's solver budget is sized at (None: the nominal
    # solver.SOLVER_NODES_PER_SECOND; 0: none, its share of the move's seconds alone bounds it).
    solver_rate: int | None = None
    # Threads the solver searches root moves with at once (``solver.Solver``'s ``threads``);
    # its node budget grows with them, its seconds stay the move's.
    solver_threads: int = 1
    # Once the solver proves the game lost, play the move that leaves the opponent the
    # smallest share of winning replies (``solver.Solver.resist``) instead of the one whose
    # refutation took the most nodes.
    resist: bool = True
    # Leaf proofs: a new leaf with at most ``leaf_proof_empty`` empty points goes to the exact
    # solver within ``leaf_proof_nodes`` nodes before its value is backed up; a proof replaces
    # the network's value and settles the node (MCTS-solver), so the tree's values deep in the
    # 30-34 point band are exact where the solver reaches. 0 turns it off (the default).
    leaf_proof_empty: int = 0
    leaf_proof_nodes: int = 5_000
    # Hybrid leaf evaluation (AlphaGo's lambda-mixing): a leaf's value is
    # (1 - rollout_weight) * network value + rollout_weight * mean result of rollout_count
    # policy rollouts from the leaf (playout.py). The network misjudges how many safe points each
    # side keeps late in the game; rollouts count them. 0 turns rollouts off (self-play, gating
    # and the search benchmark do). docs/engine.md gives the matches that chose these settings.
    rollout_weight: float = 0.5
    rollout_count: int = 4
    # The weight by phase: ``rollout_weight`` while ``ramp_start_empties`` or more points are
    # empty, ``endgame_rollout_weight`` from ``ramp_end_empties`` down, linear between (rollouts
    # read the late middle game better than the network does). None keeps one weight throughout.
    # The counts are 9x9 empty points; other sizes scale them by their area.
    endgame_rollout_weight: float | None = 0.8
    ramp_start_empties: int = 55
    ramp_end_empties: int = 30

    def rollout_weight_at(self, empties: int, area: int = 81) -> float:
        """The rollouts' weight in a search from a root with ``empties`` of ``area`` points
        empty."""
        late = self.endgame_rollout_weight
        if late is None or self.rollout_weight <= 0.0:
            return self.rollout_weight
        hi = self.ramp_start_empties * area / 81
        lo = self.ramp_end_empties * area / 81
        if empties >= hi:
            return self.rollout_weight
        if empties <= lo or hi <= lo:
            return late
        f = (hi - empties) / (hi - lo)
        return self.rollout_weight + f * (late - self.rollout_weight)


def kernel_settings(cfg: SearchConfig) -> tuple[np.ndarray, np.ndarray]:
    """``cfg`` as the kernels' (``cfg_f``, ``cfg_i``) arrays, indexed by ``CF_*`` and ``CI_*``."""
    cfg_f = np.zeros(CF_COUNT, np.float64)
    cfg_f[CF_C_PUCT] = cfg.c_puct
    cfg_f[CF_C_PUCT_LOG] = cfg.c_puct_log
    cfg_f[CF_C_PUCT_BASE] = cfg.c_puct_base
    cfg_f[CF_FPU_REDUCTION] = cfg.fpu_reduction
    cfg_f[CF_VIRTUAL_LOSS] = cfg.virtual_loss
    cfg_f[CF_ROOT_TEMP] = cfg.root_policy_temp
    cfg_f[CF_ROLLOUT_WEIGHT] = cfg.rollout_weight
    cfg_i = np.zeros(CI_COUNT, np.int64)
    cfg_i[CI_TOP_K] = cfg.top_k
    cfg_i[CI_SELECTION] = cfg.selection
    cfg_i[CI_MAX_COLLISIONS] = max(4, cfg.batch_size)
    cfg_i[CI_ROLLOUT_COUNT] = max(1, cfg.rollout_count)
    cfg_i[CI_FORCED_CHILD] = -1
    return cfg_f, cfg_i


class Tree:
    """The arrays of one search tree; node 0 is always the root.

    Node arrays (``NODE_FIELDS``, 36 B a node) and edge arrays (``EDGE_FIELDS``, 10 B an edge)
    each start small and double on demand (``grow``) while the whole tree stays within
    ``max_bytes``, so memory follows use and ``max_bytes`` is the hard bound."""

    NODE_FIELDS = ("N", "W", "W2", "VL", "parent", "first", "nchild", "move", "proof", "value",
                   "pending")
    EDGE_FIELDS = ("P", "emove", "child")
    NODE_BYTES = 36
    EDGE_BYTES = 10

    def __init__(self, max_bytes: int, nodes: int = 1 << 12, edges: int = 1 << 16):
        self.max_bytes = int(max_bytes)
        nodes = max(nodes, 64)
        edges = max(edges, 1024)
        while nodes * self.NODE_BYTES + edges * self.EDGE_BYTES > self.max_bytes and (
                nodes > 64 or edges > 1024):
            nodes, edges = max(64, nodes // 2), max(1024, edges // 2)
        self._allocate_nodes(nodes)
        self._allocate_edges(edges)
        self.info = np.zeros(4, np.int64)
        self.info[I_COUNT] = 1

    def _allocate_nodes(self, cap: int) -> None:
        self.node_capacity = cap
        self.N = np.zeros(cap, np.int32)
        self.W = np.zeros(cap, np.float32)
        self.W2 = np.zeros(cap, np.float32)  # sum of squared values (UCB1-tuned, LCB)
        self.VL = np.zeros(cap, np.int32)
        self.parent = np.full(cap, -1, np.int32)
        self.first = np.full(cap, UNEXPANDED, np.int32)  # first edge
        self.nchild = np.zeros(cap, np.int32)  # number of edges
        self.move = np.full(cap, -1, np.int16)  # the move that led here
        self.proof = np.zeros(cap, np.int8)
        self.value = np.zeros(cap, np.float32)  # network value for the side to move
        self.pending = np.zeros(cap, np.bool_)

    def _allocate_edges(self, cap: int) -> None:
        self.edge_capacity = cap
        self.P = np.zeros(cap, np.float32)
        self.emove = np.full(cap, -1, np.int16)
        self.child = np.full(cap, -1, np.int32)

    def grow(self, nodes_needed: int = 1, edges_needed: int = 1) -> bool:
        """Double the node and/or edge storage where less than the given room is left, keeping
        everything. False if the memory bound does not allow the room needed."""
        for kind, needed in (("nodes", nodes_needed), ("edges", edges_needed)):
            used = self.nodes if kind == "nodes" else self.edges
            cap = self.node_capacity if kind == "nodes" else self.edge_capacity
            if cap - used >= needed:
                continue
            new_cap = max(cap * 2, used + needed)
            per = self.NODE_BYTES if kind == "nodes" else self.EDGE_BYTES
            limit = (self.max_bytes - self.nbytes() + cap * per) // per
            new_cap = min(new_cap, limit)
            if new_cap - used < needed:
                return False
            fields = self.NODE_FIELDS if kind == "nodes" else self.EDGE_FIELDS
            old = {f: getattr(self, f) for f in fields}
            (self._allocate_nodes if kind == "nodes" else self._allocate_edges)(int(new_cap))
            for f, a in old.items():
                getattr(self, f)[:used] = a[:used]
        self.info[I_FULL] = 0
        return True

    def arrays(self) -> tuple:
        return (self.N, self.W, self.W2, self.VL, self.parent, self.first, self.nchild,
                self.move, self.proof, self.value, self.pending, self.P, self.emove, self.child,
                self.info)

    def reset(self) -> None:
        """Keep only an empty root. Other slots need no clearing: ``_new_node`` and
        ``_copy_node`` write every field of a node they hand out, ``_expand`` every edge."""
        for a, v in ((self.N, 0), (self.W, 0), (self.W2, 0), (self.VL, 0), (self.parent, -1),
                     (self.first, UNEXPANDED), (self.nchild, 0), (self.move, -1),
                     (self.proof, 0), (self.value, 0), (self.pending, False)):
            a[0] = v
        self.info[:] = 0
        self.info[I_COUNT] = 1

    @property
    def nodes(self) -> int:
        return int(self.info[I_COUNT])

    @property
    def edges(self) -> int:
        return int(self.info[I_EDGES])

    def nbytes(self) -> int:
        return (self.node_capacity * self.NODE_BYTES + self.edge_capacity * self.EDGE_BYTES)

    def used_bytes(self) -> int:
        return self.nodes * self.NODE_BYTES + self.edges * self.EDGE_BYTES

    def children(self, node: int = 0) -> "Children":
        """The moves of ``node`` (prior order) with their child nodes' statistics: 0 visits and
        no proof for moves never visited (``node`` = -1 there)."""
        f, n = int(self.first[node]), int(self.nchild[node])
        if f < 0:
            f, n = 0, 0
        kids = self.child[f:f + n].copy()
        seen = kids >= 0
        idx = np.where(seen, kids, 0)

        def gather(a, fill=0):
            return np.where(seen, a[idx], fill)

        return Children(self.emove[f:f + n].astype(np.int64), self.P[f:f + n].copy(), kids,
                        gather(self.N).astype(np.int64), gather(self.W).astype(np.float64),
                        gather(self.W2).astype(np.float64), gather(self.proof).astype(np.int64))

    def child_node(self, node: int, k: int) -> int:
        """The node of ``node``'s k-th move, allocated if it was never visited (-1 when the
        memory bound leaves no room)."""
        e = int(self.first[node]) + k
        c = int(self.child[e])
        if c >= 0:
            return c
        if self.node_capacity - self.nodes < 1 and not self.grow(nodes_needed=1):
            return -1
        return int(_new_node(self.arrays(), node, e))


@dataclass
class Children:
    """A node's moves in prior order (arrays of equal length) as seen by Python callers."""

    move: np.ndarray
    prior: np.ndarray
    node: np.ndarray  # child node index, -1 where the move was never visited
    N: np.ndarray
    W: np.ndarray  # value sum for the player who made the move
    W2: np.ndarray
    proof: np.ndarray  # for the side to move AFTER the move (-1: the move wins)

    def __len__(self) -> int:
        return len(self.move)


class EvalCache:
    """Network evaluations keyed by Zobrist hash (priors over legal moves, value), kept across
    moves. Open addressing with short probe runs; ``entries`` is rounded up to a power of two."""

    def __init__(self, area: int, entries: int):
        entries = 1 << max(4, int(entries - 1).bit_length())
        self.key = np.zeros(entries, np.int64)
        self.used = np.zeros(entries, np.bool_)
        self.value = np.zeros(entries, np.float32)
        self.prior = np.zeros((entries, area), np.float32)

    def arrays(self) -> tuple:
        return (self.key, self.used, self.value, self.prior)

    def clear(self) -> None:
        self.used[:] = False

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())


# --------------------------------------------------------------------------------------------
# Cache (open addressing on the Zobrist hash)
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _cache_find(ckey, cused, h):
    m = ckey.shape[0]
    i = h & (m - 1)
    for _ in range(8):
        if not cused[i]:
            return -1
        if ckey[i] == h:
            return i
        i = (i + 1) & (m - 1)
    return -1


@njit(cache=True)
def _cache_store(ckey, cused, cval, cpri, h, value, priors):
    m = ckey.shape[0]
    i = h & (m - 1)
    slot = i
    for _ in range(8):
        if not cused[i] or ckey[i] == h:
            slot = i
            break
        i = (i + 1) & (m - 1)
    # When the probe run is full, overwrite its first slot (a simple replacement policy).
    cused[slot] = True
    ckey[slot] = h
    cval[slot] = value
    cpri[slot, :] = priors


# --------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _kl_bernoulli(p, q):
    p = min(max(p, 1e-6), 1 - 1e-6)
    q = min(max(q, 1e-6), 1 - 1e-6)
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


@njit(cache=True)
def _kl_ucb(mean01, n, log_total):
    """Upper confidence bound for a Bernoulli mean by bisection (KL-UCB)."""
    if n <= 0:
        return 1.0
    bound = log_total / n
    lo, hi = mean01, 1.0
    for _ in range(20):
        mid = 0.5 * (lo + hi)
        if _kl_bernoulli(mean01, mid) > bound:
            hi = mid
        else:
            lo = mid
    return lo


@njit(cache=True)
def _select_edge(tree, node, c_puct, c_puct_log, c_puct_base, fpu_reduction, vloss, top_k,
                 selection):
    """The edge of ``node`` to walk: PUCT (or a variant) over its edges, reading the visited
    children's statistics through ``child``; unvisited edges get first-play urgency and the
    exploration constant grows with the node's visits by ``c_puct_log``."""
    N, W, W2, VL, parent, first, nchild, move, proof, value, pending, P, emove, child, info = tree
    f = first[node]
    n = nchild[node]
    if top_k > 0 and n > top_k:
        n = top_k
    # A child whose side to move is proven lost is a proven win for us: take it.
    for e in range(f, f + nchild[node]):
        c = child[e]
        if c >= 0 and proof[c] == -1:
            return e
    parent_n = N[node] + VL[node]
    if N[node] > 0:
        parent_q = -W[node] / N[node]
    else:
        parent_q = value[node]
    fpu = parent_q - fpu_reduction
    if c_puct_log > 0.0:
        c_puct += c_puct_log * math.log((parent_n + c_puct_base) / c_puct_base)
    sqrt_n = math.sqrt(max(parent_n, 1))
    log_n = math.log(max(parent_n, 2))
    best = -1
    best_score = -1e30
    for e in range(f, f + n):
        c = child[e]
        visits = 0
        w = 0.0
        w2 = 0.0
        nv = 0
        if c >= 0:
            if proof[c] == 1:
                continue  # the opponent is proven to win after this move
            visits = N[c] + VL[c]
            nv = N[c]
            w = W[c] - vloss * VL[c]
            w2 = W2[c]
        if visits > 0:
            q = w / visits
        else:
            q = fpu
        if selection == SELECT_PUCT:
            score = q + c_puct * P[e] * sqrt_n / (1.0 + visits)
        elif selection == SELECT_UCB1_TUNED:
            if visits == 0:
                score = 1e6 + P[e]
            else:
                mean01 = 0.5 * (q + 1.0)
                # E[((v+1)/2)^2] from the sums of v and v^2
                sq = 0.25 * w2 / max(nv, 1) + 0.5 * W[c] / max(nv, 1) + 0.25
                var = max(sq - mean01 * mean01, 0.0) + math.sqrt(2.0 * log_n / visits)
                score = mean01 + c_puct * math.sqrt(log_n / visits * min(0.25, var))
        else:
            if visits == 0:
                score = 1e6 + P[e]
            else:
                score = _kl_ucb(0.5 * (q + 1.0), visits, c_puct * log_n)
        if score > best_score:
            best_score = score
            best = e
    if best < 0:  # every move loses: pick the most visited to keep searching
        best = f
        most = -1
        for e in range(f, f + nchild[node]):
            c = child[e]
            if c >= 0 and N[c] > most:
                most = N[c]
                best = e
    return best


@njit(cache=True)
def _new_node(tree, node, e):
    """Allocate the child node of edge e of ``node`` (the caller made sure there is room)."""
    N, W, W2, VL, parent, first, nchild, move, proof, value, pending, P, emove, child, info = tree
    i = info[I_COUNT]
    info[I_COUNT] = i + 1
    N[i] = 0
    W[i] = 0.0
    W2[i] = 0.0
    VL[i] = 0
    parent[i] = node
    first[i] = UNEXPANDED
    nchild[i] = 0
    move[i] = emove[e]
    proof[i] = 0
    value[i] = 0.0
    pending[i] = False
    child[e] = i
    return i


@njit(cache=True)
def _add_path(tree, leaf, dv, dn, value):
    """Walk from leaf to root adding dn visits and value (alternating sign); remove dv VL."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    v = -value  # W of the leaf is from the view of its mover
    node = leaf
    while node >= 0:
        VL[node] -= dv
        if dn > 0:
            N[node] += dn
            W[node] += v
            W2[node] += v * v
        v = -v
        node = parent[node]


@njit(cache=True)
def _propagate_proof(tree, node):
    """MCTS-solver: push a new proof at node up the tree as far as it decides parents."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    p = parent[node]
    while p >= 0 and proof[p] == 0:
        f = first[p]
        any_win = False
        all_lose = True
        for e in range(f, f + nchild[p]):
            c = child[e]
            if c < 0:
                all_lose = False  # never visited: unknown
                continue
            if proof[c] == -1:
                any_win = True
                break
            if proof[c] != 1:
                all_lose = False
        if any_win:
            proof[p] = 1
        elif all_lose:
            proof[p] = -1
        else:
            return
        p = parent[p]


@njit(cache=True)
def _expand(tree, node, legal_row, priors, temp):
    """Give node one edge per legal move, sorted by prior (highest first; equal priors in board
    order). False if the edges are full.

    It allocates nothing (the edges are written in place, then insertion-sorted), so that
    ``select_batch`` can run without reference counts (``board``'s docstring)."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    cap = P.shape[0]
    n = 0
    for p in range(legal_row.shape[0]):
        if legal_row[p]:
            n += 1
    if info[I_EDGES] + n > cap:
        info[I_FULL] = 1
        return False
    f = info[I_EDGES]
    total = 0.0
    k = 0
    for p in range(legal_row.shape[0]):
        if not legal_row[p]:
            continue
        x = max(priors[p], 1e-12)
        if temp != 1.0:
            x = x ** (1.0 / temp)
        total += x
        # Insertion into edges f .. f+k, kept sorted by prior (at most a board's points).
        i = f + k
        while i > f and P[i - 1] < x:
            P[i] = P[i - 1]
            emove[i] = emove[i - 1]
            i -= 1
        P[i] = x
        emove[i] = p
        k += 1
    for e in range(f, f + n):
        P[e] = P[e] / total if total > 0 else 1.0 / n
        child[e] = -1
    first[node] = f
    nchild[node] = n
    info[I_EDGES] = f + n
    return True


@njit(cache=True, _nrt=False)
def _leaf_rollouts(stones, root, nxt, libs, legal, meta, nbr, zob, last_move, count, scratch):
    """Mean result in [-1, 1], for the side to move, of ``count`` policy rollouts
    (``playout.policy_rollout``) from the given position, which is left untouched."""
    c = meta[TO_MOVE]
    total = 0.0
    for _ in range(count):
        if policy_rollout(stones, root, nxt, libs, legal, meta, nbr, zob, last_move,
                          scratch) == c:
            total += 1.0
        else:
            total -= 1.0
    return total / count


@njit(cache=True)
def seed_kernels(seed):
    """Seed numba's generator (the rollouts' randomness) in this thread."""
    np.random.seed(seed)


@njit(cache=True, _nrt=False, nogil=True)
def select_batch(tree, cache, root_state, nbr, zob, size, cfg_f, cfg_i, leaves, batch, scratch):
    """Select up to len(leaves) leaves needing the network.

    Terminal, proven and cached leaves are valued on the spot. Returns (n_pending, n_done):
    the leaves written into ``leaves`` and the rows of ``batch`` (``batch_buffers``) for the
    network, and how many playouts were completed without it. ``cfg_f`` and ``cfg_i`` are
    ``kernel_settings``'. With a rollout weight, each leaf's playout result goes into the
    batch's rollout row (pending leaves) or straight into the value backed up (cached leaves);
    ``scratch`` is ``playout.rollout_scratch``'s."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    ckey, cused, cval, cpri = cache
    stones0, root0, nxt0, libs0, legal0, meta0 = root_state
    b_stones, b_root, b_nxt, b_libs, b_legal, b_meta, planes, b_rollout = batch
    c_puct, fpu_red = cfg_f[CF_C_PUCT], cfg_f[CF_FPU_REDUCTION]
    c_log, c_base = cfg_f[CF_C_PUCT_LOG], cfg_f[CF_C_PUCT_BASE]
    vloss, root_temp, lam = cfg_f[CF_VIRTUAL_LOSS], cfg_f[CF_ROOT_TEMP], cfg_f[CF_ROLLOUT_WEIGHT]
    top_k, selection, max_coll = cfg_i[CI_TOP_K], cfg_i[CI_SELECTION], cfg_i[CI_MAX_COLLISIONS]
    n_roll, forced = cfg_i[CI_ROLLOUT_COUNT], cfg_i[CI_FORCED_CHILD]
    B = leaves.shape[0]
    n_pending = 0
    n_done = 0
    collisions = 0
    area = b_stones.shape[1]
    while n_pending < B and collisions <= max_coll and proof[0] == 0 and info[I_FULL] == 0:
        if info[I_EDGES] + (n_pending + 1) * area > P.shape[0] or \
                info[I_COUNT] + 1 > N.shape[0]:
            # Room is kept for every expansion this batch may still do (cache hits and the
            # pending leaves) and for the one node a walk may add, so none fails: the caller
            # grows the tree or stops.
            info[I_FULL] = 1
            break
        b = n_pending
        copy_into(stones0, b_stones[b])
        copy_into(root0, b_root[b])
        copy_into(nxt0, b_nxt[b])
        copy_rows_into(libs0, b_libs[b])
        copy_rows_into(legal0, b_legal[b])
        copy_into(meta0, b_meta[b])
        node = 0
        VL[0] += 1
        while first[node] >= 0 and nchild[node] > 0 and proof[node] == 0:
            if node == 0 and forced >= 0:
                e = first[0] + forced
            else:
                e = _select_edge(tree, node, c_puct, c_log, c_base, fpu_red, vloss, top_k,
                                 selection)
            nxt = child[e]
            if nxt < 0:
                nxt = _new_node(tree, node, e)  # a first visit: the walk ends at this leaf
            node = nxt
            VL[node] += 1
            c = b_meta[b, TO_MOVE]
            play_stone(b_stones[b], b_root[b], b_nxt[b], b_libs[b], b_legal[b], b_meta[b], nbr, zob,
                  move[node], c)
        c = b_meta[b, TO_MOVE]
        if proof[node] != 0:
            _add_path(tree, node, 1, 1, float(proof[node]))
            n_done += 1
            if node == 0:
                break
            continue
        if first[node] == UNEXPANDED and b_meta[b, NLEGAL_B + c - 1] == 0:
            first[node] = 0
            nchild[node] = 0
            proof[node] = -1
            _propagate_proof(tree, node)
            _add_path(tree, node, 1, 1, -1.0)
            n_done += 1
            continue
        if pending[node]:
            _add_path(tree, node, 1, 0, 0.0)
            collisions += 1
            continue
        slot = _cache_find(ckey, cused, b_meta[b, HASH])
        if slot >= 0:
            v = cval[slot]
            nnv[node] = v
            if lam > 0.0:
                z = _leaf_rollouts(b_stones[b], b_root[b], b_nxt[b], b_libs[b], b_legal[b],
                                   b_meta[b], nbr, zob, move[node], n_roll, scratch)
                v = (1.0 - lam) * v + lam * z
            temp = root_temp if node == 0 else 1.0
            # If the tree is full the node stays unexpanded (its value still counts); the caller
            # grows the tree or stops, and the cached evaluation expands it later.
            _expand(tree, node, b_legal[b, c], cpri[slot], temp)
            _add_path(tree, node, 1, 1, v)
            n_done += 1
            continue
        pending[node] = True
        leaves[b] = node
        fill_planes(b_stones[b], b_root[b], b_libs[b], b_legal[b], b_meta[b], size, planes[b])
        if lam > 0.0:
            b_rollout[b] = _leaf_rollouts(b_stones[b], b_root[b], b_nxt[b], b_libs[b],
                                          b_legal[b], b_meta[b], nbr, zob, move[node], n_roll,
                                          scratch)
        n_pending += 1
    return n_pending, n_done


@njit(cache=True)
def _softmax_masked(logits, legal_row, out):
    m = -1e30
    for p in range(logits.shape[0]):
        if legal_row[p] and logits[p] > m:
            m = logits[p]
    s = 0.0
    for p in range(logits.shape[0]):
        if legal_row[p]:
            e = math.exp(logits[p] - m)
            out[p] = e
            s += e
        else:
            out[p] = 0.0
    if s > 0:
        for p in range(logits.shape[0]):
            out[p] /= s


@njit(cache=True, nogil=True)
def expand_and_backup(tree, cache, cfg_f, n, leaves, batch, logits, win_prob):
    """Expand the n pending leaves with the network's output, cache it, back up, clear VL.

    The cache and the node keep the network's value; the value backed up mixes in the leaf's
    rollout result (the batch's rollout row) when the rollout weight is > 0."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    ckey, cused, cval, cpri = cache
    b_stones, b_root, b_nxt, b_libs, b_legal, b_meta, planes, b_rollout = batch
    root_temp, rollout_weight = cfg_f[CF_ROOT_TEMP], cfg_f[CF_ROLLOUT_WEIGHT]
    pri = np.empty(logits.shape[1], np.float32)
    for b in range(n):
        node = leaves[b]
        c = b_meta[b, TO_MOVE]
        _softmax_masked(logits[b], b_legal[b, c], pri)
        v = 2.0 * win_prob[b] - 1.0
        nnv[node] = v
        _cache_store(ckey, cused, cval, cpri, b_meta[b, HASH], v, pri)
        temp = root_temp if node == 0 else 1.0
        _expand(tree, node, b_legal[b, c], pri, temp)  # stays unexpanded if the tree is full
        pending[node] = False
        if rollout_weight > 0.0:
            v = (1.0 - rollout_weight) * v + rollout_weight * b_rollout[b]
        _add_path(tree, node, 1, 1, v)


@njit(cache=True, nogil=True)
def abandon(tree, n, leaves):
    """Give up the n pending leaves of a batch that will not be evaluated (a search stopped
    with a batch still in the network): clear their pending mark and their walks' virtual loss,
    adding no visit, so the tree is as if they had not been selected."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    for b in range(n):
        pending[leaves[b]] = False
        _add_path(tree, leaves[b], 1, 0, 0.0)


@njit(cache=True)
def mark_proven(tree, node, result):
    """Record a proof found outside the tree (the exact solver on a leaf): ``result`` +1 when
    the side to move at ``node`` wins, -1 when it loses; push it up (MCTS-solver)."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    proof[node] = result
    _propagate_proof(tree, node)


@njit(cache=True)
def add_root_noise(tree, noise, weight):
    """P = (1 - weight)·P + weight·noise on the root's edges (self-play exploration)."""
    N, W, W2, VL, parent, first, nchild, move, proof, nnv, pending, P, emove, child, info = tree
    f = first[0]
    for j in range(nchild[0]):
        P[f + j] = (1.0 - weight) * P[f + j] + weight * noise[j]


@njit(cache=True)
def _copy_node(src, dst, o, i):
    sN, sW, sW2, sVL, sparent, sfirst, snchild, smove, sproof, snnv, spend = src[:11]
    dN, dW, dW2, dVL, dparent, dfirst, dnchild, dmove, dproof, dnnv, dpend = dst[:11]
    dN[i] = sN[o]
    dW[i] = sW[o]
    dW2[i] = sW2[o]
    dVL[i] = 0
    dnchild[i] = snchild[o]
    dmove[i] = smove[o]
    dproof[i] = sproof[o]
    dnnv[i] = snnv[o]
    dpend[i] = False
    dfirst[i] = UNEXPANDED


@njit(cache=True)
def reroot(src, dst, root):
    """Copy the subtree under node ``root`` of src into dst (reset beforehand, with room for
    src's nodes and edges), ``root`` becoming node 0. Nodes and edges are renumbered densely."""
    sN, sW, sW2, sVL, sparent, sfirst, snchild, smove, sproof, snnv, spend, sP, semove, \
        schild, sinfo = src
    dN, dW, dW2, dVL, dparent, dfirst, dnchild, dmove, dproof, dnnv, dpend, dP, demove, \
        dchild, dinfo = dst
    queue_old = np.empty(sinfo[I_COUNT], np.int64)
    queue_new = np.empty(sinfo[I_COUNT], np.int64)
    _copy_node(src, dst, root, 0)
    dparent[0] = -1
    count = 1
    edges = 0
    head, tail = 0, 0
    queue_old[tail] = root
    queue_new[tail] = 0
    tail += 1
    while head < tail:
        o, i = queue_old[head], queue_new[head]
        head += 1
        f = sfirst[o]
        if f == UNEXPANDED:
            continue
        k = snchild[o]
        dfirst[i] = edges if k > 0 else 0
        for j in range(k):
            e = edges + j
            dP[e] = sP[f + j]
            demove[e] = semove[f + j]
            c = schild[f + j]
            if c >= 0:
                _copy_node(src, dst, c, count)
                dparent[count] = i
                dchild[e] = count
                queue_old[tail] = c
                queue_new[tail] = count
                tail += 1
                count += 1
            else:
                dchild[e] = -1
        edges += k
    dinfo[I_COUNT] = count
    dinfo[I_EDGES] = edges
    dinfo[I_FULL] = 0


def principal_variation(tree: Tree, node: int = 0, max_len: int = 20) -> list[int]:
    """The expected line after ``node``: a proven win where there is one, else the most visited
    child, until an unvisited leaf."""
    pv: list[int] = []
    while len(pv) < max_len:
        kids = tree.children(node)
        if len(kids) == 0:
            break
        wins = np.flatnonzero(kids.proof == -1)
        k = int(wins[0]) if wins.size else int(np.argmax(kids.N))
        if kids.node[k] < 0 or (kids.N[k] == 0 and not wins.size):
            break
        pv.append(int(kids.move[k]))
        node = int(kids.node[k])
    return pv


B_PLANES = 6  # the feature planes' place in ``batch_buffers``' batch
B_ROLLOUT = 7  # and the rollout results'


def batch_buffers(batch: int, area: int, words: int, size: int) -> tuple:
    """Scratch space for one batch: the selected leaves' nodes, and the ``batch`` rows of
    ``select_batch``: their positions in ``Board.arrays()`` order (stones, group roots, next
    stone in the group, liberty bitsets, legal points, meta), their feature planes and their
    rollout results."""
    return (np.zeros(batch, np.int64),
            (np.zeros((batch, area), np.int8), np.zeros((batch, area), np.int16),
             np.zeros((batch, area), np.int16), np.zeros((batch, area, words), np.uint64),
             np.zeros((batch, 3, area), np.bool_), np.zeros((batch, 8), np.int64),
             np.zeros((batch, NUM_PLANES, size, size), np.float32),
             np.zeros(batch, np.float32)))
