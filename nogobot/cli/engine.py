"""The engine commands: `gtp`, `botzone`, `agent` (baseline engines), `warmup`, `conformance`.

All three move-generating commands build their player through ``agent_factory``. Nothing here
imports numpy, numba or onnxruntime at import time: GoGui starts a second copy of the engine as
its rules referee, and `name` must answer at once.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

from ..core.machine import search_cores
from .options import (
    batch_option,
    clock_options,
    device_option,
    engine_model,
    exit_now,
    model_option,
    quiet_option,
    resolve_model,
    seed_option,
    size_option,
    threads_option,
    time_control,
)

# The move generators of `gtp` and `botzone`: the network search, or the one-ply heuristic.
ENGINE_AGENTS = ["mcts", "greedy"]


def baseline_names() -> list[str]:
    """The baseline agents `nogobot agent NAME` runs: whatever agents.registry lists (cheap to
    import: no numpy, no numba)."""
    from ..agents.registry import AGENTS

    return list(AGENTS)


def rave_setting_names() -> str:
    """The keys `nogobot agent rave --set` takes, for its help (from agents.registry)."""
    from ..agents.registry import RAVE_SETTINGS

    return ", ".join(f"{key} (0/1)" if kind is bool else key
                     for key, kind in RAVE_SETTINGS.items())


agent_choice = click.option(
    "--agent", "agent_name", default="mcts", show_default=True, type=click.Choice(ENGINE_AGENTS),
    help="Move generator: the network search, or the one-ply heuristic (no network).")


def agent_factory(name: str, *, model_path: str | None = None, device: str = "cpu",
                  threads: int | None = None, lanes: int | None = 1,
                  search: dict | None = None,
                  playouts: int | None = None,
                  seconds: float | None = None, depth: int | None = None,
                  seed: int | None = None, settings: dict | None = None, log: Any = None,
                  warm_log: Callable | None = None, book: Any = None) -> Callable[[], Any]:
    """A function that builds agent ``name``: "mcts" (the network search on ``model_path``,
    None for the engine's default net, with ``mcts.SearchConfig(**search)``) or a baseline
    from ``agents.registry``.

    ``threads``: the cores the network search has (None: every core); with two ``lanes`` the
    network gets one fewer (the search's thread keeps one), and ``lanes`` None decides by the
    net: two where an int8 net plays on a CPU with two or more cores, else one (an fp32 net on
    one core fewer is no faster than one lane; on a GPU two lanes are unmeasured).

    The agent is built when the function is first called, so the protocol answers while the
    network and the kernels load. ``seconds`` None leaves each agent its own default limit;
    ``settings``: a baseline's own settings (rave's, ``agents.registry.RAVE_SETTINGS``);
    ``book``: the network player's ``book.OpeningBook``."""

    def build():
        if name != "mcts":
            from ..agents.registry import make_agent

            return make_agent(name, playouts=playouts, seconds=seconds, depth=depth, seed=seed,
                              settings=settings)
        from ..engine.mcts import SearchConfig
        from ..engine.player import MCTSAgent
        from ..net.inference import load_evaluator
        from ..tools import warmup

        # With two lanes the search's thread keeps a core of its own (a GPU session ignores
        # the count); a session is made in milliseconds, so "by the net" loads it again.
        cores = search_cores(threads, lanes)
        evaluator = load_evaluator(model_path, device=device,
                                   threads=cores - 1 if lanes == 2 else threads)
        n_lanes = lanes
        if n_lanes is None:
            n_lanes = 2 if cores >= 2 and evaluator.int8 and not evaluator.on_gpu else 1
            if n_lanes == 2:
                evaluator = load_evaluator(evaluator.path, device="cpu", threads=cores - 1)
        if log is not None:  # which net plays: the default's encoding depends on the machine
            print(f"network: {evaluator.describe()}{', two lanes' if n_lanes == 2 else ''}",
                  file=log, flush=True)
        # A search never starts before its kernels are compiled (the cold first run): without
        # a clock its time then starts when the search is ready.
        warmup.wait("search", log=warm_log)
        limit = {} if seconds is None else {"seconds": seconds}
        config = SearchConfig(**{**(search or {}), "lanes": n_lanes})
        return MCTSAgent(evaluator, config=config, playouts=playouts,
                         seed=seed, log=log, book=book, **limit)

    return build


def read_book(path: str | None, agent_name: str):
    """The opening book at ``path`` (None: none), read before the protocol starts so that a bad
    file stops the engine with one line naming it (reading it loads no numpy or numba)."""
    if path is None:
        return None
    if agent_name != "mcts":
        raise click.UsageError("--book is for the network search (--agent mcts)")
    from ..engine.book import BookError, OpeningBook

    try:
        return OpeningBook.load(path)
    except BookError as e:
        raise click.ClickException(str(e)) from None


@click.command("gtp")
@model_option()
@device_option()
@threads_option()
@size_option(low=2, help="Initial board size (controllers normally send boardsize).")
@clock_options
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="Search exactly N playouts per move whatever the clock (a large N can "
                   "lose on time; only moves, proven results and the endgame solver answer "
                   "sooner). For tests, analysis and reproducible runs.")
