"""MCTS with RAVE and the NoGo rollout policy: the classical champion-class agent ``rave``.

The yardstick the network engine is judged against: the design of the classical NoGo programs
that won the Olympiad and TAAI events, with no network.

Search (``rave_kernels``, whose docstring has the details): MCTS with RAVE: each simulation
descends the tree, expands a leaf once visited ``EXPAND_VISITS`` times (all legal moves, AMAF
priors from the 3x3 pattern table of ``patterns`` when ``pattern_prior`` > 0, else from the
rollout policy's local score), finishes the game with ``playout.policy_rollout`` and backs up
Monte-Carlo and AMAF values; an MCTS-solver proves wins and losses. A proven win is played, a
proven root stops the search, and a move that wins at once is played without search.

Endgame. From ``solver.SOLVER_MAX_EMPTY`` empty points each move first asks the exact solver
(``solver.Solver``, the network engine's, its table kept between moves) with half the move's
maximum time: a proven win is played, a proven loss answered with ``Solver.resist``'s move, and
otherwise the search runs in the time left, never choosing a root move the solver proved lost.
``solver_zones`` tells the time manager, so no time is kept for the moves the solver answers.

Tree. A struct of arrays (``_Tree``) grown in place by ``rave_batch`` in batches, so Python can
watch the clock (as in ``rollout.py``). The subtree of the moves played since the last search is
kept (copied to the front of fresh arrays) and the next search goes on from its statistics.

Time. Through GTP the agent gets the time manager's ``timecontrol.MoveBudget`` (it declares
``takes_move_budget``): it searches to the planned time and, when the most visited move is not
also the best valued, on up to the budget's maximum. A proven result stops it sooner. ``seconds``
(per move) caps any budget; ``playouts`` stops it at that many simulations, within the budget.

Threads: root parallelism. ``threads`` independent trees are searched at once by numba kernels
that release the GIL; their root visits are summed to choose the move.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from ..engine.playout import rollout_scratch
from ..engine.solver import (LOSS, SOLVER_MAX_EMPTY, SOLVER_NODES,
                             SOLVER_ZONES, UNKNOWN, WIN, Solver)
from ..engine.timecontrol import NO_SOLVER, SolverZones, TimePolicy
from ..game import coords
from ..game.board import Board
from .base import SearchAgent
from .patterns import PatternTable, default_table
from .rave_kernels import compact_subtree, kernel_params, rave_batch, winning_move

# The settings' tuning matches: docs/results.md ("rave, measured").
RAVE_EQUIV = 3000.0  # simulations at which the AMAF and Monte-Carlo values weigh the same
C_UCT = 0.02  # exploration on top of RAVE's
# A leaf is expanded on its EXPAND_VISITS-th visit (the root at once): fewer expansions buy
# about 15% more simulations.
EXPAND_VISITS = 8
PRIOR_VISITS = 12.0  # AMAF pseudo-visits of the priors
PRIOR_SAFE = 0.35  # prior value of a point only the mover can play (keep it for later)
PRIOR_STEP = 0.07  # prior value per point of the rollout policy's local score
PATTERN_PRIOR = 0.1  # prior value per unit of the pattern table's logit (0: local-score priors)
# Tree nodes over all threads, 27 bytes each (650 MB when full; pages are resident once used).
# A simulation adds 1-3 nodes: a 60 s game's moves stay under 0.7M, a 900 s game's under 12M;
# 24M holds a 100 s move (docs/tournaments.md, rave's memory).
MAX_NODES = 24_000_000
DEFAULT_SECONDS = 5.0  # per move when neither playouts, seconds nor a clock is given
# Solver nodes per simulation when a move is limited by simulations alone: about half the
# move's time at the two rates (the solver's 280,000 nodes/s against rave's ~60,000 sims/s).
SOLVER_NODES_PER_SIM = 2
OPENING_WEIGHT = 0.6  # the time plan counts an opening move (over 61 empty points) as 0.6 of one
# The clock's keep for the endgame solver, lighter than the network engine's (rave's solver
# proves sooner, so the engine's keep leaves clock unspent): a 1.2 s try (most first proofs take
# under 400,000 nodes), 0.6 s a move of the reach, 0.5% of the clock as reserve (a move overruns
# its plan by a 5 ms batch at most), a tenth of a lag buffer per move the solver answers (under
# 10 ms once proven). docs/results.md ("rave, measured") has the figures.
RAVE_CLOCK = {"try_floor_seconds": 1.2, "reach_floor_seconds": 0.6, "reserve": 0.005,
              "solver_keep_share": 0.1}


def _hash_before(board: Board, plies: int) -> int | None:
    """The hash of ``board`` as it was ``plies`` moves ago (None if its history is shorter)."""
    b = board.copy()
    for _ in range(plies):
        if not b.can_undo():
            return None
        b.undo()
    return b.hash


class _Tree:
    """One search tree (struct of arrays) with its workspaces and the moves that led to it."""

    FIELDS = (("move", np.int16), ("first", np.int32), ("nchild", np.int32),
              ("mover", np.int8), ("proof", np.int8), ("N", np.int32), ("W", np.float32),
              ("AN", np.float32), ("AW", np.float32))

    def __init__(self, size: int, cap: int, policy: dict, patterns: tuple):
        self.size = size
        self.patterns = patterns  # PatternTable.kernel_args(size)
        self.cap = cap
        self.arrays = self._allocate()
        self.n_nodes = np.zeros(1, dtype=np.int64)
        self.moves: list[tuple[int, int]] | None = None  # board.moves at the root
        self.root_hash = 0  # and its position's hash (a set-up position has no moves)
        self.scratch = rollout_scratch(size, **policy)
        board = Board(size)
        self.work = tuple(a.copy() for a in board.arrays())
        self.path = np.zeros(board.geo.area + 2, dtype=np.int64)

    def _allocate(self) -> tuple:
        return tuple(np.empty(self.cap, dtype=t) for _, t in self.FIELDS)

    def _reset(self, board: Board) -> None:
        move, first, nchild, mover, proof, N, W, AN, AW = self.arrays
        move[0], first[0], nchild[0], mover[0], proof[0] = board.last_move, -1, -1, \
            3 - board.to_move, 0
        N[0], W[0], AN[0], AW[0] = 0, 0.0, 0.0, 0.0
        self.n_nodes[0] = 1

    def set_root(self, board: Board) -> int:
        """Make node 0 the root for ``board``: keep the subtree of the moves played since the
        last search when there is one, else start afresh. Returns the root's visits."""
        old, self.moves = self.moves, list(board.moves)
        old_hash, self.root_hash = self.root_hash, board.hash
        path = None
        if old is not None and self.n_nodes[0] > 0 and len(old) <= len(board.moves) \
                and board.moves[:len(old)] == old:
            path = board.moves[len(old):]
            if path and _hash_before(board, len(path)) != old_hash:
                path = None
            elif not path and board.hash != old_hash:
                path = None
        if path is None:
            self._reset(board)
            return 0
        move, first, nchild, mover = self.arrays[:4]
        node = 0
        for colour, p in path:
            k = int(nchild[node])
            if k <= 0:
                node = -1
                break
            f = int(first[node])
            hits = np.flatnonzero((move[f:f + k] == p) & (mover[f:f + k] == colour))
            if len(hits) == 0:
                node = -1
                break
            node = f + int(hits[0])
        if node < 0 or mover[node] != 3 - board.to_move:
            self._reset(board)
            return 0
        if node != 0:
            fresh = self._allocate()
            self.n_nodes[0] = compact_subtree(node, *self.arrays, *fresh)
            self.arrays = fresh
        return int(self.arrays[5][0])

    def run(self, board: Board, iterations: int, params: np.ndarray, seed: int) -> int:
        geo = board.geo
        return rave_batch(*board.arrays(), geo.nbr, geo.zobrist, 0, self.n_nodes,
                           *self.arrays, iterations, params, seed, self.work, self.scratch,
                           self.path, self.patterns)

    def root_children(self) -> tuple:
        """(moves, visits, wins, proofs) of the root's children (empty when unexpanded)."""
        move, first, nchild, mover, proof, N, W, AN, AW = self.arrays
        k = int(nchild[0])
        if k <= 0:
            e = np.zeros(0)
            return e.astype(np.int16), e, e, e.astype(np.int8)
        f = int(first[0])
        return move[f:f + k], N[f:f + k].astype(np.float64), W[f:f + k].astype(np.float64), \
            proof[f:f + k]


