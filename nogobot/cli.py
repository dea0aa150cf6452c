"""The `nogobot` command line: parses options, builds objects, delegates.

Every subcommand imports what it needs lazily, so `nogobot gtp` starts fast (GoGui starts a
second copy of the engine as its rules referee) and the engine path never imports torch.
"""

from __future__ import annotations

import click

import contextlib

from . import __version__


TRAIN_EXTRA = 'pip install torch==2.13.0 -e ".[train]"'
_TRAIN_MODULES = ("torch", "onnx", "onnxscript", "matplotlib", "tqdm")


def _train_extra(what: str, e: ImportError) -> click.ClickException:
    """One line instead of a traceback when a command needs the train extra."""
    missing = getattr(e, "name", None) or str(e)
    return click.ClickException(f"{what} needs the train extra ({missing} is not installed): "
                                f"{TRAIN_EXTRA}")


def _is_train_extra(e: ImportError) -> bool:
    return (getattr(e, "name", None) or "").split(".")[0] in _TRAIN_MODULES


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

    model = _check_model(model)
    bench_search(model=model, device=device, threads=threads, batch=batch, seconds=seconds,
                 size=size)


@bench.command("time")
@click.option("--main", default=20.0, show_default=True, help="Sudden-death seconds per side.")
@click.option("--per-move", default=None, type=float, help="Instead: a fixed time per move.")
@click.option("--games", default=2, show_default=True, type=click.IntRange(1, 100))
@click.option("--opponent", default="greedy", show_default=True,
              type=click.Choice(["random", "greedy", "rollout", "alphabeta"]))
@click.option("--model", default=None, help="ONNX model for nogobot (default: shipped).")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1))
def bench_time_cmd(main, per_move, games, opponent, model, threads) -> None:
    """Real-clock games against a baseline: clock share used and least time left."""
    from .benchmarks import bench_time

    model = _check_model(model)
    bench_time(main=main, per_move=per_move, games=games, opponent=opponent, model=model,
               threads=threads)


