"""Leaf proofs (``SearchConfig.leaf_proof_empty``): leaves near the end of the game go to the
exact solver before their value is backed up; every proof the tree then holds must be the
solver's verdict on that node's position, and a proof at the root answers the search."""

from __future__ import annotations

import numpy as np
import pytest
from test_mcts import assert_tree_consistent, small_config

from nogobot.engine.search import Searcher, SearchLimits
from nogobot.engine.solver import LOSS, WIN, Solver
from nogobot.game.board import Board
from nogobot.net.inference import UniformEvaluator


def _endgame(seed: int, empty: int) -> Board:
    """A 9x9 position along a random game with ``empty`` empty points, still undecided."""
    rng = np.random.default_rng(seed)
    while True:
        b = Board(9)
        while 81 - b.ply > empty and b.num_legal():
            b.play(int(rng.choice(b.legal_moves())))
        if 81 - b.ply == empty and b.num_legal() > 1:
            return b


def _position(board: Board, tree, node: int) -> Board:
    """The position at ``node`` of a tree searched from ``board``."""
    path = []
    while node > 0:
        path.append(int(tree.move[node]))
        node = int(tree.parent[node])
    b = board.copy()
    for m in reversed(path):
        b.play(m)
    return b


def test_board_from_state_copies_a_position():
    b = _endgame(1, 40)
    c = Board.from_state(9, b.arrays())
    assert c.to_move == b.to_move and np.array_equal(c.legal_moves(), b.legal_moves())
    c.play(int(c.legal_moves()[0]))
    assert 81 - b.ply == 40  # the original is untouched


@pytest.mark.parametrize("seed", [3, 4])
def test_a_leaf_proof_at_the_root_answers_the_search(seed):
    """The root is the first leaf: within reach, its proof ends the search with the solver's
    result and, for a win, a move the solver confirms."""
    b = _endgame(seed, 18)
    want = Solver(1 << 20).solve(b, 1_000_000).result
    assert want in (WIN, LOSS)
    s = Searcher(UniformEvaluator(), 9,
                 small_config(leaf_proof_empty=18, leaf_proof_nodes=1_000_000))
    r = s.search(b, SearchLimits(playouts=200))
    assert r.proven == want and r.reason.startswith("proven")
    if want == WIN:
        after = b.copy()
        after.play(r.move)
        assert Solver(1 << 20).solve(after, 1_000_000).result == LOSS


@pytest.mark.slow  # a few hundred solver checks: 10-20 s
def test_every_proof_in_the_tree_is_the_solvers_verdict():
    """Leaves from 22 empty points down are proven within 5,000 nodes (the root, at 25, is
    not): every node the tree holds as proven, leaf or pushed up, is the solver's verdict."""
    b = _endgame(7, 25)
    s = Searcher(UniformEvaluator(), 9, small_config(leaf_proof_empty=22))
    s.search(b, SearchLimits(playouts=1_500))
    assert_tree_consistent(s)
    t = s.tree
    proven = np.flatnonzero(t.proof[:t.nodes])
    assert proven.size > 0
    check = Solver(1 << 20)
    agreed = 0
    for node in proven:
        truth = check.solve(_position(b, t, int(node)), 2_000_000).result
        if truth != 0:
            assert truth == t.proof[node], f"node {node}"
            agreed += 1
    assert agreed == proven.size  # every proof here is small enough to check


def test_leaf_proofs_need_no_root_solver_and_are_off_by_default():
    """Off (the default) a searcher without the root solver has no solver at all; on, it
    has one for its leaves and proves some of them."""
    b = _endgame(5, 24)
    assert Searcher(UniformEvaluator(), 9, small_config()).solver is None
    on = Searcher(UniformEvaluator(), 9, small_config(leaf_proof_empty=22), seed=1)
    on.search(b, SearchLimits(playouts=300))
    assert on.solver is not None
    assert np.count_nonzero(on.tree.proof[:on.tree.nodes]) > 0


def test_leaf_proofs_keep_to_the_search_time():
    """A batch may hand the solver many leaves, each allowed LEAF_PROOF_SECONDS: together they
    still end by the search's own time limit (a 15 s game was once lost on time so)."""
    b = _endgame(6, 24)
    s = Searcher(UniformEvaluator(), 9, small_config(leaf_proof_empty=24, batch_size=16,
                                                     leaf_proof_nodes=10_000_000))
    s.search(b, SearchLimits(playouts=8))  # kernels loaded before the timed search
    s.reset()
    r = s.search(_endgame(8, 24), SearchLimits(seconds=0.2))
    assert r.seconds < 0.2 + 0.15
