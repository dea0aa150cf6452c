"""Baseline players (random, greedy, rollout, alphabeta, rave) behind the agent contract
(``nogobot.engine.agent.Agent``, re-exported here), and the registry that names them."""

from ..engine.agent import Agent

__all__ = ["Agent"]
