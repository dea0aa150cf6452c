"""Exact endgame solver: depth-first negamax on win/loss with a transposition table (numba).

NoGo has no draws, so a position is a win or a loss for the side to move, and alpha-beta on
±1 values reduces to "is there a move after which the opponent is lost?" with a cut at the first
such move. What makes it fast enough late in the game:

* move ordering: every legal move is played one level down first, and those that leave the
  opponent the fewest replies and us the most go first (they end games soonest and are the
  likeliest wins); a move after which the opponent has no reply, or whose position the table
  already holds as lost for the opponent, wins at once without a search. At the root the caller
  may order by its priors (the search's visit counts) instead;
* a transposition table keyed by the Zobrist hash (which includes the side to move);
* a node budget: the solver answers UNKNOWN rather than run past it, so the caller can use it in
  a time-limited move. ``Solver.solve`` spends it in two passes over the root moves (a small
  share each, then the rest), so one hard move first in line cannot hide an easy win;
* a preallocated stack of positions, one level per ply (the rules kernels have no undo), and a
  loop instead of recursion.

Measured on 9x9 positions from the 60 s rave ledger's games (2026-11-24, 2-core Xeon): the
ordering spends about 2.5x more time per node and needs 2-3x fewer nodes; in equal time it
solves 59 of 60 positions at 25-26 empty points (1 M nodes each) where plain mobility-proxy
ordering solved 50, and 22 of 40 at 27 (about 1 s each) where it solved 18.

``Solver.solve`` returns the result for the side to move and, for every root move, whether it
wins, loses or is unknown, plus the nodes each took; a proven loss is answered with the move
whose refutation took the most nodes (the stubbornest resistance), or, where the budget allows
counting them (``Solver.resist``), with the move that leaves the opponent the smallest share of
winning replies: against rave at 10,000 simulations a move, from 80 positions the engine had
proven lost in 60 s games, it won 11% of 720 games where the stubbornest move won 4.6%
(docs/engine.md). ``solver_budget`` is how many nodes a move
searched within given limits may spend, ``SOLVER_MAX_EMPTY`` where the search starts to call
the solver (at 28 empty points it proves 23 of 40 ledger positions in 500,000 nodes, about
2 s), ``SOLVER_REACH_EMPTY`` where it usually proves the game within a move's budget (the time
plan counts those moves as a share of a move), and ``SOLVER_INSTANT_EMPTY`` where it answers so
fast that the time plan need not count the moves at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..game.board import LAST, NLEGAL_B, TO_MOVE, Board, play_stone, push_state
from .timecontrol import SolverZones

SOLVER_MAX_EMPTY = 28  # the search tries the solver, within its budget, at or below this
SOLVER_REACH_EMPTY = 26  # at or below this it usually proves the game within a move's budget
SOLVER_INSTANT_EMPTY = 22  # at or below this it answers almost at once (the time plan's view)
# The three as the time plan reads them (``timecontrol.plan_move``), for every player using it.
SOLVER_ZONES = SolverZones(exact=SOLVER_INSTANT_EMPTY, reach=SOLVER_REACH_EMPTY,
                           tries=SOLVER_MAX_EMPTY)
SOLVER_NODES = 2_000_000  # its largest node budget per move (about 7 s here)
# Measured in play on the 2-core CI machine at 22-28 empty points (a median 290,000 in the 60 s
# ledger against rave, ledger-rave-8; 294,000 at 26 empty points, 2026-11-25).
SOLVER_NODES_PER_SECOND = 280_000


def solver_budget(limits) -> int:
    """Nodes the solver may spend on a move searched within ``limits``
    (``search.SearchLimits``): at most half a timed move's hard limit (about its plan: the
    solver goes first, and the search gets the rest of the move when it fails), or 50 per
    playout."""
    nodes = SOLVER_NODES
    if limits.seconds is not None:
        nodes = min(nodes, int(SOLVER_NODES_PER_SECOND * 0.5 * limits.seconds))
    if limits.playouts is not None:
        nodes = min(nodes, 50 * limits.playouts)
    return max(nodes, 100)


WIN, LOSS, UNKNOWN = 1, -1, 0


# The table and ordering helpers are inlined into the search loop (array reference counts per
# call: see board._set_legal).
@njit(cache=True, inline="always")
def _tt_get(keys, vals, h):
    i = h & (keys.shape[0] - 1)
    if keys[i] == h and vals[i] != 0:
        return vals[i]
    return 0


@njit(cache=True, inline="always")
def _tt_put(keys, vals, h, v):
    i = h & (keys.shape[0] - 1)
    keys[i] = h
    vals[i] = v


@njit(cache=True, inline="always")
def _order_children(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                    moves, score):
    """Generate the legal moves at level d into ``moves[d]``, best first; return their count,
    or -1 when one of them wins at once (the opponent has no reply, or the table already holds
    its position as lost for the opponent).

    Each move is played one level down to read the opponent's and our own legal counts after
    it: moves that leave the opponent the fewest replies and us the most end games soonest and
    are the likeliest wins, so a winning node is usually cut at its first child."""
    meta = stk_m[d]
    c = meta[TO_MOVE]
    legal = stk_g[d]
    area = legal.shape[1]
    n = 0
    for p in range(area):
        if not legal[c, p]:
            continue
        push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, d)
        play_stone(stk_s[d + 1], stk_r[d + 1], stk_n[d + 1], stk_l[d + 1], stk_g[d + 1],
                   stk_m[d + 1], nbr, zob, p, c)
        m1 = stk_m[d + 1]
        opp = m1[NLEGAL_B + 2 - c]
        if opp == 0 or _tt_get(keys, vals, m1[1]) == LOSS:
            return -1
        key = 2 * opp - m1[NLEGAL_B + c - 1]
        # insertion sort: at most a few dozen moves
        i = n
        while i > 0 and score[d, i - 1] > key:
            moves[d, i] = moves[d, i - 1]
            score[d, i] = score[d, i - 1]
            i -= 1
        moves[d, i] = p
        score[d, i] = key
        n += 1
    return n


@njit(cache=True, _nrt=False)
def _negamax(start, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, moves,
             score, budget, nmov, nxt_i, unknown):
    """WIN/LOSS for the side to move at stack level ``start``, or UNKNOWN if the node budget
    (budget[0]) ran out.

    Depth-first, written as a loop over the preallocated stack rather than as recursion
    (numba's on-disk cache crashes on some recursive functions: numba issues #6061, #6713).
    Per level (the workspaces ``nmov``, ``nxt_i``, ``unknown``): how many ordered moves it
    has, the next one to try, whether one was unknown. It allocates nothing, so it is compiled
    without numba's reference counting (``board.play_stone`` says why)."""
    ENTER, NEXT, RETURN = 0, 1, 2
    d = start
    mode = ENTER
    v = UNKNOWN
    while True:
        if mode == ENTER:
            meta = stk_m[d]
            c = meta[TO_MOVE]
            mode = RETURN
            if meta[NLEGAL_B + c - 1] == 0:
                v = LOSS
                continue
            v = _tt_get(keys, vals, meta[1])
            if v != 0:
                continue
            if budget[0] <= 0:
                v = UNKNOWN
                continue
            budget[0] -= 1
            n = _order_children(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys,
                                vals, moves, score)
            if n < 0:
                _tt_put(keys, vals, meta[1], WIN)
                v = WIN
                continue
            nmov[d] = n
            nxt_i[d] = 0
            unknown[d] = False
            mode = NEXT
        elif mode == NEXT:
            i = nxt_i[d]
            if i < nmov[d]:
                push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, d)
                play_stone(stk_s[d + 1], stk_r[d + 1], stk_n[d + 1], stk_l[d + 1],
                           stk_g[d + 1], stk_m[d + 1], nbr, zob, moves[d, i], stk_m[d][TO_MOVE])
                d += 1
                mode = ENTER
            else:
                if unknown[d]:
                    v = UNKNOWN
                else:
                    v = LOSS
                    _tt_put(keys, vals, stk_m[d][1], LOSS)
                mode = RETURN
        else:  # RETURN: v is the value at level d for its side to move
            if d == start:
                return v
            d -= 1
            if v == LOSS:  # the child is lost for its mover: this level wins
                v = WIN
                _tt_put(keys, vals, stk_m[d][1], WIN)
            else:
                if v == UNKNOWN:
                    unknown[d] = True
                nxt_i[d] += 1
                mode = NEXT


