"""Looking at positions and games: `analysis` (the JSON-lines engine), `review` (games annotated
with the engine's opinion) and `timeplot` (time used per move). The first two share one
analysis engine, built by ``analysis_engine``."""

from __future__ import annotations

import click

from .options import (
    apply,
    batch_option,
    device_option,
    exit_now,
    load_network,
    model_option,
    quiet_option,
    threads_option,
)

analysis_options = apply(
    model_option(),
    device_option(),
    threads_option(),
    batch_option(help="Leaves per search step (as `nogobot gtp --batch`)."),
    click.option("--concurrency", default=16, show_default=True, type=click.IntRange(1, 4096),
                 help="Positions searched at once; their leaves share each network call."),
    click.option("--max-tree-mb", default=256, show_default=True, type=click.IntRange(min=1),
                 help="Memory bound of each position's search tree."),
)


def analysis_engine(model, device, threads, batch, concurrency, max_tree_mb, visits,
                    report_as, log=None):
    """The analysis engine that ``analysis_options`` describe, its kernels and network warm."""
    from ..analysis.engine import AnalysisEngine, warm_up
    from ..engine.mcts import SearchConfig

    evaluator = load_network(model, device, threads)
    config = SearchConfig(batch_size=batch, max_tree_mb=max_tree_mb)
    warm_up(evaluator, config)
    return AnalysisEngine(evaluator, config=config, concurrency=concurrency, visits=visits,
                          report_as=report_as, log=log)


@click.command("analysis")
@analysis_options
@click.option("--visits", default=500, show_default=True, type=click.IntRange(min=1),
              help="Visits per position when a query gives no maxVisits.")
@click.option("--report-as", default="sidetomove", show_default=True,
              type=click.Choice(["sidetomove", "black", "white"]),
              help="Whose win rates (and ownership) the answers give.")
@quiet_option(help="Nothing on stderr.")
def analysis_cmd(model, device, threads, batch, concurrency, max_tree_mb, visits, report_as,
                 quiet) -> None:
    """JSON-lines analysis engine (KataGo's protocol, for NoGo): one query per line on stdin,
    one answer per position on stdout; many positions are searched at once."""
    from ..analysis import engine as analysis

    exit_now(analysis.main(lambda: analysis_engine(model, device, threads, batch, concurrency,
                                                   max_tree_mb, visits, report_as),
                           quiet=quiet))


@click.command("review")
@click.argument("inputs", nargs=-1, required=True, metavar="GAME.sgf|FOLDER...")
@click.option("-o", "--out", default=None, type=click.Path(file_okay=False),
              help="Folder for the reviewed games (default: review/ inside the first input "
                   "when it is a folder, else beside it).")
@click.option("--visits", default=200, show_default=True, type=click.IntRange(min=1),
              help="Visits per position.")
@click.option("--no-png", is_flag=True, help="No win-rate graph (no matplotlib needed).")
@analysis_options
def review_cmd(inputs, out, visits, no_png, model, device, threads, batch, concurrency,
               max_tree_mb) -> None:
    """Review games: win rate before and after every move, the engine's preferred move, the
    mistakes; writes an annotated SGF, a PNG graph and a summary per game. A tournament
    results folder reviews every game in it."""
    from pathlib import Path

    from ..analysis import review, review_graph

    first = Path(inputs[0])
    out = out or str((first if first.is_dir() else first.parent) / "review")
    try:
        paths = review.collect(list(inputs))
        if not no_png:
            review_graph.check_plotting()
    except (review.ReviewError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None
    engine = analysis_engine(model, device, threads, batch, concurrency, max_tree_mb, visits,
                             "black")
    bar = review.ProgressBar(len(paths))
    texts: list[str] = []

    def game_done(rv, text: str) -> None:
        bar.game()
        texts.append(text)
        bar.print(f"reviewed {rv.path}")

    try:
        reviews = review.review_games(paths, engine, out, visits=visits,
                                      draw=None if no_png else review_graph.plot,
                                      on_position=bar.position, on_game=game_done,
                                      log=bar.print, total_positions=bar.set_positions)
    finally:
        bar.close()
    if not reviews:
        raise click.ClickException("no game could be reviewed")
    if len(texts) > 1:
        from ..core.atomicio import write_atomic

        write_atomic(f"{out}/summary.txt", "\n\n".join(texts) + "\n")
    click.echo("\n\n".join(texts))
    click.echo(f"wrote {len(reviews)} review(s) to {out}/: STEM.review.sgf, "
               + ("STEM.png, " if not no_png else "") + "STEM.txt, STEM.json"
               + (", summary.txt" if len(texts) > 1 else ""))


@click.command("timeplot")
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--out", default="timeplot.png", show_default=True, help="PNG to write.")
@click.option("--clock", is_flag=True,
              help="Draw nothing: print how each engine spent its sudden-death clock, in all and "
                   "while the game was undecided (before its first solver proof or win rate "
                   "outside 0.02-0.98), from `nogobot gtp` logs or a tournament folder's logs/.")
def timeplot_cmd(inputs, out, clock) -> None:
    """Time used per move as a PNG, from tournament SGFs, `nogobot gtp` stderr logs, or a
    tournament results folder (mean per move of each engine); with --clock, a table of how the
    clock was spent."""
    from ..tools import timeplot

    if clock:
        try:
            tables = [(p, timeplot.clock_table(timeplot.clock_report(p))) for p in inputs]
        except ValueError as e:
            raise click.ClickException(str(e)) from None
        for p, table in tables:
            click.echo(f"{p}:\n{table}")
        return
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


COMMANDS = [analysis_cmd, review_cmd, timeplot_cmd]
