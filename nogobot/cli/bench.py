"""`nogobot bench ...`: each benchmark prints its figure beside a reference measured in the same
run. The measuring code lives in nogobot.tools.benchmarks, bench_nn and cluster.bench; this module
only parses options."""

from __future__ import annotations

import click

from .engine import baseline_names
from .options import (
    batch_option,
    device_option,
    engine_model,
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

    bench_search(model=engine_model(model), device=device, threads=threads, batch=batch,
                 seconds=seconds, size=size)


@bench.command("lanes")
@model_option()
@threads_option(help="Cores of the search (default: all); two lanes give the network one fewer.")
@click.option("--seconds", default=3.0, show_default=True, help="Search time per position.")
@click.option("--rounds", default=2, show_default=True, type=click.IntRange(1, 20),
              help="Passes over the sample positions, each way.")
@click.option("--batch", "batches", multiple=True, type=click.IntRange(1, 256),
              help="The two-lane search's batch size (repeat it to measure several; default: "
                   "the engine's). One lane keeps the engine's.")
@size_option()
def bench_lanes_cmd(model, threads, seconds, rounds, batches, size) -> None:
    """Playouts/s as in play with two lanes beside one lane, alternated (a CPU bench)."""
    from ..tools.benchmarks import bench_lanes

    try:
        bench_lanes(model=engine_model(model), threads=threads, seconds=seconds, rounds=rounds,
                    size=size, batches=batches)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--threads") from None


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


@bench.command("endgame-build")
@click.option("--source", "sources", multiple=True, required=True, type=click.Path(exists=True),
              help="An SGF file, collection or folder of them (repeatable).")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="The suite's folder (the shipped one: nogobot/tools/endgame_suite).")
@click.option("--per-depth", default=120, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=20261128, show_default=True, type=int)
def bench_endgame_build_cmd(sources, out, per_depth, seed) -> None:
    """Sample the endgame truth suite (30, 32, 34, 36 empty points) from real games."""
    import shlex
    import sys

    from ..tools.endgame import SuiteError, build_suite

    command = "nogobot bench endgame-build " + " ".join(
        [f"--source {shlex.quote(s)}" for s in sources]
        + [f"--out {shlex.quote(out)}", f"--per-depth {per_depth}", f"--seed {seed}"])
    try:
        header = build_suite(list(sources), out, per_depth=per_depth, seed=seed,
                             command=command, log=lambda m: click.echo(m, err=True))
    except SuiteError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(f"{header['positions']} positions ({header['per_depth_found']}) from "
               f"{header['games_distinct']} distinct games; splits {header['splits']}")


@bench.command("endgame-label")
@click.option("--suite", "suite_dir", default=None, type=click.Path(file_okay=False),
              help="The suite's folder (default: the shipped suite).")
@click.option("--nodes", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="The solver's node budget for a position's verdict.")
@click.option("--move-nodes", default=None, type=click.IntRange(min=1),
              help="Nodes for the other winning moves of a won position (default: --nodes).")
@click.option("--depth", "depths", multiple=True, type=int, help="Only these depths.")
@click.option("--limit", default=None, type=click.IntRange(min=1), help="Positions per depth.")
@click.option("--split", default=None, type=click.Choice(["dev", "test"]))
@click.option("--redo", default="none", show_default=True,
              type=click.Choice(["none", "unknown", "all", "open"]),
              help="Relabel positions left unknown by a smaller budget, or all of them; "
                   "'open' settles the open moves of won labels, --move-nodes each.")
def bench_endgame_label_cmd(suite_dir, nodes, move_nodes, depths, limit, split, redo) -> None:
    """Label the suite's positions with the exact solver (resumable: keeps what is done)."""
    import shlex
    import sys

    from ..tools.endgame import SuiteError, shipped_suite
    from ..tools.endgame_label import label_suite

    command = "nogobot bench endgame-label " + shlex.join(sys.argv[3:])
    try:
        counts = label_suite(suite_dir or shipped_suite(), nodes=nodes, move_nodes=move_nodes,
                             depths=set(depths), limit=limit, split=split, redo=redo,
                             command=command, log=lambda m: click.echo(m, err=True))
    except SuiteError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(f"labelled {counts['labelled']}: {counts['win']} won, {counts['loss']} lost, "
               f"{counts['unknown']} unknown for the side to move; {counts['total']} labels")


@bench.command("endgame")
@click.option("--seconds", default=1.0, show_default=True, type=click.FloatRange(min=0.01),
              help="Budget per move: the solver's time (unless --nodes), the players'.")
@click.option("--nodes", default=None, type=click.IntRange(min=1),
              help="Instead: the solver's budget in nodes (the players keep --seconds).")
@click.option("--depth", "depths", multiple=True, type=click.Choice(["30", "32", "34", "36"]),
              help="Only these depths (empty points; repeatable).")
@click.option("--limit", default=None, type=click.IntRange(min=1), help="Positions per depth.")
@click.option("--split", default=None, type=click.Choice(["dev", "test"]))
@click.option("--engine/--no-engine", default=True, show_default=True,
              help="Measure the network player (the shipped net unless --model), as "
                   "`nogobot gtp` plays.")
@click.option("--rave/--no-rave", default=True, show_default=True, help="Measure rave.")
@model_option(help="ONNX network of the player (default: the shipped model).")
@threads_option(help="Network threads (default: all cores).")
@click.option("--suite", "suite_dir", default=None, type=click.Path(),
              help="The suite's folder (default: the shipped suite).")
@click.option("--settle", default=1_000_000, show_default=True, type=click.IntRange(min=0),
              help="Solver nodes to settle a player's move that the labels leave open in a "
                   "won position (0: count it open).")
@click.option("--solver-threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="Threads the solver (and the network player's) searches with at once.")
@click.option("--json", "as_json", is_flag=True, help="The report as JSON on stdout.")
def bench_endgame_cmd(seconds, nodes, depths, limit, split, engine, rave, model, threads,
                      suite_dir, settle, solver_threads, as_json) -> None:
    """The endgame truth suite: per depth, the share the solver proves within the budget
    (beside the recorded baseline), and how often the network player's and rave's moves are
    proven winning moves and their values name the winner. Progress on stderr."""
    from ..tools.endgame import shipped_suite
    from ..tools.endgame_bench import run_cli

    run_cli(suite=suite_dir or shipped_suite(), seconds=seconds, nodes=nodes,
            depths={int(d) for d in depths}, limit=limit, split=split, engine=engine,
            rave=rave, model=resolve_model(model) if (engine and model) else None,
            threads=threads, echo=click.echo, as_json=as_json, settle=settle,
            solver_threads=solver_threads,
            progress=lambda m: click.echo(m, err=True))
