"""The NoGo GTP commands, driven in-process through ``serve`` with StringIO streams.

Covers every listed command, every error path (each must leave the state unchanged), game end
(resign, empty legal moves, final_score), undo, loadsgf/printsgf, the clock commands, the
GoGui rules replies, and the lazy agent factory."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import textwrap

import pytest

from nogobot.agents.greedy import GreedyAgent
from nogobot.engine.agent import Agent
from nogobot.engine.timecontrol import TimeControl
from nogobot.game import coords
from nogobot.gtp import nogo_engine, serve

RESPONSE = re.compile(r"([=?])(\d*) ?(.*?)\n\n", re.DOTALL)


def run(commands: list[str], factory=None, **kw) -> list[tuple[bool, str]]:
    """Send the commands to a fresh engine via serve(); returns [(ok, text)] per response."""
    out, err = io.StringIO(), io.StringIO()
    factory = factory or (lambda: GreedyAgent(seed=1))
    rc = serve(factory, instream=io.StringIO("".join(c + "\n" for c in commands)),
               outstream=out, errstream=err, **kw)
    assert rc == 0
    text = out.getvalue()
    responses = RESPONSE.findall(text)
    assert "".join(f"{s}{i} {t}\n\n" for s, i, t in responses) == text, "stray output"
    return [(s == "=", t) for s, _, t in responses]


class Session:
    """Step-by-step access to one engine (same objects serve() builds)."""

    def __init__(self, factory=None, **kw):
        self.logged: list[str] = []
        self.engine = nogo_engine(factory or (lambda: GreedyAgent(seed=1)),
                                  log=self.logged.append, **kw)
        self.handler = self.engine.handlers[0]  # the game's commands

    def __call__(self, line: str) -> tuple[bool, str]:
        out = self.engine.handle(line)
        m = RESPONSE.fullmatch(out)
        assert m, out
        return m.group(1) == "=", m.group(3)

    def ok(self, line: str) -> str:
        ok, text = self(line)
        assert ok, f"{line!r} -> ? {text}"
        return text

    def fails(self, line: str, message: str) -> None:
        before = self.snapshot()
        assert self(line) == (False, message), line
        assert self.snapshot() == before, f"{line!r} changed the state"

    def snapshot(self) -> tuple:
        return tuple(self.engine.handle(c) for c in (
            "gogui-rules_board", "gogui-rules_side_to_move", "gogui-rules_legal_moves",
            "gogui-rules_board_size", "printsgf", "showboard"))

    def setup(self, size: int, moves: str) -> None:
        self.ok(f"boardsize {size}")
        for colour, v in zip(moves.split()[::2], moves.split()[1::2]):
            self.ok(f"play {colour} {v}")


@pytest.fixture
def gtp():
    return Session()


# -- setup commands --------------------------------------------------------------------------


def test_full_session_through_serve():
    res = run(["protocol_version", "name", "version", "boardsize 5", "clear_board",
               "komi 6.5", "play b C3", "genmove w", "gogui-rules_side_to_move", "quit",
               "name"])
    assert [ok for ok, _ in res] == [True] * 10  # nothing after quit
    assert res[0][1] == "2" and res[1][1] == "nogobot"
    assert re.fullmatch(r"[A-E][1-5]", res[7][1]) and res[7][1] != "C3"
    assert res[8][1] == "black"


def test_boardsize_and_clear_board(gtp):
    for n in (2, 3, 9, 13, 19):
        gtp.ok(f"boardsize {n}")
        assert gtp.ok("gogui-rules_board_size") == str(n)
        assert len(gtp.ok("gogui-rules_legal_moves").split()) == n * n
    gtp.setup(5, "b C3 w D4")
    for bad, msg in [("boardsize 1", "unacceptable size"), ("boardsize 20", "unacceptable size"),
                     ("boardsize 0", "unacceptable size"), ("boardsize 10000", "unacceptable size"),
                     ("boardsize x", "syntax error"), ("boardsize -9", "syntax error"),
                     ("boardsize", "syntax error"), ("boardsize 9 9", "syntax error"),
                     ("clear_board 1", "syntax error")]:
        gtp.fails(bad, msg)
    gtp.ok("clear_board")
    assert gtp.ok("gogui-rules_board") == "\n".join([". . . . ."] * 5)


def test_komi_accepted_and_ignored(gtp):
    for k in ("6.5", "0", "-12.5", "7", "1e3", "1e400"):
        assert gtp(f"komi {k}") == (True, "")
    for bad in ("komi x", "komi", "komi 1 2", "komi nan", "komi inf"):
        gtp.fails(bad, "syntax error")


# -- play and legality -----------------------------------------------------------------------


def test_play_parsing(gtp):
    gtp.ok("boardsize 9")
    gtp.ok("play b e5")
    gtp.ok("play WHITE E6")
    gtp.ok("play Black j9")
    gtp.ok("play w a1")
    gtp.ok("play w a2")  # the same colour twice is allowed
    assert gtp.ok("gogui-rules_side_to_move") == "black"
    for bad in ("play b E5", "play b I5", "play b K5", "play b A10", "play b A0",
                "play b pass", "play w PASS", "play b Z99999999999999999999999999999999999"):
        gtp.fails(bad, "illegal move")
    for bad in ("play x E4", "play b E", "play b 55", "play b E4x", "play b", "play",
                "play b E4 E3", "play E4 b", "play b resign", "play b É4"):
        gtp.fails(bad, "syntax error")


@pytest.mark.parametrize("size, moves, colour, vertex, legal", [
    # corner capture / suicide
    (3, "b A1 w B1", "w", "A2", False),
    (3, "b A1 w B1", "b", "A2", True),
    (3, "w A2 w B1", "b", "A1", False),
    (3, "w A2 w B1", "w", "A1", True),
    # two-stone block on the edge in atari: capture illegal, extension legal
    (4, "b B1 b C1 w A1 w B2 w C2", "w", "D1", False),
    (4, "b B1 b C1 w A1 w B2 w C2", "b", "D1", True),
    # filling one's own last liberty
    (3, "b A1 b B1 w A2 w B2 w C2", "b", "C1", False),
    (3, "b A1 b B1 w A2 w B2 w C2", "w", "C1", False),
    # the centre point surrounded by white: suicide for black, fine for white
    (5, "w C4 w B3 w D3 w C2", "b", "C3", False),
    (5, "w C4 w B3 w D3 w C2", "w", "C3", True),
    # a point taking the last liberty of a white stone in the middle
    (5, "b C3 w B3 w C4 w D3", "w", "C2", False),
    (5, "b C3 w B3 w C4 w D3", "b", "C2", True),
])
def test_nogo_legality_via_play(gtp, size, moves, colour, vertex, legal):
    gtp.setup(size, moves)
    if legal:
        gtp.ok(f"play {colour} {vertex}")
    else:
        gtp.fails(f"play {colour} {vertex}", "illegal move")


def test_gtp_legality_agrees_with_board_on_random_games():
    """Every play verdict over GTP, for both colours on every point, matches board.py, and
    gogui-rules_legal_moves lists exactly the legal moves of the side to move (5x5 games)."""
    import random

    from nogobot.game.board import Board

    rng = random.Random(3)
    for _ in range(4):
        gtp, board = Session(), Board(5)
        gtp.ok("boardsize 5")
        while True:
            listed = gtp.ok("gogui-rules_legal_moves").split()
            assert listed == [coords.to_gtp(int(p), 5) for p in board.legal_moves()]
            for p in range(25):
                for c, name in ((1, "b"), (2, "w")):
                    ok, text = gtp(f"play {name} {coords.to_gtp(p, 5)}")
                    assert ok == board.is_legal(p, c) and (ok or text == "illegal move")
                    if ok:
                        gtp.ok("undo")
            if board.is_terminal():
                break
            p = int(rng.choice(list(board.legal_moves())))
            gtp.ok(f"play {'b' if board.to_move == 1 else 'w'} {coords.to_gtp(p, 5)}")
            board.play(p)
        assert gtp.ok("gogui-rules_legal_moves") == ""


# -- genmove -----------------------------------------------------------------------------------


def test_genmove_plays_a_legal_move_for_the_asked_colour(gtp):
    gtp.ok("boardsize 9")
    v = gtp.ok("genmove w")  # white although black is to move: play for white
    assert re.fullmatch(r"[A-HJ][1-9]", v)
    board = gtp.ok("gogui-rules_board")
    assert board.count("O") == 1 and "X" not in board
    assert gtp.ok("gogui-rules_side_to_move") == "black"
    gtp.fails(f"play b {v}", "illegal move")
    for bad in ("genmove", "genmove x", "genmove b w", "reg_genmove", "reg_genmove q"):
        gtp.fails(bad, "syntax error")


def test_genmove_resigns_when_stuck_and_changes_nothing(gtp):
    gtp.setup(2, "b A2 w B2 b A1")  # white to move, no legal move (B1 would capture)
    before = gtp.snapshot()
    assert gtp.ok("genmove w") == "resign"
    assert gtp.ok("genmove b") == "resign"
    assert gtp.ok("reg_genmove w") == "resign"
    assert gtp.snapshot() == before
    assert gtp.ok("gogui-rules_legal_moves") == ""


def test_genmove_for_the_colour_not_to_move_when_that_side_is_stuck(gtp):
    gtp.setup(3, "b B2 w B3 b A2 w C2 b A3 w B1")  # black to move is stuck; white has C3, C1
    assert gtp.ok("genmove b") == "resign"
    first = gtp.ok("genmove w")
    second = gtp.ok("genmove w")
    assert {first, second} == {"C3", "C1"}
    assert gtp.ok("genmove w") == "resign"
    assert gtp.ok("final_score") == "W+R"


def test_reg_genmove_does_not_play(gtp):
    gtp.setup(2, "b A2 w B2")  # black's only legal move is A1
    before = gtp.snapshot()
    assert gtp.ok("reg_genmove b") == "A1"
    assert gtp.ok("reg_genmove b") == "A1"
    assert gtp.snapshot() == before
    gtp.ok("play b A1")


def test_agent_factory_is_lazy_and_called_once():
    calls = []

    def factory():
        calls.append(1)
        return GreedyAgent(seed=0)

    gtp = Session(factory)
    for line in ("name", "list_commands", "boardsize 5", "play b C3", "gogui-rules_legal_moves",
                 "showboard", "undo", "printsgf", "final_score", "komi 1"):
        gtp(line)
    assert calls == []
    gtp.setup(2, "b A2 w B2 b A1")
    assert gtp.ok("genmove w") == "resign"  # no move possible: the agent is not needed
    assert calls == []
    gtp.ok("boardsize 5")
    gtp.ok("genmove b")
    gtp.ok("genmove w")
    gtp.ok("reg_genmove b")
    assert calls == [1]
    assert any("GreedyAgent" in line for line in gtp.logged)


class _BadAgent(Agent):
    name = "bad"

    def __init__(self, answer):
        self.answer = answer

    def select_move(self, board, seconds=None):
        board.play(int(board.legal_moves()[0]))  # misbehaves: changes the board it was given
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_misbehaving_agents_cannot_break_the_game():
    gtp = Session(lambda: _BadAgent(0))  # A9 on 9x9 ...
    gtp.ok("boardsize 9")
    gtp.ok("play b A9")
    v = gtp.ok("genmove w")  # ... is occupied: the engine substitutes a legal move
    assert v != "A9" and re.fullmatch(r"[A-HJ][1-9]", v)
    assert any("illegal" in line for line in gtp.logged)
    assert gtp.ok("gogui-rules_board").count("X") == 1

    gtp = Session(lambda: _BadAgent("nonsense"))
    gtp.ok("boardsize 5")
    assert re.fullmatch(r"[A-E][1-5]", gtp.ok("genmove b"))

    gtp = Session(lambda: _BadAgent(coords.RESIGN))
    gtp.ok("boardsize 5")
    assert gtp.ok("genmove b") == "resign"  # an agent may resign while moves remain
    assert gtp.ok("gogui-rules_board") == "\n".join([". . . . ."] * 5)

    gtp = Session(lambda: _BadAgent(RuntimeError("search exploded")))
    gtp.ok("boardsize 5")
    before = gtp.snapshot()
    ok, text = gtp("genmove b")
    assert not ok and text.startswith("internal error: RuntimeError: search exploded")
    assert gtp.snapshot() == before


# -- undo, showboard, final_score --------------------------------------------------------------


def test_undo(gtp):
    gtp.ok("boardsize 3")
    gtp.fails("undo", "cannot undo")
    empty = gtp.snapshot()
    gtp.ok("play b A1")
    one = gtp.snapshot()
    gtp.ok("play w B1")
    gtp.fails("play w A2", "illegal move")
    gtp.ok("undo")
    assert gtp.snapshot() == one
    gtp.ok("play w A2")  # legal again once B1 is gone
    gtp.ok("undo")
    gtp.ok("undo")
    assert gtp.snapshot() == empty
    gtp.fails("undo", "cannot undo")
    gtp.fails("undo 1", "syntax error")
    gtp.ok("genmove b")
    gtp.ok("undo")
    assert gtp.snapshot() == empty
    gtp.ok("play b A1")
    gtp.ok("clear_board")
    gtp.fails("undo", "cannot undo")
    gtp.ok("play b A1")
    gtp.ok("boardsize 3")
    gtp.fails("undo", "cannot undo")


def test_showboard(gtp):
    gtp.setup(3, "b A1 w C3")
    text = gtp.ok("showboard")
    assert text == textwrap.dedent("""\

           A B C
         3 . . O 3
         2 . . . 2
         1 X . . 1
           A B C
        black to move, 2 moves played""")
    gtp.setup(2, "b A2 w B2 b A1")
    assert gtp.ok("showboard").endswith("white to move, 3 moves played; white has no legal move")
    gtp.ok("boardsize 19")
    lines = gtp.ok("showboard").split("\n")
    assert lines[1].split() == list("ABCDEFGHJKLMNOPQRST") and lines[2].startswith("19 ")
    assert all(lines[1:])  # no empty line


def test_final_score(gtp):
    gtp.ok("boardsize 2")
    gtp.fails("final_score", "cannot score")
    gtp.setup(2, "b A2 w B2")
    gtp.fails("final_score", "cannot score")
    gtp.ok("play b A1")
    assert gtp.ok("final_score") == "B+R"
    assert gtp.ok("gogui-rules_final_result") == "Black wins (white has no legal move)"
    gtp.setup(3, "b B2 w B3 b A2 w C2 b A3 w B1")
    assert gtp.ok("final_score") == "W+R"
    assert gtp.ok("gogui-rules_final_result") == "White wins (black has no legal move)"
    gtp.ok("undo")
    assert gtp.ok("gogui-rules_final_result") == "unknown"
    gtp.fails("final_score x", "syntax error")


# -- GoGui rules commands ------------------------------------------------------------------------


def test_gogui_rules_commands(gtp):
    gtp.ok("boardsize 3")
    assert gtp.ok("gogui-rules_game_id") == "NoGo"
    assert gtp.ok("gogui-rules_board_size") == "3"
    assert gtp.ok("gogui-rules_side_to_move") == "black"
    assert gtp.ok("gogui-rules_legal_moves") == "A3 B3 C3 A2 B2 C2 A1 B1 C1"
    assert gtp.ok("gogui-rules_captured_count") == "0 0"
    gtp.setup(3, "b A1 w C3 b B2 w B1")
    assert gtp.ok("gogui-rules_board") == ". . O\n. X .\nX O ."
    assert gtp.ok("gogui-rules_side_to_move") == "black"
    assert gtp.ok("gogui-rules_legal_moves") == "A3 B3 A2 C2"  # C1 captures B1
    gtp.ok("play b A2")
    assert gtp.ok("gogui-rules_side_to_move") == "white"
    legal = gtp.ok("gogui-rules_legal_moves")
    assert legal == legal.upper() and "PASS" not in legal
    for cmd in ("gogui-rules_game_id", "gogui-rules_board", "gogui-rules_legal_moves"):
        gtp.fails(f"{cmd} x", "syntax error")


def test_referee_commands_do_not_need_numba():
    """GoGui starts a second engine as its rules referee: the start-up commands must not load
    numba (board.py) and the agent is never built."""
    script = textwrap.dedent("""
        import io, sys
        from nogobot.gtp import serve
        cmds = "protocol_version\\nname\\nversion\\nlist_commands\\nknown_command play\\n" \\
               "gogui-rules_game_id\\ngogui-rules_board_size\\nboardsize 9\\nkomi 6.5\\n" \\
               "time_settings 60 0 0\\nkgs-time_settings byoyomi 1 2 3\\nclear_board\\n"
        out = io.StringIO()
        serve(lambda: 1 / 0, instream=io.StringIO(cmds), outstream=out)
        assert "?" not in out.getvalue(), out.getvalue()
        print("numba" in sys.modules, "nogobot.game.board" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]


