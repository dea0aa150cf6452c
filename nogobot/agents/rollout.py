"""Pure Monte-Carlo tree search with uniformly random playouts (UCT): the rollout baseline.

The reference opponent of Gomoku RL studies ("pure MCTS with N rollouts"): no network, no
heuristics. Each iteration copies the root position, descends the tree by UCB1, expands the leaf
it reaches (all legal moves, in a random order), finishes the game with uniformly random legal moves
(``board.random_playout``) and backs the winner up the path. The move played is the most visited
root child.

Notation: per node ``N`` (visits) and ``W`` (wins of the colour that moved into the node), so a
child is scored from its parent's point of view as ``W/N + c·sqrt(ln N_parent / N)`` (UCB1; an
unvisited child scores +inf). A node whose side to move has no legal move is terminal: the mover
has won, exactly, with no playout.

One addition to pure UCT: a move that wins at once (the opponent is left without a legal move)
is played without searching. UCT finds such a move too, but when several moves win it picks any
of them (all score 100%), and a longer win gives a weaker opponent more chances to go wrong.

The tree is a preallocated struct of arrays grown by a numba kernel in batches of iterations, so
Python can check the clock between batches (numba cannot read one).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ..game.board import NLEGAL_B, TO_MOVE, Board, play_stone, random_playout
from .base import SearchAgent

DEFAULT_PLAYOUTS = 10_000
DEFAULT_C = 1.0
MAX_NODES = 4_000_000  # memory cap for time-limited searches with no playout cap


@njit(cache=True)
def uct_batch(stones, root, nxt, libs, legal, meta, nbr, zob,
              n_nodes, move, first, nchild, mover, N, W,
              iterations, c_uct, seed):
    """Run ``iterations`` UCT iterations from the root state (left untouched); grows the tree.

    Node 0 is the root; ``n_nodes[0]`` is the number of nodes in use; ``nchild[i] < 0`` means
    "not expanded". Children of a node are contiguous from ``first[i]``."""
    np.random.seed(seed)
    area = stones.shape[0]
    cap = move.shape[0]
    scratch = np.empty(area, dtype=np.int64)
    path = np.empty(area + 2, dtype=np.int64)
    for _ in range(iterations):
        s, ro, nx, li, le, me = (stones.copy(), root.copy(), nxt.copy(), libs.copy(),
                                 legal.copy(), meta.copy())
        node = 0
        depth = 0
        path[0] = 0
        # Selection: follow UCB1 through expanded nodes.
        while nchild[node] > 0:
            f = first[node]
            k = nchild[node]
            log_n = math.log(max(N[node], 1))
            best = f
            best_score = -1.0
            for j in range(f, f + k):
                if N[j] == 0:
                    best = j
                    break
                score = W[j] / N[j] + c_uct * math.sqrt(log_n / N[j])
                if score > best_score:
                    best_score = score
                    best = j
            play_stone(s, ro, nx, li, le, me, nbr, zob, move[best], me[TO_MOVE])
            node = best
            depth += 1
            path[depth] = node
        c = me[TO_MOVE]
        n_legal = me[NLEGAL_B + c - 1]
        if n_legal == 0:
            winner = 3 - c  # terminal: the side to move is stuck
        else:
            # Expansion of a leaf (once, if room): all legal moves in random order.
            if nchild[node] < 0 and n_nodes[0] + n_legal <= cap:
                k = 0
                for q in range(area):
                    if le[c, q]:
                        scratch[k] = q
                        k += 1
                for j in range(k - 1, 0, -1):  # Fisher-Yates
                    r = np.random.randint(j + 1)
                    scratch[j], scratch[r] = scratch[r], scratch[j]
                f = n_nodes[0]
                for j in range(k):
                    move[f + j] = scratch[j]
                    first[f + j] = -1
                    nchild[f + j] = -1
                    mover[f + j] = c
                    N[f + j] = 0
                    W[f + j] = 0.0
                first[node] = f
                nchild[node] = k
                n_nodes[0] += k
                # Step into the first (random) child before the playout.
                play_stone(s, ro, nx, li, le, me, nbr, zob, move[f], c)
                node = f
                depth += 1
                path[depth] = node
            winner = random_playout(s, ro, nx, li, le, me, nbr, zob, scratch)
        for d in range(depth + 1):
            i = path[d]
            N[i] += 1
            if mover[i] == winner:
                W[i] += 1.0


@njit(cache=True)
def _winning_move(stones, root, nxt, libs, legal, meta, nbr, zob):
    """A move after which the opponent has no legal move, or -1."""
    c = meta[TO_MOVE]
    for q in range(stones.shape[0]):
        if legal[c, q]:
            s, ro, nx, li, le, me = (stones.copy(), root.copy(), nxt.copy(), libs.copy(),
                                     legal.copy(), meta.copy())
            play_stone(s, ro, nx, li, le, me, nbr, zob, q, c)
            if me[NLEGAL_B + 2 - c] == 0:
                return q
    return -1


class RolloutAgent(SearchAgent):
    """UCT with random playouts. Stops at ``playouts`` iterations or at the time budget."""

    name = "rollout"
    WARMUP = {"playouts": 4, "seed": 0}

    def __init__(self, playouts: int | None = DEFAULT_PLAYOUTS, seconds: float | None = None,
                 seed: int | None = None, c: float = DEFAULT_C, warmup: bool = True):
        if playouts is None and seconds is None:
            raise ValueError("rollout needs a playout count, a time limit, or both")
        if playouts is not None and playouts < 1:
            raise ValueError("playouts must be at least 1")
        self.playouts = playouts
        self.c = c
        super().__init__(seconds, seed, warmup)

    def search(self, board: Board, legal: np.ndarray, budget: float | None) -> int:
        geo = board.geo
        t0 = time.perf_counter()
        win = _winning_move(*board.arrays(), geo.nbr, geo.zobrist)
        if win >= 0:
            self.last_info = {"playouts": 0, "seconds": time.perf_counter() - t0, "nodes": 0,
                              "winrate": 1.0}
            return int(win)
        area = geo.area
        target = self.playouts if self.playouts is not None else 1 << 62
        cap = min(MAX_NODES, 1 + min(target, MAX_NODES) * area)
        # The tree's node arrays: move, first child, child count, mover, visits, wins.
        move, first, nchild, mover, N, W = (np.empty(cap, dtype=t) for t in (
            np.int16, np.int32, np.int32, np.int8, np.int32, np.float32))
        move[0], first[0], nchild[0], N[0], W[0] = board.last_move, -1, -1, 0, 0.0
        mover[0] = 3 - board.to_move
        n_nodes = np.ones(1, dtype=np.int64)
        done, batch = 0, 32
        while done < target:
            n = int(min(batch, target - done))
            tb = time.perf_counter()
            uct_batch(*board.arrays(), geo.nbr, geo.zobrist, n_nodes, move, first, nchild,
                       mover, N, W, n, self.c, int(self._rng.integers(1 << 31)))
            done += n
            if budget is not None:
                now = time.perf_counter()
                rate = n / max(now - tb, 1e-6)
                left = budget - (now - t0)
                if left <= 0:
                    break
                # Next batch: ~1/20 of the remaining time, never past the deadline.
                batch = max(1, min(int(rate * left * 0.9), max(16, int(rate * left / 20))))
            else:
                batch = min(batch * 2, 4096)
        f, k = first[0], nchild[0]
        visits = N[f:f + k]
        best = int(np.argmax(visits))
        self.last_info = {
            "playouts": done,
            "seconds": time.perf_counter() - t0,
            "nodes": int(n_nodes[0]),
            "winrate": float(W[f + best] / max(visits[best], 1)),
        }
        return int(move[f + best])

