"""Real-clock games through the tournament referee (its own clock, zero tolerance, measured
outside the engine): `nogobot gtp` never loses on time and every reply arrives in budget."""

import pytest

from nogobot.tools.benchmarks import bench_time

pytestmark = pytest.mark.slow


def test_20s_sudden_death_against_greedy():
    out = bench_time(main=20.0, games=1, opponent="greedy", quiet=True)
    (game,) = out["games"]
    assert not game["lost_on_time"] and game["reason"] != "time"
    assert game["used"] < 20.0 and game["min_left"] > 0.5  # the lag buffer was kept back
    assert game["share"] > 0.5  # and the clock was actually used


def test_half_second_per_move_against_greedy():
    out = bench_time(per_move=0.5, games=1, opponent="greedy", quiet=True)
    (game,) = out["games"]
    assert not game["lost_on_time"]
    assert game["max_move"] < 0.5  # every reply within the budget, timed by the referee