def test_warmup_thread_loads_the_rules_in_the_background():
    script = textwrap.dedent("""
        import io, sys, time
        from nogobot.gtp import serve
        out = io.StringIO()
        serve(lambda: 1 / 0, instream=io.StringIO("name\\n"), outstream=out, warmup=True)
        for _ in range(600):
            if "nogobot.game.board" in sys.modules:
                break
            time.sleep(0.05)
        out2 = io.StringIO()
        serve(lambda: 1 / 0, instream=io.StringIO("boardsize 3\\nplay b B2\\n"), outstream=out2,
              warmup=True)
        print(out.getvalue() + out2.getvalue(), "nogobot.game.board" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["=", "nogobot", "=", "=", "True"]


# -- game records ----------------------------------------------------------------------------------


GAME3 = "(;FF[4]GM[1]SZ[3]PB[alice]PW[bob];B[bb];W[ba];B[ab];W[cb];B[aa];W[bc])"


def test_loadsgf(gtp, tmp_path):
    (tmp_path / "g.sgf").write_text(GAME3)
    path = tmp_path / "g.sgf"
    gtp.ok(f"loadsgf {path}")
    assert gtp.ok("gogui-rules_board") == "X O .\nX X O\n. O ."
    assert gtp.ok("gogui-rules_side_to_move") == "black"
    assert gtp.ok("final_score") == "W+R"
    assert "PB[alice]" in gtp.ok("printsgf")
    gtp.ok(f"loadsgf {path} 3")  # before move 3: two moves played
    assert gtp.ok("gogui-rules_board") == ". O .\n. X .\n. . ."
    gtp.ok("undo")
    gtp.ok("undo")
    gtp.fails("undo", "cannot undo")
    gtp.ok(f"loadsgf {path} 1")
    assert gtp.ok("gogui-rules_board") == ". . .\n. . .\n. . ."
    gtp.ok(f"loadsgf {path} 0")
    gtp.ok(f"loadsgf {path} 99")
    assert gtp.ok("gogui-rules_legal_moves") == ""


@pytest.mark.parametrize("content", [
    "(;SZ[3];B[ac];W[bc];W[ab])",  # white A2 captures black A1
    "(;SZ[3];W[ab];W[bc];B[ac])",  # black A1 is suicide
    "(;SZ[3];B[ac];W[ac])",  # occupied
    "(;SZ[3];B[ac];W[])",  # pass
    "(;SZ[3];B[ac];W[tt])",  # pass (FF[3] style) / off board
    "(;SZ[3];B[zz])",  # off board
    "(;SZ[20];B[aa])",  # size out of range
    "(;SZ[1])",
    "(;SZ[3]AB[ac]AW[ab][bc])",  # setup block without liberty
    "(;SZ[3];B[aa];AB[bb])",  # setup after the root
    "not sgf at all",
    "",
])
def test_loadsgf_rejects_bad_files_and_keeps_state(gtp, tmp_path, content):
    (tmp_path / "bad.sgf").write_text(content)
    gtp.setup(5, "b C3 w D4")
    gtp.fails(f"loadsgf {tmp_path / 'bad.sgf'}", "cannot load file")
    assert any("loadsgf" in line for line in gtp.logged)


def test_loadsgf_other_errors(gtp, tmp_path):
    gtp.setup(5, "b C3")
    gtp.fails(f"loadsgf {tmp_path / 'missing.sgf'}", "cannot load file")
    gtp.fails(f"loadsgf {tmp_path}", "cannot load file")  # a directory
    (tmp_path / "bin.sgf").write_bytes(b"\xff\xfe\x00(;SZ[3]")
    gtp.fails(f"loadsgf {tmp_path / 'bin.sgf'}", "cannot load file")
    gtp.fails("loadsgf", "syntax error")
    gtp.fails(f"loadsgf {tmp_path / 'x.sgf'} x", "syntax error")
    gtp.fails(f"loadsgf {tmp_path / 'x.sgf'} 1 2", "syntax error")


def test_printsgf_round_trip(gtp, tmp_path):
    gtp.ok("boardsize 5")
    for _ in range(6):
        gtp.ok("genmove b")
        gtp.ok("genmove w")
    board = gtp.ok("gogui-rules_board")
    sgf_text = gtp.ok("printsgf")
    assert "\n\n" not in sgf_text and sgf_text.startswith("(;") and "SZ[5]" in sgf_text
    (tmp_path / "out.sgf").write_text(sgf_text)
    other = Session()
    other.ok(f"loadsgf {tmp_path / 'out.sgf'}")
    assert other.ok("gogui-rules_board") == board
    assert other.ok("printsgf") == sgf_text
    gtp.fails("printsgf file.sgf", "syntax error")


def test_setup_stones_survive_printsgf(gtp, tmp_path):
    (tmp_path / "s.sgf").write_text("(;SZ[3]AB[aa]AW[cc]PL[W];W[bb])")
    gtp.ok(f"loadsgf {tmp_path / 's.sgf'} 1")
    assert gtp.ok("gogui-rules_side_to_move") == "white"
    assert gtp.ok("gogui-rules_board") == "X . .\n. . .\n. . O"
    gtp.fails("undo", "cannot undo")  # the setup is the start of the game
    gtp.ok("play w B2")
    text = gtp.ok("printsgf")
    assert "AB[aa]" in text and "AW[cc]" in text and "PL[W]" in text and ";W[bb]" in text


# -- clock commands ----------------------------------------------------------------------------


def test_time_commands_are_parsed_and_stored(gtp):
    clock = gtp.handler.clock
    gtp.ok("time_settings 300 0 0")
    assert clock.settings == TimeControl("absolute", 300)
    gtp.ok("time_settings 0 1 0")
    assert clock.settings == TimeControl("none")
    gtp.ok("time_settings 600 30 5")
    assert clock.settings == TimeControl("canadian", 600, 30, 5)
    gtp.ok("kgs-time_settings none")
    assert clock.settings.kind == "none"
    gtp.ok("kgs-time_settings absolute 900")
    assert clock.settings == TimeControl("absolute", 900)
    gtp.ok("kgs-time_settings byoyomi 300 30 5")
    assert clock.settings == TimeControl("byoyomi", 300, 30, 5)
    gtp.ok("kgs-time_settings canadian 600 60 25")
    assert clock.settings == TimeControl("canadian", 600, 60, 25)
    gtp.ok("time_left b 120 0")
    gtp.ok("time_left white 30.5 5")
    assert clock.left["b"][:2] == (120, 0) and clock.left["w"][:2] == (30.5, 5)
    settings = clock.settings
    for bad in ("time_settings 300", "time_settings a b c", "time_settings 1 2 3 4",
                "time_settings -1 0 0", "time_settings 1 -1 1", "time_settings 1 1 -1",
                "time_settings 1e400 0 0", "kgs-time_settings", "kgs-time_settings fischer 1 2",
                "kgs-time_settings absolute", "kgs-time_settings byoyomi 1 2",
                "kgs-time_settings byoyomi 1 2 2.5", "kgs-time_settings none 1",
                "kgs-time_settings absolute -5", "kgs-time_settings canadian 1 2 3 4",
                "time_left x 1 0", "time_left b 1", "time_left b x 0", "time_left b 1 -1",
                "time_left b 1e400 0"):
        ok, text = gtp(bad)
        assert (ok, text) == (False, "syntax error"), bad
    assert clock.settings == settings
    gtp.ok("clear_board")
    assert clock.left == {} and clock.settings == settings  # settings persist across games


def test_time_option_sets_sudden_death():
    gtp = Session(clock=TimeControl.sudden_death(60))
    assert gtp.handler.clock.settings == TimeControl("absolute", 60)
    res = run(["genmove b"], seconds=30.0)
    assert res[0][0]


def test_cputime(gtp):
    assert float(gtp.ok("cputime")) >= 0


def test_list_commands_is_complete_and_consistent(gtp):
    listed = gtp.ok("list_commands").split("\n")
    expected = {
        "protocol_version", "name", "version", "known_command", "list_commands", "quit",
        "boardsize", "clear_board", "komi", "play", "genmove", "reg_genmove", "undo",
        "showboard", "final_score", "loadsgf", "printsgf", "time_settings", "time_left",
        "kgs-time_settings", "cputime", "gogui-rules_game_id", "gogui-rules_board_size",
        "gogui-rules_legal_moves", "gogui-rules_side_to_move", "gogui-rules_board",
        "gogui-rules_final_result", "gogui-rules_captured_count",
        # analysis (nogobot/gtp/analyze.py; tested in tests/test_analyze*.py)
        "gogui-analyze_commands", "gogui-interrupt", "nogobot-param", "nogobot-policy",
        "nogobot-policy_board", "nogobot-dominion", "nogobot-value", "nogobot-visits",
        "nogobot-candidates", "nogobot-candidates_table", "nogobot-pv", "lz-analyze",
        "kata-analyze", "analyze", "lz-genmove_analyze", "kata-genmove_analyze",
        "genmove_analyze"}
    assert set(listed) == expected
    for name in listed:
        assert gtp.ok(f"known_command {name}") == "true"
    for name in ("fixed_handicap", "place_free_handicap", "final_status_list", "GENMOVE"):
        assert gtp.ok(f"known_command {name}") == "false"
        ok, text = gtp(f"{name} 2")
        assert (ok, text) == (False, "unknown command")


def gtp_agent_options(monkeypatch, args: list[str]) -> dict:
    """The keywords `nogobot gtp ARGS` builds its agent with, on a 5-core machine (the agent
    and the protocol loop are stubbed out)."""
    from click.testing import CliRunner

    import nogobot.gtp
    from nogobot.cli import engine as engine_cli
    from nogobot.cli import main
    from nogobot.core import machine

    built = {}
    monkeypatch.setattr(engine_cli, "agent_factory", lambda name, **kw: built.update(kw))
    monkeypatch.setattr(nogobot.gtp, "serve", lambda factory, **kw: 0)
    monkeypatch.setattr(engine_cli, "exit_now", lambda status: None)
    monkeypatch.setattr(machine.os, "cpu_count", lambda: 5)
    res = CliRunner().invoke(main, ["gtp", *args], input="")
    assert res.exit_code == 0, res.output
    return built


@pytest.mark.parametrize("args, solver_threads", [
    ([], 5),                                       # every core, as the network
    (["--threads", "3"], 3),                       # the network's threads
    (["--threads", "3", "--solver-threads", "1"], 1),
])
def test_the_solver_searches_on_the_cores_the_network_uses(monkeypatch, args, solver_threads):
    """`nogobot gtp` gives the network every core unless --threads says; the solver goes first
    in a move while the network waits, so by default it searches in as many threads."""
    built = gtp_agent_options(monkeypatch, args)
    assert built["search"]["solver_threads"] == solver_threads
    assert built["threads"] == (None if not args else 3)


EVERY_SEARCH_OPTION = (
    ["--max-tree-mb", "64", "--c-puct", "0.8", "--c-puct-log", "0.45", "--c-puct-base", "300",
     "--fpu-reduction", "0", "--rollout-weight", "0.3",
     "--endgame-rollout-weight", "0.6", "--rollouts", "2", "--solver-from", "27",
     "--solver-nodes", "5000", "--solver-long-from", "0", "--solver-rate", "0",
     "--leaf-proofs", "20"],
    {"max_tree_mb": 64, "c_puct": 0.8, "c_puct_log": 0.45, "c_puct_base": 300.0,
     "fpu_reduction": 0.0, "rollout_weight": 0.3,
     "endgame_rollout_weight": 0.6, "rollout_count": 2, "solver_from": 27,
     "solver_max_nodes": 5000, "solver_long_from": 0, "solver_rate": 0, "leaf_proof_empty": 20})


@pytest.mark.parametrize("args, search", [
    ([], {}),
    (["--c-puct", "1.5"], {"c_puct": 1.5}),
    (["--fpu-reduction", "0", "--c-puct", "0.8"], {"fpu_reduction": 0.0, "c_puct": 0.8}),
    EVERY_SEARCH_OPTION,
])
def test_gtp_hands_search_settings_to_the_search(monkeypatch, args, search):
    """Each search option given to `nogobot gtp` reaches its SearchConfig field, zeros
    included; unset, the search keeps its own defaults."""
    from nogobot.engine.mcts import SearchConfig

    built = gtp_agent_options(monkeypatch, args)
    given = {k: v for k, v in built["search"].items()
             if k not in ("batch_size", "solver_threads")}
    assert given == search
    SearchConfig(**built["search"])   # every key is a field


@pytest.mark.parametrize("args, lanes", [
    ([], None),                                    # the net decides (agent_factory)
    (["--lanes", "1"], 1),
    (["--lanes", "2", "--threads", "2"], 2),
])
def test_gtp_hands_its_lanes_to_the_agent(monkeypatch, args, lanes):
    """`nogobot gtp` passes --lanes (None: by the net) and the engine's cores to the agent; the
    solver has every core whatever the lanes."""
    built = gtp_agent_options(monkeypatch, args)
    assert built["lanes"] == lanes
    assert built["threads"] == (2 if "--threads" in args else None)
    assert built["search"]["solver_threads"] == (2 if "--threads" in args else 5)


@pytest.mark.parametrize("lanes, cores, net, device, played, network_threads", [
    (None, 5, "int8", "cpu", 2, 4),   # an int8 net on a CPU: the search's thread keeps a core
    (None, 2, "int8", "auto", 2, 1),
    (None, 1, "int8", "cpu", 1, 1),   # one core: one lane
    (None, 5, "fp32", "cpu", 1, 5),   # fp32: one lane, the network on every core
    (1, 5, "int8", "cpu", 1, 5),
    (2, 5, "fp32", "cpu", 2, 4),
])
def test_the_agent_plays_two_lanes_where_an_int8_net_plays_on_a_cpu(
        monkeypatch, lanes, cores, net, device, played, network_threads):
    """`--lanes` unset: two lanes where the net that loads is an int8 encoding on a CPU, its
    session then on one core fewer (loaded again); one lane elsewhere."""
    import nogobot.engine.player as player
    from nogobot.cli import engine as engine_cli
    from nogobot.core import machine
    from nogobot.net.modelfile import default_model_path, int8_model_path
    from nogobot.tools import warmup

    monkeypatch.setattr(machine.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(warmup, "wait", lambda *a, **kw: None)
    monkeypatch.setattr(player, "MCTSAgent", lambda ev, config, **kw: (ev, config))
    model = int8_model_path() if net == "int8" else default_model_path()
    ev, config = engine_cli.agent_factory("mcts", model_path=str(model), device=device,
                                          lanes=lanes)()
    assert ev.path == model and ev.int8 is (net == "int8")
    if ev.on_gpu:  # "auto" on a usable GPU: one lane unless asked
        assert config.lanes == (lanes or 1)
        return
    assert config.lanes == played and ev.threads == network_threads


def test_two_lanes_on_one_core_are_refused_with_one_line():
    from click.testing import CliRunner

    from nogobot.cli import main

    res = CliRunner().invoke(main, ["gtp", "--lanes", "2", "--threads", "1"], input="")
    assert res.exit_code == 2 and "two lanes need two cores" in res.output


def test_a_search_has_its_threads_or_every_core_and_two_lanes_need_two(monkeypatch):
    from nogobot.core import machine

    monkeypatch.setattr(machine.os, "cpu_count", lambda: 6)
    assert machine.search_cores(None) == 6 and machine.search_cores(None, lanes=2) == 6
    assert machine.search_cores(3, lanes=None) == 3 and machine.search_cores(1) == 1
    with pytest.raises(ValueError, match="two lanes need two cores"):
        machine.search_cores(1, lanes=2)
    monkeypatch.setattr(machine.os, "cpu_count", lambda: None)  # unknown: one core
    assert machine.search_cores(None) == 1
    with pytest.raises(ValueError):
        machine.search_cores(None, lanes=2)
