"""Measuring strength: `tournament` (GTP engines as subprocesses, refereed) and the in-process
`train match` / `train ladder` (networks at fixed playouts and baseline agents)."""

from __future__ import annotations

import click

from .options import (
    load_network,
    model_option,
    on_ray,
    ray_option,
    resolve_model,
    size_option,
    threads_option,
)
from .train import train_group

opening_option = click.option(
    "--opening-temperature-moves", default=4, show_default=True, type=click.IntRange(min=0),
    help="Plies sampled by visits so games differ.")
playouts_option = click.option(
    "--playouts", default=200, show_default=True, type=click.IntRange(min=1),
    help="Playouts per move of the network players.")


def check_player(spec: str) -> None:
    """Stop with one line now if a player given as a model file is missing or broken."""
    if spec.endswith(".onnx"):
        resolve_model(spec)


@train_group.command("match")
@click.argument("a")
@click.argument("b")
@click.option("--games", default=20, show_default=True, type=click.IntRange(min=1))
@playouts_option
@size_option()
@opening_option
@click.option("--seed", default=0, show_default=True, type=int)
def train_match_cmd(a, b, games, playouts, size, opening_temperature_moves, seed) -> None:
    """In-process match A vs B (each an .onnx model searched at fixed playouts, or a baseline
    agent name: random, greedy, rollout, alphabeta); colours alternate."""
    from ..train.match import make_player, play_agent_match

    for spec in (a, b):
        check_player(spec)
    try:
        pa = make_player(a, size, playouts, opening_temperature_moves, seed)
        pb = make_player(b, size, playouts, opening_temperature_moves, seed + 1)
    except (ValueError, TypeError) as e:  # an unknown agent or option
        raise click.ClickException(str(e)) from None
    res = play_agent_match(pa, pb, games, size,
                           progress=lambda r: click.echo(
                               f"  game {r.games}: {r.wins}-{r.losses}", err=True))
    click.echo(res.summary())


@train_group.command("ladder")
@click.argument("players", nargs=-1, required=True, metavar="LABEL=PLAYER...")
@click.option("--games", default=20, show_default=True, type=click.IntRange(min=1),
              help="Games per pairing (colours alternate).")
@playouts_option
@size_option()
@opening_option
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Pairings played at once, one process each.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False),
              help="Also write the results (wins matrix, matches, Elo) to this JSON file.")
@ray_option
def train_ladder_cmd(players, games, playouts, size, opening_temperature_moves, workers, seed,
                     json_out, ray_address) -> None:
    """Round robin of several players with Bradley-Terry Elo (anchored on the first). PLAYER is
    an .onnx model (searched at --playouts) or a baseline agent name as for `train match`;
    LABEL= is optional (default: the file stem), e.g. full=runs/abl-full/nets/best.onnx."""
    import json
    from pathlib import Path

    from ..train.match import ladder_document, run_ladder

    entries = []
    for item in players:
        label, sep, spec = item.partition("=")
        if not sep or ":" in label or "/" in label:  # no label ("alphabeta:seconds=0.5")
            label, spec = Path(item).stem if item.endswith(".onnx") else item, item
        check_player(spec)
        entries.append((label, spec))
    with on_ray(ray_address):
        executor = None
        if ray_address:  # every game of every pairing on the cluster's actors
            from ..cluster.training import LadderOnRay, RayBackend

            executor = LadderOnRay(RayBackend())
        try:
            res = run_ladder(entries, games, size, playouts, opening_temperature_moves, seed,
                             workers, progress=lambda r: click.echo(f"  {r.summary()}", err=True),
                             executor=executor)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
    click.echo(res.table())
    if json_out:
        from ..core.atomicio import write_atomic

        write_atomic(json_out, json.dumps(ladder_document(
            res, games_per_pairing=games, playouts=playouts, size=size), indent=1))


@train_group.command("ladder-merge")
@click.argument("ladders", nargs=-1, required=True, metavar="LADDER.json...",
                type=click.Path(exists=True, dir_okay=False))
@click.option("--same", "same", multiple=True, metavar="OLD=NEW",
              help="Player OLD of some ladder is NEW of another (repeatable).")
@click.option("--anchor", default=None, help="Player rated 0 (default: the first ladder's first).")
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False),
              help="Write the merged ladder (wins, Elo, pairings) to this JSON file.")
