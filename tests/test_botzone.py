"""``nogobot botzone`` (nogobot/botzone.py): Botzone's NoGo protocol.

Recorded inputs (full JSON and simple histories, keep-running continuations, malformed ones)
are replayed into the bot; every answer is checked against a position rebuilt independently
here (x = row from the top, y = column). Whole games are played against a random "judge" in
both interaction modes. The CLI runs once with the network player to check the keep-running
marker, stdout purity and the per-move budget."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import time

import pytest
from conftest import ROOT

from nogobot.botzone import KEEP_RUNNING, BotzoneBot
from nogobot.engine.agent import Agent
from nogobot.game.board import BLACK, WHITE, Board

CENTRE = (4, 4)


def greedy():
    from nogobot.agents.greedy import GreedyAgent

    return GreedyAgent(seed=7)


def make_bot(factory=greedy, **kw):
    logged: list[str] = []
    bot = BotzoneBot(factory, move_time=kw.pop("move_time", 0.5), log=logged.append, seed=3,
                     **kw)
    return bot, logged


def replay(lines: list[str], factory=greedy, keep_running: bool = True):
    """Feed the input lines to a fresh bot; (answer lines, stderr messages)."""
    bot, logged = make_bot(factory)
    out = io.StringIO()
    assert bot.run(io.StringIO("".join(ln + "\n" for ln in lines)), out, keep_running) == 0
    text = out.getvalue().split("\n")[:-1]
    if keep_running:
        assert text[1::2] == [KEEP_RUNNING] * (len(text) // 2), text
        text = text[::2]
    return text, logged


def board_of(moves: list[tuple[int, int]], me: int) -> Board:
    """The position after ``moves`` (opponent first, alternating), skipping (-1, -1)."""
    b = Board(9)
    colour = 3 - me
    for x, y in moves:
        if (x, y) != (-1, -1):
            b.play(x * 9 + y, colour)
        colour = 3 - colour
    return b


def answer_xy(line: str) -> tuple[int, int]:
    if line.startswith("{"):
        data = json.loads(line)
        assert set(data) <= {"response", "debug"}
        return data["response"]["x"], data["response"]["y"]
    x, y = line.split()
    return int(x), int(y)


def assert_legal(board: Board, me: int, xy: tuple[int, int]) -> None:
    assert xy != (-1, -1) and board.is_legal(xy[0] * 9 + xy[1], me), (xy, str(board))


# -- recorded full inputs ------------------------------------------------------------------------

# (input line, our colour, the history it describes)
FULL_JSON = [
    ('{"requests":[{"x":-1,"y":-1}],"responses":[],"data":"","globaldata":"",'
     '"time_limit":1,"memory_limit":256}', BLACK, [(-1, -1)]),
    ('{"requests":[{"x":4,"y":4}],"responses":[]}', WHITE, [(4, 4)]),
    ('{"requests":[{"x":-1,"y":-1},{"x":2,"y":3}],"responses":[{"x":6,"y":6}]}', BLACK,
     [(-1, -1), (6, 6), (2, 3)]),
    ('{"requests":[{"x":0,"y":1},{"x":8,"y":8},{"x":1,"y":0}],'
     '"responses":[{"x":0,"y":2},{"x":7,"y":7}]}', WHITE,
     [(0, 1), (0, 2), (8, 8), (7, 7), (1, 0)]),
]


@pytest.mark.parametrize("line,me,history", FULL_JSON)
def test_full_json_inputs(line, me, history):
    answers, logged = replay([line], keep_running=False)
    assert len(answers) == 1 and not logged[:-1]  # only the "plays ..." note
    assert_legal(board_of(history, me), me, answer_xy(answers[0]))


def test_simple_interaction_full_and_continued():
    # Turn 2 as black: -1 -1 / our 6 6 / their 2 3; then keep-running continuations.
    answers, logged = replay(["2", "-1 -1", "6 6", "2 3", "3 3"])
    assert len(answers) == 2 and all(re.fullmatch(r"\d \d", a) for a in answers)
    history = [(-1, -1), (6, 6), (2, 3)]
    first = answer_xy(answers[0])
    assert_legal(board_of(history, BLACK), BLACK, first)
    history += [first, (3, 3)]
    assert_legal(board_of(history, BLACK), BLACK, answer_xy(answers[1]))


# -- games against a random judge ----------------------------------------------------------------


@pytest.mark.parametrize("mode,me", [("json", BLACK), ("json", WHITE), ("simple", BLACK),
                                     ("simple", WHITE)])
def test_keep_running_game_against_a_random_judge(mode, me):
    bot, logged = make_bot()
    judge = Board(9)
    rng = random.Random(11)
    history: list[tuple[int, int]] = []

    def judge_move() -> tuple[int, int]:
        moves = judge.legal_moves(3 - me)
        p = int(rng.choice(moves))
        judge.play(p, 3 - me)
        return divmod(p, 9)

    first = (-1, -1) if me == BLACK else judge_move()
    history.append(first)
    if mode == "json":
        lines = [json.dumps({"requests": [{"x": first[0], "y": first[1]}], "responses": []})]
    else:
        lines = ["1", f"{first[0]} {first[1]}"]
    turns = 0
    while True:
        feed = iter(lines)
        req, started = bot.read_request(lambda: next(feed, ""))
        xy = answer_xy(bot.respond(req, started))
        if judge.num_legal(me) == 0:
            assert xy == (-1, -1)  # we lost: nothing legal to answer
            break
        assert_legal(judge, me, xy)
        if turns == 0 and me == BLACK:
            assert xy != CENTRE
        judge.play(xy[0] * 9 + xy[1], me)
        turns += 1
        if judge.num_legal(3 - me) == 0:
            break  # the judge is stuck: we won
        reply = judge_move()
        lines = [json.dumps({"x": reply[0], "y": reply[1]}) if mode == "json"
                 else f"{reply[0]} {reply[1]}"]
    assert turns >= 20
    assert not [m for m in logged if "illegal" in m or "error" in m], logged


# -- the centre rule -----------------------------------------------------------------------------


class CentreLover(Agent):
    """Always wants the centre; as an MCTS agent it also reports its search."""

    def __init__(self, with_search: bool):
        self.with_search = with_search
        self.last_result = None

    def select_move(self, board, seconds=None):
        from nogobot.engine.search import ChildStats, SearchResult

        if self.with_search:
            kids = [ChildStats(40, 90, 0.1, 0.5, 0), ChildStats(30, 60, 0.0, 0.2, 0),
                    ChildStats(10, 70, 0.0, 0.1, 0)]
            self.last_result = SearchResult(40, 221, 220, 10, 0.1, 0.1, "time", kids)
        return 40


@pytest.mark.parametrize("with_search", [False, True])
def test_black_never_opens_at_the_centre(with_search):
    factory = lambda: CentreLover(with_search)  # noqa: E731
    answers, _ = replay(['{"requests":[{"x":-1,"y":-1}],"responses":[]}'], factory)
    xy = answer_xy(answers[0])
    assert xy != CENTRE and xy != (-1, -1)
    if with_search:
        assert xy == divmod(10, 9)  # the most visited other move
    # Later in the game, and as white, the centre is fine.
    answers, _ = replay(['{"requests":[{"x":0,"y":0}],"responses":[]}'], factory)
    assert answer_xy(answers[0]) == CENTRE
    answers, _ = replay(['{"requests":[{"x":-1,"y":-1}],"responses":[]}', '{"x":0,"y":0}'],
                        factory)
    assert answer_xy(answers[1]) == CENTRE


# -- malformed input -----------------------------------------------------------------------------

MALFORMED = [
    # (input lines, expected message, position the last answer must be legal in, our colour)
    (['{"requests":[{"x":-1,"y":-1}'], "not valid JSON", [(-1, -1)], BLACK),
    (["hello botzone"], "not integers", [(-1, -1)], BLACK),
    (['{"requests":[{"x":-1,"y":-1},{"x":6,"y":6}],"responses":[{"x":6,"y":6}]}'],
     "illegal for white (occupied)", [(-1, -1), (6, 6)], BLACK),
    # White B1 then black A2 would capture... black plays A1-corner capture: white stone at
    # (8,0) (A1) surrounded by black (7,0) and (8,1): the last request captures it.
    (['{"requests":[{"x":7,"y":0},{"x":8,"y":1}],"responses":[{"x":8,"y":0}]}'],
     "a capture or suicide", [(7, 0), (8, 0)], WHITE),
    (['{"requests":[{"x":-1,"y":-1},{"x":2,"y":2}],"responses":[]}'],
     "2 requests but 0 responses", [(-1, -1), None, (2, 2)], BLACK),
    (['{"requests":[{"x":-1,"y":-1},{"x":9,"y":3}],"responses":[{"x":1,"y":1}]}'],
     "off the 9x9 board", [(-1, -1), (1, 1)], BLACK),
    (['{"requests":[{"x":-1,"y":-1},{"x":"a","y":3}],"responses":[{"x":1,"y":1}]}'],
     "non-integer", [(-1, -1), (1, 1)], BLACK),
    (['{"requests":[{"x":-1,"y":-1},{"x":3}],"responses":[{"x":1,"y":1}]}'],
     "is not a move", [(-1, -1), (1, 1)], BLACK),
    (['{"requests":[{"x":-1,"y":-1}],"responses":[]}', '{"x":4,"y":4,', '{"x":5,"y":5}'],
     "not valid JSON", None, BLACK),
    (['{"x":3,"y":3}'], "assuming a new game", [(3, 3)], WHITE),
    (["3", "-1 -1", "1 1"], "input ended after 2 of 5", [(-1, -1), (1, 1)], BLACK),
    (["2", "-1 -1", "x y", "2 2"], "move line 2 is not integers", [(-1, -1), None, (2, 2)],
     BLACK),
    (['[1, 2, 3]'], "neither a full input nor a request", [(-1, -1)], BLACK),
]


@pytest.mark.parametrize("lines,message,history,me", MALFORMED)
def test_malformed_input_is_explained_and_still_answered(lines, message, history, me):
    answers, logged = replay(lines)
    assert len(answers) == (1 if lines[0].isdigit() else len(lines))
    assert any(message in m for m in logged), logged
    if history is not None:
        moves = [m for m in history if m is not None]
        if None in history:  # an unreadable entry: the rest keeps its colours
            b = Board(9)
            colour = 3 - me
            for m in history:
                if m is not None and m != (-1, -1):
                    b.play(m[0] * 9 + m[1], colour)
                colour = 3 - colour
        else:
            b = board_of(moves, me)
        assert_legal(b, me, answer_xy(answers[-1]))
    else:
        assert answer_xy(answers[-1]) != (-1, -1)
    answered_json = lines[0].startswith(("{", "["))
    assert answers[-1].startswith("{") == answered_json


def test_no_legal_move_answers_minus_one():
    bot, logged = make_bot(size=2)
    out = io.StringIO()
    # 2x2: black A2 (0,0), white B2 (0,1), black A1 (1,0): white has nothing left.
    line = '{"requests":[{"x":0,"y":0},{"x":1,"y":0}],"responses":[{"x":0,"y":1}]}'
    bot.run(io.StringIO(line + "\n"), out, keep_running=False)
    assert answer_xy(out.getvalue().strip()) == (-1, -1)


# -- the command line ----------------------------------------------------------------------------


def test_cli_keep_running_with_the_network_player():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "nogobot", "botzone", "--move-time", "0.5",
                             "--margin", "0.1", "--seed", "2"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        def ask(line: str) -> tuple[str, float]:
            start = time.monotonic()
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
            answer = proc.stdout.readline().decode().rstrip("\n")
            assert proc.stdout.readline().decode().rstrip("\n") == KEEP_RUNNING
            return answer, time.monotonic() - start

        board = Board(9)
        answer, _ = ask('{"requests":[{"x":-1,"y":-1}],"responses":[]}')
        xy = answer_xy(answer)
        assert xy != CENTRE
        board.play(xy[0] * 9 + xy[1], BLACK)
        rng = random.Random(5)
        for _ in range(3):
            p = int(rng.choice(board.legal_moves(WHITE)))
            board.play(p, WHITE)
            answer, took = ask(json.dumps({"x": p // 9, "y": p % 9}))
            xy = answer_xy(answer)
            assert_legal(board, BLACK, xy)
            board.play(xy[0] * 9 + xy[1], BLACK)
            assert took < 0.5 + 0.25, took  # the budget is 0.5 - 0.1 s
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout.read() == b""
        assert b"botzone: black plays" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_cli_answers_once_without_keep_running():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "nogobot", "botzone", "--agent", "greedy",
                          "--no-keep-running", "--quiet"],
                         input=b"2\n-1 -1\n4 4\n3 3\n", capture_output=True, timeout=60,
                         env=env, check=False)
    assert res.returncode == 0 and res.stderr == b""
    lines = res.stdout.decode().split("\n")
    assert len(lines) == 2 and lines[1] == ""
    assert_legal(board_of([(-1, -1), (4, 4), (3, 3)], BLACK), BLACK, answer_xy(lines[0]))
