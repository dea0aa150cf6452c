"""What many test modules share: the repository's paths and a few tiny self-play games as shards.

Test modules import the paths (``from conftest import ROOT``: pytest puts tests/ on sys.path, as
for ``exact_evaluator``); fixtures are found by name. Heavy imports (torch, the search) happen
inside the fixtures, so a module that uses neither pays nothing for them.

Slow tests carry ``@pytest.mark.slow`` (CI runs everything); skip them locally with
``pytest -m "not slow"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent  # the repository
TINY_CONFIG = ROOT / "configs" / "tiny.yaml"  # the seconds-long training config


@dataclass
class SelfPlayShards:
    """Self-play games written as shards: ``folder/gen0001/g0000{i}.npz`` (+ ``.sgf``), and the
    games as played (``GameData``, in the same order)."""

    folder: Path
    games: list


@pytest.fixture(scope="session")
def selfplay_shards(tmp_path_factory) -> SelfPlayShards:
    """Three 5x5 self-play games with the uniform evaluator (the solver on, playout cap
    randomisation at 24/6 playouts), written as shards. Shared by the session: read, never
    write, the folder (copy a shard to tmp_path to alter it)."""
    import numpy as np

    from nogobot.engine.search import Searcher
    from nogobot.net.inference import UniformEvaluator
    from nogobot.train.config import SelfPlayConfig
    from nogobot.train.selfplay import play_selfplay_game, search_config, write_shard

    folder = tmp_path_factory.mktemp("shards")
    sp = SelfPlayConfig(playouts=24, fast_playouts=6, full_search_fraction=0.5, batch_size=4,
                        max_tree_mb=1, use_solver=True, temperature_moves=3)
    searcher = Searcher(UniformEvaluator(), 5, search_config(sp), seed=5)
    rng = np.random.default_rng(5)
    games = []
    for i in range(3):
        game = play_selfplay_game(searcher, 5, sp, rng, name="uniform")
        write_shard(folder / f"gen0001/g{i:05d}", game, {"model": "uniform"})
        games.append(game)
    return SelfPlayShards(folder, games)


@pytest.fixture
def search_kernels() -> None:
    """The search kernels loaded (compiled on a cold cache) before a test that times a search.
    The engine waits for them before its first search (``warmup.wait``); a test that builds a
    searcher itself does not, and alone in a fresh process (``pytest -n``, or the one test)
    its first search would compile them inside its own clock."""
    from nogobot.tools import warmup

    warmup.wait("search")
