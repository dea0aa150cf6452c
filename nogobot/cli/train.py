"""Making networks: `train` (run, bootstrap, report, snapshot, patterns, calibration; average, grow
and quantize live in netfiles.py, match and ladder in matches.py) and `selfplay` (a game dataset).

Everything that needs torch imports it inside the command, after ``require_torch`` has turned a
missing train extra into one line."""

from __future__ import annotations

import click

from .options import (
    comma_ints,
    is_train_extra,
    model_option,
    on_ray,
    ray_option,
    resolve_model,
    size_option,
    train_extra,
)


class TrainGroup(click.Group):
    """`nogobot train CONFIG.yaml ...` runs training; `nogobot train report DIR` reports."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("train", cls=TrainGroup)
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
@click.option("--window-from", default=None, type=click.Path(file_okay=False, exists=True),
              help="A new run starts with this run directory's newest replay window of games "
                   "(to go on from its net without training on a near-empty window).")
@click.option("--generations", default=None, type=click.IntRange(min=0),
              help="Stop after this generation (overrides the config; 0 = initialise only).")
@click.option("--max-minutes", default=None, type=click.FloatRange(min=0),
              help="Start no new phase after this many minutes (rerun to continue).")
@click.option("--torch-threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="torch intra-op threads for training.")
@ray_option
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
                  window_from, generations, max_minutes, torch_threads, ray_address, ray_actors,
                  ray_device, overrides) -> None:
    """Train from self-play with CONFIG.yaml in --run-dir (resumable, even after kill -9)."""
    from pathlib import Path

    try:
        from ..train import require_torch

        require_torch()  # the loop imports torch later; say so now, in one line
        from ..train.config import ConfigError, load_config
        from ..train.loop import train_command
    except ImportError as e:
        raise train_extra("training", e) from None

    try:
        cfg = load_config(config_path, overrides)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    init = cfg.init_checkpoint
    if init and not Path(init).exists() and not (Path(run_dir) / "state.json").exists():
        from ..train.bootstrap import bootstrap_if_default

        # The bootstrap's own checkpoint is written on the spot (a fresh clone has none).
        if not bootstrap_if_default(init, echo=click.echo):
            raise click.ClickException(f"{config_path}: init_checkpoint {init}: no such file")
    with on_ray(ray_address):
        backend = None
        if ray_address:
            from ..cluster.training import RayBackend

            backend = RayBackend(ray_device, ray_actors)
        try:
            train_command(cfg, run_dir, device=device, workers=workers, config_path=config_path,
                          from_games=from_games, from_games_steps=from_games_steps,
                          generations=generations, max_minutes=max_minutes,
                          torch_threads=torch_threads, backend=backend,
                          window_from=window_from)
        except (FileNotFoundError, ValueError) as e:
            raise click.ClickException(str(e)) from None


@train_group.command("bootstrap")
@click.option("--out", default="models/nogobot-b6c32-boot.onnx", show_default=True,
              type=click.Path(dir_okay=False), help="ONNX network to write (sidecar beside it).")
@click.option("--checkpoint", default="runs/bootstrap/model.pt", show_default=True,
              type=click.Path(dir_okay=False),
              help="torch checkpoint to write (a training config's init_checkpoint).")
@click.option("--blocks", default=6, show_default=True, type=click.IntRange(min=1))
@click.option("--channels", default=32, show_default=True, type=click.IntRange(min=1))
@click.option("--sizes", default="7,9,11", show_default=True, help="Board sizes of the games.")
@click.option("--games", default="2000,3000,1000", show_default=True,
              help="Greedy self-play games per board size.")
@click.option("--minutes", default=8.0, show_default=True, type=click.FloatRange(min=0),
              help="Training wall time.")
@click.option("--batch", default=128, show_default=True, type=click.IntRange(min=1))
@click.option("--lr", default=2e-3, show_default=True, type=click.FloatRange(min=0))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--eval-games", default=100, show_default=True, type=click.IntRange(min=1),
              help="Games of the raw policy against random and greedy, for the sidecar.")
def train_bootstrap_cmd(out, checkpoint, blocks, channels, sizes, games, minutes, batch, lr,
                        seed, eval_games) -> None:
    """Train a first network from greedy (one-ply) self-play, no search: about 9 minutes on
    one CPU thread. Writes --checkpoint (a config's init_checkpoint) and --out."""
    try:
        from ..train import require_torch

        require_torch()
        from ..train.bootstrap import BootstrapSettings, run
    except ImportError as e:
        raise train_extra("train bootstrap", e) from None

    settings = BootstrapSettings(out=out, checkpoint=checkpoint, blocks=blocks,
                                 channels=channels, sizes=comma_ints(sizes),
                                 games=comma_ints(games), minutes=minutes, batch=batch, lr=lr,
                                 seed=seed, eval_games=eval_games)
    try:
        run(settings)
    except ValueError as e:
        raise click.ClickException(str(e)) from None


@train_group.command("report")
@click.argument("run_dir", metavar="DIR|LEDGER.yaml", type=click.Path())
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="PNG to write (default DIR/report.png, or LEDGER.png).")
@click.option("--markdown", "page", default=None, metavar="PAGE", type=click.Path(dir_okay=False),
              help="With LEDGER.yaml: write its tables into PAGE between the page's ledger "
                   "tables markers (docs/results.md) instead of drawing; '-' prints them.")
