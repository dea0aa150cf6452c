"""`nogobot book build` and `nogobot book show`: the opening book (``book.OpeningBook``) that
`nogobot gtp --book FILE` answers its first plies from."""

from __future__ import annotations

import click

from .options import model_option, resolve_model, seed_option, size_option, threads_option


@click.group("book")
def book_group() -> None:
    """Build and inspect opening books for `nogobot gtp --book FILE`."""


@book_group.command("build")
@click.argument("out", type=click.Path(dir_okay=False))
@model_option()
@size_option()
@click.option("--plies", default=4, show_default=True, type=click.IntRange(1, 12),
              help="The first plies the book covers (the engine playing either colour).")
@click.option("--width", default=8, show_default=True, type=click.IntRange(min=1),
              help="The opponent's moves answered at each of its plies: its likeliest by the "
                   "network's policy, one per symmetry class.")
@click.option("--first-width", default=81, show_default=True, type=click.IntRange(min=1),
              help="The same for the opponent's first move (81 on 9x9: every first move).")
@click.option("--playouts", default=20000, show_default=True, type=click.IntRange(min=1),
              help="Playouts of each position's search (the engine's search: hybrid rollouts "
                   "and the solver as in play).")
@threads_option(default=1)
@seed_option(help="Seed of the searches.")
def book_build_cmd(out, model, size, plies, width, first_width, playouts, threads, seed) -> None:
    """Search the positions of the first plies and write the book to OUT (JSON). The file is
    rewritten after every position, so a killed build resumes where it stopped when run again
    with the same settings."""
    from ..engine.book import BookError, build_book, planned_positions

    model_path = resolve_model(model)
    click.echo(f"book: at most {planned_positions(size, plies, width, first_width)} positions "
               f"(before symmetric folding), {playouts:,} playouts each", err=True)
    try:
        book = build_book(out, model_path, size=size, plies=plies, width=width,
                          first_width=first_width, playouts=playouts,
                          seed=0 if seed is None else seed, threads=threads,
                          log=lambda line: click.echo(line, err=True))
    except BookError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {out}: {len(book)} positions")


@book_group.command("show")
@click.argument("path", type=click.Path(dir_okay=False))
def book_show_cmd(path) -> None:
    """Print a book's positions: ply, side to move, stones played, the book move and its
    search's win rate."""
    from ..engine.book import BookError, OpeningBook

    try:
        book = OpeningBook.load(path)
    except BookError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{path}: {book.size}x{book.size}, {len(book)} positions, built with "
               f"{book.built_with or 'unknown settings'}")
    for line in book.describe():
        click.echo(line)


COMMANDS = [book_group]
