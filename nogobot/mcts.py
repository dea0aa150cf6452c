"""Batched PUCT Monte-Carlo tree search over a preallocated struct-of-arrays tree (numba).

Notation follows the AlphaGo Zero paper: for a child a of node s,
``Q(s,a) = W(a)/N(a)`` and ``U(s,a) = c_puct · P(a) · sqrt(N(s)) / (1 + N(a))``; the child with
the highest ``Q + U`` is selected. Conventions:

* ``W[n]`` sums values from the view of the player who MOVED INTO node n (the opponent of the
  side to move at n), so a parent reads its children's Q directly.
* A leaf's value ``v`` ∈ [-1, 1] is for the side to move there; the backup adds ``-v`` to the leaf,
  ``+v`` to its parent, and so on, alternating.
* Virtual loss: a node with ``VL`` selections in flight counts ``VL`` extra losses for its mover,
  ``Q = (W - VL)/(N + VL)``, so the leaves of one batch spread out (seed 003, minigo).
* Unvisited children get first-play urgency ``Q = Q(parent) - fpu_reduction``.
* Children of a node are one contiguous block ``first[n] .. first[n] + nchild[n]``, sorted by
  prior (descending), so the PUCT scan is a tight loop and top-k pruning is a prefix.
* MCTS-solver: ``proof[n]`` is +1 when the side to move at n is proven to win, -1 proven to lose
  (a terminal node — no legal move — is -1). Proofs propagate up during backup; selection takes a
  proven win at once and avoids proven losses.

One search step (driven by ``player.py``): ``select_batch`` walks up to B leaves with virtual loss,
values terminal and cached leaves at once, and writes the others' positions into a batch buffer;
the caller runs the network on their feature planes; ``expand_and_backup`` expands them, stores
the evaluations in the cache, backs up and removes the virtual loss. ``reroot`` keeps the
subtree of the move played (tree reuse) by compacting it into a fresh tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import HASH, NLEGAL_B, TO_MOVE, _play
from .features import NUM_PLANES, fill_planes

# Tree field indices in the int64 "info" array.
I_COUNT, I_FULL = 0, 1

UNEXPANDED = -1

SELECT_PUCT, SELECT_UCB1_TUNED, SELECT_KL_UCB = 0, 1, 2


@dataclass
class SearchConfig:
    """Search settings (self-play turns noise and temperature on)."""

    c_puct: float = 1.1
    fpu_reduction: float = 0.2
    batch_size: int = 16
    virtual_loss: float = 1.0
    max_nodes: int = 16_000_000  # 40 B each: <= 640 MB per tree, allocated on demand
    cache_entries: int = 1 << 16
    dirichlet_alpha_81: float = 0.03  # alpha = 0.03 * 81 / N_legal (NoGoZero+)
    dirichlet_weight: float = 0.0  # 0.25 in self-play, 0 in matches
    root_policy_temp: float = 1.0  # 1.03 in self-play (NoGoZero+)
    top_k: int = 0  # darkforest-style pruning: consider only the k best priors (0 = all)
    selection: int = SELECT_PUCT  # or SELECT_UCB1_TUNED / SELECT_KL_UCB (seed 002 experiments)
    use_solver: bool = True  # exact endgame solver when few empty points remain


class Tree:
    """The arrays of one search tree; node 0 is always the root.

    Storage starts at ``capacity`` nodes and doubles on demand (``grow``) up to ``max_nodes``,
    so memory follows use; ``max_nodes`` is the hard bound."""

    FIELDS = ("N", "W", "W2", "VL", "P", "parent", "first", "nchild", "move", "proof", "value",
              "pending")

    def __init__(self, max_nodes: int, capacity: int = 1 << 16):
        self.max_nodes = max_nodes
        self._allocate(min(max(capacity, 1024), max_nodes))
        self.info = np.zeros(4, np.int64)
        self.info[I_COUNT] = 1

    def _allocate(self, cap: int) -> None:
        self.capacity = cap
        max_nodes = cap
        self.N = np.zeros(max_nodes, np.int32)
        self.W = np.zeros(max_nodes, np.float32)
        self.W2 = np.zeros(max_nodes, np.float32)  # sum of squared values (UCB1-tuned)
        self.VL = np.zeros(max_nodes, np.int32)
        self.P = np.zeros(max_nodes, np.float32)
        self.parent = np.full(max_nodes, -1, np.int32)
        self.first = np.full(max_nodes, UNEXPANDED, np.int32)
        self.nchild = np.zeros(max_nodes, np.int32)
        self.move = np.full(max_nodes, -1, np.int16)
        self.proof = np.zeros(max_nodes, np.int8)
        self.value = np.zeros(max_nodes, np.float32)  # network value for the side to move
        self.pending = np.zeros(max_nodes, np.bool_)

    def grow(self) -> bool:
        """Double the storage (up to max_nodes), keeping every node. False if at the bound."""
        if self.capacity >= self.max_nodes:
            return False
        old = {f: getattr(self, f) for f in self.FIELDS}
        n = self.nodes
        self._allocate(min(self.capacity * 2, self.max_nodes))
        for f, a in old.items():
            getattr(self, f)[:n] = a[:n]
        self.info[I_FULL] = 0
        return True

    def arrays(self) -> tuple:
        return (self.N, self.W, self.W2, self.VL, self.P, self.parent, self.first, self.nchild,
                self.move, self.proof, self.value, self.pending, self.info)

    def reset(self) -> None:
        n = int(self.info[I_COUNT])
        for a, v in ((self.N, 0), (self.W, 0), (self.W2, 0), (self.VL, 0), (self.P, 0),
                     (self.parent, -1), (self.first, UNEXPANDED), (self.nchild, 0),
                     (self.move, -1), (self.proof, 0), (self.value, 0), (self.pending, False)):
            a[:n] = v
        self.info[:] = 0
        self.info[I_COUNT] = 1

    @property
    def nodes(self) -> int:
        return int(self.info[I_COUNT])

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())


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
def _select_child(tree, node, c_puct, fpu_reduction, vloss, top_k, selection):
    N, W, W2, VL, P, parent, first, nchild, move, proof, value, pending, info = tree
    f = first[node]
    n = nchild[node]
    if top_k > 0 and n > top_k:
        n = top_k
    # A child whose side to move is proven lost is a proven win for us: take it.
    for i in range(f, f + nchild[node]):
        if proof[i] == -1:
            return i
    parent_n = N[node] + VL[node]
    if N[node] > 0:
        parent_q = -W[node] / N[node]
    else:
        parent_q = value[node]
    fpu = parent_q - fpu_reduction
    sqrt_n = math.sqrt(max(parent_n, 1))
    log_n = math.log(max(parent_n, 2))
    best = -1
    best_score = -1e30
    for i in range(f, f + n):
        if proof[i] == 1:
            continue  # the opponent is proven to win after this move
        visits = N[i] + VL[i]
        if visits > 0:
            q = (W[i] - vloss * VL[i]) / visits
        else:
            q = fpu
        if selection == SELECT_PUCT:
            score = q + c_puct * P[i] * sqrt_n / (1.0 + visits)
        elif selection == SELECT_UCB1_TUNED:
            if visits == 0:
                score = 1e6 + P[i]
            else:
                mean01 = 0.5 * (q + 1.0)
                # E[((v+1)/2)^2] from the sums of v and v^2
                sq = 0.25 * W2[i] / max(N[i], 1) + 0.5 * W[i] / max(N[i], 1) + 0.25
                var = max(sq - mean01 * mean01, 0.0) + math.sqrt(2.0 * log_n / visits)
                score = mean01 + c_puct * math.sqrt(log_n / visits * min(0.25, var))
        else:
            if visits == 0:
                score = 1e6 + P[i]
            else:
                score = _kl_ucb(0.5 * (q + 1.0), visits, c_puct * log_n)
        if score > best_score:
            best_score = score
            best = i
    if best < 0:  # every move loses: pick the most visited to keep searching
        best = f
        for i in range(f, f + nchild[node]):
            if N[i] > N[best]:
                best = i
    return best


@njit(cache=True)
def _add_path(tree, leaf, dv, dn, value):
    """Walk from leaf to root adding dn visits and value (alternating sign); remove dv VL."""
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
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
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
    p = parent[node]
    while p >= 0 and proof[p] == 0:
        f = first[p]
        any_win = False
        all_lose = True
        for i in range(f, f + nchild[p]):
            if proof[i] == -1:
                any_win = True
                break
            if proof[i] != 1:
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
    """Give node one child per legal move, sorted by prior. False if the tree is full."""
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
    cap = N.shape[0]
    n = 0
    for p in range(legal_row.shape[0]):
        if legal_row[p]:
            n += 1
    if info[I_COUNT] + n > cap:
        info[I_FULL] = 1
        return False
    moves = np.empty(n, np.int64)
    pri = np.empty(n, np.float64)
    k = 0
    total = 0.0
    for p in range(legal_row.shape[0]):
        if legal_row[p]:
            moves[k] = p
            x = max(priors[p], 1e-12)
            if temp != 1.0:
                x = x ** (1.0 / temp)
            pri[k] = x
            total += x
            k += 1
    order = np.argsort(-pri)
    f = info[I_COUNT]
    for j in range(n):
        i = f + j
        o = order[j]
        move[i] = moves[o]
        P[i] = pri[o] / total if total > 0 else 1.0 / n
        parent[i] = node
        first[i] = UNEXPANDED
        nchild[i] = 0
        N[i] = 0
        W[i] = 0.0
        W2[i] = 0.0
        VL[i] = 0
        proof[i] = 0
        pending[i] = False
    first[node] = f
    nchild[node] = n
    info[I_COUNT] = f + n
    return True


@njit(cache=True)
def select_batch(tree, cache, root_state, nbr, zob, size, cfg_f, cfg_i,
                 leaves, b_stones, b_root, b_nxt, b_libs, b_legal, b_meta, planes):
    """Select up to len(leaves) leaves needing the network.

    Terminal, proven and cached leaves are valued on the spot. Returns (n_pending, n_done):
    the leaves written into ``leaves``/batch buffers/``planes`` for the network, and how many
    playouts were completed without it. cfg_f = (c_puct, fpu_reduction, vloss, root_temp);
    cfg_i = (top_k, selection, max_collisions)."""
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
    ckey, cused, cval, cpri = cache
    stones0, root0, nxt0, libs0, legal0, meta0 = root_state
    c_puct, fpu_red, vloss, root_temp = cfg_f[0], cfg_f[1], cfg_f[2], cfg_f[3]
    top_k, selection, max_coll = cfg_i[0], cfg_i[1], cfg_i[2]
    B = leaves.shape[0]
    n_pending = 0
    n_done = 0
    collisions = 0
    area = b_stones.shape[1]
    while n_pending < B and collisions <= max_coll and proof[0] == 0 and info[I_FULL] == 0:
        if info[I_COUNT] + (n_pending + 1) * area > N.shape[0]:
            # Room is kept for every expansion this batch may still do (cache hits and the
            # pending leaves), so none fails: the caller grows the tree or stops.
            info[I_FULL] = 1
            break
        b = n_pending
        b_stones[b, :] = stones0
        b_root[b, :] = root0
        b_nxt[b, :] = nxt0
        b_libs[b, :, :] = libs0
        b_legal[b, :, :] = legal0
        b_meta[b, :] = meta0
        node = 0
        VL[0] += 1
        while first[node] >= 0 and nchild[node] > 0 and proof[node] == 0:
            node = _select_child(tree, node, c_puct, fpu_red, vloss, top_k, selection)
            VL[node] += 1
            c = b_meta[b, TO_MOVE]
            _play(b_stones[b], b_root[b], b_nxt[b], b_libs[b], b_legal[b], b_meta[b], nbr, zob,
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


@njit(cache=True)
def expand_and_backup(tree, cache, n, leaves, b_legal, b_meta, logits, win_prob, root_temp):
    """Expand the n pending leaves with the network's output, cache it, back up, clear VL."""
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
    ckey, cused, cval, cpri = cache
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
        _add_path(tree, node, 1, 1, v)


