"""The batches one search has in the network: a lane per batch that may be in flight at once.

A search selects a batch of leaves (``mcts.select_batch``) into a free lane's buffers
(``mcts.batch_buffers``), the driver evaluates its planes, and the search backs the evaluations
up in the order it yielded the batches. With a plain driver one lane suffices: each batch is
backed up before the next is selected. A pipelining driver (``driver.run_search`` with two
lanes) answers ``IN_FLIGHT`` and the next batch goes into a second lane while the network
evaluates the first; the first batch's virtual loss and pending marks steer the second one's
walks elsewhere. What this module owns: the lanes' buffers, which of them are in flight,
backing up the oldest, and giving up those a closed search leaves behind (``mcts.abandon``).
"""

from __future__ import annotations

import numpy as np

from . import mcts
from .solver import WIN


class Lanes:
    """The lanes of one searcher. Lane 0 exists from the start; a second is made on demand."""

    def __init__(self, batch_size: int, area: int, words: int, size: int):
        self._shape = (batch_size, area, words, size)
        self.buffers = [mcts.batch_buffers(*self._shape)]  # (leaves, batch rows) per lane
        # The batches in the network, oldest first: (lane, leaves pending, their leaf proofs
        # as (row, WIN or LOSS)).
        self.flying: list[tuple[int, int, list[tuple[int, int]]]] = []

    def free(self) -> int:
        """The lane of the next batch: the first one not in the network."""
        busy = {lane for lane, _, _ in self.flying}
        for lane in range(len(self.buffers)):
            if lane not in busy:
                return lane
        self.buffers.append(mcts.batch_buffers(*self._shape))
        return len(self.buffers) - 1

    def walks_to_room(self) -> int:
        """The walks a new batch may make, counting the leaves in the network, which expand
        later: a tree grown for them has room for every expansion."""
        return self._shape[0] * (1 + len(self.flying)) + 1

    def launch(self, lane: int, n: int, proven: list[tuple[int, int]]) -> np.ndarray:
        """Mark ``lane``'s n selected leaves as in the network: their planes."""
        self.flying.append((lane, n, proven))
        return self.buffers[lane][1][mcts.B_PLANES][:n]

    def back_up(self, tree, cache, cfg_f, ev) -> int:
        """Expand and back up the oldest batch in the network with its ``Evaluation``: its
        leaves. Leaf proofs replace the network's and the rollouts' values and settle their
        nodes."""
        lane, n, proven = self.flying.pop(0)
        leaves, batch = self.buffers[lane]
        value = np.array(ev.value, dtype=np.float32)  # a copy: proofs overwrite rows
        for b, result in proven:
            value[b] = 1.0 if result == WIN else 0.0
            batch[mcts.B_ROLLOUT][b] = float(result)
        mcts.expand_and_backup(tree.arrays(), cache.arrays(), cfg_f, n, leaves, batch,
                               np.ascontiguousarray(ev.policy_logits, dtype=np.float32), value)
        for b, result in proven:
            mcts.mark_proven(tree.arrays(), int(leaves[b]), result)
        return n

    def abandon(self, tree) -> None:
        """Give up every batch in the network (a search closed or failed mid-batch)."""
        for lane, n, _ in self.flying:
            mcts.abandon(tree.arrays(), n, self.buffers[lane][0])
        self.flying.clear()
