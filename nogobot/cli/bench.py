"""`nogobot bench ...`: each benchmark prints its figure beside a reference measured in the same
run. The measuring code lives in nogobot.tools.benchmarks, bench_nn and cluster.bench; this module
only parses options."""

from __future__ import annotations

import click

from .engine import baseline_names
from .options import (
    batch_option,
    device_option,
    model_option,
    on_ray,
    resolve_model,
    size_option,
    threads_option,
)


@click.group("bench")
def bench() -> None:
    """Benchmarks: each prints its figure beside a reference measured in the same run."""


@bench.command("rules")
@size_option()
@click.option("--seconds", default=3.0, show_default=True, help="Time per measurement.")
@click.option("--repeats", default=5, show_default=True, help="Measurements; the median is shown.")
def bench_rules(size: int, seconds: float, repeats: int) -> None:
    """Random playouts/s of the rules core vs a naive flood-fill reference (one core)."""
    from ..tools.benchmarks import bench_rules as run

    run(size=size, seconds=seconds, repeats=repeats)


@bench.command("rave")
@size_option()
@click.option("--seconds", default=2.0, show_default=True, help="Time per measurement.")
@click.option("--repeats", default=5, show_default=True, help="Measurements; the median is shown.")
@click.option("--game-seconds", default=0.4, show_default=True,
              help="Seconds a move in the self-play games that measure the rate in play.")
@click.option("--games", default=1, show_default=True,
              help="Self-play games measured in play; the median is shown.")
def bench_rave_cmd(size: int, seconds: float, repeats: int, game_seconds: float,
                   games: int) -> None:
    """rave's simulations/s in play (whole self-play games) and at the empty board (one core),
    beside rollout's random UCT playouts/s and the bare policy rollouts/s, and the targets
    (80,000 in play, 50,000 at the empty board)."""
    from ..tools.benchmarks import bench_rave

    bench_rave(size=size, seconds=seconds, repeats=repeats, game_seconds=game_seconds,
               games=games)


@bench.command("search")
@model_option()
@device_option()
@threads_option()
@batch_option()
@click.option("--seconds", default=5.0, show_default=True, help="Search time per position.")
@size_option()
def bench_search_cmd(model, device, threads, batch, seconds, size) -> None:
    """Search playouts/s beside raw network evaluations/s, and playouts per 20 s move."""
    from ..tools.benchmarks import bench_search

    bench_search(model=resolve_model(model), device=device, threads=threads, batch=batch,
                 seconds=seconds, size=size)


@bench.command("time")
@click.option("--main", default=20.0, show_default=True, help="Sudden-death seconds per side.")
@click.option("--per-move", default=None, type=float, help="Instead: a fixed time per move.")
@click.option("--games", default=2, show_default=True, type=click.IntRange(1, 100))
@click.option("--opponent", default="greedy", show_default=True,
              type=click.Choice(baseline_names()))
@model_option(help="ONNX network for nogobot (default: the shipped model).")
@threads_option(default=1, help="Network threads.")
def bench_time_cmd(main, per_move, games, opponent, model, threads) -> None:
    """Real-clock games against a baseline: clock share used and least time left."""
    from ..tools.benchmarks import bench_time

    bench_time(main=main, per_move=per_move, games=games, opponent=opponent,
               model=resolve_model(model), threads=threads)


@bench.command("selfplay")
@model_option()
@click.option("--games", default=8, show_default=True, type=click.IntRange(min=1),
              help="Self-play games per measurement.")
@click.option("--playouts", default=100, show_default=True, type=click.IntRange(min=1))
@size_option()
@click.option("--repeats", default=3, show_default=True, type=click.IntRange(min=1),
              help="Measurements per set-up; the median is shown.")
@click.option("--ray/--no-ray", "with_ray", default=True, show_default=True,
              help="Also measure Ray actors (local Ray, 1 and 2 actors) and the driver's ingest.")
@click.option("--ingest-games", default=2000, show_default=True, type=click.IntRange(min=0),
              help="Synthetic finished games sent through Ray to measure the driver's ingest.")
def bench_selfplay_cmd(model, games, playouts, size, repeats, with_ray, ingest_games) -> None:
    """Self-play games per hour: worker processes (1, 2) beside Ray actors (1, 2) in the same
    run, and finished games per second the driver can take in and write."""
    from ..cluster.bench import bench_selfplay

    with on_ray(None):
        bench_selfplay(model=resolve_model(model), games=games, playouts=playouts, size=size,
                       repeats=repeats, with_ray=with_ray, ingest_games=ingest_games,
                       echo=click.echo)


@bench.command("analysis")
@click.option("--positions", default=200, show_default=True, type=click.IntRange(min=1))
@click.option("--visits", default=100, show_default=True, type=click.IntRange(min=1),
              help="Visits (playouts) per position in both engines.")
@model_option()
@threads_option(help="Network threads of both engines (default: all cores).")
@batch_option()
@click.option("--concurrency", default=16, show_default=True, type=click.IntRange(1, 4096))
@size_option()
@click.option("--seed", default=20261123, show_default=True, type=int)
@click.option("--rounds", default=4, show_default=True, type=click.IntRange(min=1),
              help="Alternate the two engines this many times (a shared machine's load then "
                   "falls on both alike).")
def bench_analysis_cmd(positions, visits, model, threads, batch, concurrency, size, seed,
                       rounds) -> None:
    """Positions/s through `nogobot analysis` against the same positions through `nogobot gtp`
    one by one (same visits, batch and threads), in one run."""
    from ..tools.benchmarks import bench_analysis

    # No --model: both engines pick their own default, as a user starting them would.
    model = resolve_model(model) if model else None
    bench_analysis(positions=positions, visits=visits, model=model, threads=threads,
                   batch=batch, concurrency=concurrency, size=size, seed=seed, rounds=rounds)


@bench.command("nn")
@model_option()
@device_option(default="cpu")
@threads_option(help="onnxruntime intra-op threads (default: all cores).")
@size_option()
@click.option("--repeats", default=7, show_default=True, help="Timed groups; the median is shown.")
def bench_nn_cmd(model: str | None, device: str, threads: int | None, size: int,
                 repeats: int) -> None:
    """Network evaluations/s and latency at batch 1..256 vs the bare session.run."""
    from ..net.inference import ModelError
    from ..tools.bench_nn import bench_nn

    try:
        bench_nn(model=resolve_model(model), device=device, threads=threads, size=size,
                 repeats=repeats, echo=click.echo)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
