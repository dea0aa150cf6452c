"""The exact solver against an obviously-correct reference (``solver_reference``: plain negamax
over the naive rules) on random small positions, with each of its rules on and off; the same
verdict on the eight symmetric images of a position; and the published small-board results
(3x3: the first player wins; 4x4: the second player wins, every opening loses).

A wrong proof is played at once, so every rule the solver has is exercised here both ways."""

from __future__ import annotations

import numpy as np
import pytest
from solver_reference import (
    board_from_stones,
    dihedral,
    random_small_positions,
    random_symmetric_position,
    reference_value,
)

from nogobot.engine.solver import LOSS, WIN, Solver, symmetries
from nogobot.game.board import Board

# Each rule alone off, all off, all on: a rule that is wrong fails in some column.
OFF = {"safe": False, "safe_children": False, "tt_work": False, "symmetry": False,
       "symmetry_keys": False, "history": False}
VARIANTS = {"default": {}, "all-off": OFF,
            **{f"only-{k}": {**OFF, k: True} for k in OFF},
            **{f"no-{k}": {k: False} for k in OFF},
            "dfpn": {"dfpn": True}, "dfpn-all-off": {**OFF, "dfpn": True},
            # Root moves searched by threads at once over one table, lockless.
            "threads-2": {"threads": 2}, "threads-4": {"threads": 4},
            "threads-4-all-off": {**OFF, "threads": 4}}


@pytest.fixture(scope="module")
def positions():
    boards = random_small_positions(55, 480)
    return [(b, reference_value(b)) for b in boards]


def test_positions_cover_both_outcomes_and_every_shape(positions):
    wins = sum(v == WIN for _, v in positions)
    assert 0.2 * len(positions) < wins < 0.8 * len(positions)
    assert {b.size for b, _ in positions} == {3, 4, 5, 9}


@pytest.fixture(scope="module")
def symmetric_positions():
    """Positions with symmetries of their own, where ``symmetry_keys`` merges table entries."""
    rng = np.random.default_rng(57)
    shapes = [(3, 7), (4, 11), (4, 10), (5, 12), (5, 11), (9, 14)]
    boards = [random_symmetric_position(size, rng, empty)
              for size, empty in shapes * 16]
    return [(b, reference_value(b)) for b in boards]


def test_symmetric_positions_are_symmetric(symmetric_positions):
    assert all(len(symmetries(b)) > 1 for b, _ in symmetric_positions)
    wins = sum(v == WIN for _, v in symmetric_positions)
    assert 0.2 * len(symmetric_positions) < wins < 0.8 * len(symmetric_positions)


def check_against_reference(solver: Solver, positions, variant: str) -> None:
    for b, expected in positions:
        got = solver.solve(b, 10_000_000)
        assert got.result == expected, f"{variant}\n{b}\nto move {b.to_move}"
        if got.result == WIN:  # the named move wins: after it the opponent is lost
            after = b.copy()
            after.play(got.move)
            assert reference_value(after) == LOSS, f"{variant}\n{b}\nmove {got.move}"
        for m, r in got.move_results.items():  # every root move proven is proven right
            if r != 0:
                after = b.copy()
                after.play(m)
                assert reference_value(after) == -r, f"{variant}\n{b}\nmove {m}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_solver_agrees_with_the_reference(positions, variant):
    check_against_reference(Solver(1 << 12, **VARIANTS[variant]), positions, variant)


@pytest.mark.parametrize("variant", ["default", "only-symmetry_keys", "no-symmetry_keys",
                                     "dfpn"])
def test_solver_agrees_with_the_reference_on_symmetric_roots(symmetric_positions, variant):
    check_against_reference(Solver(1 << 12, **VARIANTS[variant]), symmetric_positions, variant)


@pytest.mark.parametrize("variant", ["default", "dfpn"])
def test_moves_keyed_by_the_positions_symmetries(symmetric_positions, variant):
    """Each move's position solved with the table keyed by its parent's symmetries (as
    `nogobot solve` does), one table per parent: the reference's verdict, and merged entries
    save nodes over the fixture."""
    nodes = {}
    for keys in (True, False):
        nodes[keys] = 0
        for b, _ in symmetric_positions:
            solver = Solver(1 << 12, **VARIANTS[variant], symmetry_keys=keys)
            for m in b.legal_moves():
                after = b.copy()
                after.play(int(m))
                got = solver.solve(after, 10_000_000, images_of=b)
                nodes[keys] += got.nodes
                if keys:
                    assert got.result == reference_value(after), f"{variant}\n{b}\nmove {m}"
    assert nodes[True] < nodes[False]


@pytest.mark.parametrize("variant", ["default", "dfpn"])
def test_symmetry_keys_merge_entries(symmetric_positions, variant):
    """On positions with symmetries of their own, keying by them saves nodes."""
    used = {keys: sum(Solver(1 << 12, **VARIANTS[variant], symmetry_keys=keys)
                      .solve(b, 10_000_000).nodes for b, _ in symmetric_positions)
            for keys in (True, False)}
    assert used[True] < used[False]


@pytest.mark.parametrize("variant", ["default", "all-off", "dfpn"])
def test_symmetric_positions_get_the_same_verdict(variant):
    for b in random_small_positions(56, 40):
        base = Solver(1 << 14, **VARIANTS[variant]).solve(b, 10_000_000).result
        for perm in dihedral(b.size)[1:]:
            stones = np.zeros_like(b.stones)
            stones[perm] = b.stones
            image = board_from_stones(stones, b.size, b.to_move)
            assert image.num_legal() == b.num_legal()
            assert Solver(1 << 14, **VARIANTS[variant]).solve(image, 10_000_000).result == base


def test_reference_knows_3x3():
    assert reference_value(Board(3)) == WIN  # the first player wins 3x3


@pytest.mark.slow  # about 3 M nodes with every rule off
@pytest.mark.parametrize("variant", ["default", "all-off", "dfpn"])
def test_published_small_boards(variant):
    """3x3 is a first-player win; on 4x4 every opening loses (the second player wins)."""
    solver = Solver(1 << 18, **VARIANTS[variant])
    assert solver.solve(Board(3), 10_000_000).result == WIN
    b = Board(4)
    for m in range(16):
        after = b.copy()
        after.play(m)
        assert solver.solve(after, 20_000_000).result == WIN, f"opening {m} does not lose"
    assert solver.solve(b, 20_000_000).result == LOSS