def train_report_cmd(run_dir, out, page) -> None:
    """Draw loss curves and Elo against self-play games of a run as PNG; given the campaign's
    strength ledger (models/ledger.yaml), Elo against self-play games of every net in it, or
    with --markdown its tables."""
    from ..train.report import ReportError, draw_ledger, draw_report, text_summary

    try:
        if page is not None:
            if not run_dir.endswith((".yaml", ".yml")):
                raise ReportError("--markdown takes the ledger (LEDGER.yaml), not a run directory")
            from ..train.ledger_tables import ledger_markdown, write_ledger_tables
            from ..train.report import read_ledger

            if page == "-":
                click.echo(ledger_markdown(read_ledger(run_dir), run_dir), nl=False)
            elif write_ledger_tables(run_dir, page):
                click.echo(f"wrote the ledger's tables into {page}")
            else:
                click.echo(f"{page}: the ledger's tables are up to date")
            return
        if run_dir.endswith((".yaml", ".yml")):
            path = draw_ledger(run_dir, out)
            click.echo(f"wrote {path}")
            return
        click.echo(text_summary(run_dir))
        path = draw_report(run_dir, out)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    except ImportError as e:
        if not is_train_extra(e):
            raise
        raise train_extra("train report", e) from None
    click.echo(f"wrote {path}")


@train_group.command("snapshot")
@click.argument("run_dir", metavar="RUN_DIR", type=click.Path(file_okay=False))
@click.argument("folder", metavar="FOLDER", type=click.Path(file_okay=False))
@click.option("--note", default="", help="A line added to the note in FOLDER/state.yaml (the line's history).")
def train_snapshot_cmd(run_dir, folder, note) -> None:
    """Keep a run's resumable state (best net + optimiser, next stages, curriculum position) in
    a small campaign FOLDER; a config with `init_checkpoint: FOLDER` goes on from it."""
    from ..train.campaign import write_snapshot

    try:
        state = write_snapshot(run_dir, folder, note)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{folder}: generator stage {state['stage']} ({state['best_net']}), stages kept "
               f"{state['stages_kept']}, {state['selfplay_games']} self-play games, "
               f"{state['generations']} generations")


@train_group.command("patterns")
@click.argument("games", nargs=-1, required=True, type=click.Path(exists=True),
                metavar="GAMES...")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="The table to write (.npz); nogobot/agents/rave-patterns.npz is the shipped one.")
@click.option("--last-generations", default=None, type=click.IntRange(min=1),
              help="Only the newest N generation folders of each run.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(min=2))
@click.option("--min-count", default=5, show_default=True, type=click.IntRange(min=1),
              help="Patterns seen fewer times share their kind's unknown weight.")
@click.option("--epochs", default=8, show_default=True, type=click.IntRange(min=1))
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1))
def train_patterns_cmd(games, out, last_generations, size, min_count, epochs, threads) -> None:
    """Fit rave's 3x3 pattern table (its tree priors, `--set pattern_prior=S`) to the visit
    distributions of self-play GAMES (run directories, generation folders or .npz shards)."""
    try:
        from ..train.patterns import fit_table, game_shards, pattern_examples

        shards = game_shards(games, last_generations)
        if not shards:
            raise click.ClickException(f"no game shards under {', '.join(games)}")
        examples = pattern_examples(shards, size)
        click.echo(f"{len(examples['codes'])} positions from {len(shards)} games", err=True)
        table, report = fit_table(examples, min_count=min_count, epochs=epochs,
                                  threads=threads, log=lambda s: click.echo(s, err=True))
        table.save(out)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    except ImportError as e:
        if not is_train_extra(e):
            raise
        raise train_extra("train patterns", e) from None
    click.echo(f"wrote {out}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else
                                            f"{k} {v}" for k, v in report.items()))