@click.option("--lag-buffer", default=0.25, show_default=True, type=click.FloatRange(min=0),
              help="Seconds kept back per move for transmission lag.")
@click.option("--time-policy", "time_settings", multiple=True, metavar="NAME=VALUE",
              help="Set a knob of the time manager (a field of timecontrol.TimePolicy, "
                   "docs/engine.md); repeatable.")
@click.option("--ponder", is_flag=True, help="Think on the opponent's time.")
@batch_option()
@click.option("--lanes", default=None, type=click.IntRange(1, 2),
              help="Batches in the network at once: 2 runs the network on a thread of its "
                   "own, one batch behind the search, so the tree's work (rollouts included) "
                   "overlaps it; on a CPU the network then gets one core fewer than --threads. "
                   "Needs two cores. Default: 2 where an int8 net plays on a CPU with two or "
                   "more cores, else 1.")
@click.option("--max-tree-mb", default=None, type=click.IntRange(min=1),
              help="Memory bound of the search tree in MB (tree reuse may hold two), "
                   "default 1024.")
@click.option("--c-puct", default=None, type=click.FloatRange(min=0, min_open=True),
              help="PUCT's exploration constant (default 1.1; values are -1..1).")
@click.option("--c-puct-log", default=None, type=click.FloatRange(min=0),
              help="Let the exploration constant grow with a node's visits N: c_puct + "
                   "C * ln((N + base) / base) (AlphaZero's and KataGo's; default 0: fixed).")
@click.option("--c-puct-base", default=None, type=click.FloatRange(min=0, min_open=True),
              help="The visits at which --c-puct-log's growth is ln 2 (default 500).")
@click.option("--fpu-reduction", default=None, type=click.FloatRange(min=0),
              help="First-play urgency: an unvisited move is valued at its parent's value "
                   "less this (default 0.2; values are -1..1).")
@click.option("--rollout-weight", default=None, type=click.FloatRange(0, 1),
              help="Hybrid leaf evaluation: the weight of NoGo policy rollouts mixed with the "
                   "network's value at each leaf (0: the network alone; default 0.5).")
@click.option("--endgame-rollout-weight", default=None, type=click.FloatRange(0, 1),
              help="The rollouts' weight from 30 empty points down, reached linearly from 55 "
                   "(default 0.8; equal to --rollout-weight: one weight throughout).")
@click.option("--rollouts", default=None, type=click.IntRange(min=1),
              help="Rollouts per leaf when rollouts are mixed in (default 4).")
@click.option("--solver-from", default=None, type=click.IntRange(min=26),
              help="Empty points from which the search tries the exact endgame solver first "
                   "(default 28; 26 or more: below, the solver answers within a move).")
@click.option("--solver-nodes", default=None, type=click.IntRange(min=1000),
              help="The exact solver's largest node budget per move (default 2,000,000, about "
                   "7 s): a move's share of the clock gives it fewer at short clocks, so a "
                   "larger cap only acts on long ones.")
@click.option("--solver-long-from", default=None, type=click.IntRange(min=0),
              help="Empty points from which a move with a minute or more of hard limit tries "
                   "the exact solver, with up to 8,000,000 nodes unless --solver-nodes says "
                   "otherwise (default 31; 0: no long tries).")
@click.option("--solver-rate", default=None, type=click.IntRange(min=0),
              help="Nodes a second the exact solver's node budget on a timed move is sized at "
                   "(default 280,000; 0: none, its half of the move's seconds alone bounds "
                   "it, up to --solver-nodes).")
