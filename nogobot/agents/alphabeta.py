"""Alpha-beta baseline: iterative deepening negamax with a transposition table.

* **Evaluation** (from the side to move): my legal moves − opponent's legal moves (mobility; the
  Botzone heuristic). Both counts are kept incrementally by the rules kernels, so it is free.
  A side to move with no legal move has lost: ``-(WIN - ply)``, so quicker wins score higher.
* **Transposition table** keyed by the Zobrist hash of stones + side to move (``meta[HASH]``),
  one entry per slot (depth-preferred replacement), storing depth, bound type, value and best move.
  Win scores are stored relative to the node so they stay valid at other plies.
* **Move ordering:** the TT move, then two killer moves per ply, then the history heuristic.
  At the root, moves are ordered by the previous iteration's scores.
* **Time:** numba cannot read a clock, so each iteration gets a node budget computed in Python from
  the measured node rate and the time left; an iteration that runs out is abandoned, except that
  root moves fully searched before the abort still count (the first one searched is the previous
  best, so anything that beat it is at least as good).

The search copies the state arrays one level down a preallocated stack for every child (the
NoGo kernels have no undo); a 9×9 state is ~2 KB, so this is cheaper than an undo log.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from ..game.board import HASH, NLEGAL_B, TO_MOVE, Board, play_stone, push_state
from .base import SearchAgent

WIN = 1_000_000
WIN_BOUND = WIN - 10_000  # |value| above this is a proven win/loss
EXACT, LOWER, UPPER = 0, 1, 2
DEFAULT_SECONDS = 1.0
TT_BITS = 20


@njit(cache=True)
def _negamax(start, depth0, alpha0, beta0, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob,
             tt_key, tt_val, tt_depth, tt_flag, tt_move, killers, history, moves, order,
             counters, node_limit):
    """Value of the position at stack level ``start`` for its side to move, searched ``depth0``
    plies within (alpha0, beta0).

    Negamax written as a loop over an explicit stack (numba's on-disk cache crashes on
    recursive functions: numba issues #6061, #6713). Per level: the window, the remaining depth,
    the best value and move so far, the TT slot, and the generated, ordered moves.
    ``counters[0]`` counts nodes; ``counters[1]`` is set to 1 when ``node_limit`` is exceeded
    (the caller then ignores the returned value)."""
    levels = stk_s.shape[0]
    area = stk_s.shape[1]
    alpha = np.empty(levels, dtype=np.int64)
    beta = np.empty(levels, dtype=np.int64)
    a0 = np.empty(levels, dtype=np.int64)
    depth = np.empty(levels, dtype=np.int64)
    best = np.empty(levels, dtype=np.int64)
    best_move = np.empty(levels, dtype=np.int64)
    nmoves = np.empty(levels, dtype=np.int64)
    nxt_i = np.empty(levels, dtype=np.int64)
    slot = np.empty(levels, dtype=np.int64)
    ply = start
    alpha[ply], beta[ply], depth[ply] = alpha0, beta0, depth0
    ENTER, NEXT, RETURN = 0, 1, 2
    mode = ENTER
    v = 0
    while True:
        if mode == ENTER:
            counters[0] += 1
            if counters[0] > node_limit:
                counters[1] = 1
                return 0
            meta = stk_m[ply]
            c = meta[TO_MOVE]
            n_me = meta[NLEGAL_B + c - 1]
            if n_me == 0:
                v = -(WIN - ply)
                mode = RETURN
                continue
            if depth[ply] <= 0:
                v = n_me - meta[NLEGAL_B + 2 - c]
                mode = RETURN
                continue
            h = meta[HASH]
            sl = h & (tt_key.shape[0] - 1)
            slot[ply] = sl
            tmove = -1
            if tt_key[sl] == h:
                tmove = tt_move[sl]
                if tt_depth[sl] >= depth[ply]:
                    tv = np.int64(tt_val[sl])
                    if tv > WIN_BOUND:
                        tv -= ply
                    elif tv < -WIN_BOUND:
                        tv += ply
                    f = tt_flag[sl]
                    if f == EXACT or (f == LOWER and tv >= beta[ply]) or (
                            f == UPPER and tv <= alpha[ply]):
                        v = tv
                        mode = RETURN
                        continue
            legal = stk_g[ply]
            n = 0
            for q in range(area):
                if legal[c, q]:
                    moves[ply, n] = q
                    if q == tmove:
                        order[ply, n] = 1 << 40
                    elif q == killers[ply, 0]:
                        order[ply, n] = 1 << 39
                    elif q == killers[ply, 1]:
                        order[ply, n] = 1 << 38
                    else:
                        order[ply, n] = history[c, q]
                    n += 1
            nmoves[ply] = n
            nxt_i[ply] = 0
            a0[ply] = alpha[ply]
            best[ply] = -(WIN + 1)
            best_move[ply] = -1
            mode = NEXT
        elif mode == NEXT:
            i = nxt_i[ply]
            n = nmoves[ply]
            if i < n:
                # Selection sort step: bring the best-ordered remaining move to position i.
                k = i
                for j in range(i + 1, n):
                    if order[ply, j] > order[ply, k]:
                        k = j
                p = moves[ply, k]
                moves[ply, k] = moves[ply, i]
                order[ply, k] = order[ply, i]
                moves[ply, i] = p
                nxt_i[ply] = i + 1
                c = stk_m[ply][TO_MOVE]
                push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, ply)
                play_stone(stk_s[ply + 1], stk_r[ply + 1], stk_n[ply + 1], stk_l[ply + 1],
                      stk_g[ply + 1], stk_m[ply + 1], nbr, zob, p, c)
                alpha[ply + 1] = -beta[ply]
                beta[ply + 1] = -alpha[ply]
                depth[ply + 1] = depth[ply] - 1
                ply += 1
                mode = ENTER
                continue
            # All moves searched (or a cutoff): store in the TT and return the best value.
            v = best[ply]
            sl = slot[ply]
            h = stk_m[ply][HASH]
            if depth[ply] >= tt_depth[sl] or tt_key[sl] != h:
                sv = v
                if sv > WIN_BOUND:
                    sv += ply
                elif sv < -WIN_BOUND:
                    sv -= ply
                tt_key[sl] = h
                tt_val[sl] = sv
                tt_depth[sl] = depth[ply]
                tt_move[sl] = best_move[ply]
                if v <= a0[ply]:
                    tt_flag[sl] = UPPER
                elif v >= beta[ply]:
                    tt_flag[sl] = LOWER
                else:
                    tt_flag[sl] = EXACT
            mode = RETURN
        else:  # RETURN v from level ply to its parent
            if ply == start:
                return v
            ply -= 1
            v = -v
            p = moves[ply, nxt_i[ply] - 1]
            if v > best[ply]:
                best[ply] = v
                best_move[ply] = p
            if v > alpha[ply]:
                alpha[ply] = v
            if alpha[ply] >= beta[ply]:
                if killers[ply, 0] != p:
                    killers[ply, 1] = killers[ply, 0]
                    killers[ply, 0] = p
                c = stk_m[ply][TO_MOVE]
                history[c, p] += depth[ply] * depth[ply]
                nxt_i[ply] = nmoves[ply]  # cutoff: no more moves here
            mode = NEXT


@njit(cache=True)
def search_root(depth, root_moves, root_scores, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr,
                zob, tt_key, tt_val, tt_depth, tt_flag, tt_move, killers, history, moves, order,
                counters, node_limit):
    """Search every root move (in the given order) to ``depth``; fills ``root_scores``.
    (Public: warmup checks its cache entry.)

    Returns the number of root moves fully searched before the node limit (all of them unless
    the iteration was aborted). Scores are exact for the best move and upper bounds (fail-low)
    for the others, which is all the ordering of the next iteration needs."""
    c = stk_m[0][TO_MOVE]
    alpha = -(WIN + 1)
    for i in range(root_moves.shape[0]):
        p = root_moves[i]
        push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, 0)
        play_stone(stk_s[1], stk_r[1], stk_n[1], stk_l[1], stk_g[1], stk_m[1], nbr, zob, p, c)
        v = -_negamax(1, depth - 1, -(WIN + 1), -alpha, stk_s, stk_r, stk_n, stk_l, stk_g,
                      stk_m, nbr, zob, tt_key, tt_val, tt_depth, tt_flag, tt_move, killers,
                      history, moves, order, counters, node_limit)
        if counters[1]:
            return i
        root_scores[i] = v
        if v > alpha:
            alpha = v
    return root_moves.shape[0]


class AlphaBetaAgent(SearchAgent):
    """Iterative-deepening alpha-beta with mobility evaluation and a per-move time limit.
    The seeded generator breaks ties between equal root moves."""

    name = "alphabeta"
    WARMUP = {"max_depth": 2, "seconds": None, "seed": 0, "tt_bits": 4}

    def __init__(self, seconds: float | None = DEFAULT_SECONDS, max_depth: int | None = None,
                 seed: int | None = None, tt_bits: int = TT_BITS, warmup: bool = True):
        if seconds is None and max_depth is None:
            raise ValueError("alphabeta needs a time limit, a depth limit, or both")
        self.max_depth = max_depth
        self._tt_bits = tt_bits
        self._tt = None
        super().__init__(seconds, seed, warmup)

    def _tables(self, area: int):
        if self._tt is None:
            size = 1 << self._tt_bits
            self._tt = (np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int32),
                        np.full(size, -1, dtype=np.int16), np.zeros(size, dtype=np.int8),
                        np.full(size, -1, dtype=np.int16))
        return self._tt

    def search(self, board: Board, legal: np.ndarray, budget: float | None) -> int:
        t0 = time.perf_counter()
        area, geo = board.geo.area, board.geo
        empties = int(np.sum(board.stones == 0))
        max_depth = empties if self.max_depth is None else min(self.max_depth, empties)
        levels = max_depth + 2
        stk = [np.empty((levels,) + a.shape, dtype=a.dtype) for a in board.arrays()]
        for s, a in zip(stk, board.arrays()):
            s[0] = a
        tt = self._tables(area)
        killers = np.full((levels, 2), -1, dtype=np.int64)
        history = np.zeros((3, area), dtype=np.int64)
        moves = np.empty((levels, area), dtype=np.int64)
        order = np.empty((levels, area), dtype=np.int64)
        root_moves = self._rng.permutation(legal).astype(np.int64)
        best, best_score, depth_done, nodes = int(root_moves[0]), 0, 0, 0
        rate = None
        for depth in range(1, max_depth + 1):
            if budget is None:
                limit = 1 << 62
            else:
                left = budget - (time.perf_counter() - t0)
                if left <= 0:
                    break
                # Before the first measurement allow a small fixed budget.
                limit = int(0.9 * left * rate) if rate else 20_000
            counters = np.zeros(2, dtype=np.int64)
            scores = np.full(len(root_moves), -(WIN + 2), dtype=np.int64)
            ti = time.perf_counter()
            completed = search_root(depth, root_moves, scores, *stk, geo.nbr, geo.zobrist, *tt,
                              killers, history, moves, order, counters, limit)
            dt = time.perf_counter() - ti
            nodes += int(counters[0])
            if counters[0] > 200:
                rate = counters[0] / max(dt, 1e-6)
            if completed > 0:
                k = int(np.argmax(scores[:completed]))
                best, best_score = int(root_moves[k]), int(scores[k])
            if completed < len(root_moves):
                break
            depth_done = depth
            # Next iteration: best first, the rest by this iteration's scores (stable).
            idx = np.argsort(-scores, kind="stable")
            root_moves = root_moves[idx]
            if abs(best_score) > WIN_BOUND:
                break  # proven win or loss: deeper search cannot change it
        self.last_info = {"depth": depth_done, "score": best_score, "nodes": nodes,
                          "seconds": time.perf_counter() - t0}
        return best
