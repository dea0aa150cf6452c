"""The JSON analysis engine (nogobot/analysis.py).

In-process, on a deterministic stand-in network (tests/exact_evaluator.py): the protocol (ids,
turn numbers, fields, every kind of malformed or impossible query, special actions), concurrent
queries giving exactly the searches they get alone while sharing network calls, answers out of
order, a failing network call, and agreement with the GTP engine's search of the same position
at the same budget. As a process, on the shipped model: stdout carries nothing but JSON lines,
the engine keeps serving after bad input and exits 0 at EOF, and its answers agree with
``nogobot gtp --playouts`` on the same positions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT
from exact_evaluator import ExactEvaluator

from nogobot.analysis.engine import AnalysisEngine, analyse
from nogobot.engine.mcts import SearchConfig
from nogobot.game import coords
from nogobot.game.board import Board

OPENING = [["B", "E5"], ["W", "D4"], ["B", "C3"]]


def engine(**kw) -> AnalysisEngine:
    kw.setdefault("visits", 48)
    return AnalysisEngine(kw.pop("evaluator", None) or ExactEvaluator(), **kw)


def run(queries, **kw) -> list[dict]:
    return analyse(engine(**kw), queries)


def q(qid="q", **fields) -> dict:
    base = {"id": qid, "boardXSize": 9, "moves": OPENING}
    base.update(fields)
    return base


def random_moves(seed: int, plies: int, size: int = 9) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    b = Board(size)
    while b.ply < plies and not b.is_terminal():
        b.play(int(rng.choice(b.legal_moves())))
    return [["B" if c == 1 else "W", coords.to_gtp(p, size)] for c, p in b.moves]


# -- answers -------------------------------------------------------------------------------------


def test_answer_fields_and_turns():
    out = run([q(analyzeTurns=[3, 0, 1], includeOwnership=True, includePolicy=True,
                 maxVisits=40, analysisPVLen=3)])
    assert sorted(a["turnNumber"] for a in out) == [0, 1, 3]
    for a in out:
        assert a["id"] == "q" and a["isDuringSearch"] is False
        root = a["rootInfo"]
        assert root["visits"] >= 40  # the last batch may pass it (cached and terminal leaves)
        assert root["currentPlayer"] == ("B" if a["turnNumber"] == 0 else "W")
        assert 0 <= root["winrate"] <= 1 and abs(root["utility"] - (2 * root["winrate"] - 1)) < 1e-5
        assert "rawWinrate" in root and len(root["thisHash"]) == 16
        infos = a["moveInfos"]
        assert [m["order"] for m in infos] == list(range(len(infos)))
        assert sum(m["visits"] for m in infos) == root["visits"] - 1
        assert all(infos[k]["visits"] >= infos[k + 1]["visits"] for k in range(len(infos) - 1))
        for m in infos:
            assert m["pv"][0] == m["move"] and 1 <= len(m["pv"]) <= 4
            assert 0 <= m["prior"] <= 1 and 0 <= m["lcb"] <= m["winrate"] + 1e-9
        own, pol = a["ownership"], a["policy"]
        assert len(own) == 81 and all(-1 <= v <= 1 for v in own)
        assert len(pol) == 81 and abs(sum(p for p in pol if p >= 0) - 1) < 1e-4
    first = next(a for a in out if a["turnNumber"] == 3)
    occupied = [coords.from_gtp(v, 9) for _, v in OPENING]
    assert all(first["policy"][p] == -1 for p in occupied)


def test_default_turn_is_the_last_and_int_ids_are_echoed():
    out = run([{"id": 7, "boardXSize": 5, "moves": [["B", "C3"]]}])
    assert len(out) == 1 and out[0]["id"] == 7 and out[0]["turnNumber"] == 1
    assert out[0]["rootInfo"]["currentPlayer"] == "W"


def test_report_as_black_and_white():
    plain = run([q(maxVisits=32)])[0]
    black = run([q(maxVisits=32)], report_as="black")[0]
    white = run([q(maxVisits=32)], report_as="white")[0]
    assert plain["rootInfo"]["currentPlayer"] == "W"  # after three moves, White to move
    assert white["rootInfo"]["winrate"] == plain["rootInfo"]["winrate"]
    assert abs(black["rootInfo"]["winrate"] + plain["rootInfo"]["winrate"] - 1) < 2e-6
    for a, b in zip(plain["moveInfos"], black["moveInfos"]):
        assert a["move"] == b["move"] and abs(a["winrate"] + b["winrate"] - 1) < 2e-6


def test_setup_stones_and_initial_player():
    out = run([{"id": "s", "boardXSize": 5, "moves": [], "initialPlayer": "W",
                "initialStones": [["B", "C3"], ["W", "A1"]], "includePolicy": True,
                "maxVisits": 16}])
    a = out[0]
    assert a["rootInfo"]["currentPlayer"] == "W"
    assert all(a["policy"][coords.from_gtp(v, 5)] == -1 for v in ("C3", "A1"))


def test_finished_game_and_solved_positions():
    # 2x2: B A2, W B1, B A1 leaves White without a legal move.
    moves = [["B", "A2"], ["W", "B1"], ["B", "A1"]]
    out = run([{"id": "end", "boardXSize": 2, "moves": moves, "analyzeTurns": [2, 3]}])
    end = next(a for a in out if a["turnNumber"] == 3)
    assert end["moveInfos"] == [] and end["rootInfo"]["winrate"] == 0.0
    solved = next(a for a in out if a["turnNumber"] == 2)  # A1 or B2 leaves White stuck
    assert solved["rootInfo"]["winrate"] == 1.0 and solved["rootInfo"].get("proven")
    best = solved["moveInfos"][0]  # the solver stops at the first win it proves
    assert best["move"] in ("A1", "B2") and best["winrate"] == 1.0 and best["proven"]


# -- errors ----------------------------------------------------------------------------------------


BAD = [
    ("not json", {"error"}, None, "could not parse JSON"),
    ("[1, 2]", {"error"}, None, "JSON object"),
    ('{"moves": []}', {"error", "field"}, "id", "missing"),
    ('{"id": [1]}', {"error", "field", "id"}, "id", "string"),
    ('{"id": "a", "boardXSize": 9}', {"id", "error", "field"}, "moves", "missing"),
    ('{"id": "a", "moves": []}', {"id", "error", "field"}, "boardXSize", "missing"),
    ('{"id": "a", "moves": [], "boardXSize": 20}', None, "boardXSize", "not supported"),
    ('{"id": "a", "moves": [], "boardXSize": 1}', None, "boardXSize", "not supported"),
    ('{"id": "a", "moves": [], "boardXSize": "9"}', None, "boardXSize", "integer"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "boardYSize": 7}', None, "boardYSize",
     "square"),
    ('{"id": "a", "moves": [["B", "E5"], ["W", "E5"]], "boardXSize": 9}', None, "moves",
     "move 2 (W E5) is illegal in NoGo: the point is occupied"),
    ('{"id": "a", "moves": [["B", "A2"], ["W", "A1"], ["B", "B1"]], "boardXSize": 9}', None,
     "moves", "move 3 (B B1) is illegal in NoGo: it would capture"),
    ('{"id": "a", "moves": [["B", "A2"], ["B", "B1"], ["W", "A1"]], "boardXSize": 9}', None,
     "moves", "move 3 (W A1) is illegal in NoGo: it would be suicide"),
    ('{"id": "a", "moves": [["B", "pass"]], "boardXSize": 9}', None, "moves", "no pass"),
    ('{"id": "a", "moves": [["B", "K10"]], "boardXSize": 9}', None, "moves", "off the"),
    ('{"id": "a", "moves": [["X", "E5"]], "boardXSize": 9}', None, "moves", "player"),
    ('{"id": "a", "moves": "E5", "boardXSize": 9}', None, "moves", "list"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "analyzeTurns": [1]}', None, "analyzeTurns",
     "not in 0..0"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "analyzeTurns": 0}', None, "analyzeTurns",
     "list"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "maxVisits": 0}', None, "maxVisits",
     "between"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "maxVisits": "many"}', None, "maxVisits",
     "integer"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "rules": "japanese"}', None, "rules", "nogo"),
    ('{"id": "a", "moves": [], "boardXSize": 9, "includeOwnership": 1}', None,
     "includeOwnership", "true or false"),
    ('{"id": "a", "moves": [], "boardXSize": 3, "initialStones": [["B", "A1"], ["W", "A1"]]}',
     None, "initialStones", "two stones"),
    ('{"id": "a", "moves": [], "boardXSize": 2, '
     '"initialStones": [["B", "A1"], ["W", "A2"], ["W", "B1"]]}', None, "initialStones",
     "setup"),
    ('{"id": "a", "action": "explode"}', None, "action", "unknown action"),
    ('{"id": "a", "action": "terminate"}', None, "terminateId", "missing"),
]


@pytest.mark.parametrize("line,keys,field,text", BAD)
def test_bad_queries_get_an_error_naming_id_and_field(line, keys, field, text):
    eng = engine()
    out = []
    eng.submit_line(line, out.append)
    assert len(out) == 1, out
    err = out[0]
    assert text in err["error"]
    if keys is not None:
        assert set(err) == keys
    if field is not None:
        assert err["field"] == field
    if line.startswith('{"id": "a"'):
        assert err["id"] == "a"
    assert eng.inbox.empty()  # nothing was queued


def test_the_engine_keeps_serving_after_errors_and_warns_on_unknown_fields():
    eng = engine()
    out = []
    for line in (b"\xff\xfe\n", b"{oops\n", b"\n", b"   \n",
                 json.dumps(q("ok", maxVisits=16, komi=7.5, priority=3)).encode(),
                 json.dumps(q("bad", moves=[["B", "E5"], ["W", "E5"]])).encode()):
        eng.submit_line(line, out.append)
    eng.close_input()
    eng.run(out.append)
    assert out[0] == {"error": "the line is not valid UTF-8"}
    assert out[1]["error"].startswith("could not parse JSON")
    assert out[2] == {"id": "ok", "warning": "unknown field, ignored", "field": "priority"}
    assert out[3]["id"] == "bad" and out[3]["field"] == "moves"
    assert out[4]["id"] == "ok" and out[4]["turnNumber"] == 3 and out[4]["moveInfos"]
    assert len(out) == 5


def test_actions():
    eng = engine()
    out = []
    eng.submit({"id": "v", "action": "query_version"}, out.append)
    eng.submit(q("long", analyzeTurns=[0, 1, 2, 3], maxVisits=16), out.append)
    eng.submit({"id": "t", "action": "terminate", "terminateId": "long",
                "turnNumbers": [2, 3]}, out.append)
    eng.submit({"id": "c", "action": "clear_cache"}, out.append)
    eng.close_input()
    eng.concurrency = 1  # turns 2 and 3 are still queued when the terminate arrives
    eng.run(out.append)
    assert out[0]["id"] == "v" and out[0]["version"] and out[0]["action"] == "query_version"
    by_turn = {a["turnNumber"]: a for a in out if a.get("id") == "long"}
    assert by_turn[2] == {"id": "long", "turnNumber": 2, "isDuringSearch": False,
                          "noResults": True}
    assert by_turn[3]["noResults"] and by_turn[0]["moveInfos"]
    assert {"id": "t", "action": "terminate", "terminateId": "long",
            "turnNumbers": [2, 3]} in out
    assert {"id": "c", "action": "clear_cache"} in out


def test_terminate_pending_and_running_searches():
    out = []

    class Interrupting(ExactEvaluator):
        def evaluate(self, planes):
            if self.calls == 3:  # both searches are running now
                eng.submit({"id": "stop", "action": "terminate_all"}, out.append)
            return super().evaluate(planes)

    eng = engine(evaluator=Interrupting())
    eng.submit(q("big", maxVisits=10_000_000, analyzeTurns=[0, 1]), out.append)
    eng.close_input()
    eng.run(out.append)
    answers = [a for a in out if a.get("id") == "big"]
    assert len(answers) == 2 and {"id": "stop", "action": "terminate_all"} in out
    assert all(16 <= a["rootInfo"]["visits"] < 1000 for a in answers)  # what they had
    # A terminate that arrives before a search starts: noResults.
    out = run([q("p", analyzeTurns=[0, 1]), {"id": "t", "action": "terminate_all"}])
    assert [a.get("noResults") for a in out if a.get("id") == "p"] == [True, True]


def test_a_failing_network_call_fails_only_its_positions():
    class Flaky(ExactEvaluator):
        def evaluate(self, planes):
            if self.calls == 2:
                self.calls += 1
                raise RuntimeError("device lost")
            return super().evaluate(planes)

    out = run([q("a", maxVisits=64), q("b", moves=[], maxVisits=64)], evaluator=Flaky())
    errors = [a for a in out if "error" in a]
    assert errors and all("network evaluation failed: device lost" in a["error"]
                          and "turnNumber" in a for a in errors)
    eng = engine(evaluator=Flaky())
    eng.evaluator.calls = 3  # already failed once: later queries are served
    assert "moveInfos" in analyse(eng, [q("c", maxVisits=16)])[0]


# -- concurrency -----------------------------------------------------------------------------------


@pytest.mark.parametrize("pipeline", [True, False])
def test_concurrent_queries_share_network_calls_and_search_as_alone(pipeline):
    queries = [q(f"g{k}", moves=random_moves(k, 6 + 3 * k), maxVisits=64) for k in range(8)]
    alone = {}
    solo_calls = 0
    for query in queries:
        ev = ExactEvaluator()
        alone[query["id"]] = analyse(AnalysisEngine(ev, visits=64), [query])[0]
        solo_calls += ev.calls
    ev = ExactEvaluator()
    together = analyse(AnalysisEngine(ev, visits=64, concurrency=8, pipeline=pipeline),
                       queries)
    assert sorted(a["id"] for a in together) == sorted(alone)
    for a in together:
        assert a == alone[a["id"]], a["id"]
    # The leaves of all 8 searches went out together (in two lanes when pipelined).
    assert ev.calls < solo_calls / (2 if pipeline else 4)
    assert ev.largest > 3 * SearchConfig().batch_size


def test_answers_come_out_of_order_as_searches_finish():
    out = run([q("slow", maxVisits=2000), q("quick", moves=[], maxVisits=16)])
    assert [a["id"] for a in out] == ["quick", "slow"]


def test_many_turns_of_one_game_with_limited_concurrency():
    moves = random_moves(3, 30)
    out = run([q("game", moves=moves, analyzeTurns=list(range(31)), maxVisits=16)],
              concurrency=4)
    assert sorted(a["turnNumber"] for a in out) == list(range(31))
    assert all(a["rootInfo"]["currentPlayer"] == ("B" if a["turnNumber"] % 2 == 0 else "W")
               for a in out)


# -- agreement with the GTP engine ---------------------------------------------------------------


def gtp_engine(evaluator, moves, playouts, size=9):
    from nogobot.engine.player import MCTSAgent
    from nogobot.gtp import nogo_engine

    # Seed 0, as the analysis engine's searchers: the leaves' rollouts then draw the same numbers.
    eng = nogo_engine(lambda: MCTSAgent(evaluator, playouts=playouts, seed=0, log=None),
                      board_size=size)
    for colour, vertex in moves:
        assert eng.handle(f"play {colour} {vertex}").startswith("=")
    return eng.handlers, eng


@pytest.mark.parametrize("seed,plies", [(1, 0), (2, 11), (3, 24), (4, 45)])
def test_agreement_with_the_gtp_search(seed, plies):
    """A fresh GTP engine's search of a position (GoGui's candidate table, then ``genmove``
    on another fresh engine) at N playouts is the analysis engine's at maxVisits N."""
    moves = random_moves(seed, plies)
    (_, analysis), eng = gtp_engine(ExactEvaluator(), moves, 120)
    assert eng.handle("nogobot-candidates_table").startswith("=")
    search = analysis._last_search
    (game, _), eng = gtp_engine(ExactEvaluator(), moves, 120)
    best = eng.handle(f"reg_genmove {'b' if game.board.to_move == 1 else 'w'}").strip("= \n")
    a = run([q("x", moves=moves, maxVisits=120)], evaluator=ExactEvaluator())[0]
    assert a["rootInfo"]["visits"] == search.visits
    assert abs(a["rootInfo"]["winrate"] - search.winrate) < 1e-6
    shown = [c for c in search.candidates if c.visits > 0 or c.proof]
    assert [m["move"] for m in a["moveInfos"]] == [coords.to_gtp(c.move, 9) for c in shown]
    for m, c in zip(a["moveInfos"], shown):
        assert m["visits"] == c.visits and abs(m["winrate"] - c.winrate) < 1e-6
        assert m["pv"] == [coords.to_gtp(p, 9) for p in c.pv][:16]
    assert a["moveInfos"][0]["move"] == best