@njit(cache=True)
def solve_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals,
               root_moves, budget, per_move, results, nodes):
    """Solve the root moves (the position at level 0 of the stack, ``search_stack``) in the
    given order, each with at most ``per_move`` of the shared node budget; ``results[i]``
    (from the ROOT player's view, UNKNOWN where unsolved) and ``nodes[i]`` accumulate over
    calls, and moves already solved in ``results`` are skipped. (Public: warmup checks its
    cache entry.)"""
    c = stk_m[0][TO_MOVE]
    levels = stk_s.shape[0]
    nmov = np.zeros(levels, np.int64)
    nxt_i = np.zeros(levels, np.int64)
    unknown = np.zeros(levels, np.bool_)
    for i in range(root_moves.shape[0]):
        if results[i] != UNKNOWN:
            if results[i] == WIN:
                return WIN
            continue
        push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, 0)
        play_stone(stk_s[1], stk_r[1], stk_n[1], stk_l[1], stk_g[1], stk_m[1], nbr, zob,
                   root_moves[i], c)
        before = budget[0]
        cap = min(per_move, before)
        budget[0] = cap
        v = _negamax(1, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, moves,
                     score, budget, nmov, nxt_i, unknown)
        used = cap - budget[0]
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
def order_root(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, moves, score, nbr, zob, keys, vals):
    """The legal moves of the side to move at level 0 of the stack in the solver's order
    (``_order_children``); when one of them wins at once, only that move."""
    n = _order_children(0, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                        moves, score)
    if n < 0:  # a move wins at once: the one the scan stopped at was last played into level 1
        return np.array([stk_m[1][LAST]], np.int64)
    return moves[0, :n].copy()


