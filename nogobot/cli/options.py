"""What every subcommand shares: option decorators, model resolution, one-line errors, exit.

Options that mean the same thing everywhere (``--model``, ``--size``, ``--threads``,
``--device``, the engine clock, ``--ray``) are declared once here, so their names, types and
defaults cannot drift apart between commands. Every ``--model`` value goes through
``resolve_model``: the one place that turns what the user typed into a checked model file.
Nothing here imports numpy, numba or torch (start-up of `nogobot gtp` is measured).
"""

from __future__ import annotations

import contextlib
from typing import Callable

import click

TRAIN_EXTRA = 'pip install torch==2.13.0 -e ".[train]"'
TRAIN_MODULES = ("torch", "onnx", "onnxscript", "matplotlib")
DEVICES = ["auto", "cpu", "cuda", "tensorrt"]


def train_extra(what: str, e: ImportError) -> click.ClickException:
    """One line instead of a traceback when a command needs the train extra."""
    missing = getattr(e, "name", None) or str(e)
    return click.ClickException(f"{what} needs the train extra ({missing} is not installed): "
                                f"{TRAIN_EXTRA}")


def is_train_extra(e: ImportError) -> bool:
    """Whether ``e`` is a missing train-extra package (not a bug in our own imports)."""
    return (getattr(e, "name", None) or "").split(".")[0] in TRAIN_MODULES


def resolve_model(model: str | None) -> str:
    """The model file for a ``--model`` value (None: the shipped default; a file, or the name
    of a shipped net: ``modelfile.resolve_model``), validated now.

    ``modelfile.check_model`` checks the sidecar, the checksum and the ONNX graph's input and
    outputs (a few ms, no onnxruntime), so a missing, truncated or mismatched model stops the
    command with one line naming the file before it speaks its protocol. The network itself
    loads later (in the background on a clock, else on the first genmove)."""
    from ..net.modelfile import ModelError, check_model
    from ..net.modelfile import resolve_model as model_file

    try:
        path = str(model_file(model))
        check_model(path)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    return path


def engine_model(model: str | None) -> str | None:
    """``--model`` for a command that plays with the engine: the file, validated now; None,
    the engine's default (``inference.load_evaluator`` picks the default net or its int8
    encoding by device), once every file that default may load has passed ``check_model``."""
    if model:
        return resolve_model(model)
    from ..net.modelfile import ModelError, check_model, default_engine_models

    try:
        for path in default_engine_models():
            check_model(path)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    return None


def load_network(model: str | None, device: str, threads: int | None):
    """The evaluator for ``--model`` on ``device`` (None: the engine's default), or a one-line
    click error."""
    from ..net.inference import ModelError, load_evaluator

    path = engine_model(model)
    try:
        return load_evaluator(path, device=device, threads=threads)
    except ModelError as e:
        raise click.ClickException(str(e)) from None


def model_option(help: str = "ONNX network: an .onnx file or a shipped net's name "
                             "(default: the shipped model).") -> Callable:
    return click.option("--model", default=None, help=help)


def size_option(low: int = 5, help: str = "Board size.") -> Callable:
    return click.option("--size", default=9, show_default=True, type=click.IntRange(low, 19),
                        help=help)


def threads_option(default: int | None = None,
                   help: str = "Network threads (default: all cores).") -> Callable:
    if default is None:
        return click.option("--threads", default=None, type=click.IntRange(min=1), help=help)
    return click.option("--threads", default=default, show_default=True,
                        type=click.IntRange(min=1), help=help)


def device_option(default: str = "auto") -> Callable:
    return click.option("--device", default=default, show_default=True,
                        type=click.Choice(DEVICES), help="Where the network runs.")


def batch_option(help: str = "Leaves per network call.") -> Callable:
    return click.option("--batch", default=16, show_default=True, type=click.IntRange(1, 1024),
                        help=help)


def seed_option(help: str = "Seed for the move generator.") -> Callable:
    return click.option("--seed", default=None, type=int, help=help)


def quiet_option(help: str = "No info log on stderr (errors still logged).") -> Callable:
    return click.option("--quiet", is_flag=True, help=help)


def apply(*decorators: Callable) -> Callable:
    """Several option decorators as one, listed in the order they appear in --help."""
    def wrap(fn):
        for d in reversed(decorators):
            fn = d(fn)
        return fn
    return wrap


# The engine's clock: how much time it has, and how it spends it when nothing limits it.
clock_options = apply(
    click.option("--time", "seconds", default=None, type=click.FloatRange(min=0),
                 help="Sudden-death seconds per game for this engine, e.g. 900 (CCGC), kept on "
                      "the engine's own clock from clear_board; time_settings/time_left "
                      "override."),
    click.option("--byoyomi", default=None, metavar="MAIN:PERIOD:COUNT",
                 help="Japanese byo-yomi, e.g. 300:30:5."),
    click.option("--per-move", default=None, type=click.FloatRange(min=0, min_open=True),
                 help="A fixed time per move in seconds (Botzone style)."),
    click.option("--seconds", "move_seconds", default=5.0, show_default=True,
                 type=click.FloatRange(min=0, min_open=True),
                 help="Thinking time per move when there is no time limit (from when the "
                      "search is ready)."),
)


def time_control(seconds: float | None, byoyomi: str | None, per_move: float | None):
    """The ``TimeControl`` that ``clock_options`` ask for (None: no limit)."""
    from ..engine.timecontrol import TimeControl

    try:
        if byoyomi:
            return parse_byoyomi(byoyomi)
        if per_move:
            return TimeControl.per_move(per_move)
        if seconds is not None:
            return TimeControl.sudden_death(seconds)
    except ValueError as e:
        raise click.BadParameter(f"bad time control: {e}") from None
    return None


def parse_byoyomi(text: str):
    """``MAIN:PERIOD:COUNT`` -> a byo-yomi TimeControl; click's one-line error otherwise."""
    from ..engine.timecontrol import TimeControl

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


ray_option = click.option(
    "--ray", "ray_address", is_flag=False, flag_value="auto", default=None,
    metavar="[auto|ADDRESS|local]",
    help="Play the games on a Ray cluster: auto (the cluster this machine joined with `ray "
         "start`; the default for a bare --ray), the head's HOST:PORT, or local (a private Ray "
         "on this machine). Needs the cluster extra.")


@contextlib.contextmanager
def on_ray(address: str | None):
    """Join the Ray cluster ``address`` (nothing when None) for a command; a cluster problem,
    then or later, becomes a one-line error. Ray is imported only here."""
    from ..cluster import ClusterError

    try:
        if address:
            from ..cluster.connect import connect

            connect(address)
        yield
    except ClusterError as e:
        raise click.ClickException(str(e)) from None


def exit_now(status: int) -> None:
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


def comma_ints(text: str) -> tuple[int, ...]:
    """``"7,9,13"`` -> ``(7, 9, 13)``: board sizes and game counts of the train commands."""
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated integers") from None
