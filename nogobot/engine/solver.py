"""The exact endgame solver's public face: ``Solver`` (a transposition table kept across calls,
the rules switched on), ``SolveResult``, the engine's zones and node budget.

``Solver.solve`` answers WIN / LOSS / UNKNOWN for the side to move within a node budget and,
optionally, a time limit read inside the search (``solver_kernels`` holds the search, the table
and the static rule of safe moves). Root moves are searched in two passes (a small share of the
budget each, then the rest), so one hard move first in line cannot hide an easy win; moves the
position's own symmetries map onto each other are searched once. A proven loss is answered with
the move whose refutation took the most nodes, or, budget allowing, with the move that leaves the
opponent the smallest share of winning replies (``Solver.resist``). With ``threads`` the root
moves are shared out among threads that search at once over one table. docs/solver.md is the
manual and holds the measurements.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..game.board import Board
from .solver_kernels import (
    C_CLOCK_MASK,
    C_DFPN,
    C_GEN,
    C_HISTORY,
    C_SAFE,
    C_SAFE_CHILD,
    C_TT_WORK,
    CFG_LEN,
    EYES,
    IMAGES,
    LOSS,
    META_WIDTH,
    S_SAFE,
    S_TIMED_OUT,
    S_TT_HITS,
    STATS_LEN,
    UNKNOWN,
    WIN,
    negamax,
)
from .solver_root import order_root, solve_root, solve_root_dfpn, solve_root_threads
from .solver_static import eye_counts
from .timecontrol import SolverZones

# The search kernel under its former name (tests/test_kernels.py checks its compile flags).
_negamax = negamax

SOLVER_MAX_EMPTY = 28  # the search tries the solver, within its budget, at or below this
SOLVER_REACH_EMPTY = 26  # at or below this it usually proves the game within a move's budget
SOLVER_INSTANT_EMPTY = 22  # at or below this it answers almost at once (the time plan's view)
# The three as the time plan reads them (``timecontrol.plan_move``), for every player using it.
SOLVER_ZONES = SolverZones(exact=SOLVER_INSTANT_EMPTY, reach=SOLVER_REACH_EMPTY,
                           tries=SOLVER_MAX_EMPTY)


def zones_from(solver_from: int | None = None) -> SolverZones:
    """The solver's zones with its first try at ``solver_from`` empty points (never below the
    reach) instead of ``SOLVER_MAX_EMPTY``: what the search does and the time plan reads."""
    if solver_from is None:
        return SOLVER_ZONES
    return replace(SOLVER_ZONES, tries=max(solver_from, SOLVER_REACH_EMPTY))


SOLVER_NODES = 2_000_000  # its largest node budget per move (about 7 s here)
# Long tries. A move with at least LONG_TRY_SECONDS of hard limit (a 900 s game's moves at 29-31
# empty points; never a 60 s game's, rarely a 240 s game's) tries the solver from
# SOLVER_LONG_EMPTY empty points, with up to SOLVER_LONG_NODES in at most LONG_TRY_SHARE of the
# hard limit (about half its plan): proofs at 30-31 empty points take 0.2-6 M nodes, and a
# failed try leaves the search most of the move (docs/results.md, "Long tries").
SOLVER_LONG_EMPTY = 31
SOLVER_LONG_NODES = 8_000_000
LONG_TRY_SECONDS = 60.0
LONG_TRY_SHARE = 0.25
# The rate measured in play on a 2-core CPU at 22-28 empty points (docs/results.md, "Endgame
# solver, measured").
SOLVER_NODES_PER_SECOND = 280_000


SOLVER_TIME_SHARE = 0.5  # of a timed move's hard limit, at most, for the solver
# A solve with threads searches in one thread below this many nodes (starting threads costs
# more than the moves they would share).
PARALLEL_MIN_NODES = 20_000


def solver_budget(limits, cap: int | None = None, rate: int | None = None,
                  share: float = SOLVER_TIME_SHARE) -> int:
    """Nodes the solver may spend on a move searched within ``limits``
    (``search.SearchLimits``): at most ``share`` of a timed move's hard limit (half by default,
    about its plan: the solver goes first, and the search gets the rest of the move when it
    fails) at ``rate`` nodes a second (None: the nominal ``SOLVER_NODES_PER_SECOND``; 0: no
    rate, the seconds alone bound a timed move), or 50 per playout, and never more than ``cap``
    (None: ``SOLVER_NODES``). ``solver_seconds`` bounds the same share in seconds, for a
    machine slower than the rate."""
    nodes = SOLVER_NODES if cap is None else cap
    rate = SOLVER_NODES_PER_SECOND if rate is None else rate
    if limits.seconds is not None and rate > 0:
        nodes = min(nodes, int(rate * share * limits.seconds))
    if limits.playouts is not None:
        nodes = min(nodes, 50 * limits.playouts)
    return max(nodes, 100)


def long_try(limits) -> bool:
    """Whether a move searched within ``limits`` is long enough for a long try: a hard limit of
    at least ``LONG_TRY_SECONDS``."""
    return limits.seconds is not None and limits.seconds >= LONG_TRY_SECONDS


def solver_reach(limits, solver_from: int | None = None, long_from: int | None = None,
                 cap: int | None = None) -> tuple[int, int | None, float]:
    """Where a move searched within ``limits`` tries the solver (its first try's empty points),
    the node cap (None: ``SOLVER_NODES``) and its share of the hard limit: from ``solver_from``
    (the time plan's zones) with half the limit, or on a long move (``long_try``) from
    ``long_from`` (None: ``SOLVER_LONG_EMPTY``; 0: never) with up to ``SOLVER_LONG_NODES`` in
    ``LONG_TRY_SHARE`` of it; ``cap`` caps every try where it is given."""
    tries = zones_from(solver_from).tries
    long_from = SOLVER_LONG_EMPTY if long_from is None else long_from
    if long_from > 0 and long_try(limits):
        return max(tries, long_from), SOLVER_LONG_NODES if cap is None else cap, LONG_TRY_SHARE
    return tries, cap, SOLVER_TIME_SHARE


def solver_seconds(limits, share: float = SOLVER_TIME_SHARE) -> float | None:
    """The seconds the solver may spend on a move searched within ``limits`` (None: no clock),
    read inside its search: the node budget's share of the move, whatever the node rate."""
    return None if limits.seconds is None else share * limits.seconds


@dataclass(frozen=True)
class SolverRules:
    """The solver's switches (docs/solver.md measures each; the differential tests run each on
    and off against plain negamax)."""

    safe: bool = True  # the static rule of safe moves at every node
    safe_children: bool = True  # ... and on every child while ordering the moves
    tt_work: bool = True  # two-entry buckets, replacement by subtree work (else always-replace)
    symmetry: bool = True  # root moves the position's symmetries map together are solved once
    # Positions that the root's symmetries (or those of ``Solver.solve``'s ``images_of``) map
    # onto each other share a table entry.
    symmetry_keys: bool = True
    dfpn: bool = False  # depth-first proof-number search instead of negamax below the root
    clock_every: int = 1024  # nodes between reads of the clock (a power of two)
    # The history heuristic breaking ties of mobility; None: on for boards of at most
    # HISTORY_MAX_POINTS points, where it saves nodes (it costs nodes on 9x9).
    history: bool | None = None


HISTORY_MAX_POINTS = 25
ENTRY_BYTES = 11  # a table entry: key (8), value (1), work (1), generation (1)
DFPN_ENTRY_BYTES = 16  # df-pn's: key (8), phi (4), delta (4)


@dataclass
class SolveResult:
    result: int  # WIN / LOSS / UNKNOWN for the side to move
    move: int  # the winning move, the stubbornest losing move, or -1 when unknown
    nodes: int
    move_results: dict[int, int]
    move_nodes: dict[int, int] = field(default_factory=dict)  # nodes each root move took
    seconds: float = 0.0
    timed_out: bool = False  # the time limit stopped it
    safe_cuts: int = 0  # nodes and children the static rule settled
    tt_hits: int = 0


def image_hash(board: Board, perm: np.ndarray) -> int:
    """The hash of ``board``'s image under the point permutation ``perm`` (a stone at p moved
    to ``perm[p]``), computed as the rules kernels keep it."""
    z = board.geo.zobrist
    h = np.int64(z[0, board.geo.area]) if board.to_move == 2 else np.int64(0)
    for p in np.flatnonzero(board.stones):
        h ^= z[board.stones[p], perm[p]]
    return int(h)


def search_stack(board: Board, sym: np.ndarray) -> tuple:
    """A stack of positions for the kernels with ``board`` at level 0: the six state arrays with
    a level axis in front, then the per-level move and score buffers. Every ply fills a point,
    so no line is longer than the board's area. The meta rows are widened to carry the hashes
    of each level's images under the symmetries ``sym`` (``image_perms``; from column
    ``solver_kernels.IMAGES``) and each colour's eyes (``solver_kernels.EYES``)."""
    levels = board.geo.area + 2
    *state, root_meta = board.arrays()
    stack = [np.empty((levels,) + a.shape, a.dtype) for a in state]
    for level, a in zip(stack, state):
        level[0] = a
    meta = np.zeros((levels, META_WIDTH), np.int64)
    meta[0, :IMAGES] = root_meta
    for k, perm in enumerate(sym):
        meta[0, IMAGES + k] = image_hash(board, perm)
    meta[0, EYES:EYES + 2] = eye_counts(board.stones, board.geo.nbr)
    return (*stack, meta, np.empty((levels, board.geo.area), np.int64),
            np.empty((levels, board.geo.area), np.int64))


def symmetries(board: Board) -> list[np.ndarray]:
    """The board symmetries (as point permutations ``perm``, stone at p moved to ``perm[p]``)
    that leave ``board``'s stones where they are, the identity first."""
    n = board.size
    rows, cols = np.divmod(np.arange(n * n), n)
    found = []
    for k in range(8):
        r, c = (cols, rows) if k & 1 else (rows, cols)
        r = n - 1 - r if k & 2 else r
        c = n - 1 - c if k & 4 else c
        perm = r * n + c
        if np.array_equal(board.stones[perm], board.stones):
            found.append(perm)
    return found


def image_perms(board: Board, on: bool = True) -> np.ndarray:
    """The kernels' ``sym``: the point permutations of ``board``'s symmetries other than the
    identity, one row each (none when ``on`` is false or the board has no symmetry). Any
    symmetries are sound (a position and its image have the same value); those of the root
    are the ones whose images the search meets."""
    perms = symmetries(board)[1:] if on else []
    out = np.zeros((len(perms), board.geo.area), np.int64)
    for k, perm in enumerate(perms):
        out[k] = perm
    return out


def root_orbits(board: Board, moves: np.ndarray) -> tuple[np.ndarray, dict[int, int]]:
    """``moves`` less those a symmetry of the position maps onto an earlier one (same result),
    and each move's representative."""
    perms = symmetries(board)
    rep: dict[int, int] = {}
    kept = []
    for m in (int(x) for x in moves):
        if m in rep:
            continue
        kept.append(m)
        for perm in perms:
            rep.setdefault(int(perm[m]), m)
    return np.array(kept, np.int64), rep


class Solver:
    """Holds a transposition table across calls (positions recur from move to move).

    ``tt_entries`` (rounded up to a power of two) or ``tt_mb`` sizes the table; ``rules``
    and/or keyword switches (``SolverRules``' fields) choose the rules. ``threads``: how many
    root moves are searched at once (``solve``)."""

    def __init__(self, tt_entries: int = 1 << 20, rules: SolverRules | None = None, *,
                 tt_mb: float | None = None, threads: int = 1, **switches):
        self.rules = replace(rules or SolverRules(), **switches)
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        if threads > 1 and self.rules.dfpn:
            raise ValueError("df-pn searches in one thread (its table of numbers has no locks)")
        self.threads = threads
        if tt_mb is not None:
            per_entry = ENTRY_BYTES + (DFPN_ENTRY_BYTES if self.rules.dfpn else 0)
            tt_entries = max(16, int(tt_mb * (1 << 20) / per_entry))
            n = 1 << (tt_entries.bit_length() - 1)  # at most tt_mb
        else:
            n = 1 << max(4, int(tt_entries - 1).bit_length())
        self.keys = np.zeros(n, np.int64)
        self.vals = np.zeros(n, np.int8)
        self.work = np.zeros(n, np.uint8)
        self.gen = np.zeros(n, np.uint8)
        # df-pn's numbers for unproven positions (a slot each; a stub when df-pn is off).
        m = n if self.rules.dfpn else 2
        self.pkeys = np.zeros(m, np.int64)
        self.pphi = np.zeros(m, np.int32)
        self.pdelta = np.zeros(m, np.int32)
        self.generation = 0
        self.history = np.zeros((3, 1), np.int64)  # per colour and point; sized by the board
        self._root_safe_cuts = 0

    def clear(self) -> None:
        """Forget every stored result."""
        self.keys[:] = 0
        self.vals[:] = 0
        self.work[:] = 0
        self.gen[:] = 0
        self.pkeys[:] = 0
        self.history[:] = 0

    def kernel_config(self, board: Board) -> np.ndarray:
        """The kernels' ``cfg`` array for a new call on ``board`` (a new table generation)."""
        r = self.rules
        self.generation = self.generation % 255 + 1
        cfg = np.zeros(CFG_LEN, np.int64)
        cfg[C_SAFE], cfg[C_SAFE_CHILD], cfg[C_TT_WORK] = r.safe, r.safe_children, r.tt_work
        cfg[C_CLOCK_MASK] = max(1, r.clock_every) - 1
        cfg[C_GEN] = self.generation
        cfg[C_DFPN] = r.dfpn
        area = board.geo.area
        cfg[C_HISTORY] = area <= HISTORY_MAX_POINTS if r.history is None else r.history
        if self.history.shape[1] != area:
            self.history = np.zeros((3, area), np.int64)
        else:
            self.history >>= 1  # a new call: the old counts weigh half
        return cfg

    def solve(self, board: Board, max_nodes: int = 200_000,
              priors: np.ndarray | None = None,
              max_seconds: float | None = None, same_generation: bool = False,
              images_of: Board | None = None) -> SolveResult:
        """Solve ``board`` for its side to move within ``max_nodes`` and ``max_seconds``. Root
        moves go in the order of ``priors`` (e.g. the search's visit counts) or else the
        solver's own. A first pass gives each a small share of the budget, so that a hard move
        first in line cannot spend it all before an easy win later is seen; a second pass gives
        the rest to the moves still unknown, in the same order. ``same_generation``: the table
        counts this call's entries as the last call's (a search resumed in slices of time).
        ``images_of``: the position whose symmetries key the table (``board``'s own by default;
        a caller solving a position's moves one at a time passes that position)."""
        if images_of is not None and images_of.size != board.size:
            raise ValueError(f"images_of is {images_of.size}x{images_of.size}, the position "
                             f"{board.size}x{board.size}")
        t0 = time.perf_counter()
        deadline = t0 + max_seconds if max_seconds is not None else 0.0
        legal = board.legal_moves()
        if legal.size == 0:
            return SolveResult(LOSS, -1, 0, {})
        g = board.geo
        sym = image_perms(board if images_of is None else images_of, self.rules.symmetry_keys)
        stack = search_stack(board, sym)
        if same_generation:
            self.generation = (self.generation - 1) % 255
        cfg = self.kernel_config(board)
        stats = np.zeros(STATS_LEN, np.int64)
        results_of: dict[int, int] = {}
        if priors is not None:
            moves = legal[np.argsort(-priors[legal], kind="stable")]
        else:
            moves, wins_at_once = order_root(*stack, g.nbr, g.zobrist, self.keys, self.vals,
                                             self.history, sym, cfg, stats)
            if wins_at_once:
                m = int(moves[0])
                return SolveResult(WIN, m, 1, {m: WIN}, {m: 1},
                                   seconds=time.perf_counter() - t0)
            results_of = {int(m): LOSS for m in np.setdiff1d(legal, moves)}  # statically lost
        rep = {int(m): int(m) for m in moves}
        if self.rules.symmetry:
            moves, rep = root_orbits(board, moves)
        first_pass = max(max_nodes // (4 * max(moves.size, 1)), 1)
        if self.threads > 1 and moves.size > 1 and max_nodes >= PARALLEL_MIN_NODES:
            # The root's stack serves the first thread (ordering used only its scratch levels).
            stacks = [stack] + [search_stack(board, sym)
                                for _ in range(min(self.threads, moves.size) - 1)]
            res, results, nodes = solve_root_threads(
                stacks, g.nbr, g.zobrist, self.keys, self.vals, self.work, self.gen, self.pkeys,
                self.pphi, self.pdelta, moves, max_nodes, first_pass, self.history, sym, cfg,
                deadline, stats)
            used = int(nodes.sum())
        else:
            budget = np.array([max_nodes], np.int64)
            results = np.zeros(moves.size, np.int64)
            nodes = np.zeros(moves.size, np.int64)
            res = UNKNOWN if moves.size else LOSS
            for per_move in (first_pass, max_nodes):
                if not moves.size:
                    break
                root = solve_root_dfpn if self.rules.dfpn else solve_root
                res = root(*stack, g.nbr, g.zobrist, self.keys, self.vals, self.work, self.gen,
                           self.pkeys, self.pphi, self.pdelta, moves, budget, per_move, results,
                           nodes, self.history, sym, cfg, deadline, stats)
                if res != UNKNOWN or budget[0] <= 0 or stats[S_TIMED_OUT]:
                    break
            used = max_nodes - int(budget[0])
        by_move = {int(m): int(r) for m, r in zip(moves, results)}
        nodes_of = {int(m): int(n) for m, n in zip(moves, nodes)}
        for m in rep:  # symmetric images share their representative's result
            results_of[m] = by_move[rep[m]]
        move_nodes = {m: nodes_of.get(m, 0) for m in results_of}
        if res == WIN:
            move = int(moves[int(np.flatnonzero(results == WIN)[0])])
        elif res == LOSS:
            move = int(moves[int(np.argmax(nodes))]) if moves.size else int(legal[0])
        else:
            move = -1
        return SolveResult(int(res), move, int(used), results_of, move_nodes,
                           seconds=time.perf_counter() - t0, timed_out=bool(stats[S_TIMED_OUT]),
                           safe_cuts=int(stats[S_SAFE]), tt_hits=int(stats[S_TT_HITS]))

    def resist(self, board: Board, move_nodes: dict[int, int], max_nodes: int = 200_000,
               max_seconds: float | None = None) -> tuple[int, int, int] | None:
        """In a position proven lost for its side to move, the move that leaves the opponent
        the smallest share of winning replies (then the fewest, then the one whose refutation
        took the most nodes): where every move loses, the best practical chance is the one an
        imperfect opponent is likeliest to answer wrongly. ``move_nodes`` maps each losing move
        to the nodes its refutation took (``SolveResult``; the stubbornest are examined first).
        Returns (move, winning replies, replies), or None when ``max_nodes`` or ``max_seconds``
        ran out before one move was fully counted (a reply left unknown counts the move out)."""
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
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
            counted = self._winning_replies(after, replies, limit, left, deadline, board)
            if counted is None:
                break  # the budget ran out
            wins, used = counted
            left -= used
            key = (wins / replies.size, wins, -move_nodes[m], m, int(replies.size))
            if wins <= limit and (best is None or key[:3] < best[:3]):
                best = key
        return None if best is None else (best[3], best[1], best[4])

    def _winning_replies(self, after: Board, replies: np.ndarray, limit: float,
                         max_nodes: int, deadline: float | None = None,
                         images_of: Board | None = None) -> tuple[int, int] | None:
        """(how many of ``replies`` win for their side in ``after``, nodes spent), counting
        stopped once more than ``limit`` do; None when ``max_nodes`` runs out first or the
        clock passes ``deadline`` (a ``perf_counter`` time). ``images_of``: as ``solve``'s (the
        position whose solve filled the table, so its entries are found again)."""
        left = max_nodes
        wins = 0
        for r in replies:
            seconds = None if deadline is None else deadline - time.perf_counter()
            if left <= 0 or (seconds is not None and seconds <= 0):
                return None
            position = after.copy()
            position.play(int(r))
            res = self.solve(position, left, max_seconds=seconds, images_of=images_of)
            left -= max(res.nodes, 1)
            if res.result == UNKNOWN:
                return None
            wins += res.result == LOSS  # the side to move there is lost: r wins for the other
            if wins > limit:
                break
        return wins, max_nodes - left


def solve(board: Board, max_nodes: int = 200_000, **switches) -> SolveResult:
    """One-off solve with a fresh table."""
    return Solver(1 << 16, **switches).solve(board, max_nodes)


__all__ = [
    "LOSS",
    "UNKNOWN",
    "WIN",
    "SolveResult",
    "Solver",
    "SolverRules",
    "image_hash",
    "image_perms",
    "long_try",
    "order_root",
    "root_orbits",
    "search_stack",
    "solve",
    "solve_root",
    "solver_budget",
    "solver_seconds",
    "symmetries",
    "zones_from",
]