def train_ladder_merge_cmd(ladders, same, anchor, json_out) -> None:
    """Rate several `train ladder --json` results as one ladder: their wins are added by player
    label and the Bradley-Terry Elo refitted, e.g. a ladder extended by a later run with new
    nets. Prints the table as `train ladder` does."""
    import json
    from pathlib import Path

    from ..train.match import ladder_document, merge_ladders

    renames = {}
    for item in same:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise click.BadParameter(f"{item!r}: expected OLD=NEW", param_hint="--same")
        renames[old] = new
    documents = []
    for path in ladders:
        try:
            documents.append((path, json.loads(Path(path).read_text())))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise click.ClickException(f"{path}: not readable as JSON ({e})") from None
    try:
        res = merge_ladders(documents, renames, anchor)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    click.echo(res.table())
    if json_out:
        from ..core.atomicio import write_atomic

        write_atomic(json_out, json.dumps(ladder_document(
            res, merged_from=list(ladders)), indent=1))


SPRT_KEYS = ("elo0=", "elo1=", "alpha=", "beta=", "model=")


class TournamentGroup(click.Group):
    """`nogobot tournament SPEC.yaml ...` runs a spec (the `run` subcommand, named or not);
    `report` and `pack` work on results folders.

    Also lets ``--sprt`` take its KEY=VALUE words unquoted, as fastchess does
    (``--sprt elo0=0 elo1=50 alpha=0.05``): the words are joined into the option's value."""

    def parse_args(self, ctx, args):
        args = list(args)
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args.insert(0, "run")
        joined, k = [], 0
        while k < len(args):
            joined.append(args[k])
            if args[k] == "--sprt":
                words = []
                while k + 1 < len(args) and args[k + 1].startswith(SPRT_KEYS):
                    words.append(args[k + 1])
                    k += 1
                if words:
                    joined.append(" ".join(words))
            k += 1
        return super().parse_args(ctx, joined)


@click.group("tournament", cls=TournamentGroup)
def tournament_group() -> None:
    """Matches between GTP engines, refereed: `nogobot tournament SPEC.yaml` plays a spec
    (round robin or gauntlet, with resume, Elo, SPRT and opening suites); `report FOLDER`
    prints a results folder's tables; `pack FOLDER...` converts old results folders to one
    SGF collection and a log archive each."""


@tournament_group.command("run")
@click.argument("spec_path", metavar="SPEC.yaml", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", default=None, type=click.IntRange(min=1),
              help="Games in parallel (default: the spec's jobs, else 1).")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Results directory (default: the spec's `results:`, else "
                   "tournaments/results/<spec name>); rerun with the same one to resume.")
@click.option("--games", default=None, type=click.IntRange(min=1),
              help="Games per pairing (overrides the spec); with an SPRT, the most to play.")
@click.option("--sprt", default=None, metavar="elo0=E0 elo1=E1 [alpha=A beta=B model=M]",
              help="Stop a two-engine match when the SPRT is decided (overrides the spec's "
                   "sprt); model normalized (default) or logistic; alpha, beta default 0.05.")
@click.option("--plot", is_flag=True, help="Also write standings.png (needs matplotlib).")
@click.option("--report", is_flag=True, help="Play nothing; print the tables of the results.")
@click.option("--no-check", is_flag=True, help="Skip the start-up check of every engine.")
@ray_option
@click.option("--reserve-timeout", default=60.0, show_default=True,
              type=click.FloatRange(min=1),
              help="With --ray: seconds a game may wait for its cores while other work holds "
                   "them (waiting behind this tournament's own games has no limit).")
def tournament_cmd(spec_path: str, jobs: int | None, out: str | None, games: int | None,
                   sprt: str | None, plot: bool, report: bool, no_check: bool,
                   ray_address: str | None, reserve_timeout: float) -> None:
    """Round robin or gauntlet between GTP engines, refereed, with SGF, Elo and resume."""
    from ..tournament.runner import TournamentError, run_tournament
    from ..tournament.spec import SPRT_GAMES, SpecError, load_spec
    from ..tournament.sprt import SprtError, parse_sprt

    try:
        spec = load_spec(spec_path)
        if sprt is not None:
            spec.sprt = parse_sprt([sprt])
            spec.check_sprt()
            if not spec.games_given:
                spec.games = SPRT_GAMES  # the test, not a count, ends the match
        ray_address = None if report else ray_address
        with on_ray(ray_address):
            executor = None
            if ray_address:  # each game on a node that reserved its cores
                from ..cluster.tournament import RayGames

                executor = RayGames(jobs, reserve_timeout)
            code = run_tournament(spec, out=out, jobs=jobs, games=games, plot=plot,
                                  report_only=report, check=not no_check, executor=executor)
    except (SpecError, SprtError, TournamentError) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"{e.filename or spec_path}: {e.strerror or e}") from None
    raise SystemExit(code)


