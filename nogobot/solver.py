"""Exact endgame solver: depth-first negamax on win/loss with a transposition table (numba).

NoGo has no draws, so a position is a win or a loss for the side to move, and alpha-beta on
±1 values reduces to "is there a move after which the opponent is lost?" with a cut at the first
such move. What makes it fast enough late in the game:

* move ordering: moves that leave the opponent the fewest replies first (they end games soonest
  and are the likeliest wins), ties broken by the caller's priors at the root;
* a transposition table keyed by the Zobrist hash (which includes the side to move);
* a node budget: the solver answers UNKNOWN rather than run past it, so the caller can use it in
  a time-limited move (iterative widening of the budget is the caller's choice).

``solve_position`` returns the result for the side to move and, for every root move, whether it
wins, loses or is unknown, plus the nodes each took; a proven loss is then answered with the
move whose refutation took the most nodes (the stubbornest resistance), as a practical stand-in
for "longest game". ``solver_budget`` is how many nodes a move searched within given limits may
spend, and ``SOLVER_MAX_EMPTY`` where the search starts to call the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import NLEGAL_B, TO_MOVE, Board, play_stone

SOLVER_MAX_EMPTY = 22  # the search tries the solver at or below this many empty points
SOLVER_NODES = 300_000  # its largest node budget per move (about 0.5 s here)
SOLVER_NODES_PER_SECOND = 700_000  # measured on the 2-core CI machine


def solver_budget(limits) -> int:
    """Nodes the solver may spend on a move searched within ``limits``
    (``player.SearchLimits``): at most a quarter of a timed move, or 50 per playout."""
    nodes = SOLVER_NODES
    if limits.seconds is not None:
        nodes = min(nodes, int(SOLVER_NODES_PER_SECOND * 0.25 * limits.seconds))
    if limits.playouts is not None:
        nodes = min(nodes, 50 * limits.playouts)
    return max(nodes, 100)


WIN, LOSS, UNKNOWN = 1, -1, 0


@njit(cache=True)
def _tt_get(keys, vals, h):
    i = h & (keys.shape[0] - 1)
    if keys[i] == h and vals[i] != 0:
        return vals[i]
    return 0


@njit(cache=True)
def _tt_put(keys, vals, h, v):
    i = h & (keys.shape[0] - 1)
    keys[i] = h
    vals[i] = v


@njit(cache=True)
def _ordered_moves(stones, root, nxt, libs, legal, meta, nbr, zob):
    """Legal moves of the side to move, sorted by the opponent's reply count afterwards."""
    c = meta[TO_MOVE]
    area = stones.shape[0]
    moves = np.empty(meta[NLEGAL_B + c - 1], np.int64)
    keys = np.empty(moves.shape[0], np.int64)
    k = 0
    for p in range(area):
        if legal[c, p]:
            moves[k] = p
            # Cheap proxy for the opponent's mobility after p: its legal count now, minus one if
            # p was legal for it too. Exact counts would need a play per move.
            keys[k] = meta[NLEGAL_B + 2 - c] - (1 if legal[3 - c, p] else 0)
            k += 1
    order = np.argsort(keys, kind="mergesort")
    return moves[order]


@njit(cache=True)
def _negamax(stones, root, nxt, libs, legal, meta, nbr, zob, keys, vals, budget):
    """WIN/LOSS for the side to move, or UNKNOWN if the node budget (budget[0]) ran out."""
    c = meta[TO_MOVE]
    if meta[NLEGAL_B + c - 1] == 0:
        return LOSS
    h = meta[1]
    hit = _tt_get(keys, vals, h)
    if hit != 0:
        return hit
    if budget[0] <= 0:
        return UNKNOWN
    budget[0] -= 1
    moves = _ordered_moves(stones, root, nxt, libs, legal, meta, nbr, zob)
    unknown = False
    for i in range(moves.shape[0]):
        s, r, n, l, lg, m = (stones.copy(), root.copy(), nxt.copy(), libs.copy(), legal.copy(),
                             meta.copy())
        play_stone(s, r, n, l, lg, m, nbr, zob, moves[i], c)
        v = _negamax(s, r, n, l, lg, m, nbr, zob, keys, vals, budget)
        if v == LOSS:
            _tt_put(keys, vals, h, WIN)
            return WIN
        if v == UNKNOWN:
            unknown = True
    if unknown:
        return UNKNOWN
    _tt_put(keys, vals, h, LOSS)
    return LOSS


@njit(cache=True)
def solve_root(stones, root, nxt, libs, legal, meta, nbr, zob, keys, vals, moves, budget,
               results, nodes):
    """Solve each root move in the given order; results[i] is from the ROOT player's view.
    (Public: warmup checks its cache entry.)"""
    c = meta[TO_MOVE]
    for i in range(moves.shape[0]):
        s, r, n, l, lg, m = (stones.copy(), root.copy(), nxt.copy(), libs.copy(), legal.copy(),
                             meta.copy())
        play_stone(s, r, n, l, lg, m, nbr, zob, moves[i], c)
        before = budget[0]
        v = _negamax(s, r, n, l, lg, m, nbr, zob, keys, vals, budget)
        nodes[i] = before - budget[0]
        results[i] = -v
        if v == LOSS:
            return WIN
    for i in range(moves.shape[0]):
        if results[i] == UNKNOWN:
            return UNKNOWN
    return LOSS


@dataclass
class SolveResult:
    result: int  # WIN / LOSS / UNKNOWN for the side to move
    move: int  # the winning move, the stubbornest losing move, or -1 when unknown
    nodes: int
    move_results: dict[int, int]


class Solver:
    """Holds a transposition table across calls (positions recur from move to move)."""

    def __init__(self, tt_entries: int = 1 << 20):
        n = 1 << max(4, int(tt_entries - 1).bit_length())
        self.keys = np.zeros(n, np.int64)
        self.vals = np.zeros(n, np.int8)

    def solve(self, board: Board, max_nodes: int = 200_000,
              priors: np.ndarray | None = None) -> SolveResult:
        moves = board.legal_moves()
        if moves.size == 0:
            return SolveResult(LOSS, -1, 0, {})
        if priors is not None:
            moves = moves[np.argsort(-priors[moves], kind="stable")]
        budget = np.array([max_nodes], np.int64)
        results = np.zeros(moves.size, np.int64)
        nodes = np.zeros(moves.size, np.int64)
        g = board.geo
        res = solve_root(*board.arrays(), g.nbr, g.zobrist, self.keys, self.vals, moves, budget,
                          results, nodes)
        per_move = {int(m): int(r) for m, r in zip(moves, results)}
        if res == WIN:
            move = int(moves[int(np.flatnonzero(results == WIN)[0])])
        elif res == LOSS:
            move = int(moves[int(np.argmax(nodes))])
        else:
            move = -1
        return SolveResult(int(res), move, int(max_nodes - budget[0]), per_move)


def solve(board: Board, max_nodes: int = 200_000) -> SolveResult:
    """One-off solve with a fresh table."""
    return Solver(1 << 16).solve(board, max_nodes)