# -- the process ---------------------------------------------------------------------------------


def analysis_process(lines: bytes, *args: str, timeout: float = 120):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "nogobot", "analysis", "--threads", "1",
                           *args], input=lines, capture_output=True, timeout=timeout, env=env,
                          check=False)


def test_process_stdout_is_only_json_and_eof_exits_zero():
    lines = b"\n".join([
        json.dumps(q("a", analyzeTurns=[0, 3], maxVisits=24, includeOwnership=True)).encode(),
        b"this is not json",
        json.dumps({"id": "b", "boardXSize": 9, "moves": [["B", "E5"], ["W", "E5"]]}).encode(),
        b"\xff\xfe",
        json.dumps({"id": "c", "boardXSize": 7, "moves": []}).encode(),
    ])  # no final newline: EOF ends the last line
    res = analysis_process(lines, "--visits", "20")
    assert res.returncode == 0, res.stderr.decode()
    out = [json.loads(line) for line in res.stdout.decode().splitlines()]  # every line JSON
    assert {(a.get("id"), a.get("turnNumber")) for a in out if "moveInfos" in a} == {
        ("a", 0), ("a", 3), ("c", 0)}
    assert sum("error" in a for a in out) == 3
    assert next(a for a in out if a.get("id") == "c")["rootInfo"]["visits"] >= 20
    assert b"nogobot analysis:" in res.stderr


