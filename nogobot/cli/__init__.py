"""The `nogobot` command line: parses options, builds objects, delegates.

One module per concern registers its commands here: ``engine`` (gtp, botzone, agent, warmup,
conformance), ``analysis`` (analysis, review, timeplot), ``book`` (book build, show), ``bench``,
``train`` (train run, bootstrap, report, snapshot, patterns, calibration; selfplay),
``netfiles`` (train average, grow, quantize; export) and ``matches`` (tournament, train match and
ladder); ``options`` holds what they share. Every subcommand imports what it needs lazily, so
`nogobot gtp` starts fast (GoGui starts a second copy of the engine as its rules referee) and
the engine path never imports torch.
"""

from __future__ import annotations

import click

from .. import __version__
from . import analysis, bench, book, engine, matches, netfiles, solve, train


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nogobot")
def main() -> None:
    """nogobot: a NoGo engine for tournaments, GoGui and Sabaki."""


for _command in (*engine.COMMANDS, *analysis.COMMANDS, bench.bench, *train.COMMANDS,
                 *netfiles.COMMANDS, *matches.COMMANDS, *book.COMMANDS, *solve.COMMANDS):
    main.add_command(_command)