@main.command("timeplot")
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--out", default="timeplot.png", show_default=True, help="PNG to write.")
def timeplot_cmd(inputs, out) -> None:
    """Time used per move as a PNG, from tournament SGFs, `nogobot gtp` stderr logs, or a
    tournament results folder (mean per move of each engine)."""
    from . import timeplot

    try:
        series = [timeplot.load(p) for p in inputs]
        path = timeplot.plot(series, out)
    except (ValueError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None
    for ts in series:
        totals = ", ".join(f"{ts.players.get(c, c)} {ts.total(c):.1f} s over "
                           f"{len(ts.used[c])} moves" for c in ts.used if ts.used[c])
        click.echo(f"{ts.source}: {totals}")
    click.echo(f"wrote {path}")


# Subcommands added by other areas register below this line (keep each one thin).


RAY_OPTION = click.option(
    "--ray", "ray_address", is_flag=False, flag_value="auto", default=None,
    metavar="[auto|ADDRESS|local]",
    help="Play the games on a Ray cluster: auto (the cluster this machine joined with `ray "
         "start`; the default for a bare --ray), the head's HOST:PORT, or local (a private Ray "
         "on this machine). Needs the cluster extra.")


@contextlib.contextmanager
def _on_ray(address: str | None):
    """Join the Ray cluster ``address`` (nothing when None) for a command; a cluster problem,
    then or later, becomes a one-line error. Ray is imported only here."""
    from .cluster import ClusterError

    try:
        if address:
            from .cluster.connect import connect

            connect(address)
        yield
    except ClusterError as e:
        raise click.ClickException(str(e)) from None


@bench.command("selfplay")
@click.option("--model", default=None, type=click.Path(dir_okay=False),
              help="ONNX model (default: the shipped model).")
@click.option("--games", default=8, show_default=True, type=click.IntRange(min=1),
              help="Self-play games per measurement.")
@click.option("--playouts", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--repeats", default=3, show_default=True, type=click.IntRange(min=1),
              help="Measurements per set-up; the median is shown.")
@click.option("--ray/--no-ray", "with_ray", default=True, show_default=True,
              help="Also measure Ray actors (local Ray, 1 and 2 actors) and the driver's ingest.")
@click.option("--ingest-games", default=2000, show_default=True, type=click.IntRange(min=0),
              help="Synthetic finished games sent through Ray to measure the driver's ingest.")
def bench_selfplay_cmd(model, games, playouts, size, repeats, with_ray, ingest_games) -> None:
    """Self-play games per hour: worker processes (1, 2) beside Ray actors (1, 2) in the same
    run, and finished games per second the driver can take in and write."""
    from .cluster.bench import bench_selfplay

    with _on_ray(None):
        bench_selfplay(model=_check_model(model), games=games, playouts=playouts, size=size,
                       repeats=repeats, with_ray=with_ray, ingest_games=ingest_games,
                       echo=click.echo)


def _search_evaluator(model, device, threads):
    """The network for the analysis engine and the review, or a one-line click error."""
    from .inference import ModelError, load_evaluator

    path = _check_model(model)
    try:
        return load_evaluator(path, device=device, threads=threads)
    except ModelError as e:
        raise click.ClickException(str(e)) from None


def _analysis_options(fn):
    for opt in reversed([
        click.option("--model", default=None, help="ONNX network (default: the shipped model)."),
        click.option("--device", default="auto", show_default=True,
                     type=click.Choice(["auto", "cpu", "cuda", "tensorrt"])),
        click.option("--threads", default=None, type=click.IntRange(min=1),
                     help="Network threads (default: all cores)."),
        click.option("--batch", default=16, show_default=True, type=click.IntRange(1, 1024),
                     help="Leaves per search step (as `nogobot gtp --batch`)."),
        click.option("--concurrency", default=16, show_default=True,
                     type=click.IntRange(1, 4096),
                     help="Positions searched at once; their leaves share each network call."),
        click.option("--max-tree-mb", default=256, show_default=True,
                     type=click.IntRange(min=1),
                     help="Memory bound of each position's search tree."),
    ]):
        fn = opt(fn)
    return fn


def _analysis_engine(model, device, threads, batch, concurrency, max_tree_mb, visits,
                     report_as, log=None):
    from .analysis import AnalysisEngine, warm_up
    from .mcts import SearchConfig

    evaluator = _search_evaluator(model, device, threads)
    config = SearchConfig(batch_size=batch, max_tree_mb=max_tree_mb)
    warm_up(evaluator, config)
    return AnalysisEngine(evaluator, config=config, concurrency=concurrency, visits=visits,
                          report_as=report_as, log=log)


@main.command("analysis")
@_analysis_options
@click.option("--visits", default=500, show_default=True, type=click.IntRange(min=1),
              help="Visits per position when a query gives no maxVisits.")
@click.option("--report-as", default="sidetomove", show_default=True,
              type=click.Choice(["sidetomove", "black", "white"]),
              help="Whose win rates (and ownership) the answers give.")
@click.option("--quiet", is_flag=True, help="Nothing on stderr.")
def analysis_cmd(model, device, threads, batch, concurrency, max_tree_mb, visits, report_as,
                 quiet) -> None:
    """JSON-lines analysis engine (KataGo's protocol, for NoGo): one query per line on stdin,
    one answer per position on stdout; many positions are searched at once."""
    from . import analysis

    _exit_now(analysis.main(lambda: _analysis_engine(model, device, threads, batch, concurrency,
                                                     max_tree_mb, visits, report_as),
                            quiet=quiet))


@main.command("review")
@click.argument("inputs", nargs=-1, required=True, metavar="GAME.sgf|FOLDER...")
@click.option("-o", "--out", default=None, type=click.Path(file_okay=False),
              help="Folder for the reviewed games (default: review/ inside the first input "
                   "when it is a folder, else beside it).")
@click.option("--visits", default=200, show_default=True, type=click.IntRange(min=1),
              help="Visits per position.")
@click.option("--no-png", is_flag=True, help="No win-rate graph (no matplotlib needed).")
@_analysis_options
def review_cmd(inputs, out, visits, no_png, model, device, threads, batch, concurrency,
               max_tree_mb) -> None:
    """Review games: win rate before and after every move, the engine's preferred move, the
    mistakes; writes an annotated SGF, a PNG graph and a summary per game. A tournament
    results folder reviews every game in it."""
    from . import review

    from pathlib import Path

    first = Path(inputs[0])
    out = out or str((first if first.is_dir() else first.parent) / "review")
    try:
        paths = review.collect(list(inputs))
        if not no_png:
            review.check_plotting()
    except (review.ReviewError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None
    engine = _analysis_engine(model, device, threads, batch, concurrency, max_tree_mb, visits,
                              "black")
    bar = review.ProgressBar(len(paths))
    texts: list[str] = []

    def game_done(rv, text: str) -> None:
        bar.game()
        texts.append(text)
        bar.print(f"reviewed {rv.path}")

    try:
        reviews = review.review_games(paths, engine, out, visits=visits, png=not no_png,
                                      on_position=bar.position, on_game=game_done,
                                      log=bar.print, total_positions=bar.set_positions)
    finally:
        bar.close()
    if not reviews:
        raise click.ClickException("no game could be reviewed")
    if len(texts) > 1:
        from .atomicio import write_atomic

        write_atomic(f"{out}/summary.txt", "\n\n".join(texts) + "\n")
    click.echo("\n\n".join(texts))
    click.echo(f"wrote {len(reviews)} review(s) to {out}/: STEM.review.sgf, "
               + ("STEM.png, " if not no_png else "") + "STEM.txt, STEM.json"
               + (", summary.txt" if len(texts) > 1 else ""))


@bench.command("analysis")
@click.option("--positions", default=200, show_default=True, type=click.IntRange(min=1))
@click.option("--visits", default=100, show_default=True, type=click.IntRange(min=1),
              help="Visits (playouts) per position in both engines.")
@click.option("--model", default=None, help="ONNX network (default: the shipped model).")
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Network threads of both engines (default: all cores).")
@click.option("--batch", default=16, show_default=True, type=click.IntRange(1, 1024))
@click.option("--concurrency", default=16, show_default=True, type=click.IntRange(1, 4096))
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--seed", default=20261123, show_default=True, type=int)
@click.option("--rounds", default=4, show_default=True, type=click.IntRange(min=1),
              help="Alternate the two engines this many times (a shared machine's load then "
                   "falls on both alike).")
def bench_analysis_cmd(positions, visits, model, threads, batch, concurrency, size, seed,
                       rounds) -> None:
    """Positions/s through `nogobot analysis` against the same positions through `nogobot gtp`
    one by one (same visits, batch and threads), in one run."""
    from .benchmarks import bench_analysis

    if model:
        _check_model(model)
    bench_analysis(positions=positions, visits=visits, model=model, threads=threads,
                   batch=batch, concurrency=concurrency, size=size, seed=seed, rounds=rounds)


@main.command("botzone")
@click.option("--model", default=None, help="ONNX network (default: the shipped model).")
@click.option("--agent", "agent_name", default="mcts", show_default=True,
              type=click.Choice(["mcts", "greedy"]),
              help="Move generator: the network search, or the one-ply heuristic (no network).")
@click.option("--move-time", default=1.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Botzone's time limit per move, in seconds.")
@click.option("--margin", default=0.2, show_default=True, type=click.FloatRange(min=0),
              help="Seconds kept back from --move-time (input, output, the platform's lag).")
@click.option("--keep-running/--no-keep-running", default=True, show_default=True,
              help="Botzone's keep-running mode (print its marker and wait for the next "
                   "request) or answer once and exit.")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="Network threads.")
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="Also stop the search after this many playouts (tests).")
@click.option("--seed", default=None, type=int, help="Seed for the move generator.")
@click.option("--quiet", is_flag=True, help="Nothing on stderr.")
def botzone_cmd(model, agent_name, move_time, margin, keep_running, threads, playouts, seed,
                quiet) -> None:
    """Play on Botzone (NoGo): JSON or simple interaction, keep-running mode."""
    import sys

    from . import warmup
    from .botzone import serve_botzone

    model_path = _check_model(model) if agent_name == "mcts" else None

    def agent_factory():
        if agent_name == "greedy":
            from .agents.greedy import GreedyAgent

            return GreedyAgent(seed=seed)
        from .inference import load_evaluator
        from .player import MCTSAgent

        from .mcts import SearchConfig

        evaluator = load_evaluator(model_path, device="cpu", threads=threads)
        warmup.wait("search", log=(lambda m: None) if quiet else None)
        # Botzone may cap memory at 256 MB, and the numba kernels plus onnxruntime alone take
        # ~200 MB: a 48 MB tree (~80k playouts) and a 5 MB evaluation cache are ample for 1 s.
        return MCTSAgent(evaluator, config=SearchConfig(max_tree_mb=48, cache_entries=1 << 14),
                         playouts=playouts, seed=seed, log=None if quiet else sys.stderr)

    raise SystemExit(serve_botzone(agent_factory, move_time=move_time, margin=margin,
                                   keep_running=keep_running, quiet=quiet, seed=seed))


class _TrainGroup(click.Group):
    """`nogobot train CONFIG.yaml ...` runs training; `nogobot train report DIR` reports."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@main.group("train", cls=_TrainGroup)
def train_group() -> None:
    """Self-play training (NoGoZero+ loop). Usage: `nogobot train CONFIG.yaml --run-dir DIR`
    (rerun the same command to resume) or `nogobot train report DIR`."""


@train_group.command("run")
@click.argument("config_path", metavar="CONFIG.yaml", type=click.Path(dir_okay=False))
@click.option("--run-dir", required=True, type=click.Path(file_okay=False),
              help="Run directory (created; rerun with the same one to resume).")
@click.option("--device", default="auto", show_default=True,
              type=click.Choice(["auto", "cpu", "cuda"]), help="Training device.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Self-play worker processes (one single-threaded network each).")
@click.option("--from-games", default=None, type=click.Path(exists=True),
              help="Train supervised on these game records (SGF files or .npz shards, a file "
                   "or a directory) before self-play.")
@click.option("--from-games-steps", default=1000, show_default=True,
              type=click.IntRange(min=1), help="Training steps on --from-games.")
@click.option("--generations", default=None, type=click.IntRange(min=0),
              help="Stop after this generation (overrides the config; 0 = initialise only).")
@click.option("--max-minutes", default=None, type=click.FloatRange(min=0),
              help="Start no new phase after this many minutes (rerun to continue).")
@click.option("--torch-threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="torch intra-op threads for training.")
@RAY_OPTION
@click.option("--ray-actors", default=None, type=click.IntRange(min=1),
              help="With --ray: at most this many self-play actors (default: one per CPU, or "
                   "per GPU with --ray-device cuda, of the whole cluster).")
@click.option("--ray-device", default="cpu", show_default=True, type=click.Choice(["cpu", "cuda"]),
              help="With --ray: self-play actors on CPUs, or one GPU each (torch or "
                   "onnxruntime-CUDA; set selfplay.concurrent_games to 64-256).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a config setting, e.g. --set network.stages.0.garb=false "
                   "(repeatable; the run directory keeps the effective config).")
def train_run_cmd(config_path, run_dir, device, workers, from_games, from_games_steps,
                  generations, max_minutes, torch_threads, ray_address, ray_actors, ray_device,
                  overrides) -> None:
    """Train from self-play with CONFIG.yaml in --run-dir (resumable, even after kill -9)."""
    from pathlib import Path

    try:
        from .train import require_torch

        require_torch()  # the loop imports torch later; say so now, in one line
        from .train.config import ConfigError, load_config
        from .train.loop import train_command
    except ImportError as e:
        raise _train_extra("training", e) from None
    try:
        cfg = load_config(config_path, overrides)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    init = cfg.init_checkpoint
    if init and not Path(init).exists() and not (Path(run_dir) / "state.json").exists():
        hint = (" (run `python -m nogobot.train.bootstrap --out runs/bootstrap/boot.onnx` "
                "first: it writes it in about 9 minutes)" if "bootstrap" in init else "")
        raise click.ClickException(f"{config_path}: init_checkpoint {init}: no such file{hint}")
    with _on_ray(ray_address):
        backend = None
        if ray_address:
            from .cluster.training import RayBackend

            backend = RayBackend(ray_device, ray_actors)
        try:
            train_command(cfg, run_dir, device=device, workers=workers, config_path=config_path,
                          from_games=from_games, from_games_steps=from_games_steps,
                          generations=generations, max_minutes=max_minutes,
                          torch_threads=torch_threads, backend=backend)
        except (FileNotFoundError, ValueError) as e:
            raise click.ClickException(str(e)) from None


@train_group.command("report")
@click.argument("run_dir", metavar="DIR|LEDGER.yaml", type=click.Path())
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="PNG to write (default DIR/report.png, or LEDGER.png).")
def train_report_cmd(run_dir, out) -> None:
    """Draw loss curves and Elo against self-play games of a run as PNG; given the campaign's
    strength ledger (models/ledger.yaml), Elo against self-play games of every net in it."""
    from .train.report import ReportError, draw_ledger, draw_report, text_summary

    try:
        if run_dir.endswith((".yaml", ".yml")):
            path = draw_ledger(run_dir, out)
            click.echo(f"wrote {path}")
            return
        click.echo(text_summary(run_dir))
        path = draw_report(run_dir, out)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    except ImportError as e:
        if not _is_train_extra(e):
            raise
        raise _train_extra("train report", e) from None
    click.echo(f"wrote {path}")


@train_group.command("snapshot")
@click.argument("run_dir", metavar="RUN_DIR", type=click.Path(file_okay=False))
@click.argument("folder", metavar="FOLDER", type=click.Path(file_okay=False))
@click.option("--note", default="", help="A line kept in FOLDER/state.yaml.")
def train_snapshot_cmd(run_dir, folder, note) -> None:
    """Keep a run's resumable state (best net + optimiser, next stages, curriculum position) in
    a small campaign FOLDER; a config with `init_checkpoint: FOLDER` goes on from it."""
    from .train.campaign import write_snapshot

    try:
        state = write_snapshot(run_dir, folder, note)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{folder}: generator stage {state['stage']} ({state['best_net']}), stages kept "
               f"{state['stages_kept']}, {state['selfplay_games']} self-play games, "
               f"{state['generations']} generations")


@train_group.command("match")
@click.argument("a")
@click.argument("b")
@click.option("--games", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--playouts", default=200, show_default=True, type=click.IntRange(min=1),
              help="Playouts per move of the network players.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--opening-temperature-moves", default=4, show_default=True,
              type=click.IntRange(min=0), help="Plies sampled by visits so games differ.")
@click.option("--seed", default=0, show_default=True, type=int)
def train_match_cmd(a, b, games, playouts, size, opening_temperature_moves, seed) -> None:
    """In-process match A vs B (each an .onnx model searched at fixed playouts, or a baseline
    agent name: random, greedy, rollout, alphabeta); colours alternate."""
    from .train.match import make_player, play_match

    for spec in (a, b):
        if spec.endswith(".onnx"):
            _check_model(spec)
    try:
        pa = make_player(a, size, playouts, opening_temperature_moves, seed)
        pb = make_player(b, size, playouts, opening_temperature_moves, seed + 1)
    except (ValueError, TypeError) as e:  # an unknown agent or option
        raise click.ClickException(str(e)) from None
    res = play_match(pa, pb, games, size,
                     progress=lambda r: click.echo(f"  game {r.games}: {r.wins}-{r.losses}",
                                                   err=True))
    click.echo(res.summary())


@train_group.command("ladder")
@click.argument("players", nargs=-1, required=True, metavar="LABEL=PLAYER...")
@click.option("--games", default=20, show_default=True, type=click.IntRange(min=1),
              help="Games per pairing (colours alternate).")
@click.option("--playouts", default=200, show_default=True, type=click.IntRange(min=1),
              help="Playouts per move of the network players.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--opening-temperature-moves", default=4, show_default=True,
              type=click.IntRange(min=0), help="Plies sampled by visits so games differ.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Pairings played at once, one process each.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False),
              help="Also write the results (wins matrix, matches, Elo) to this JSON file.")
@RAY_OPTION
def train_ladder_cmd(players, games, playouts, size, opening_temperature_moves, workers, seed,
                     json_out, ray_address) -> None:
    """Round robin of several players with Bradley-Terry Elo (anchored on the first). PLAYER is
    an .onnx model (searched at --playouts) or a baseline agent name as for `train match`;
    LABEL= is optional (default: the file stem), e.g. full=runs/abl-full/nets/best.onnx."""
    import json
    from pathlib import Path

    from .train.match import run_ladder

    entries = []
    for item in players:
        label, sep, spec = item.partition("=")
        if not sep or ":" in label or "/" in label:  # no label ("alphabeta:seconds=0.5")
            label, spec = Path(item).stem if item.endswith(".onnx") else item, item
        if spec.endswith(".onnx"):
            _check_model(spec)
        entries.append((label, spec))
    with _on_ray(ray_address):
        executor = None
        if ray_address:  # every game of every pairing on the cluster's actors
            from .cluster.training import LadderOnRay, RayBackend

            executor = LadderOnRay(RayBackend())
        try:
            res = run_ladder(entries, games, size, playouts, opening_temperature_moves, seed,
                             workers, progress=lambda r: click.echo(f"  {r.summary()}", err=True),
                             executor=executor)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
    click.echo(res.table())
    if json_out:
        data = {"players": dict(entries), "games_per_pairing": games, "playouts": playouts,
                "size": size, "wins": res.wins.tolist(),
                "elo": res.ratings.elo, "ci95": res.ratings.ci95,
                "matches": [{"a": m.a, "b": m.b, "wins": m.wins, "losses": m.losses,
                             "mean_plies": sum(m.plies) / max(len(m.plies), 1)} for m in res.matches]}
        Path(json_out).write_text(json.dumps(data, indent=1))


@main.command("selfplay")
@click.option("--model", default=None, type=click.Path(dir_okay=False),
              help="ONNX model (default: the shipped model).")
@click.option("--games", required=True, type=click.IntRange(min=1), help="Games to play.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Directory for the dataset (gNNNNN.sgf + gNNNNN.npz per game).")
@click.option("--playouts", default=200, show_default=True, type=click.IntRange(min=1),
              help="Playouts per move (every move is a full search and a policy target).")
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--solver/--no-solver", default=True, show_default=True,
              help="Exact endgame solver in the search (slow on tiny boards).")
@click.option("--concurrent-games", default=1, show_default=True, type=click.IntRange(1, 4096),
              help="Games per worker that share each network call (GPU: 64-256).")
def selfplay_cmd(model, games, out, playouts, size, workers, seed, solver,
                 concurrent_games) -> None:
    """Write a self-play game dataset (SGF plus training arrays), NoGoZero+ settings."""
    from pathlib import Path

    from .inference import ModelError

    model = _check_model(model)
    try:
        from .train import require_torch

        require_torch()  # the game writer needs it (via train.bootstrap)
        from .train.config import SelfPlayConfig
        from .train.loop import Progress
        from .train.selfplay import generate_games
    except ImportError as e:
        if not _is_train_extra(e):
            raise
        raise _train_extra("selfplay", e) from None

    sp = SelfPlayConfig(playouts=playouts, playout_cap_randomisation=False, use_solver=solver,
                        concurrent_games=concurrent_games)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    existing = sorted(out_dir.glob("g*.npz"))
    start = len(existing)
    stems = [out_dir / f"g{i:05d}" for i in range(start, start + games)]
    bar = Progress("self-play", games)
    try:
        n = generate_games(model, stems, size, sp, seed + start, workers=workers, progress=bar)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    finally:
        bar.close()
    click.echo(f"wrote {n} games to {out_dir} ({start + n} in total)")


def _check_model(model: str | None) -> str:
    """Validate the model's files now (``inference.check_model``: sidecar, checksum, the ONNX
    graph's input and outputs; a few ms, no onnxruntime), so a missing, truncated or mismatched
    model stops the command with one line naming the file before it speaks its protocol. The
    network itself loads later (in the background on a clock, else on the first genmove)."""
    from .modelfile import ModelError, check_model, default_model_path

    path = str(model or default_model_path())
    try:
        check_model(path)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    return path


def _parse_byoyomi(text: str):
    """``MAIN:PERIOD:COUNT`` -> a byo-yomi TimeControl; click's one-line error otherwise."""
    from .timecontrol import TimeControl

    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError("expected three values")
        main_s, period, count = float(parts[0]), float(parts[1]), int(parts[2])
        if count < 1 or period <= 0:
            raise ValueError("PERIOD must be > 0 and COUNT >= 1")
        return TimeControl("byoyomi", main_s, period, count)
    except ValueError as e:
        raise click.BadParameter(f"{text!r}: {e}; expected MAIN:PERIOD:COUNT (main seconds, "
                                 "seconds per period, periods), e.g. 300:30:5",
                                 param_hint="'--byoyomi'") from None


@main.command("gtp")
@click.option("--model", default=None, help="ONNX network (default: the shipped model).")
@click.option("--device", default="auto", show_default=True,
              type=click.Choice(["auto", "cpu", "cuda", "tensorrt"]))
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Network threads (default: all cores).")
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 19),
              help="Initial board size (controllers normally send boardsize).")