@tournament_group.command("report")
@click.argument("folder", type=click.Path(file_okay=False))
def tournament_report_cmd(folder: str) -> None:
    """Print a results folder's tables (standings, pairings, the match's pairs, Elo interval
    and SPRT) without a spec and without writing anything."""
    from ..tournament.display import ReportError, report_folder

    try:
        report_folder(folder)
    except ReportError as e:
        raise click.ClickException(str(e)) from None


@tournament_group.command("pack")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
def tournament_pack_cmd(folders) -> None:
    """Convert results folders of the old layout (sgf/ID.sgf per game, loose logs/) to one SGF
    collection (games.sgf, in results order) and one log archive (logs.tar.gz) each; games
    and logs are copied unchanged. A folder already packed is left as it is."""
    from ..tournament.folder import pack_folder

    for folder in folders:
        try:
            done = pack_folder(folder)
        except ValueError as e:
            raise click.ClickException(str(e)) from None
        click.echo(f"{folder}: {done['games']} games in games.sgf, {done['logs']} logs "
                   "packed into logs.tar.gz")


@click.command("openings")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="The SGF collection to write (atomically).")
@click.option("--count", default=60, show_default=True, type=click.IntRange(min=1),
              help="Openings in the suite.")
@click.option("--plies", default="2-6", show_default=True,
              help="Random plies before the position: MIN-MAX (or one number).")
@click.option("--playouts", default=400, show_default=True, type=click.IntRange(min=1),
              help="Visits of each position's search.")
@click.option("--band", default="0.40-0.60", show_default=True,
              help="Keep positions whose side to move wins this often: LOW-HIGH.")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--prefix", default=None, help="Game names PREFIX-001... (default: the file's stem).")
@size_option()
@model_option()
@threads_option(default=1, help="Network threads.")
def openings_cmd(out, count, plies, playouts, band, seed, prefix, size, model, threads) -> None:
    """Make a balanced, diverse opening suite (an SGF collection) from the engine's analysis:
    random plies from the empty board, no two positions alike under the board's symmetries,
    each searched and kept when the side to move's win rate is within --band."""
    from pathlib import Path

    from .. import __version__
    from ..analysis.engine import AnalysisEngine, warm_up
    from ..core.atomicio import write_atomic
    from ..tournament.openings import OpeningError, analysis_evaluator, make_suite, suite_sgf

    lo_plies, _, hi_plies = plies.partition("-")
    lo_band, _, hi_band = band.partition("-")
    try:
        lo_plies, hi_plies = int(lo_plies), int(hi_plies or lo_plies)
        lo_band, hi_band = float(lo_band), float(hi_band)
    except ValueError:
        raise click.ClickException(f"--plies {plies!r} / --band {band!r}: expected MIN-MAX "
                                   "(e.g. 2-6) and LOW-HIGH (e.g. 0.40-0.60)") from None
    if not 0 <= lo_plies <= hi_plies or not 0 <= lo_band < hi_band <= 1:
        raise click.ClickException("--plies needs 0 <= MIN <= MAX, --band 0 <= LOW < HIGH <= 1")
    model_path = resolve_model(model)  # a named file, so a suite is the same on every CPU
    evaluator = load_network(model_path, "cpu", threads)
    warm_up(evaluator, size=size)
    engine = AnalysisEngine(evaluator, visits=playouts)
    try:
        kept = make_suite(analysis_evaluator(engine, size, playouts), size=size, count=count,
                          min_plies=lo_plies, max_plies=hi_plies, band=(lo_band, hi_band),
                          seed=seed, progress=lambda m: click.echo(f"  {m}", err=True))
    except OpeningError as e:
        raise click.ClickException(str(e)) from None
    made_by = (f"nogobot openings --count {count} --plies {lo_plies}-{hi_plies} --playouts "
               f"{playouts} --band {lo_band:.2f}-{hi_band:.2f} --seed {seed} --size {size}; "
               f"nogobot {__version__}, model {Path(model_path).stem}: random plies, kept when "
               "the side to move's win rate is in the band, no two alike under symmetry")
    write_atomic(out, suite_sgf(kept, size, made_by, prefix or Path(out).stem))
    click.echo(f"{out}: {len(kept)} openings")


COMMANDS = [tournament_group, openings_cmd]
