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


# Subcommands added by other areas register below this line (keep each one thin).