@click.option("--time", "seconds", default=None, type=click.FloatRange(min=0),
              help="Sudden-death seconds per game for this engine, e.g. 900 (CCGC), kept on the "
                   "engine's own clock from clear_board; time_settings/time_left override.")
@click.option("--byoyomi", default=None, metavar="MAIN:PERIOD:COUNT",
              help="Japanese byo-yomi, e.g. 300:30:5.")
@click.option("--per-move", default=None, type=click.FloatRange(min=0, min_open=True),
              help="A fixed time per move in seconds (Botzone style).")
@click.option("--seconds", "move_seconds", default=5.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Thinking time per move when there is no time limit (from when the "
                   "search is ready).")
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="Search exactly N playouts per move whatever the clock (a large N can "
                   "lose on time; only moves, proven results and the endgame solver answer "
                   "sooner). For tests, analysis and reproducible runs.")
@click.option("--lag-buffer", default=0.25, show_default=True, type=click.FloatRange(min=0),
              help="Seconds kept back per move for transmission lag.")
@click.option("--ponder", is_flag=True, help="Think on the opponent's time.")
@click.option("--batch", default=16, show_default=True, type=click.IntRange(1, 1024),
              help="Leaves per network call.")
@click.option("--max-tree-mb", default=None, type=click.IntRange(min=1),
              help="Memory bound of the search tree in MB (tree reuse may hold two), "
                   "default 1024.")
