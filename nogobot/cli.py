"""The `nogobot` command line: parses options, builds objects, delegates.

Every subcommand imports what it needs lazily, so `nogobot gtp` starts fast (GoGui starts a
second copy of the engine as its rules referee) and the engine path never imports torch.
"""

from __future__ import annotations

import click

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nogobot")
def main() -> None:
    """nogobot: a NoGo engine for tournaments, GoGui and Sabaki."""


@main.group()
def bench() -> None:
    """Benchmarks: each prints its figure beside a reference measured in the same run."""


@bench.command("rules")
@click.option("--size", default=9, show_default=True, help="Board size.")
@click.option("--seconds", default=3.0, show_default=True, help="Time per measurement.")
@click.option("--repeats", default=5, show_default=True, help="Measurements; the median is shown.")
def bench_rules(size: int, seconds: float, repeats: int) -> None:
    """Random playouts/s of the rules core vs a naive flood-fill reference (one core)."""
    from .benchmarks import bench_rules as run

    run(size=size, seconds=seconds, repeats=repeats)


@bench.command("search")
@click.option("--model", default=None, help="ONNX model (default: the shipped model).")
@click.option("--device", default="auto", show_default=True,
              type=click.Choice(["auto", "cpu", "cuda", "tensorrt"]))
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Network threads (default: all cores).")
@click.option("--batch", default=16, show_default=True, type=click.IntRange(1, 1024),
              help="Leaves per network call.")
@click.option("--seconds", default=5.0, show_default=True, help="Search time per position.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
def bench_search_cmd(model, device, threads, batch, seconds, size) -> None:
    """Search playouts/s beside raw network evaluations/s, and playouts per 20 s move."""
    from .benchmarks import bench_search

    bench_search(model=model, device=device, threads=threads, batch=batch, seconds=seconds,
                 size=size)


# Subcommands added by other areas register below this line (keep each one thin).


@main.command("gtp")
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 19),
              help="Initial board size (controllers normally send boardsize).")
@click.option("--seed", default=None, type=int, help="Seed for the move generator.")
@click.option("--time", "seconds", default=None, type=click.FloatRange(min=0),
              help="Sudden-death seconds per game (stored for the time manager).")
@click.option("--quiet", is_flag=True, help="No info log on stderr (errors still logged).")
def gtp_cmd(size: int, seed: int | None, seconds: float | None, quiet: bool) -> None:
    """Speak GTP v2 on stdin/stdout (GoGui, Sabaki, gogui-twogtp, tournaments)."""
    from .gtp import serve

    def agent_factory():
        # Hook for the search issue: build the search player here instead.
        from .agents.greedy import GreedyAgent

        return GreedyAgent(seed=seed)

    # warmup: numba's kernels load in the background while the first commands are answered.
    raise SystemExit(serve(agent_factory, board_size=size, seconds=seconds, quiet=quiet,
                           warmup=True))


@main.command("conformance")
@click.option("--engine", "engine_cmd", default=None,
              help='Engine command line (default: this Python running "-m nogobot gtp").')
@click.option("--verbose", "-v", is_flag=True, help="Show every command and response.")
@click.option("--timeout", default=30.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds to wait for each response.")
@click.option("--no-builtin", is_flag=True, help="Skip the built-in raw framing checks.")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
def conformance_cmd(engine_cmd: str | None, verbose: bool, timeout: float, no_builtin: bool,
                    files: tuple[str, ...]) -> None:
    """Run GTP conformance .tst files (gogui-regress format) against an engine.

    Without FILES: the built-in framing checks and every gtp_conformance/*.tst."""
    from .conformance import main as run

    raise SystemExit(run(engine_cmd, list(files) or None, verbose=verbose, timeout=timeout,
                         builtin=not no_builtin))


@main.command("agent")
@click.argument("name", type=click.Choice(["random", "greedy", "rollout", "alphabeta"]))
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="rollout: playouts per move (default 10000).")
@click.option("--seconds", default=None, type=click.FloatRange(min=0, min_open=True),
              help="rollout/alphabeta: time limit per move (alphabeta default 1.0).")
