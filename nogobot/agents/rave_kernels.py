"""The rave agent's numba kernels: one batch of simulations on a struct-of-arrays tree.

What this module owns: ``rave_batch`` (simulations: selection, expansion, rollout, back-up),
leaf expansion with priors and child selection, ``winning_move`` (a move that wins at once) and
``compact_subtree`` (tree reuse), with the ``params`` slots they read. ``agents/rave.py`` owns
the ``RaveAgent``, its Python-side trees, the clock and the threads.

Search. Each simulation copies the root position, descends the tree, expands a leaf once it has
been visited ``params[P_EXPAND]`` times (all legal moves, with priors), steps into one child and
finishes the game with ``playout.policy_rollout``. The result is backed up twice: as ordinary
Monte-Carlo values (``N``/``W`` of each node on the path) and as AMAF values (``AN``/``AW``): a
child of a node on the path counts the simulation when its move was later played by the same
colour. In NoGo every point is played at most once in a game, so "later played by that colour"
is just the final position's stone there, which the rollout leaves in its workspace.

Selection (Gelly & Silver 2011, the hand-selected schedule michi uses): a child's value is
``(1 - β)·W/N + β·AW/AN`` with ``β = AN / (AN + N + N·AN/RAVE_EQUIV)``, plus a small UCB term.
AMAF values start from priors (``PRIOR_VISITS`` pseudo-visits; the defaults are in rave.py):
with ``params[P_PATTERN]`` > 0 (the default) from the 3x3 pattern table (``patterns``): 0.5 plus
that scale times the move's logit above the children's mean; with 0, from the rollout policy's
local score (a safe point starts low, a point the local score likes high). Either way the first
simulations already go where the knowledge points.

MCTS-solver: a node whose side to move has no legal move is a proven win for the colour that
moved into it; a node with a winning child is a proven loss for its mover, and one whose
children are all proven losses a proven win. Proven losses are never selected, and a proven
root stops the batch.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine.playout import local_score, policy_rollout
from ..game.board import LAST, LAST2, NLEGAL_B, TO_MOVE, copy_position, play_stone
from .patterns import lookup, move_code

# Slots of the ``params`` array the kernels read (``kernel_params`` fills it).
P_C_UCT, P_INV_EQUIV, P_EXPAND, P_PRIOR_N, P_PRIOR_SAFE, P_PRIOR_STEP, P_PATTERN = range(7)
P_COUNT = 7
# Slots of the pattern table's ``extra`` array (patterns.PatternTable.kernel_args).
X_UNKNOWN, X_NEAR = 0, 2  # unknown contested, unknown safe; near none, last, own last, both


def kernel_params(c_uct: float, rave_equiv: float, expand_visits: int, prior_visits: float,
                  prior_safe: float, prior_step: float, pattern_prior: float) -> np.ndarray:
    """The ``params`` array of the kernels, by its ``P_*`` slots."""
    params = np.zeros(P_COUNT, np.float64)
    params[P_C_UCT] = c_uct
    params[P_INV_EQUIV] = 1.0 / rave_equiv
    params[P_EXPAND] = expand_visits
    params[P_PRIOR_N] = prior_visits
    params[P_PRIOR_SAFE] = prior_safe
    params[P_PRIOR_STEP] = prior_step
    params[P_PATTERN] = pattern_prior
    return params


@njit(cache=True, inline="always")
def _near(ring, a, p):
    if a < 0:
        return False
    for i in range(8):
        if ring[a, i] == p:
            return True
    return False


@njit(cache=True, inline="always")
def _pattern_logit(w_stones, w_root, w_libs, w_legal, w_meta, pat, p, c):
    ring, slot_map, place, codes, weights, extra = pat
    code = move_code(w_stones, w_root, w_libs, w_legal, ring, slot_map, place, p, c)
    k = lookup(codes, code)
    if k < 0:
        x = extra[X_UNKNOWN + (code & 1)]
    else:
        x = weights[k]
    near = (1 if _near(ring, w_meta[LAST], p) else 0) + (2 if _near(ring, w_meta[LAST2], p) else 0)
    return x + extra[X_NEAR + near]


@njit(cache=True, nogil=True, _nrt=False)
def _expand(node, w_stones, w_root, w_libs, w_legal, w_meta, c, nbr, n_nodes, move, first,
            nchild, mover, proof, N, W, AN, AW, params, pat):
    """Give ``node`` (side to move c, at least one legal move) all its legal moves as children,
    with prior AMAF values; False when the tree is full."""
    area = w_stones.shape[0]
    k = 0
    for p in range(area):
        if w_legal[c, p]:
            k += 1
    f = n_nodes[0]
    if f + k > move.shape[0]:
        return False
    o = 3 - c
    prior_n = params[P_PRIOR_N]
    scale = params[P_PATTERN]
    j = f
    for p in range(area):
        if not w_legal[c, p]:
            continue
        move[j] = p
        first[j] = -1
        nchild[j] = -1
        mover[j] = c
        proof[j] = 0
        N[j] = 0
        W[j] = 0.0
        AN[j] = prior_n
        if scale > 0.0:
            AW[j] = _pattern_logit(w_stones, w_root, w_libs, w_legal, w_meta, pat, p, c)
        else:
            if not w_legal[o, p]:
                value = params[P_PRIOR_SAFE]
            else:
                value = 0.5 + params[P_PRIOR_STEP] * local_score(w_stones, w_root, w_libs, nbr,
                                                                 p, c)
                value = min(max(value, 0.1), 0.9)
            AW[j] = prior_n * value
        j += 1
    if scale > 0.0:
        # The patterns' logits, centred on the children's mean, as prior AMAF values.
        mean = 0.0
        for j in range(f, f + k):
            mean += AW[j]
        mean /= k
        for j in range(f, f + k):
            value = min(max(0.5 + scale * (AW[j] - mean), 0.05), 0.95)
            AW[j] = prior_n * value
    first[node] = f
    nchild[node] = k
    n_nodes[0] = f + k
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _select(node, first, nchild, proof, N, W, AN, AW, params):
    """The child of ``node`` to descend into, or -1 when every child is a proven loss."""
    f = first[node]
    k = nchild[node]
    log_n = math.log(N[node] + 1.0)
    c_uct = params[P_C_UCT]
    inv_equiv = params[P_INV_EQUIV]
    explore_unvisited = c_uct * math.sqrt(log_n)  # the exploration term of a child with N = 0
    best = -1
    best_score = -1e30
    for j in range(f, f + k):
        pj = proof[j]
        if pj > 0:
            return j  # a proven win for the side to move
        if pj < 0:
            continue
        n = N[j]
        an = AN[j]
        if n > 0:
            # (1 - β)·W/n + β·AW/an with β = an / (an + n + n·an/RAVE_EQUIV), in one division.
            value = ((1.0 + an * inv_equiv) * W[j] + AW[j]) / (an + n + n * an * inv_equiv)
            score = value + c_uct * math.sqrt(log_n / (n + 1.0))
        else:
            score = (AW[j] / an if an > 0 else 0.5) + explore_unvisited
        if score > best_score:
            best_score = score
            best = j
    return best


# Public for rave.py (each tree's batches) and warmup.py, which loads it at start-up.
@njit(cache=True, nogil=True, _nrt=False)
def rave_batch(stones, root, nxt, libs, legal, meta, nbr, zob, root_node, n_nodes, move, first,
                nchild, mover, proof, N, W, AN, AW, iterations, params, seed, work, scratch,
                path, pat):
    """Run up to ``iterations`` simulations from the root state (left untouched); returns how
    many ran (fewer once the root is proven)."""
    np.random.seed(seed)
    w_stones, w_root, w_nxt, w_libs, w_legal, w_meta = work
    position = (stones, root, nxt, libs, legal, meta)
    expand_after = params[P_EXPAND]
    done = 0
    while done < iterations and proof[root_node] == 0:
        done += 1
        copy_position(position, work)
        node = root_node
        depth = 0
        path[0] = node
        # Selection.
        while proof[node] == 0 and nchild[node] > 0:
            j = _select(node, first, nchild, proof, N, W, AN, AW, params)
            if j < 0:
                proof[node] = 1  # every move loses for the side to move: node's mover won
                break
            play_stone(w_stones, w_root, w_nxt, w_libs, w_legal, w_meta, nbr, zob, move[j],
                  w_meta[TO_MOVE])
            node = j
            depth += 1
            path[depth] = node
        # Evaluation: a known result, or expansion and a rollout.
        winner = 0
        use_work = True
        for _ in range(2):  # at most: the leaf, then the child stepped into after expanding
            if proof[node] != 0:
                winner = mover[node] if proof[node] > 0 else 3 - mover[node]
                break
            c = w_meta[TO_MOVE]
            if w_meta[NLEGAL_B + c - 1] == 0:
                proof[node] = 1
                winner = 3 - c
                break
            if nchild[node] >= 0 or (node != root_node and N[node] + 1 < expand_after):
                break
            if not _expand(node, w_stones, w_root, w_libs, w_legal, w_meta, c, nbr, n_nodes,
                           move, first, nchild, mover, proof, N, W, AN, AW, params, pat):
                break
            j = _select(node, first, nchild, proof, N, W, AN, AW, params)
            play_stone(w_stones, w_root, w_nxt, w_libs, w_legal, w_meta, nbr, zob, move[j], c)
            node = j
            depth += 1
            path[depth] = node
        if winner == 0:
            winner = policy_rollout(w_stones, w_root, w_nxt, w_libs, w_legal, w_meta, nbr, zob,
                                    w_meta[LAST], scratch)
            use_work = False
        final = w_stones if use_work else scratch[0]
        # Back-up: Monte-Carlo and AMAF values.
        for d in range(depth + 1):
            i = path[d]
            N[i] += 1
            if mover[i] == winner:
                W[i] += 1.0
            k = nchild[i]
            if k > 0:
                # A node's children all share one mover (the colour to move at the node).
                f = first[i]
                m = mover[f]
                won = 1.0 if m == winner else 0.0
                for j in range(f, f + k):
                    # Branch-free: whose stone ends on a child's point is a coin toss to a
                    # branch predictor (this made rave 6% faster).
                    hit = np.float32(final[move[j]] == m)
                    AN[j] += hit
                    AW[j] += hit * won
        # Back-up: proofs.
        for d in range(depth, 0, -1):
            i = path[d]
            par = path[d - 1]
            if proof[par] != 0:
                break
            if proof[i] > 0:
                proof[par] = -1
            elif proof[i] < 0:
                f = first[par]
                all_lost = True
                for j in range(f, f + nchild[par]):
                    if proof[j] >= 0:
                        all_lost = False
                        break
                if not all_lost:
                    break
                proof[par] = 1
            else:
                break
    return done


# Public for rave.py (RaveAgent.select_move plays a move that wins at once without search).
@njit(cache=True, _nrt=False)
def winning_move(stones, root, nxt, libs, legal, meta, nbr, zob, work):
    """A move after which the opponent has no legal move, or -1 (``work``: state copies)."""
    w_stones, w_root, w_nxt, w_libs, w_legal, w_meta = work
    c = meta[TO_MOVE]
    for q in range(stones.shape[0]):
        if legal[c, q]:
            copy_position((stones, root, nxt, libs, legal, meta), work)
            play_stone(w_stones, w_root, w_nxt, w_libs, w_legal, w_meta, nbr, zob, q, c)
            if w_meta[NLEGAL_B + 2 - c] == 0:
                return q
    return -1


# Public for rave.py (tree reuse) and warmup.py, which loads it at start-up.
@njit(cache=True)
def compact_subtree(src_root, move, first, nchild, mover, proof, N, W, AN, AW,
             d_move, d_first, d_nchild, d_mover, d_proof, d_N, d_W, d_AN, d_AW):
    """Copy the subtree of ``src_root`` to the front of the destination arrays (breadth
    first, children kept contiguous); returns its node count."""
    queue = np.empty(d_move.shape[0], dtype=np.int64)  # source index of each copied node
    d_move[0], d_mover[0], d_proof[0] = move[src_root], mover[src_root], proof[src_root]
    d_N[0], d_W[0], d_AN[0], d_AW[0] = N[src_root], W[src_root], AN[src_root], AW[src_root]
    queue[0] = src_root
    head = 0
    tail = 1
    while head < tail:
        s = queue[head]
        k = nchild[s]
        if k > 0 and tail + k <= d_move.shape[0]:
            d_first[head] = tail
            d_nchild[head] = k
            f = first[s]
            for j in range(k):
                t = tail + j
                o = f + j
                d_move[t], d_mover[t], d_proof[t] = move[o], mover[o], proof[o]
                d_N[t], d_W[t], d_AN[t], d_AW[t] = N[o], W[o], AN[o], AW[o]
                queue[t] = o
            tail += k
        else:
            d_first[head] = -1
            d_nchild[head] = -1
        head += 1
    return tail