@click.option("--agent", "agent_name", default="mcts", show_default=True,
              type=click.Choice(["mcts", "greedy"]),
              help="Move generator: the network search, or the one-ply heuristic (no network).")
@click.option("--seed", default=None, type=int, help="Seed for the move generator.")
@click.option("--live-gfx", default="auto", show_default=True,
              type=click.Choice(["auto", "on", "off"]),
              help="GoGui live graphics on stderr while thinking (auto: when GoGui is attached).")
@click.option("--quiet", is_flag=True, help="No info log on stderr (errors still logged).")
def gtp_cmd(model, device, threads, size, seconds, byoyomi, per_move, move_seconds, playouts,
            lag_buffer, ponder, batch, max_tree_mb, agent_name, seed, live_gfx, quiet) -> None:
    """Speak GTP v2 on stdin/stdout (GoGui, Sabaki, gogui-twogtp, tournaments)."""
    import sys

    from . import warmup
    from .gtp import serve
    from .timecontrol import TimeControl, TimePolicy

    time_control = None
    try:
        if byoyomi:
            time_control = _parse_byoyomi(byoyomi)
        elif per_move:
            time_control = TimeControl.per_move(per_move)
        elif seconds is not None:
            time_control = TimeControl.sudden_death(seconds)
    except ValueError as e:
        raise click.BadParameter(f"bad time control: {e}") from None
    policy = TimePolicy(lag_buffer=lag_buffer, no_limit_seconds=move_seconds)
    model_path = _check_model(model) if agent_name == "mcts" else None

    def agent_factory():
        if agent_name == "greedy":
            from .agents.greedy import GreedyAgent

            return GreedyAgent(seed=seed)
        from .inference import load_evaluator
        from .mcts import SearchConfig
        from .player import MCTSAgent

        config = SearchConfig(batch_size=batch)
        if max_tree_mb:
            config.max_tree_mb = max_tree_mb
        evaluator = load_evaluator(model_path, device=device, threads=threads)
        # A search never starts before its kernels are compiled (the cold first run): without a
        # clock its time then starts when the search is ready.
        warmup.wait("search")
        return MCTSAgent(evaluator, config=config, playouts=playouts, seconds=move_seconds,
                         seed=seed, log=None if quiet else sys.stderr)

    # numba's kernels load (or, on a fresh install, compile) in the background while the first
    # commands are answered; a cold cache is announced once on stderr.
    status = serve(agent_factory, board_size=size, quiet=quiet,
                   warmup="search" if agent_name == "mcts" else "rules",
                   time_control=time_control, time_policy=policy, ponder=ponder,
                   live_gfx=live_gfx, network=agent_name == "mcts")
    _exit_now(status)