def test_process_agrees_with_nogobot_gtp():
    """Same positions, one at a time, through both programs on the shipped model: the
    network sees the same batches in the same order, so the searches are identical."""
    from nogobot.tournament.gtp_client import GtpProcess

    games = [random_moves(seed, plies) for seed, plies in ((5, 4), (6, 17), (7, 33))]
    env_py = [sys.executable, "-m", "nogobot"]
    # Seed 0, as the analysis engine's searchers: the leaves' rollouts draw the same numbers.
    gtp = GtpProcess(env_py + ["gtp", "--quiet", "--threads", "1", "--playouts", "80",
                               "--seed", "0"],
                     name="gtp", cwd=str(ROOT))
    proc = subprocess.Popen(env_py + ["analysis", "--quiet", "--threads", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=str(ROOT))
    try:
        for k, moves in enumerate(games):
            gtp.command("clear_board", 60)
            for colour, vertex in moves:
                assert gtp.command(f"play {colour} {vertex}", 60)[0]
            ok, table, _ = gtp.command("nogobot-candidates_table", 300)
            assert ok
            rows = {line.split()[0]: int(line.split()[1]) for line in table.splitlines()[2:]}
            proc.stdin.write(json.dumps(q(str(k), moves=moves, maxVisits=80)) + "\n")
            proc.stdin.flush()
            a = json.loads(proc.stdout.readline())
            assert {m["move"]: m["visits"] for m in a["moveInfos"]} == rows
            assert table.split("\n")[2].split()[0] == a["moveInfos"][0]["move"]
    finally:
        gtp.close()
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0
