"""The hot numba kernels run without reference counts (board.py's docstring says why).

numba's atomic array reference counts cost 60-80% of a rollout's time on an Intel Xeon guest;
the kernels of the hot loops compile with ``_nrt=False``. These tests keep it so: the kernels
carry the flag, and a kernel compiled with it has no reference-count call left in its code,
where the same kernel compiled with numba's default has them.
"""

import re

import numpy as np
import pytest
from numba import njit

from nogobot.agents import rave_kernels
from nogobot.engine import mcts, playout, solver, solver_dfpn
from nogobot.game import board
from nogobot.game.board import Board

HOT_KERNELS = [
    board.play_stone, board.push_state, board.random_playout,
    playout.policy_rollout, playout.local_score,
    rave_kernels.rave_batch, rave_kernels.winning_move,
    solver._negamax, solver_dfpn.dfpn,
    mcts.select_batch, mcts._leaf_rollouts,
]


@pytest.mark.parametrize("kernel", HOT_KERNELS, ids=lambda k: k.__name__)
def test_hot_kernels_are_compiled_without_reference_counts(kernel):
    assert kernel.targetoptions.get("_nrt") is False


def _refcount_calls(kernel, args) -> int:
    kernel(*args)
    return sum(len(re.findall(r"call \w+ @NRT_(?:incref|decref)", ir))
               for ir in kernel.inspect_llvm().values())


def test_a_rollout_compiled_without_reference_counts_has_none_left():
    """Fresh compiles (no on-disk cache, whose kernels keep no IR): with the kernel's own
    options no NRT_incref/decref call is left in its code or its callees'; with numba's
    default options the same function has them, so the check can tell the two apart."""
    b = Board(9)
    b.play(40)
    geo = b.geo
    args = (*b.arrays(), geo.nbr, geo.zobrist, b.last_move, playout.rollout_scratch(9))
    np.random.seed(0)
    options = {k: v for k, v in playout.policy_rollout.targetoptions.items()
               if k not in ("cache", "nopython")}
    without = njit(**options)(playout.policy_rollout.py_func)
    options.pop("_nrt")
    default = njit(**options)(playout.policy_rollout.py_func)
    assert _refcount_calls(without, args) == 0
    assert _refcount_calls(default, args) > 0
