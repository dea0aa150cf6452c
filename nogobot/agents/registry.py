"""Baseline agents by name: what `nogobot agent NAME` and tournament specs can ask for.

==========  =====================================================  ==========================
name        what it is                                             options (defaults)
==========  =====================================================  ==========================
random      uniformly random legal move                            seed
greedy      one-ply: win at once, else avoid losing at once        seed
rollout     UCT, uniformly random playouts (numba)                 playouts (10000), seconds
                                                                   (none), seed
alphabeta   iterative deepening, TT, mobility evaluation (numba)   seconds (1.0), depth
                                                                   (none), seed
rave        MCTS + RAVE, NoGo rollout policy, solver, tree reuse   playouts (none), seconds
            (numba; the classical champion-class yardstick)        (none: the GTP clock, else
                                                                   5 s a move), threads (1),
                                                                   seed
==========  =====================================================  ==========================

``seconds`` is the agent's own per-move limit; a time budget from the GTP clock (time_settings /
time_left) can only shorten it. Passing an option an agent does not take is an error (so a typo
in a tournament spec fails before any game starts instead of being silently ignored).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..engine.agent import Agent


@dataclass(frozen=True)
class AgentInfo:
    name: str
    summary: str
    options: tuple[str, ...]
    build: Callable[..., Agent]


def _random(seed=None):
    from .random_agent import RandomAgent

    return RandomAgent(seed=seed)


def _greedy(seed=None):
    from .greedy import GreedyAgent

    return GreedyAgent(seed=seed)


def _rollout(playouts=None, seconds=None, seed=None):
    from .rollout import DEFAULT_PLAYOUTS, RolloutAgent

    # A time limit alone means "as many playouts as fit"; nothing given means the default count.
    if playouts is None and seconds is None:
        playouts = DEFAULT_PLAYOUTS
    return RolloutAgent(playouts=playouts, seconds=seconds, seed=seed)


def _alphabeta(seconds=None, depth=None, seed=None):
    from .alphabeta import DEFAULT_SECONDS, AlphaBetaAgent

    if seconds is None and depth is None:
        seconds = DEFAULT_SECONDS
    return AlphaBetaAgent(seconds=seconds, max_depth=depth, seed=seed)


# rave's tunable settings (``nogobot agent rave --set KEY=VALUE``): the agent's own and its
# rollout policy's (``playout.rollout_scratch``), with their types, so that a tuning match is a
# tournament spec instead of a script.
# The clock's keys are ``timecontrol.TimePolicy`` fields: how much of the clock the solver's
# zones keep back.
RAVE_SETTINGS = {"c_uct": float, "rave_equiv": float, "expand_visits": int, "p_local": float,
                 "samples": int, "min_score": int, "solver": bool, "opening_weight": float,
                 "try_floor_seconds": float, "reach_floor_seconds": float,
                 "solver_keep_share": float, "reserve": float, "pattern_prior": float,
                 "prior_visits": float}
_POLICY_KEYS = ("p_local", "samples", "min_score")
_CLOCK_KEYS = ("try_floor_seconds", "reach_floor_seconds", "solver_keep_share", "reserve")


def parse_rave_settings(pairs) -> dict:
    """``KEY=VALUE`` strings -> typed rave settings; ValueError naming a bad one."""
    settings = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or key not in RAVE_SETTINGS:
            raise ValueError(f"bad rave setting {pair!r}: KEY=VALUE with KEY one of "
                             f"{', '.join(RAVE_SETTINGS)}")
        kind = RAVE_SETTINGS[key]
        try:
            if kind is bool:
                if text.strip().lower() not in ("0", "1", "true", "false", "on", "off"):
                    raise ValueError(text)
                value = text.strip().lower() in ("1", "true", "on")
            else:
                value = kind(text)
        except ValueError:
            raise ValueError(f"bad rave setting {pair!r}: {key} takes a {kind.__name__}") \
                from None
        settings[key] = value
    return settings


def _rave(playouts=None, seconds=None, threads=None, seed=None, settings=None):
    import sys

    from .rave import RaveAgent

    options = dict(settings or {})
    policy = {k: options.pop(k) for k in _POLICY_KEYS if k in options}
    clock = {k: options.pop(k) for k in _CLOCK_KEYS if k in options}
    return RaveAgent(playouts=playouts, seconds=seconds, threads=threads or 1, seed=seed,
                     log=sys.stderr, policy=policy or None, clock=clock or None, **options)


AGENTS: dict[str, AgentInfo] = {
    a.name: a
    for a in (
        AgentInfo("random", "uniformly random legal move", ("seed",), _random),
        AgentInfo("greedy", "one-ply: win at once, else avoid a move that loses at once",
                  ("seed",), _greedy),
        AgentInfo("rollout", "pure MCTS (UCT) with uniformly random playouts",
                  ("playouts", "seconds", "seed"), _rollout),
        AgentInfo("alphabeta", "iterative-deepening alpha-beta, mobility evaluation",
                  ("seconds", "depth", "seed"), _alphabeta),
        AgentInfo("rave", "MCTS with RAVE and a NoGo rollout policy (classical champion class)",
                  ("playouts", "seconds", "threads", "seed", "settings"), _rave),
    )
}


def make_agent(name: str, **options: Any) -> Agent:
    """Build agent ``name`` with the given options; options left as None are not passed.

    Raises ValueError naming the agent and the options it accepts on an unknown name or option."""
    info = AGENTS.get(name)
    if info is None:
        raise ValueError(f"unknown agent {name!r}; choose from {', '.join(AGENTS)}")
    given = {k: v for k, v in options.items() if v is not None}
    bad = sorted(set(given) - set(info.options))
    if bad:
        opts = ", ".join(f"--{o}" for o in info.options)
        raise ValueError(f"agent {name!r} does not take {', '.join('--' + b for b in bad)} "
                         f"(it takes: {opts})")
    agent = info.build(**given)
    warm_up_rules()
    return agent


def warm_up_rules() -> None:
    """Load the rules kernels that the GTP layer calls (numba loads each one on first call).

    Without this the first timed ``genmove`` or ``play`` of a fresh engine pays ~0.5 s of
    loading, enough to lose a fast per-move game on time."""
    from ..game.board import Board

    b = Board(3)
    b.play(4)
    b.copy().undo()
    b.legal_moves()
    b.liberty_counts()
