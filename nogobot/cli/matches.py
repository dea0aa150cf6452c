"""Measuring strength: `tournament` (GTP engines as subprocesses, refereed) and the in-process
`train match` / `train ladder` (networks at fixed playouts and baseline agents)."""

from __future__ import annotations

import click

from .options import on_ray, ray_option, resolve_model, size_option
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

    from ..train.match import run_ladder

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
        data = {"players": dict(entries), "games_per_pairing": games, "playouts": playouts,
                "size": size, "wins": res.wins.tolist(),
                "elo": res.ratings.elo, "ci95": res.ratings.ci95,
                "matches": [{"a": m.a, "b": m.b, "wins": m.wins, "losses": m.losses,
                             "mean_plies": sum(m.plies) / max(len(m.plies), 1)}
                            for m in res.matches]}
        Path(json_out).write_text(json.dumps(data, indent=1))


@click.command("tournament")
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
@ray_option
@click.option("--reserve-timeout", default=60.0, show_default=True,
              type=click.FloatRange(min=1),
              help="With --ray: seconds a game may wait for its cores while other work holds "
                   "them (waiting behind this tournament's own games has no limit).")
def tournament_cmd(spec_path: str, jobs: int | None, out: str | None, games: int | None,
                   plot: bool, report: bool, no_check: bool, ray_address: str | None,
                   reserve_timeout: float) -> None:
    """Round robin or gauntlet between GTP engines, refereed, with SGF, Elo and resume."""
    from ..tournament.runner import TournamentError, run_tournament
    from ..tournament.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
        ray_address = None if report else ray_address
        with on_ray(ray_address):
            executor = None
            if ray_address:  # each game on a node that reserved its cores
                from ..cluster.tournament import RayGames

                executor = RayGames(jobs, reserve_timeout)
            code = run_tournament(spec, out=out, jobs=jobs, games=games, plot=plot,
                                  report_only=report, check=not no_check, executor=executor)
    except (SpecError, TournamentError) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"{e.filename or spec_path}: {e.strerror or e}") from None
    raise SystemExit(code)


COMMANDS = [tournament_cmd]
