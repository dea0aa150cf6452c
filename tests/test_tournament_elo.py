"""Elo math of the tournament (Bradley-Terry MLE) and the results file, on known results.

Checks: a 75-25 head-to-head gives 400·log10(3) ≈ 190.8 Elo with the Fisher-information interval
computed by hand; three players with exactly expected scores recover their true ratings; the
anchor sits at its given value with a zero interval; perfect records get virtual draws and stay
finite; a player with no games linking it to the anchor is unrated; likelihood of superiority;
the JSON-lines log drops a torn last line and keeps appending whole lines; per-colour tallies.
"""

import json
import math

import numpy as np
import pytest

from nogobot.tournament.elo import ELO_PER_NAT, Z95, bradley_terry, expected_score, \
    los_head_to_head
from nogobot.tournament.results import ResultsLog, compute_standings


def test_two_players_75_25():
    r = bradley_terry(["a", "b"], np.array([[0, 75], [25, 0]]), anchor="b")
    assert r.prior == 0
    assert r.elo["b"] == 0 and r.ci95["b"] == 0
    assert r.elo["a"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    # Fisher information of the log-odds: n p (1-p) = 100 * 0.75 * 0.25.
    assert r.ci95["a"] == pytest.approx(Z95 * ELO_PER_NAT / math.sqrt(18.75), rel=1e-6)
    assert r.los("a", "b") > 0.99


def test_three_players_recover_true_ratings_and_anchor_offset():
    true = {"x": 0.0, "y": 120.0, "z": 300.0}
    names = list(true)
    n = 400
    wins = np.zeros((3, 3))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                wins[i, j] = n * expected_score(true[a] - true[b])
    r = bradley_terry(names, wins, anchor="x", anchor_elo=1000)
    for k in names:
        assert r.elo[k] == pytest.approx(1000 + true[k], abs=1e-6)
    assert r.ci95["x"] == 0 and r.ci95["y"] > 0 and r.ci95["z"] > 0


def test_perfect_records_get_virtual_draws():
    # a beat b 4-0, b beat c 4-0: no finite MLE.
    r = bradley_terry(["a", "b", "c"], np.array([[0, 4, 0], [0, 0, 4], [0, 0, 0]]),
                      anchor="b")
    assert r.prior == 1
    # One virtual draw per pairing: 4.5 - 0.5, i.e. odds 9 -> 400*log10(9) per step.
    assert r.elo["a"] == pytest.approx(400 * math.log10(9), abs=1e-6)
    assert r.elo["c"] == pytest.approx(-400 * math.log10(9), abs=1e-6)
    assert all(math.isfinite(r.ci95[k]) for k in "abc")


def test_unconnected_player_is_unrated():
    r = bradley_terry(["a", "b", "c"], np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]]),
                      anchor="a")
    assert math.isnan(r.elo["c"]) and not r.connected["c"]
    assert r.elo["b"] == pytest.approx(-400 * math.log10(3), abs=1e-6)


def test_los_head_to_head():
    assert los_head_to_head(0, 0) == 0.5
    assert los_head_to_head(5, 5) == 0.5
    assert los_head_to_head(10, 0) > 0.99
    assert los_head_to_head(3, 7) == pytest.approx(1 - los_head_to_head(7, 3))
    # Textbook value: 60-40 -> Phi(20/sqrt(100)) = Phi(2) ... in erf form.
    assert los_head_to_head(60, 40) == pytest.approx(0.5 * (1 + math.erf(20 / math.sqrt(200))))


def _rec(b, w, winner, reason="no_legal_move", moves=("A1", "B2")):
    return {"key": [b, w, 0], "black": b, "white": w, "winner": winner, "reason": reason,
            "moves": list(moves), "times": [0.1] * len(moves)}


def test_results_log_survives_torn_line(tmp_path):
    log = ResultsLog(tmp_path / "r.jsonl")
    log.append(_rec("a", "b", "B"))
    log.append(_rec("b", "a", "W"))
    with open(log.path, "ab") as f:
        f.write(b'{"key": ["a", "b", 2], "bla')  # killed in the middle of a write
    records = log.load()
    assert len(records) == 2
    log.append(_rec("a", "b", "W"))
    lines = log.path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(x) for x in lines)


def test_standings_per_colour():
    recs = [_rec("a", "b", "B"), _rec("b", "a", "B"), _rec("a", "b", "W", "time"),
            _rec("b", "a", "W")]
    st = compute_standings(recs, ["a", "b"], anchor="a")
    assert st.total == 4 and st.black_wins == 2
    assert st.wins == {"a": 2, "b": 2}
    assert st.black_record["a"] == (1, 2) and st.white_record["a"] == (1, 2)
    (p,) = st.pairings
    assert (p.a_wins, p.b_wins, p.a_black_wins, p.a_white_wins) == (2, 2, 1, 1)
    assert st.losses_by_reason["a"]["time"] == 1
    assert st.ratings.elo["b"] == pytest.approx(0.0, abs=1e-9)
