"""`nogobot bench rules`: speed of the rules core beside a naive reference, in one run.

Figures are medians of several timed windows (the machines we run on are shared and noisy); the
ratio to the naive flood-fill reference measured in the same process is what to compare.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable


def _rate(run: Callable[[int], object], seconds: float, repeats: int) -> tuple[float, list[float]]:
    """Median calls/s of ``run(n)`` over ``repeats`` windows of about ``seconds`` each."""
    run(1)  # compile / warm caches outside the timed windows
    n = 1
    while True:  # calibrate a batch that takes ~seconds
        t0 = time.perf_counter()
        run(n)
        dt = time.perf_counter() - t0
        if dt >= seconds / 4 or n >= 1 << 24:
            break
        n *= 4
    n = max(1, int(n * seconds / max(dt, 1e-9)))
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(n)
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates), rates


def machine_line() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, " \
           f"Python {platform.python_version()}"


def bench_rules(size: int = 9, seconds: float = 3.0, repeats: int = 5) -> dict:
    """Print and return random playouts/s: incremental kernels vs naive flood-fill scans."""
    import numba

    from .board import Board, random_playouts
    from .naive_rules import naive_random_playouts

    numba.set_num_threads(1)
    board = Board(size)
    g = board.geo
    seed = [0]

    def fast(n: int) -> None:
        seed[0] += 1
        random_playouts(*board.arrays(), g.nbr, g.zobrist, n, seed[0])

    def naive(n: int) -> None:
        seed[0] += 1
        naive_random_playouts(board.stones, g.nbr, board.to_move, n, seed[0])

    print(f"nogobot bench rules: uniformly random playouts from the empty {size}x{size} board, "
          f"one core ({machine_line()})")
    fast_rate, fast_all = _rate(fast, seconds, repeats)
    naive_rate, naive_all = _rate(naive, seconds / 2, max(3, repeats // 2))
    print(f"  incremental kernels (board.py)   {fast_rate:12,.0f} playouts/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in fast_all)})")
    print(f"  naive flood-fill full-board scan {naive_rate:12,.0f} playouts/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in naive_all)})")
    print(f"  speed-up {fast_rate / naive_rate:.1f}x; target >= 20,000 playouts/s on 9x9: "
          f"{'met' if fast_rate >= 20000 or size != 9 else 'NOT met'}")
    return {"playouts_per_s": fast_rate, "naive_playouts_per_s": naive_rate}
