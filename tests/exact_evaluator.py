"""A tiny deterministic stand-in for the network (tests of the analysis engine and the review).

Each output row depends only on that row's planes, bit for bit, whatever batch it is in: the
planes are 0/1 and the weights small integers, so every dot product is an exact float64 sum.
That makes a search fed by shared, concatenated batches comparable with one fed alone."""

from __future__ import annotations

import numpy as np

from nogobot.net.inference import Evaluation, Evaluator


class ExactEvaluator(Evaluator):
    name = "exact"
    provider = "numpy"

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.calls = 0
        self.rows = 0
        self.largest = 0
        self._w: dict[int, tuple] = {}

    def _weights(self, size: int, inputs: int) -> tuple:
        if size not in self._w:
            rng = np.random.default_rng(self.seed + size)
            area = size * size
            self._w[size] = (rng.integers(-8, 9, (inputs, area)).astype(np.float64),
                             rng.integers(-8, 9, inputs).astype(np.float64),
                             rng.integers(-8, 9, (inputs, area)).astype(np.float64))
        return self._w[size]

    def evaluate(self, planes: np.ndarray) -> Evaluation:
        x = np.asarray(planes, np.float64)
        b, _, h, w = x.shape
        self.calls += 1
        self.rows += b
        self.largest = max(self.largest, b)
        flat = x.reshape(b, -1)
        wp, wv, wd = self._weights(h, flat.shape[1])
        logits = np.stack([row @ wp for row in flat]) * 0.02
        value = 1.0 / (1.0 + np.exp(-0.01 * np.array([row @ wv for row in flat])))
        dominion = np.tanh(0.01 * np.stack([row @ wd for row in flat])).reshape(b, h, w)
        return Evaluation(logits.astype(np.float32), value.astype(np.float32),
                          dominion.astype(np.float32), np.zeros(b, np.float32))
