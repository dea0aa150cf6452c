"""The exact solver's root kernels: each root move searched in turn within a shared node
budget (by ``solver_kernels.negamax`` or ``solver_dfpn.dfpn``), and the root's move order."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..game.board import LAST, TO_MOVE, play_stone, push_state
from .solver_dfpn import dfpn
from .solver_kernels import C_DFPN, LOSS, S_LEFT, S_TIMED_OUT, UNKNOWN, WIN, negamax, order_children


@njit(cache=True)
def solve_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               work, gen, pkeys, pphi, pdelta, root_moves, budget, per_move, results, nodes, cfg,
               deadline, stats):
    """Solve the root moves (the position at level 0 of the stack, ``solver.search_stack``) in
    the given order, each with at most ``per_move`` of the shared node budget; ``results[i]``
    (from the ROOT player's view, UNKNOWN where unsolved) and ``nodes[i]`` accumulate over
    calls, and moves already solved in ``results`` are skipped. Stops at the first win, or
    when the clock passes ``deadline``. (Public: warmup checks its cache entry.)"""
    c = stk_m[0][TO_MOVE]
    levels = stk_s.shape[0]
    area = stk_s.shape[1]
    nmov = np.zeros(levels, np.int64)
    nxt_i = np.zeros(levels, np.int64)
    unknown = np.zeros(levels, np.bool_)
    entry = np.zeros(levels, np.int64)
    th_phi = np.zeros(levels, np.int64)
    th_delta = np.zeros(levels, np.int64)
    sel = np.zeros(levels, np.int64)
    c_phi = np.zeros((levels, area), np.int64) if cfg[C_DFPN] else np.zeros((1, 1), np.int64)
    c_delta = np.zeros_like(c_phi)
    uf = np.full(4 * area + 1, -1, np.int16)
    for i in range(root_moves.shape[0]):
        if results[i] != UNKNOWN:
            if results[i] == WIN:
                return WIN
            continue
        if stats[S_TIMED_OUT]:
            return UNKNOWN
        push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, 0)
        play_stone(stk_s[1], stk_r[1], stk_n[1], stk_l[1], stk_g[1], stk_m[1], nbr, zob,
                   root_moves[i], c)
        before = budget[0]
        cap = min(per_move, before)
        budget[0] = cap
        if cfg[C_DFPN]:
            v = dfpn(1, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work,
                     gen, pkeys, pphi, pdelta, moves, score, budget, nmov, th_phi, th_delta,
                     entry, sel, c_phi, c_delta, uf, cfg, deadline, stats)
        else:
            v = negamax(1, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                        work, gen, moves, score, budget, nmov, nxt_i, unknown, entry, uf, cfg,
                        deadline, stats)
        # The clock zeroes the budget when it stops the search; what was left is in stats.
        used = cap - (stats[S_LEFT] if stats[S_TIMED_OUT] else budget[0])
        budget[0] = before - used
        nodes[i] += used
        results[i] = -v
        if v == LOSS:
            return WIN
    for i in range(root_moves.shape[0]):
        if results[i] == UNKNOWN:
            return UNKNOWN
    return LOSS


@njit(cache=True)
def order_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               cfg, stats):
    """The moves of the side to move at level 0 of the stack in the solver's order
    (``order_children``) and whether the first wins at once (then it is the only one given).
    Legal moves left out lose (the static rule settles them for the opponent)."""
    area = stk_s.shape[1]
    uf = np.full(4 * area + 1, -1, np.int16)
    n = order_children(0, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                       moves, score, uf, cfg, stats)
    if n < 0:  # a move wins at once: the one the scan stopped at was last played into level 1
        return np.array([stk_m[1][LAST]], np.int64), True
    return moves[0, :n].copy(), False
