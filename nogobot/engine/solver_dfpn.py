"""The exact solver's depth-first proof-number search (df-pn), the alternative to
``solver_kernels.negamax`` below the root (switch ``C_DFPN``). It shares the negamax's table of
proven positions, its move generation and its static rule; the proof and disproof numbers of
unproven positions live in a table of their own."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..game.board import TO_MOVE
from .solver_kernels import (
    LOSS,
    REPLIES_MASK,
    UNKNOWN,
    WIN,
    child_key,
    enter_node,
    node_key,
    play_child,
    tt_get,
    tt_put,
)

# Proof and disproof numbers of unproven positions live in a table of their own (pkeys int64,
# pphi and pdelta int32 [n], one slot, always replaced); proven ones in the win/loss table.
INF = 1 << 30


@njit(cache=True, inline="always")
def pn_get(pkeys, pphi, pdelta, h, replies):
    """A position's (phi, delta) from the table, or, new, (1, its side to move's move count):
    to prove it lost takes a refutation of each of its ``replies`` (df-pn's mobility
    initialisation), so the search prefers moves that leave the opponent few."""
    i = h & (pkeys.shape[0] - 1)
    if pkeys[i] == h:
        return np.int64(pphi[i]), np.int64(pdelta[i])
    return np.int64(1), np.int64(max(replies, 1))


@njit(cache=True, inline="always")
def pn_put(pkeys, pphi, pdelta, h, phi, delta):
    i = h & (pkeys.shape[0] - 1)
    pkeys[i] = h
    pphi[i] = min(phi, INF)
    pdelta[i] = min(delta, INF)


@njit(cache=True, _nrt=False)
def dfpn(start, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
         pkeys, pphi, pdelta, moves, score, budget, nmov, th_phi, th_delta, entry, sel,
         c_phi, c_delta, uf, hist, sym, cfg, deadline, stats):
    """WIN/LOSS for the side to move at stack level ``start``, or UNKNOWN when the budget or
    the clock runs out (as ``negamax``): Nagai's df-pn in negamax form. A node's phi (the
    work to prove it won for its side to move) is its children's least delta, its delta (to
    prove it lost) the sum of their phi; the search descends into the child of least delta
    with thresholds, until the node's numbers reach its own. Each level keeps its children's
    numbers (``c_phi``, ``c_delta``: from the tables when it is expanded, a new child counts
    (1, its replies); then as each child returns), so a table too small to hold them costs
    work, never progress. Proofs come only from positions without moves, the static rule and
    the table. Entering a node is ``solver_kernels.enter_node``, as in negamax."""
    ENTER, LOOP, RETURN = 0, 1, 2
    d = start
    th_phi[d] = INF - 1
    th_delta[d] = INF - 1
    mode = ENTER
    v = UNKNOWN
    r_phi = r_delta = 1
    aborted = False
    while True:
        if mode == ENTER:
            mode = RETURN
            v, n = enter_node(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                              work, gen, moves, score, budget, entry, uf, hist, sym, cfg,
                              deadline, stats)
            if n < 0:
                aborted = True
            if v != UNKNOWN or n < 0:
                continue
            c = stk_m[d][TO_MOVE]
            nmov[d] = n
            for i in range(n):
                ch = child_key(stk_m[d], sym, zob, moves[d, i], c)
                cv = tt_get(keys, vals, ch)
                if cv == LOSS:
                    c_phi[d, i], c_delta[d, i] = INF, 0
                elif cv == WIN:
                    c_phi[d, i], c_delta[d, i] = 0, INF
                else:
                    c_phi[d, i], c_delta[d, i] = pn_get(pkeys, pphi, pdelta, ch,
                                                        score[d, i] & REPLIES_MASK)
            mode = LOOP
        elif mode == LOOP:
            delta = 0
            best = -1
            best_delta = INF
            second = INF
            for i in range(nmov[d]):
                delta = min(delta + c_phi[d, i], INF)
                if c_delta[d, i] < best_delta:
                    second = best_delta
                    best_delta = c_delta[d, i]
                    best = i
                elif c_delta[d, i] < second:
                    second = c_delta[d, i]
            phi = best_delta
            h = node_key(stk_m[d], sym)
            mode = RETURN
            if phi == 0:
                v = WIN
                tt_put(keys, vals, work, gen, cfg, h, WIN, entry[d] - budget[0])
                continue
            if delta == 0:
                v = LOSS
                tt_put(keys, vals, work, gen, cfg, h, LOSS, entry[d] - budget[0])
                continue
            v = UNKNOWN
            if phi >= th_phi[d] or delta >= th_delta[d]:
                pn_put(pkeys, pphi, pdelta, h, phi, delta)
                r_phi, r_delta = phi, delta
                continue
            th_phi[d + 1] = th_delta[d] + c_phi[d, best] - delta
            # The 1 + epsilon trick (Pawlewicz and Lew): let the child run until it is a
            # quarter worse than the runner-up, not just worse, so the search does not
            # thrash between two children of near-equal numbers.
            th_delta[d + 1] = min(th_phi[d], second + (second >> 2) + 1)
            sel[d] = best
            play_child(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, sym, moves[d, best])
            d += 1
            mode = ENTER
        else:  # RETURN to the parent with this level's numbers (or on up, aborted)
            if d == start:
                return UNKNOWN if aborted else v
            d -= 1
            if aborted:
                continue
            i = sel[d]
            if v == WIN:
                c_phi[d, i], c_delta[d, i] = 0, INF
            elif v == LOSS:
                c_phi[d, i], c_delta[d, i] = INF, 0
            else:
                c_phi[d, i], c_delta[d, i] = r_phi, r_delta
            mode = LOOP
