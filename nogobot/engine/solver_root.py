"""The exact solver's root kernels: each root move searched in turn within a shared node
budget (by ``solver_kernels.negamax`` or ``solver_dfpn.dfpn``), and the root's move order."""

from __future__ import annotations

import numpy as np
from numba import njit

from .solver_dfpn import dfpn
from .solver_kernels import (
    LOSS,
    S_LEFT,
    S_TIMED_OUT,
    UNKNOWN,
    WIN,
    negamax,
    order_children,
    play_child,
)


# The two searches behind one signature, so one root loop serves both and numba compiles
# df-pn only when ``solve_root_dfpn`` is used (the engine's warm-up compiles ``solve_root``).
@njit(cache=True, inline="always")
def _by_negamax(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen, pkeys,
                pphi, pdelta, moves, score, budget, work_arrays, uf, hist, sym, cfg, deadline,
                stats):
    nmov, nxt_i, unknown, entry, _, _, _, _, _ = work_arrays
    return negamax(1, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
                   moves, score, budget, nmov, nxt_i, unknown, entry, uf, hist, sym, cfg,
                   deadline, stats)


@njit(cache=True, inline="always")
def _by_dfpn(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen, pkeys,
             pphi, pdelta, moves, score, budget, work_arrays, uf, hist, sym, cfg, deadline,
             stats):
    nmov, _, _, entry, th_phi, th_delta, sel, c_phi, c_delta = work_arrays
    return dfpn(1, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
                pkeys, pphi, pdelta, moves, score, budget, nmov, th_phi, th_delta, entry, sel,
                c_phi, c_delta, uf, hist, sym, cfg, deadline, stats)


@njit(cache=True, inline="always")
def _root_loop(search, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys,
               vals, work, gen, pkeys, pphi, pdelta, root_moves, budget, per_move, results,
               nodes, hist, sym, cfg, deadline, stats, tables):
    levels = stk_s.shape[0]
    area = stk_s.shape[1]
    side = (levels, area) if tables else (1, 1)
    work_arrays = (np.zeros(levels, np.int64), np.zeros(levels, np.int64),
                   np.zeros(levels, np.bool_), np.zeros(levels, np.int64),
                   np.zeros(levels, np.int64), np.zeros(levels, np.int64),
                   np.zeros(levels, np.int64), np.zeros(side, np.int64), np.zeros(side, np.int64))
    uf = np.full(4 * area + 1, -1, np.int16)
    for i in range(root_moves.shape[0]):
        if results[i] != UNKNOWN:
            if results[i] == WIN:
                return WIN
            continue
        if stats[S_TIMED_OUT]:
            return UNKNOWN
        play_child(0, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, sym, root_moves[i])
        before = budget[0]
        cap = min(per_move, before)
        budget[0] = cap
        v = search(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
                   pkeys, pphi, pdelta, moves, score, budget, work_arrays, uf, hist, sym,
                   cfg, deadline, stats)
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
def solve_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               work, gen, pkeys, pphi, pdelta, root_moves, budget, per_move, results, nodes, hist,
               sym, cfg, deadline, stats):
    """Solve the root moves (the position at level 0 of the stack, ``solver.search_stack``) in
    the given order by negamax, each with at most ``per_move`` of the shared node budget;
    ``results[i]`` (from the ROOT player's view, UNKNOWN where unsolved) and ``nodes[i]``
    accumulate over calls, and moves already solved in ``results`` are skipped. Stops at the
    first win, or when the clock passes ``deadline``. (Public: warmup checks its cache entry.)
    ``pkeys``, ``pphi``, ``pdelta``: df-pn's table, unused here (one signature for both)."""
    return _root_loop(_by_negamax, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr,
                      zob, keys, vals, work, gen, pkeys, pphi, pdelta, root_moves, budget,
                      per_move, results, nodes, hist, sym, cfg, deadline, stats, False)


@njit(cache=True)
def solve_root_dfpn(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys,
                    vals, work, gen, pkeys, pphi, pdelta, root_moves, budget, per_move, results,
                    nodes, hist, sym, cfg, deadline, stats):
    """``solve_root`` by df-pn (``solver_dfpn.dfpn``) below the root."""
    return _root_loop(_by_dfpn, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr,
                      zob, keys, vals, work, gen, pkeys, pphi, pdelta, root_moves, budget,
                      per_move, results, nodes, hist, sym, cfg, deadline, stats, True)


@njit(cache=True)
def order_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               hist, sym, cfg, stats):
    """The moves of the side to move at level 0 of the stack in the solver's order
    (``order_children``) and whether the first wins at once (then it is the only one given).
    Legal moves left out lose (the static rule settles them for the opponent)."""
    area = stk_s.shape[1]
    uf = np.full(4 * area + 1, -1, np.int16)
    n = order_children(0, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                       moves, score, uf, hist, sym, cfg, stats)
    if n < 0:  # a move wins at once
        return np.array([moves[0, 0]], np.int64), True
    return moves[0, :n].copy(), False