@njit(cache=True)
def add_root_noise(tree, noise, weight):
    """P = (1 - weight)·P + weight·noise on the root's children (self-play exploration)."""
    N, W, W2, VL, P, parent, first, nchild, move, proof, nnv, pending, info = tree
    f = first[0]
    for j in range(nchild[0]):
        P[f + j] = (1.0 - weight) * P[f + j] + weight * noise[j]


@njit(cache=True)
def _copy_node(src, dst, o, i):
    sN, sW, sW2, sVL, sP, sparent, sfirst, snchild, smove, sproof, snnv, spend, sinfo = src
    dN, dW, dW2, dVL, dP, dparent, dfirst, dnchild, dmove, dproof, dnnv, dpend, dinfo = dst
    dN[i] = sN[o]
    dW[i] = sW[o]
    dW2[i] = sW2[o]
    dVL[i] = 0
    dP[i] = sP[o]
    dnchild[i] = snchild[o]
    dmove[i] = smove[o]
    dproof[i] = sproof[o]
    dnnv[i] = snnv[o]
    dpend[i] = False
    dfirst[i] = UNEXPANDED


@njit(cache=True)
def reroot(src, dst, child):
    """Copy the subtree under ``child`` of src into dst (reset beforehand) with child as root."""
    sN, sW, sW2, sVL, sP, sparent, sfirst, snchild, smove, sproof, snnv, spend, sinfo = src
    dN, dW, dW2, dVL, dP, dparent, dfirst, dnchild, dmove, dproof, dnnv, dpend, dinfo = dst
    queue_old = np.empty(sinfo[I_COUNT], np.int64)
    queue_new = np.empty(sinfo[I_COUNT], np.int64)
    _copy_node(src, dst, child, 0)
    dparent[0] = -1
    count = 1
    head, tail = 0, 0
    queue_old[tail] = child
    queue_new[tail] = 0
    tail += 1
    while head < tail:
        o, i = queue_old[head], queue_new[head]
        head += 1
        f = sfirst[o]
        if f == UNEXPANDED:
            continue
        dfirst[i] = count if snchild[o] > 0 else 0
        for j in range(snchild[o]):
            _copy_node(src, dst, f + j, count + j)
            dparent[count + j] = i
            queue_old[tail] = f + j
            queue_new[tail] = count + j
            tail += 1
        count += snchild[o]
    dinfo[I_COUNT] = count
    dinfo[I_FULL] = 0


def principal_variation(tree: Tree, node: int = 0, max_len: int = 20) -> list[int]:
    """The expected line after ``node``: a proven win where there is one, else the most visited
    child, until an unvisited leaf."""
    t = tree
    pv: list[int] = []
    while len(pv) < max_len and t.first[node] >= 0 and t.nchild[node] > 0:
        f, n = int(t.first[node]), int(t.nchild[node])
        wins = np.flatnonzero(t.proof[f:f + n] == -1)
        node = f + (int(wins[0]) if wins.size else int(np.argmax(t.N[f:f + n])))
        if t.N[node] == 0 and not wins.size:
            break
        pv.append(int(t.move[node]))
    return pv


def batch_buffers(batch: int, area: int, words: int, size: int) -> tuple:
    """Scratch space for one batch: positions of the selected leaves and their feature planes."""
    return (np.zeros(batch, np.int64),
            np.zeros((batch, area), np.int8), np.zeros((batch, area), np.int16),
            np.zeros((batch, area), np.int16), np.zeros((batch, area, words), np.uint64),
            np.zeros((batch, 3, area), np.bool_), np.zeros((batch, 8), np.int64),
            np.zeros((batch, NUM_PLANES, size, size), np.float32))