@click.option("--solver-threads", default=None, type=click.IntRange(min=1),
              help="Threads the exact solver searches root moves with at once (default: "
                   "the network's, --threads or every core); its node budget grows with them, "
                   "its share of the clock does not.")
@click.option("--leaf-proofs", default=None, type=click.IntRange(min=0),
              help="Hand each new search leaf with N or fewer empty points to the exact "
                   "solver (5,000 nodes) first: a proof replaces the network's value and "
                   "settles the node (0: off, the default).")
@click.option("--book", "book_path", default=None, type=click.Path(dir_okay=False),
              help="Opening book (JSON, `nogobot book build`): its positions are answered at "
                   "once, without search, saving the clock for later moves.")
@agent_choice
@seed_option()
@click.option("--live-gfx", default="auto", show_default=True,
              type=click.Choice(["auto", "on", "off"]),
              help="GoGui live graphics on stderr while thinking (auto: when GoGui is attached).")
@quiet_option()
def gtp_cmd(model, device, threads, size, seconds, byoyomi, per_move, move_seconds, playouts,
            lag_buffer, time_settings, ponder, batch, lanes, max_tree_mb, c_puct, c_puct_log,
            c_puct_base, fpu_reduction, rollout_weight, endgame_rollout_weight, rollouts,
            solver_from, solver_nodes, solver_long_from, solver_rate, solver_threads,
            leaf_proofs, book_path, agent_name, seed, live_gfx, quiet) -> None:
    """Speak GTP v2 on stdin/stdout (GoGui, Sabaki, gogui-twogtp, tournaments)."""
    from ..engine.timecontrol import TimePolicy, policy_with
    from ..gtp import serve

    clock = time_control(seconds, byoyomi, per_move)
    policy = TimePolicy(lag_buffer=lag_buffer, no_limit_seconds=move_seconds)
    try:
        policy = policy_with(policy, list(time_settings))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--time-policy") from None
    model_path = engine_model(model) if agent_name == "mcts" else None
    book = read_book(book_path, agent_name)
    try:
        cores = search_cores(threads, lanes)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--lanes") from None
    # Each option given on the command line overrides its SearchConfig field; the config
    # itself is built with the agent: importing mcts (numba) here would delay `name`.
    given = {"max_tree_mb": max_tree_mb, "c_puct": c_puct, "c_puct_log": c_puct_log,
             "c_puct_base": c_puct_base, "fpu_reduction": fpu_reduction,
             "rollout_weight": rollout_weight, "endgame_rollout_weight": endgame_rollout_weight,
             "rollout_count": rollouts, "solver_from": solver_from,
             "solver_max_nodes": solver_nodes, "solver_long_from": solver_long_from,
             "solver_rate": solver_rate, "leaf_proof_empty": leaf_proofs}
    search = dict(batch_size=batch, **{k: v for k, v in given.items() if v is not None})
    # The cores the network uses (every core unless --threads says) are idle while it solves.
    search["solver_threads"] = solver_threads or cores
    # --playouts and --seconds limit the network search; the greedy agent takes neither.
    limits = dict(playouts=playouts, seconds=move_seconds) if agent_name == "mcts" else {}
    factory = agent_factory(agent_name, model_path=model_path, device=device,
                            threads=threads, lanes=lanes, search=search, seed=seed,
                            log=None if quiet else sys.stderr,
                            book=book, **limits)
    # numba's kernels load (or, on a fresh install, compile) in the background while the first
    # commands are answered; a cold cache is announced once on stderr.
    status = serve(factory, board_size=size, quiet=quiet,
                   warmup="search" if agent_name == "mcts" else "rules",
                   time_control=clock, time_policy=policy, ponder=ponder,
                   live_gfx=live_gfx, network=agent_name == "mcts")
    exit_now(status)