@main.command("warmup")
@click.option("--model", default=None, help="ONNX network to check and load (default: shipped).")
@click.option("--agents/--no-agents", default=True, show_default=True,
              help="Also compile the baseline agents' kernels (rollout, alphabeta).")
def warmup_cmd(model, agents) -> None:
    """Compile numba's kernels once after installing (else the first move pays for it) and
    check that the network loads. Safe to rerun: a warm install takes well under a second."""
    import time

    from . import warmup
    from .inference import ModelError, OnnxEvaluator

    path = _check_model(model)
    t0 = time.perf_counter()
    try:
        ev = OnnxEvaluator(path, device="cpu", threads=1)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"network {path}: loads ({ev.describe()}, {time.perf_counter() - t0:.2f} s)")
    kinds = [("rules", "rules"), ("search", "search (features, MCTS)"),
             ("later", "tree reuse and endgame solver")]
    if agents:
        kinds.append(("agents", "baseline agents'"))
    for kind, label in kinds:
        was_cold = warmup.cold(kind)
        seconds = warmup.load(kind, log=lambda m: None)
        how = "compiled" if was_cold else "loaded from numba's cache" if was_cold is False \
            else "ready"
        click.echo(f"{label} kernels: {how} in {seconds:.1f} s")
    click.echo("ready: `nogobot gtp` now starts its first search at once")


