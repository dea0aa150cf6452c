"""The exact solver's root kernels: each root move searched in turn within a shared node
budget (by ``solver_kernels.negamax`` or ``solver_dfpn.dfpn``), the root's move order, and the
root moves shared out among threads that search at once (``solve_root_threads``)."""

from __future__ import annotations

import threading
import time

import numpy as np
from numba import njit

from .solver_dfpn import dfpn
from .solver_kernels import (
    LOSS,
    S_LEFT,
    S_SAFE,
    S_TIMED_OUT,
    S_TT_HITS,
    STATS_LEN,
    UNKNOWN,
    WIN,
    halt_thread,
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


@njit(cache=True, nogil=True)
def solve_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               work, gen, pkeys, pphi, pdelta, root_moves, budget, per_move, results, nodes, hist,
               sym, cfg, deadline, stats):
    """Solve the root moves (the position at level 0 of the stack, ``solver.search_stack``) in
    the given order by negamax, each with at most ``per_move`` of the shared node budget;
    ``results[i]`` (from the ROOT player's view, UNKNOWN where unsolved) and ``nodes[i]``
    accumulate over calls, and moves already solved in ``results`` are skipped. Stops at the
    first win, or when the clock passes ``deadline``. It runs without the GIL, so threads with
    stacks of their own may search at once, sharing the table (``Solver.solve``'s ``threads``).
    (Public: warmup checks its cache entry.)
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


def solve_root_threads(stacks, nbr, zob, keys, vals, work, gen, pkeys, pphi, pdelta, root_moves,
                       max_nodes, first_pass, hist, sym, cfg, deadline, stats):
    """``Solver.solve``'s two passes over ``root_moves`` (the first at most ``first_pass`` nodes
    a move, the second all a thread has) by ``solve_root`` in as many threads as ``stacks``
    (each its own stack, ``solver.search_stack``) at once. Each thread gets an equal share of
    what is left of ``max_nodes`` for a pass and takes the next unsolved move in order when it
    finishes one; all share the table (its slots need no lock: ``solver_kernels.tt_get``). The
    first win, or a thread stopped by the clock, stops the others at their next read of the
    clock. Returns (result, results per move from the root player's view, nodes per move) and
    adds the threads' counters to ``stats``."""
    n = root_moves.shape[0]
    results = np.zeros(n, np.int64)
    nodes = np.zeros(n, np.int64)
    lock = threading.Lock()
    halt = [False]  # a win was found, or the clock (or Ctrl-C) stopped a thread
    pool = [max_nodes]
    # The clock, which a stop flag needs read, is read only under a deadline.
    clock_deadline = deadline if deadline > 0 else time.perf_counter() + 1e9

    def work_on(t: int, todo, share: int, per_move: int | None) -> None:
        halt_thread(halt)
        own = np.zeros(STATS_LEN, np.int64)
        budget = np.zeros(1, np.int64)
        move = np.zeros(1, np.int64)
        result = np.zeros(1, np.int64)
        spent = np.zeros(1, np.int64)
        left = share
        try:
            while left > 0 and not halt[0]:
                with lock:
                    i = next(todo, None)
                if i is None:
                    break
                move[0], result[0], spent[0], budget[0] = root_moves[i], UNKNOWN, 0, left
                solve_root(*stacks[t], nbr, zob, keys, vals, work, gen, pkeys, pphi, pdelta,
                           move, budget, left if per_move is None else per_move, result, spent,
                           hist, sym, cfg, clock_deadline, own)
                left -= int(spent[0])
                nodes[i] += spent[0]
                results[i] = result[0]
                if result[0] == WIN or own[S_TIMED_OUT]:
                    halt[0] = True
        finally:
            halt_thread(None)
            with lock:
                pool[0] += left
                stats[S_SAFE] += own[S_SAFE]
                stats[S_TT_HITS] += own[S_TT_HITS]
                if own[S_TIMED_OUT] and not (results == WIN).any():
                    stats[S_TIMED_OUT] = 1

    for per_move in (first_pass, None):  # None: all of the thread's share
        open_moves = [i for i in range(n) if results[i] == UNKNOWN]
        k = min(len(stacks), len(open_moves))
        share = pool[0] // max(k, 1)
        if k == 0 or share <= 0 or halt[0]:
            break
        pool[0] -= share * k
        todo = iter(open_moves)
        threads = [threading.Thread(target=work_on, args=(t, todo, share, per_move),
                                    daemon=True) for t in range(k)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    if (results == WIN).any():
        return WIN, results, nodes
    return (LOSS if (results == LOSS).all() else UNKNOWN), results, nodes
