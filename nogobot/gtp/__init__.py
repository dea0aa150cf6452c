"""GTP front end: ``serve(agent_factory)`` runs a NoGo GTP engine on stdin/stdout.

``engine.py`` is the protocol (framing, ids, dispatch; no NoGo), ``commands.py`` the NoGo
commands, ``analyze.py`` the analysis commands (a second handler composed beside them:
``nogo_engine``), ``views.py`` their reply texts, ``clock.py`` the time settings. Nothing here
imports numba at start-up.

Usage (what ``nogobot gtp`` and ``nogobot agent NAME`` do)::

    from nogobot.gtp import serve
    from nogobot.agents.greedy import GreedyAgent
    raise SystemExit(serve(lambda: GreedyAgent(seed=1), name="nogobot-greedy"))
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

from .. import __version__
from ..engine.timecontrol import TimeControl
from .analyze import AnalyzeCommands
from .commands import NoGoCommands
from .engine import Engine, stderr_logger

__all__ = ["AnalyzeCommands", "Engine", "NoGoCommands", "nogo_engine", "serve"]


def nogo_engine(agent_factory: Callable[[], Any], *, name: str = "nogobot",
                version: str = __version__, log: Callable[[str], None] = lambda msg: None,
                errors: Callable[[str], None] | None = None, live_gfx: str = "auto",
                gfx_stream: Any = None, network: bool = True, **game: Any) -> Engine:
    """The engine of ``serve``: the game's commands (``NoGoCommands(agent_factory, log=log,
    **game)``, ``engine.handlers[0]``) and the analysis commands composed beside them
    (``engine.handlers[1]``); ``errors`` gets the internal errors (default ``log``)."""
    commands = NoGoCommands(agent_factory, log=log, **game)
    analysis = AnalyzeCommands(commands, live_gfx=live_gfx, gfx_stream=gfx_stream,
                               network=network)
    return Engine(commands, analysis, name=name, version=version, log=errors or log)


def serve(agent_factory: Callable[[], Any], *, name: str = "nogobot",
          version: str = __version__, instream: Any = None, outstream: Any = None,
          errstream: Any = None, board_size: int = 9, seconds: float | None = None,
          quiet: bool = False, warmup: bool | str = False, time_control: Any = None,
          time_policy: Any = None, ponder: bool = False, live_gfx: str = "auto",
          network: bool = True) -> int:
    """Run the GTP loop until ``quit`` or end of input; returns the exit status (0).

    ``agent_factory()`` builds the move generator the first time a move is generated.
    ``instream``/``outstream`` default to the process's stdin (read as bytes, so invalid UTF-8
    is harmless) and stdout; ``errstream`` (default stderr) gets the log. ``seconds`` sets a
    sudden-death clock (stored for the time manager). ``quiet`` silences the info log; internal
    errors are always logged. ``time_control`` (a ``timecontrol.TimeControl``) overrides
    ``seconds``; ``time_policy`` tunes the budget; ``ponder`` thinks on the opponent's time
    (agents that declare ``can_ponder``) until the next input line. ``live_gfx`` (auto, on,
    off): GoGui live graphics on ``errstream`` while searching (auto: once GoGui asked for
    ``gogui-analyze_commands``). ``network=False`` (a baseline agent) leaves out the commands
    only the network player answers (analysis, GoGui views, interrupt). ``warmup`` (a
    ``nogobot.tools.warmup`` kind, or True for ``rules``) loads numba's kernels in a background
    thread while the first commands are answered, and announces a cold cache on the log (see
    ``nogobot.tools.warmup``)."""
    info = stderr_logger(errstream, quiet)
    errors = stderr_logger(errstream)
    clock = time_control
    if clock is None and seconds is not None:
        clock = TimeControl.sudden_death(seconds)
    engine = nogo_engine(agent_factory, name=name, version=version, log=info, errors=errors,
                         live_gfx=live_gfx, gfx_stream=errstream, network=network,
                         board_size=board_size, clock=clock, time_policy=time_policy,
                         ponder=ponder)
    if warmup:
        from ..tools import warmup as kernels  # standard library only until the thread runs

        kernels.start("rules" if warmup is True else warmup, log=info)
    if instream is None:
        instream = sys.stdin.buffer
    if outstream is None:
        # Responses go to the real stdout; anything else printed meanwhile (a stray print in
        # an agent, a library warning) is sent to stderr so it cannot corrupt the protocol.
        real_stdout = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            return engine.run(instream, real_stdout)
    return engine.run(instream, outstream)