def search_stack(board: Board) -> tuple:
    """A stack of positions for ``solve_root``/``order_root`` with ``board`` at level 0: the
    six state arrays with a level axis in front, then the per-level move and score buffers.
    Every ply fills a point, so no line is longer than the board's area."""
    levels = board.geo.area + 2
    state = board.arrays()
    stack = [np.empty((levels,) + a.shape, a.dtype) for a in state]
    for level, a in zip(stack, state):
        level[0] = a
    return (*stack, np.empty((levels, board.geo.area), np.int64),
            np.empty((levels, board.geo.area), np.int64))


@dataclass
class SolveResult:
    result: int  # WIN / LOSS / UNKNOWN for the side to move
    move: int  # the winning move, the stubbornest losing move, or -1 when unknown
    nodes: int
    move_results: dict[int, int]
    move_nodes: dict[int, int] = field(default_factory=dict)  # nodes each root move took


class Solver:
    """Holds a transposition table across calls (positions recur from move to move)."""

    def __init__(self, tt_entries: int = 1 << 20):
        n = 1 << max(4, int(tt_entries - 1).bit_length())
        self.keys = np.zeros(n, np.int64)
        self.vals = np.zeros(n, np.int8)

    def solve(self, board: Board, max_nodes: int = 200_000,
              priors: np.ndarray | None = None) -> SolveResult:
        """Solve ``board`` for its side to move within ``max_nodes``. Root moves go in the
        order of ``priors`` (e.g. the search's visit counts) or else the solver's own. A first
        pass gives each a small share of the budget, so that a hard move first in line cannot
        spend it all before an easy win later is seen; a second pass gives the rest to the
        moves still unknown, in the same order."""
        legal = board.legal_moves()
        if legal.size == 0:
            return SolveResult(LOSS, -1, 0, {})
        g = board.geo
        stack = search_stack(board)
        if priors is not None:
            moves = legal[np.argsort(-priors[legal], kind="stable")]
        else:
            moves = order_root(*stack, g.nbr, g.zobrist, self.keys, self.vals)
            if moves.size < legal.size:  # one move wins at once
                return SolveResult(WIN, int(moves[0]), 1, {int(moves[0]): WIN})
        budget = np.array([max_nodes], np.int64)
        results = np.zeros(moves.size, np.int64)
        nodes = np.zeros(moves.size, np.int64)
        res = UNKNOWN
        for per_move in (max(max_nodes // (4 * moves.size), 1), max_nodes):
            res = solve_root(*stack, g.nbr, g.zobrist, self.keys, self.vals, moves, budget,
                             per_move, results, nodes)
            if res != UNKNOWN or budget[0] <= 0:
                break
        per_move_result = {int(m): int(r) for m, r in zip(moves, results)}
        if res == WIN:
            move = int(moves[int(np.flatnonzero(results == WIN)[0])])
        elif res == LOSS:
            move = int(moves[int(np.argmax(nodes))])
        else:
            move = -1
        return SolveResult(int(res), move, int(max_nodes - budget[0]), per_move_result,
                           {int(m): int(n) for m, n in zip(moves, nodes)})


    def resist(self, board: Board, move_nodes: dict[int, int],
               max_nodes: int = 200_000) -> tuple[int, int, int] | None:
        """In a position proven lost for its side to move, the move that leaves the opponent
        the smallest share of winning replies (then the fewest, then the one whose refutation
        took the most nodes): where every move loses, the best practical chance is the one an
        imperfect opponent is likeliest to answer wrongly. ``move_nodes`` maps each losing move
        to the nodes its refutation took (``SolveResult``; the stubbornest are examined first).
        Returns (move, winning replies, replies), or None when ``max_nodes`` ran out before
        one move was fully counted (a reply left unknown counts the move out)."""
        left = max_nodes
        best = None  # (share, wins, -nodes, move, replies)
        for m in sorted(move_nodes, key=lambda k: -move_nodes[k]):
            after = board.copy()
            after.play(m)
            replies = after.legal_moves()
            if replies.size == 0:  # the opponent cannot move: m wins after all
                return m, 0, 0
            # Enough winning replies to lose to the best so far: stop counting this move.
            limit = replies.size if best is None else best[0] * replies.size
            counted = self._winning_replies(after, replies, limit, left)
            if counted is None:
                break  # the budget ran out
            wins, used = counted
            left -= used
            key = (wins / replies.size, wins, -move_nodes[m], m, int(replies.size))
            if wins <= limit and (best is None or key[:3] < best[:3]):
                best = key
        return None if best is None else (best[3], best[1], best[4])

    def _winning_replies(self, after: Board, replies: np.ndarray, limit: float,
                         max_nodes: int) -> tuple[int, int] | None:
        """(how many of ``replies`` win for their side in ``after``, nodes spent), counting
        stopped once more than ``limit`` do; None when ``max_nodes`` runs out first."""
        left = max_nodes
        wins = 0
        for r in replies:
            if left <= 0:
                return None
            position = after.copy()
            position.play(int(r))
            res = self.solve(position, left)
            left -= max(res.nodes, 1)
            if res.result == UNKNOWN:
                return None
            wins += res.result == LOSS  # the side to move there is lost: r wins for the other
            if wins > limit:
                break
        return wins, max_nodes - left


def solve(board: Board, max_nodes: int = 200_000) -> SolveResult:
    """One-off solve with a fresh table."""
    return Solver(1 << 16).solve(board, max_nodes)
