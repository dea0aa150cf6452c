"""`nogobot bench nn`: network evaluations per second and latency per batch size.

For every batch size the same input (planes of positions from random games) is run through
``OnnxEvaluator.evaluate`` and, as the in-run reference, through the bare
``session.run`` of the same session (so the difference is nogobot's wrapper overhead), and
through ``UniformEvaluator`` (the cost of the evaluator plumbing with no network at all).
Each figure is the median of several timed groups.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..core.machine import cpu_name
from ..game.board import Board
from ..net.features import boards_planes
from ..net.inference import OnnxEvaluator, UniformEvaluator, default_model_path

BATCHES = (1, 8, 32, 128, 256)


def _median_seconds(fns, repeats: int, min_seconds: float) -> list[float]:
    """Median seconds per call of each function in ``fns``.

    The functions are timed in interleaved groups (a, b, c, a, b, c, ...) of about
    ``min_seconds`` each, so load from other processes affects all of them alike."""
    counts = []
    for fn in fns:
        fn()
        t0 = time.perf_counter()
        fn()
        counts.append(max(1, int(min_seconds / max(time.perf_counter() - t0, 1e-7))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, (fn, n) in enumerate(zip(fns, counts)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[i].append((time.perf_counter() - t0) / n)
    return [float(np.median(t)) for t in times]


def sample_planes(size: int, count: int, seed: int = 0) -> np.ndarray:
    """Planes of ``count`` positions taken from random games (varied move numbers)."""
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < count:
        b = Board(size)
        stop = int(rng.integers(0, size * size // 2))
        while b.ply < stop and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        boards.append(b)
    return boards_planes(boards)


def machine_line(ev: OnnxEvaluator) -> str:
    import onnxruntime as ort

    return (f"machine: {os.cpu_count()} CPUs ({cpu_name()}); onnxruntime {ort.__version__}; "
            f"provider {ev.provider}" + ("" if ev.on_gpu else f", {ev.threads} intra-op threads"))


def bench_nn(model=None, device: str = "cpu", threads: int | None = None, size: int = 9,
             batches=BATCHES, repeats: int = 7, seconds: float = 0.2, echo=print) -> list[dict]:
    """Print the table and return its rows."""
    path = model or default_model_path()
    ev = OnnxEvaluator(path, device=device, threads=threads)
    meta = ev.meta
    echo(f"model: {path} ({meta.get('blocks')} blocks x {meta.get('channels')} channels, "
         f"{meta.get('parameters', '?')} parameters), board {size}x{size}")
    echo(machine_line(ev))
    pool = sample_planes(size, max(batches))
    uniform = UniformEvaluator()
    rows = []
    header = (f"{'batch':>5} {'latency ms':>11} {'evals/s':>9} {'raw run/s':>10} "
              f"{'overhead':>8} {'uniform us':>10}")
    echo(header)
    echo("-" * len(header))
    for b in batches:
        x = np.ascontiguousarray(pool[:b])
        t_eval, t_raw, t_uni = _median_seconds(
            [lambda: ev.evaluate(x), lambda: ev.session.run(None, {"planes": x}),
             lambda: uniform.evaluate(x)], repeats, seconds)
        row = {"batch": b, "latency_ms": t_eval * 1e3, "evals_per_s": b / t_eval,
               "raw_evals_per_s": b / t_raw, "overhead_pct": 100 * (t_eval / t_raw - 1),
               "uniform_us": t_uni * 1e6}
        rows.append(row)
        echo(f"{b:>5} {row['latency_ms']:>11.3f} {row['evals_per_s']:>9.0f} "
             f"{row['raw_evals_per_s']:>10.0f} {row['overhead_pct']:>7.1f}% "
             f"{row['uniform_us']:>10.1f}")
    echo("evals/s: OnnxEvaluator.evaluate; raw run/s: bare session.run on the same session "
         "(reference); uniform us: UniformEvaluator.evaluate per batch (no network)")
    return rows