@train_group.command("calibration")
@click.argument("records", nargs=-1, required=True, type=click.Path(exists=True),
                metavar="RECORDS...")
@model_option()
@size_option(help="Board size measured (games of other sizes are skipped).")
@click.option("--bands", default=None, metavar="B1,B2,...",
              help="Lower bounds of the phases' empty-point bands [default on 9x9: 61,41,29, "
                   "i.e. 81-61, 60-41, 40-29, 28-0; scaled to the area on other sizes].")
@click.option("--player", "players", multiple=True, metavar="NAME",
              help="Only positions with this player to move (SGF PB/PW; repeatable), e.g. the "
                   "engine's own view of its games.")
@click.option("--fit-from", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Also score the fixes fitted in an earlier --json (e.g. fitted on "
                   "self-play, scored on tournament games).")
@click.option("--baseline", default=None, metavar="MODEL",
              help="Also score this network (an .onnx file or a shipped net's name) on the "
                   "same positions: each phase's AUC and log loss differences, with 95% "
                   "intervals from resampling the games.")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="onnxruntime threads.")
@click.option("--batch", default=256, show_default=True, type=click.IntRange(min=1),
              help="Positions per network call.")
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False),
              help="Write the numbers (bins, scores, fitted fixes) to this JSON file.")
@click.option("--plot", "plot_out", default=None, type=click.Path(dir_okay=False),
              help="Draw reliability curves per phase to this PNG (needs matplotlib).")
def train_calibration_cmd(records, model, size, bands, players, fit_from, baseline, threads,
                          batch, json_out, plot_out) -> None:
    """Measure the value head's calibration: its predicted win probability against who won,
    by game phase, over game RECORDS (.npz shards, SGF files or collections, or folders)."""
    from rich.console import Console

    from ..net.inference import ModelError
    from ..train.calibration import CalibrationError, measure
    from ..train.calibration_report import plot, render, write_json

    path = resolve_model(model)
    baseline_path = resolve_model(baseline) if baseline else None
    band_list = None
    if bands:
        try:
            band_list = [int(b) for b in bands.split(",")]
        except ValueError:
            raise click.BadParameter(f"{bands!r}: give integers, e.g. 61,41,29",
                                     param_hint="--bands") from None
    try:
        result = measure(path, records, size=size, bands=band_list, threads=threads,
                         batch=batch, players=players, fit_from=fit_from,
                         baseline_path=baseline_path)
    except (CalibrationError, ModelError) as e:
        raise click.ClickException(str(e)) from None
    render(result, Console())
    if json_out:
        write_json(result, json_out)
        click.echo(f"wrote {json_out}")
    if plot_out:
        problem = plot(result, plot_out)
        click.echo(f"warning: {problem}" if problem else f"wrote {plot_out}", err=bool(problem))


def _start_positions(paths, size: int, band: str, lost_by, per_record: int, seed: int) -> list:
    """``teacher.late_positions`` for the CLI, shuffled by ``seed`` so that a rerun (resume)
    gives each game the same start; a bad band or no position is a one-line error."""
    import numpy as np

    from ..train.calibration import CalibrationError
    from ..train.teacher import late_positions

    try:
        lo, hi = (int(x) for x in band.split("-"))
    except ValueError:
        raise click.BadParameter(f"{band!r}: give LO-HI, e.g. 25-40", param_hint="--empty") from None
    if not 0 <= lo <= hi <= size * size:
        raise click.BadParameter(f"{band!r}: needs 0 <= LO <= HI <= {size * size}",
                                 param_hint="--empty")
    try:
        found = late_positions(paths, size, (lo, hi), tuple(lost_by), per_record, seed)
    except CalibrationError as e:
        raise click.ClickException(str(e)) from None
    if not found:
        who = f" lost by {', '.join(lost_by)}" if lost_by else ""
        raise click.ClickException(f"no {size}x{size} position with {lo}-{hi} empty points in "
                                   f"the games{who} of {', '.join(map(str, paths))}")
    order = np.random.default_rng(seed).permutation(len(found))
    return [found[i] for i in order]