@click.option("--depth", default=None, type=click.IntRange(min=1),
              help="alphabeta: maximum search depth.")
@click.option("--seed", default=None, type=int, help="Random seed.")
@click.option("--quiet", is_flag=True, help="No info log on stderr (errors still logged).")
def agent_cmd(name: str, playouts: int | None, seconds: float | None, depth: int | None,
              seed: int | None, quiet: bool) -> None:
    """Run a baseline agent as a GTP engine (random, greedy, rollout, alphabeta)."""
    from .agents.registry import make_agent

    try:
        # Built (and its numba kernels loaded) before the first command, not in a timed genmove.
        agent = make_agent(name, playouts=playouts, seconds=seconds, depth=depth, seed=seed)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    from .gtp import serve

    raise SystemExit(serve(lambda: agent, name=f"nogobot-{name}", quiet=quiet))


@main.command("tournament")
@click.argument("spec_path", metavar="SPEC.yaml", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", default=None, type=click.IntRange(min=1),
              help="Games in parallel (default: the spec's jobs, else 1).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Results directory (default tournaments/results/<spec name>); rerun with "
                   "the same one to resume.")
@click.option("--games", default=None, type=click.IntRange(min=1),
              help="Games per pairing (overrides the spec).")
@click.option("--plot", is_flag=True, help="Also write standings.png (needs matplotlib).")
@click.option("--report", is_flag=True, help="Play nothing; print the tables of the results.")
@click.option("--no-check", is_flag=True, help="Skip the start-up check of every engine.")
def tournament_cmd(spec_path: str, jobs: int | None, out: str | None, games: int | None,
                   plot: bool, report: bool, no_check: bool) -> None:
    """Round robin or gauntlet between GTP engines, refereed, with SGF, Elo and resume."""
    from .tournament.runner import TournamentError, run_tournament
    from .tournament.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
        code = run_tournament(spec, out=out, jobs=jobs, games=games, plot=plot,
                              report_only=report, check=not no_check)
    except (SpecError, TournamentError) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"{e.filename or spec_path}: {e.strerror or e}") from None
    raise SystemExit(code)


@main.command("export")
@click.argument("checkpoint", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Output models/NAME.onnx (NAME.yaml sidecar written beside it).")
@click.option("--sizes", default="7,9,13", show_default=True,
              help="Board sizes of the onnxruntime-vs-torch parity check.")
@click.option("--tol", default=1e-4, show_default=True, help="Max abs difference allowed.")
def export_cmd(checkpoint: str, out: str, sizes: str, tol: float) -> None:
    """Export a training CHECKPOINT to ONNX + YAML sidecar (needs the train extra)."""
    try:
        from .train.export import ExportError, export_checkpoint
    except ImportError as e:
        raise click.ClickException(f"export needs the train extra (torch, onnx): {e}") from None
    try:
        meta = export_checkpoint(checkpoint, out, sizes=tuple(int(s) for s in sizes.split(",")),
                                 tol=tol)
    except ExportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {out} and its sidecar: {meta['blocks']}x{meta['channels']}, parity "
               f"{meta['export']['parity_max_abs_diff']:.2e}")


@bench.command("nn")
@click.option("--model", default=None, type=click.Path(dir_okay=False),
              help="ONNX model (default: the default model in models/).")
@click.option("--device", default="cpu", show_default=True,
              type=click.Choice(["auto", "cpu", "cuda", "tensorrt"]))
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="onnxruntime intra-op threads (default: all cores).")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--repeats", default=7, show_default=True, help="Timed groups; the median is shown.")
def bench_nn_cmd(model: str | None, device: str, threads: int | None, size: int,
                 repeats: int) -> None:
    """Network evaluations/s and latency at batch 1..256 vs the bare session.run."""
    from .bench_nn import bench_nn
    from .inference import ModelError

    try:
        bench_nn(model=model, device=device, threads=threads, size=size, repeats=repeats,
                 echo=click.echo)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