@dataclass
class RaveResult:
    """One search, as the GTP layer and the log see it."""

    move: int
    simulations: int
    seconds: float
    winrate: float  # of the move played, for the side to move
    reason: str  # planned, time, playouts, proven, solver: win|loss, win-at-once, only-move, stop
    reused: int  # root visits kept from the last search
    nodes: int


class RaveAgent(SearchAgent):
    """MCTS + RAVE with NoGo rollouts (module docstring). Stops at ``playouts`` simulations (in
    all threads together), at ``seconds`` per move, or at the GTP clock's budget."""

    name = "rave"
    takes_move_budget = True  # plans with the time manager's MoveBudget (plan, maximum)
    can_ponder = True

    def __init__(self, playouts: int | None = None, seconds: float | None = None,
                 seed: int | None = None, threads: int = 1, log=None, warmup: bool = True,
                 c_uct: float = C_UCT, rave_equiv: float = RAVE_EQUIV,
                 expand_visits: int = EXPAND_VISITS, max_nodes: int = MAX_NODES,
                 policy: dict | None = None, solver: bool = True,
                 opening_weight: float = OPENING_WEIGHT, clock: dict | None = None,
                 pattern_prior: float = PATTERN_PRIOR, prior_visits: float = PRIOR_VISITS,
                 patterns: PatternTable | None = None):
        if playouts is not None and playouts < 1:
            raise ValueError("playouts must be at least 1")
        if threads < 1:
            raise ValueError("threads must be at least 1")
        self.playouts = playouts
        self.threads = threads
        self.log = log
        self.max_nodes = max_nodes
        self.policy = dict(policy or {})  # rollout_scratch's knobs (default: playout's)
        self.params = kernel_params(c_uct, rave_equiv, expand_visits, prior_visits, PRIOR_SAFE,
                                    PRIOR_STEP, pattern_prior)
        self.patterns = patterns or default_table()
        self._trees: list[_Tree] = []
        # The exact endgame solver (``solver.Solver``), tried before the search from
        # SOLVER_MAX_EMPTY empty points; its table is kept from move to move.
        self._solver = Solver(1 << 20) if solver else None
        # Through GTP the clock is planned with the opening's moves lighter, so its time goes to
        # the late middle game, where rave's games are decided (docs/results.md, "rave, measured").
        # ``clock``: other TimePolicy fields (the solver zones' floors and keep; RAVE_CLOCK's
        # unless given).
        self.time_policy = TimePolicy(opening_weight=opening_weight,
                                      **{**RAVE_CLOCK, **(clock or {})})
        self.last_result: RaveResult | None = None
        super().__init__(seconds, seed, warmup=False)
        if warmup:
            # Load every kernel now (GTP start-up), the tree reuse's included, so no timed
            # genmove pays numba's loading time.
            # (5×5: no move wins at once this early, so both moves are searched.)
            tiny = RaveAgent(playouts=64, seed=0, warmup=False, max_nodes=20_000, solver=False)
            board = Board(5)
            board.play(int(tiny.select_move(board)))
            board.play(int(board.legal_moves()[0]))
            tiny.select_move(board)
            if self._solver is not None:
                # The solver's kernels too (5×5: 23 empty points, inside its zone; the searches
                # above ran without it, so that the solver's answers could not skip them).
                tiny._solver = Solver(1 << 10)
                tiny.select_move(board)

    @property
    def solver_zones(self) -> SolverZones:
        """Where the endgame solver works (the time plan does not keep time for the moves it
        answers): the engine's zones, as both use the same solver."""
        if self._solver is None:
            return NO_SOLVER
        return SOLVER_ZONES

    # -- the GTP contract ---------------------------------------------------------------------
    def select_move(self, board: Board, seconds=None) -> int:
        """The move for ``board``; ``seconds`` is a number, a ``timecontrol.MoveBudget`` or
        None (the agent's own limits)."""
        t0 = time.perf_counter()
        legal = board.legal_moves()
        if len(legal) == 0:
            return coords.RESIGN
        geo = board.geo
        work = tuple(a.copy() for a in board.arrays())
        win = winning_move(*board.arrays(), geo.nbr, geo.zobrist, work)
        if win >= 0:
            self._finish(board, RaveResult(int(win), 0, time.perf_counter() - t0, 1.0,
                                           "win-at-once", 0, 0))
            return int(win)
        if len(legal) == 1:
            self._finish(board, RaveResult(int(legal[0]), 0, time.perf_counter() - t0, 0.5,
                                           "only-move", 0, 0))
            return int(legal[0])
        planned, maximum = self._limits(seconds)
        avoid: set[int] = set()
        empty = int((board.stones == 0).sum())
        if self._solver is not None and empty <= SOLVER_MAX_EMPTY:
            solved = self._solve(board, maximum, t0)
            if solved.result != UNKNOWN:
                result = RaveResult(solved.move, 0, time.perf_counter() - t0,
                                    1.0 if solved.result == WIN else 0.0,
                                    "solver: win" if solved.result == WIN else "solver: loss",
                                    0, solved.nodes)
                self._finish(board, result)
                return solved.move
            avoid = {m for m, r in solved.move_results.items() if r == LOSS}
        return self._search(board, planned, maximum, None, t0, avoid=avoid).move

    def _solve(self, board: Board, maximum: float | None, t0: float):
        """The solver's verdict on ``board`` within half the move's maximum from ``t0`` (or
        ``SOLVER_NODES_PER_SIM`` nodes a simulation): a winning move, or in a lost position the
        move an imperfect opponent is likeliest to answer wrongly (``Solver.resist``).

        The solver reads the clock inside its search, so a loaded machine, where it runs
        several times below the nominal rate, stops it at the deadline all the same."""
        # Its threads are the search's (idle while it solves), with as many times the nodes.
        self._solver.threads = self.threads
        nodes = SOLVER_NODES * self.threads
        if self.playouts is not None:
            nodes = min(nodes, SOLVER_NODES_PER_SIM * self.playouts)
        nodes = max(nodes, 100)
        priors = self._root_priors(board)
        deadline = None if maximum is None else t0 + 0.5 * maximum

        def seconds_left():
            return None if deadline is None else max(deadline - time.perf_counter(), 0.0)

        solved = self._solver.solve(board, nodes, priors, max_seconds=seconds_left())
        if solved.result == LOSS and nodes - solved.nodes >= 100:
            chance = self._solver.resist(board, solved.move_nodes, nodes - solved.nodes,
                                         seconds_left())
            if chance is not None:
                solved.move = chance[0]
        return solved

    def _root_priors(self, board: Board) -> np.ndarray | None:
        """The reused tree's root visits per point, for the solver to try the likeliest moves
        first; None when the tree has nothing to say (the solver orders by itself)."""
        trees = self._trees_for(board.size)
        if sum(t.set_root(board) for t in trees) < 1000:
            return None
        moves, visits = self._root_statistics(trees)[:2]
        priors = np.zeros(board.geo.area)
        priors[moves.astype(np.int64)] = visits
        return priors

    def ponder(self, board: Board, stop: threading.Event, max_seconds: float = 600.0) -> None:
        """Think on the opponent's time (``board``: the opponent to move) until ``stop`` is set;
        the trees are kept for the next search."""
        if board.num_legal() == 0:
            return
        self._search(board, max_seconds, max_seconds, stop, time.perf_counter(), ponder=True)

    def forget(self) -> None:
        """Drop the search trees: the next search starts afresh (benchmarks)."""
        self._trees = []

    # -- search -------------------------------------------------------------------------------
    def _limits(self, seconds) -> tuple[float | None, float | None]:
        """(planned, maximum) seconds for this move; None: no time limit."""
        planned = maximum = None
        if seconds is not None and hasattr(seconds, "planned"):
            planned, maximum = seconds.planned, seconds.maximum
        elif seconds is not None:
            planned = maximum = float(seconds)
        if self.seconds is not None:
            planned = self.seconds if planned is None else min(planned, self.seconds)
            maximum = self.seconds if maximum is None else min(maximum, self.seconds)
        if planned is None and self.playouts is None:
            planned = maximum = DEFAULT_SECONDS
        return planned, maximum

    def _trees_for(self, size: int) -> list[_Tree]:
        if len(self._trees) != self.threads or self._trees[0].size != size:
            cap = max(self.max_nodes // self.threads, 4 * size * size)
            self._trees = [_Tree(size, cap, self.policy, self.patterns.kernel_args(size))
                           for _ in range(self.threads)]
        return self._trees

    def _search(self, board: Board, planned: float | None, maximum: float | None,
                stop: threading.Event | None, t0: float, ponder: bool = False,
                avoid: set[int] = frozenset()) -> RaveResult:
        """Search from ``board``; ``avoid``: root moves the solver proved lost (never chosen
        while another move is left)."""
        trees = self._trees_for(board.size)
        reused = sum(t.set_root(board) for t in trees)
        seeds = [int(s) for s in self._rng.integers(1 << 31, size=len(trees))]
        target = None if self.playouts is None or ponder else self.playouts
        per_tree = None if target is None else -(-target // len(trees))
        deadline = [None if planned is None else t0 + planned]
        hard = None if maximum is None else t0 + maximum
        counts = [0] * len(trees)
        reason = ["playouts" if target is not None else "planned"]

        def work(i: int) -> None:
            tree, batch, seed = trees[i], 64, seeds[i]
            while True:
                n = batch if per_tree is None else min(batch, per_tree - counts[i])
                if n <= 0:
                    return
                tb = time.perf_counter()
                done = tree.run(board, n, self.params, seed)
                seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
                counts[i] += done
                now = time.perf_counter()
                if done < n:
                    reason[0] = "proven"
                    return
                if stop is not None and stop.is_set():
                    reason[0] = "stop"
                    return
                if deadline[0] is not None and now >= deadline[0]:
                    return
                # Batches of ~5 ms, never past the deadline: the clock is read often (a kernel
                # call costs next to nothing) and a move overruns its plan by a batch at most.
                rate = done / max(now - tb, 1e-6)
                room = rate * 0.005 if deadline[0] is None else min(rate * 0.005,
                                                                     rate * (deadline[0] - now))
                batch = int(min(max(room, 8), 1 << 16))

        while True:
            if len(trees) == 1:
                work(0)
            else:
                pool = [threading.Thread(target=work, args=(i,)) for i in range(len(trees))]
                for t in pool:
                    t.start()
                for t in pool:
                    t.join()
            if reason[0] != "planned" or deadline[0] is None:
                break
            # At the planned time: go on (up to the hard maximum) while the most visited move
            # is not the best valued one: the choice is not settled yet.
            now = time.perf_counter()
            best, by_value = self._choice(trees, avoid)[1:3]
            if best == by_value or hard is None or now >= hard - 0.01:
                reason[0] = "planned" if hard is None or now < hard - 0.01 else "time"
                break
            deadline[0] = min(hard, now + max(0.1 * (hard - t0), 0.05))
            reason[0] = "planned"
        move, best, _, winrate = self._choice(trees, avoid)
        result = RaveResult(move, sum(counts), time.perf_counter() - t0, winrate, reason[0],
                            reused, int(sum(t.n_nodes[0] for t in trees)))
        if not ponder:
            self._finish(board, result)
        return result

    def root_statistics(self) -> tuple:
        """The last search's root children, summed over the threads' trees: (moves, visits,
        wins, proven win, proven loss), each an array (empty before any search). Expert
        iteration (``train.teacher``) reads its targets here."""
        if not self._trees:
            e = np.zeros(0)
            return e.astype(np.int16), e, e, e.astype(bool), e.astype(bool)
        return self._root_statistics(self._trees)

    @staticmethod
    def _root_statistics(trees: list[_Tree]) -> tuple:
        moves, visits, wins, proofs = trees[0].root_children()
        moves = moves.copy()
        visits, wins = visits.copy(), wins.copy()
        proven_win = proofs > 0
        proven_loss = proofs < 0
        for t in trees[1:]:
            m, v, w, p = t.root_children()
            if len(m) != len(moves):
                continue
            visits += v
            wins += w
            proven_win |= p > 0
            proven_loss &= p < 0
        return moves, visits, wins, proven_win, proven_loss

    @classmethod
    def _choice(cls, trees: list[_Tree], avoid: set[int] = frozenset()
                ) -> tuple[int, int, int, float]:
        """(move, index of the most visited, index of the best valued, win rate of the move):
        visits summed over the trees; a proven win is played, proven losses (the tree's and
        ``avoid``) only if nothing else is left."""
        moves, visits, wins, proven_win, proven_loss = cls._root_statistics(trees)
        if avoid:
            proven_loss = proven_loss | np.isin(moves, np.fromiter(avoid, np.int64))
        if len(moves) == 0:
            raise RuntimeError("rave: the root was never expanded")
        rate = np.where(visits > 0, wins / np.maximum(visits, 1), 0.0)
        if proven_win.any():
            i = int(np.flatnonzero(proven_win)[0])
            return int(moves[i]), i, i, 1.0
        score = np.where(proven_loss, -1.0, visits)
        if proven_loss.all():
            score = visits
        best = int(np.argmax(score))
        valued = np.where((visits >= max(visits[best] / 4, 1)) & ~proven_loss, rate, -1.0)
        by_value = int(np.argmax(valued))
        return int(moves[best]), best, by_value, float(rate[best])

    def _finish(self, board: Board, result: RaveResult) -> None:
        self.last_info = {"playouts": result.simulations, "seconds": result.seconds,
                          "nodes": result.nodes, "winrate": result.winrate}
        self.last_result = result
        if self.log is not None:
            rate = result.simulations / result.seconds if result.seconds > 0 else 0.0
            print(f"rave: {coords.to_gtp(result.move, board.size)} winrate "
                  f"{result.winrate:.3f} sims {result.simulations} ({rate:,.0f}/s) "
                  f"kept {result.reused} nodes {result.nodes} time {result.seconds:.2f}s "
                  f"stop: {result.reason}", file=self.log, flush=True)