@click.command("botzone")
@model_option()
@agent_choice
@click.option("--move-time", default=1.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Botzone's time limit per move, in seconds.")
@click.option("--margin", default=0.2, show_default=True, type=click.FloatRange(min=0),
              help="Seconds kept back from --move-time (input, output, the platform's lag).")
@click.option("--keep-running/--no-keep-running", default=True, show_default=True,
              help="Botzone's keep-running mode (print its marker and wait for the next "
                   "request) or answer once and exit.")
@threads_option(default=1, help="Network threads.")
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="Also stop the search after this many playouts (tests).")
@seed_option()
@quiet_option(help="Nothing on stderr.")
def botzone_cmd(model, agent_name, move_time, margin, keep_running, threads, playouts, seed,
                quiet) -> None:
    """Play on Botzone (NoGo): JSON or simple interaction, keep-running mode."""
    from ..botzone import serve_botzone

    model_path = engine_model(model) if agent_name == "mcts" else None
    # Botzone may cap memory at 256 MB, and the numba kernels plus onnxruntime alone take
    # ~200 MB: a 48 MB tree (~80k playouts) and a 5 MB evaluation cache are ample for 1 s.
    search = dict(max_tree_mb=48, cache_entries=1 << 14)
    limits = dict(playouts=playouts) if agent_name == "mcts" else {}
    factory = agent_factory(agent_name, model_path=model_path, device="cpu", threads=threads,
                            search=search, seed=seed, log=None if quiet else sys.stderr,
                            warm_log=(lambda m: None) if quiet else None, **limits)
    raise SystemExit(serve_botzone(factory, move_time=move_time, margin=margin,
                                   keep_running=keep_running, quiet=quiet, seed=seed))


@click.command("agent")
@click.argument("name", type=click.Choice(baseline_names()))
@click.option("--playouts", default=None, type=click.IntRange(min=1),
              help="rollout: playouts per move (default 10000); rave: simulations per move "
                   "(all threads), the clock still caps them.")
@click.option("--seconds", default=None, type=click.FloatRange(min=0, min_open=True),
              help="rollout/alphabeta/rave: time limit per move (alphabeta default 1.0); a "
                   "clock's budget can only shorten it.")
@click.option("--time", "game_seconds", default=None, type=click.FloatRange(min=0),
              help="Sudden-death seconds per game on the engine's own clock (time_settings, "
                   "kgs-time_settings and time_left override), spent by the time manager.")
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="rave: independent searches at once (root parallelism; default 1).")
@click.option("--depth", default=None, type=click.IntRange(min=1),
              help="alphabeta: maximum search depth.")
@click.option("--ponder", is_flag=True,
              help="rave: think on the opponent's time (the tree is kept for the next move).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="rave: a search, rollout or clock setting (repeatable): "
                   f"{rave_setting_names()}.")
@seed_option(help="Random seed.")
@quiet_option()
def agent_cmd(name: str, playouts: int | None, seconds: float | None,
              game_seconds: float | None, threads: int | None, depth: int | None,
              ponder: bool, settings: tuple[str, ...], seed: int | None, quiet: bool) -> None:
    """Run a baseline agent as a GTP engine (random, greedy, rollout, alphabeta, rave)."""
    for flag, given in (("--threads", threads is not None), ("--ponder", ponder),
                        ("--set", bool(settings))):
        if given and name != "rave":
            raise click.UsageError(f"agent {name!r} does not take {flag} (only rave does)")
    try:
        from ..agents.registry import parse_rave_settings

        # Built (and its numba kernels loaded) before the first command, not in a timed genmove.
        agent = agent_factory(name, playouts=playouts, seconds=seconds, depth=depth, seed=seed,
                              settings=parse_rave_settings(settings) if settings else None)()
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if threads is not None:
        agent.threads = threads  # its trees are made at the first search
    if quiet and hasattr(agent, "log"):
        agent.log = None  # rave logs one line a move on stderr
    from ..gtp import serve

    raise SystemExit(serve(lambda: agent, name=f"nogobot-{name}", quiet=quiet, network=False,
                           time_control=time_control(game_seconds, None, None), ponder=ponder,
                           time_policy=agent.time_policy))


@click.command("warmup")
@model_option(help="ONNX network to check and load (default: shipped).")
@click.option("--agents/--no-agents", default=True, show_default=True,
              help="Also compile the baseline agents' kernels (rollout, alphabeta).")
def warmup_cmd(model, agents) -> None:
    """Compile numba's kernels once after installing (else the first move pays for it) and
    check that the network loads. Safe to rerun: a warm install takes well under a second."""
    import time

    from ..net.inference import ModelError, OnnxEvaluator
    from ..net.modelfile import default_engine_models
    from ..tools import warmup

    for path in [resolve_model(model)] if model else default_engine_models():
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


@click.command("conformance")
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
    from ..tools.conformance import main as run

    raise SystemExit(run(engine_cmd, list(files) or None, verbose=verbose, timeout=timeout,
                         builtin=not no_builtin))


COMMANDS = [gtp_cmd, botzone_cmd, agent_cmd, warmup_cmd, conformance_cmd]