def _exit_now(status: int) -> None:
    """Flush and leave at once. A background thread (numba compiling on a cold cache, the
    network preloading) may still be running after quit/EOF; normal interpreter shutdown would
    then abort the process (SIGABRT) instead of exiting with ``status``."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


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

    raise SystemExit(serve(lambda: agent, name=f"nogobot-{name}", quiet=quiet, network=False))


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
@RAY_OPTION
@click.option("--reserve-timeout", default=60.0, show_default=True,
              type=click.FloatRange(min=1),
              help="With --ray: seconds a game may wait for its cores while other work holds "
                   "them (waiting behind this tournament's own games has no limit).")
def tournament_cmd(spec_path: str, jobs: int | None, out: str | None, games: int | None,
                   plot: bool, report: bool, no_check: bool, ray_address: str | None,
                   reserve_timeout: float) -> None:
    """Round robin or gauntlet between GTP engines, refereed, with SGF, Elo and resume."""
    from .tournament.runner import TournamentError, run_tournament
    from .tournament.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
        ray_address = None if report else ray_address
        with _on_ray(ray_address):
            executor = None
            if ray_address:  # each game on a node that reserved its cores
                from .cluster.tournament import RayGames

                executor = RayGames(jobs, reserve_timeout)
            code = run_tournament(spec, out=out, jobs=jobs, games=games, plot=plot,
                                  report_only=report, check=not no_check, executor=executor)
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
        raise _train_extra("export", e) from None
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

    model = _check_model(model)
    try:
        bench_nn(model=model, device=device, threads=threads, size=size, repeats=repeats,
                 echo=click.echo)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