@click.command("selfplay")
@model_option()
@click.option("--games", required=True, type=click.IntRange(min=1), help="Games to play.")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Directory for the dataset (gNNNNN.sgf + gNNNNN.npz per game).")
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="Playouts per move (every move is a full search and a policy target) "
                   "[default: 200 for the net, 20000 simulations for rave].")
@click.option("--player", type=click.Choice(["net", "rave"]), default="net", show_default=True,
              help="Who plays: the network's search (--model), or the classical rave agent, "
                   "whose searches become the targets (expert iteration; no network, no torch).")
@size_option()
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--solver/--no-solver", default=True, show_default=True,
              help="Exact endgame solver in the search (slow on tiny boards).")
@click.option("--concurrent-games", default=1, show_default=True, type=click.IntRange(1, 4096),
              help="Games per worker that share each network call (GPU: 64-256).")
@click.option("--positions", "position_paths", multiple=True, type=click.Path(exists=True),
              help="With --player rave: start each game from a position of these SGF records "
                   "(files, collections such as a results folder's games.sgf, or folders; "
                   "repeatable) instead of the empty board.")
@click.option("--empty", "empty_band", default="25-40", show_default=True, metavar="LO-HI",
              help="With --positions: the start positions' empty points.")
@click.option("--lost-by", multiple=True, metavar="NAME",
              help="With --positions: only games this player (SGF PB/PW) lost, from its side "
                   "(repeatable).")
@click.option("--per-record", default=2, show_default=True, type=click.IntRange(min=1),
              help="With --positions: start positions drawn from each recorded game.")
def selfplay_cmd(model, games, out, playouts, player, size, workers, seed, solver,
                 concurrent_games, position_paths, empty_band, lost_by, per_record) -> None:
    """Write a self-play game dataset (SGF plus training arrays), NoGoZero+ settings."""
    from pathlib import Path

    from ..net.inference import ModelError

    if position_paths and player != "rave":
        raise click.BadParameter("start positions are for --player rave (the teacher)",
                                 param_hint="--positions")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = len(sorted(out_dir.glob("g*.npz")))
    stems = [out_dir / f"g{i:05d}" for i in range(start, start + games)]
    if player == "rave":
        from ..train.loop import Progress
        from ..train.teacher import generate_teacher_games

        starts, temperature_moves = None, 8
        if position_paths:
            found = _start_positions(position_paths, size, empty_band, lost_by, per_record, seed)
            starts = [found[i % len(found)] for i in range(start, start + games)]
            temperature_moves = 2  # the position is the point: only its first replies vary
            click.echo(f"{len(found)} start positions from {len(position_paths)} source(s)")
        bar = Progress("rave self-play", games)
        try:
            n = generate_teacher_games(stems, size, playouts or 20_000, seed + start,
                                       workers=workers, progress=bar, starts=starts,
                                       temperature_moves=temperature_moves)
        finally:
            bar.close()
        click.echo(f"wrote {n} games to {out_dir} ({start + n} in total)")
        return
    model = resolve_model(model)
    try:
        from ..train import require_torch

        require_torch()  # self-play is part of the train extra (GPU self-play runs torch)
        from ..train.config import SelfPlayConfig
        from ..train.loop import Progress
        from ..train.selfplay import generate_games
    except ImportError as e:
        if not is_train_extra(e):
            raise
        raise train_extra("selfplay", e) from None

    sp = SelfPlayConfig(playouts=playouts or 200, playout_cap_randomisation=False,
                        use_solver=solver, concurrent_games=concurrent_games)
    bar = Progress("self-play", games)
    try:
        n = generate_games(model, stems, size, sp, seed + start, workers=workers, progress=bar)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    finally:
        bar.close()
    click.echo(f"wrote {n} games to {out_dir} ({start + n} in total)")


COMMANDS = [train_group, selfplay_cmd]
