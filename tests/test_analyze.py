"""Analysis commands (nogobot/gtp/analyze.py, formats in nogobot/gtp/views.py).

In-process (uniform evaluator, tiny searches): argument parsing, the LZ / kata line formats,
candidate ordering, the GoGui views, and ``nogobot-param`` really changing the search.
As a process (``nogobot gtp``, the shipped model, ``--playouts 32``): the streaming framing
of lz-/kata-analyze (stop at once on ANY input line, exactly one blank line closing, the
interval respected roughly), the ``*genmove_analyze`` forms, a GoGui ``# interrupt`` of a long
genmove, live graphics on stderr, and that the GoGui referee start-up stays light."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT

from nogobot.engine.candidates import Candidate, shown
from nogobot.game import coords
from nogobot.gtp import nogo_engine
from nogobot.gtp.engine import GtpError, GtpSyntaxError
from nogobot.gtp.views import info_line, parse_analyze_args
from nogobot.tournament.gtp_client import GtpProcess

VERTEX = r"[A-HJ][1-9]"
LZ_ENTRY = re.compile(rf"info move ({VERTEX}) visits (\d+) winrate (\d+) prior (\d+) lcb (\d+) "
                      rf"order (\d+) pv ((?:{VERTEX} ?)+)")
KATA_ENTRY = re.compile(
    rf"info move ({VERTEX}) visits (\d+) utility (-?\d+\.\d+) winrate (\d\.\d+) "
    rf"scoreMean (-?\d+\.\d+) scoreLead (-?\d+\.\d+) prior (\d\.\d+) lcb (\d\.\d+) "
    rf"order (\d+) pv ((?:{VERTEX} ?)+)")


# -- pure parts ----------------------------------------------------------------------------------


def test_parse_analyze_args():
    req = parse_analyze_args(["b", "50"], kata=False)
    assert (req.colour, req.interval) == (1, 0.5)
    req = parse_analyze_args(["30"], kata=False)
    assert (req.colour, req.interval) == (None, 0.3)
    req = parse_analyze_args(["W", "interval", "10", "minmoves", "5", "maxmoves", "3"],
                             kata=False)
    assert (req.colour, req.interval, req.minmoves, req.maxmoves) == (2, 0.1, 5, 3)
    req = parse_analyze_args(["white", "20", "ownership", "true", "rootInfo", "true"],
                             kata=True)
    assert req.ownership and req.interval == 0.2
    assert parse_analyze_args([], kata=True).interval == 0.0
    for bad, kata in ((["x"], False), (["b", "10", "ownership", "true"], False),
                      (["b", "10", "minmoves"], False), (["b", "-5"], False),
                      (["b", "10", "ownership", "maybe"], True), (["b", "1e99"], False)):
        with pytest.raises(GtpSyntaxError):
            parse_analyze_args(bad, kata=kata)
    with pytest.raises(GtpError, match="avoid is not supported"):
        parse_analyze_args(["b", "10", "avoid", "b", "D4", "1"], kata=False)


def test_info_line_formats():
    cands = [Candidate(coords.from_gtp("E5", 9), 120, 0.61234, 0.25, 0.58, 0,
                       [coords.from_gtp(v, 9) for v in ("E5", "D4", "C3")]),
             Candidate(coords.from_gtp("A1", 9), 3, 1.0, 0.01, 1.0, 1, [])]
    lz = info_line(cands, 9, kata=False)
    assert lz == ("info move E5 visits 120 winrate 6123 prior 2500 lcb 5800 order 0 "
                  "pv E5 D4 C3 info move A1 visits 3 winrate 10000 prior 100 lcb 10000 "
                  "order 1 pv A1")
    kata = info_line(cands, 9, kata=True, score_lead={cands[0].move: 1.5},
                     ownership=[0.5] * 81)
    entries = kata.split(" ownership ")[0]
    assert [m.group(1) for m in KATA_ENTRY.finditer(entries)] == ["E5", "A1"]
    assert "winrate 0.612340 scoreMean 1.500000 scoreLead 1.500000" in kata
    assert "winrate 1.000000" in kata  # always a decimal point: Sabaki reads "1" as 1/10000
    assert kata.split(" ownership ")[1].split() == ["0.500000"] * 81


def test_shown_keeps_searched_and_proven_moves():
    c = [Candidate(1, 10, .5, .1, .4, 0), Candidate(2, 0, .5, .3, 0, 1),
         Candidate(3, 0, .5, .5, 0, 0), Candidate(4, 0, .5, .2, 0, 0)]
    assert [x.move for x in shown(c)] == [1, 2]
    assert [x.move for x in shown(c, minmoves=4)] == [1, 2, 3, 4]  # then by prior
    assert [x.move for x in shown(c, minmoves=4, maxmoves=3)] == [1, 2, 3]


# -- in-process engine (uniform evaluator) --------------------------------------------------------

RESPONSE = re.compile(r"([=?])(\d*) ?(.*?)\n\n", re.DOTALL)


class Session:
    def __init__(self, **kw):
        from nogobot.engine.player import MCTSAgent
        from nogobot.net.inference import UniformEvaluator

        self.logged: list[str] = []
        self.engine = nogo_engine(
            lambda: MCTSAgent(UniformEvaluator(), playouts=32, seed=1, log=None),
            log=self.logged.append, **kw)
        self.handler, self.analysis = self.engine.handlers  # the game's and analysis commands

    def raw(self, line: str) -> str:
        return self.engine.handle(line)

    def ok(self, line: str) -> str:
        m = RESPONSE.fullmatch(self.raw(line))
        assert m and m.group(1) == "=", (line, m and m.group(3))
        return m.group(3)

    def fails(self, line: str) -> str:
        m = RESPONSE.fullmatch(self.raw(line))
        assert m and m.group(1) == "?", line
        return m.group(3)


@pytest.fixture
def gtp():
    return Session()


def test_streaming_framing_in_process(gtp):
    gtp.ok("boardsize 7")
    gtp.engine.channel.input_pending.set()  # the next command is already waiting
    out = gtp.raw("4 lz-analyze b 10")
    head, body = out.split("\n", 1)
    assert head == "=4 " and body.endswith("\n\n") and "\n\n" not in body[:-2]
    entries = LZ_ENTRY.findall(body)
    assert entries and all(int(e[2]) <= 10000 for e in entries)
    assert [int(e[5]) for e in entries] == list(range(len(entries)))
    out = gtp.raw("kata-analyze w 0 ownership true")
    body = out.split("\n", 1)[1]
    assert KATA_ENTRY.search(body) and len(body.split(" ownership ")[1].split()) == 49
    out = gtp.raw("5 lz-genmove_analyze b 1")
    lines = out.rstrip("\n").split("\n")
    assert lines[0] == "=5 " and re.fullmatch(rf"play {VERTEX}", lines[-1])
    assert all(ln.startswith("info move ") for ln in lines[1:-1]) and len(lines) >= 3
    assert gtp.ok("gogui-rules_side_to_move") == "white"  # the move was played


def test_genmove_analyze_resigns_when_stuck(gtp):
    for line in ("boardsize 2", "play b A2", "play w B2", "play b A1"):
        gtp.ok(line)
    assert gtp.raw("kata-genmove_analyze w 10") == "= \nplay resign\n\n"
    gtp.engine.channel.input_pending.set()
    assert gtp.raw("lz-analyze w 10") == "= \n\n"  # nothing to analyse, still well framed


def test_analysis_needs_the_network_player():
    from nogobot.agents.greedy import GreedyAgent

    s = Session()
    s.handler.agent_factory = lambda: GreedyAgent(seed=1)
    assert "network player" in s.fails("lz-analyze b 10")
    assert "network player" in s.fails("nogobot-visits")
    assert re.fullmatch(r"= \nplay [A-HJ]\d\n\n", s.raw("genmove_analyze b 10"))
    params = s.ok("nogobot-param")
    assert "playouts" not in params and "[bool] ponder 0" in params


def test_gogui_views_in_process(gtp):
    gtp.ok("play b C3")
    assert gtp.ok("nogobot-visits").startswith("INFLUENCE ")
    cands = gtp.ok("nogobot-candidates").split()
    assert len(cands) % 2 == 0 and all(re.fullmatch(VERTEX, v) for v in cands[::2])
    pv = gtp.ok("nogobot-pv").split()
    assert pv and pv[0] == cands[0] and "C3" not in pv[:1]
    # One search serves all views; a parameter change means a new search.
    searches = [m for m in gtp.logged if m.startswith("analyze: searched")]
    assert len(searches) == 1
    gtp.ok("nogobot-param c_puct 2")
    gtp.ok("nogobot-candidates_table")
    assert len([m for m in gtp.logged if m.startswith("analyze: searched")]) == 2
    assert "search win" in gtp.ok("nogobot-value")
    assert gtp.ok("nogobot-value b").startswith("Black to move: network win 50.0%")


def test_param_really_changes_the_settings(gtp):
    gtp.ok("genmove b")  # builds the agent and its searcher
    agent = gtp.handler.agent
    searcher = agent.searcher(9)
    gtp.ok("nogobot-param c_puct 2.5")
    assert agent.config.c_puct == 2.5 and searcher.c_puct == 2.5
    gtp.ok("nogobot-param playouts 50")
    gtp.ok("genmove w")
    assert agent.playouts == 50 and 50 <= agent.last_result.playouts < 50 + 17
    gtp.ok("nogobot-param playouts 0")
    assert agent.playouts is None
    gtp.ok("nogobot-param seconds 0.2")
    assert gtp.handler.time_policy.no_limit_seconds == 0.2
    start = time.monotonic()
    gtp.ok("genmove b")
    assert time.monotonic() - start < 2.0  # planned 0.2 s, at most twice that
    gtp.ok("nogobot-param lag_buffer 0")
    assert gtp.handler.time_policy.lag_buffer == 0
    gtp.ok("nogobot-param ponder 1")
    assert gtp.handler.ponder
    gtp.ok("nogobot-param live_gfx 0")
    assert gtp.analysis.live_gfx == "off"
    assert "only a CPU onnx network" in gtp.fails("nogobot-param threads 2")  # uniform net
    for bad in ("playouts -1", "c_puct 0", "seconds nan", "live_gfx_interval 0", "ponder 2"):
        assert gtp.fails(f"nogobot-param {bad}").startswith("invalid value")


def test_threads_param_rebuilds_the_network_session():
    from nogobot.engine.player import MCTSAgent
    from nogobot.net.inference import default_model_path, load_evaluator

    if not default_model_path().is_file():
        pytest.skip("no shipped model")
    s = Session()
    s.handler.agent_factory = lambda: MCTSAgent(load_evaluator(None, device="cpu", threads=2),
                                                playouts=16, log=None)
    s.ok("genmove b")
    agent = s.handler.agent
    old = agent.evaluator
    assert s.ok("nogobot-param threads") == "2"
    s.ok("nogobot-param threads 1")
    assert agent.evaluator is not old and agent.evaluator.threads == 1
    assert agent.searcher(9).evaluator is agent.evaluator
    s.ok("genmove w")  # and it still plays


def test_live_gfx_in_process():
    import io

    err = io.StringIO()
    s = Session(gfx_stream=err)
    s.analysis.live_gfx_interval = 0.0001
    s.ok("genmove b")
    assert err.getvalue() == ""  # auto: off until GoGui shows itself
    s.ok("gogui-analyze_commands")
    s.ok("genmove w")
    text = err.getvalue()
    assert text.endswith("gogui-gfx: CLEAR\n")
    blocks = re.findall(r"gogui-gfx:\n(.*?)\n\n", text, re.DOTALL)
    assert blocks, text
    for block in blocks:
        kinds = [ln.split()[0] for ln in block.split("\n")]
        assert set(kinds) <= {"INFLUENCE", "LABEL", "VAR", "TEXT", "PROGRESS"}
        assert "TEXT" in kinds and "VAR" in kinds
    s.ok("nogobot-param live_gfx 0")
    before = err.getvalue()
    s.ok("genmove b")
    assert err.getvalue() == before


# -- as a process --------------------------------------------------------------------------------


class Gtp(GtpProcess):
    """``nogobot gtp`` through the package's GTP controller, read line by line as streaming
    analysis needs: each line with the ``time.perf_counter()`` of its arrival, stderr in a file."""

    def __init__(self, stderr_path: Path, *args: str):
        super().__init__([sys.executable, "-m", "nogobot", "gtp", *args], name="nogobot",
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), stderr_path=stderr_path,
                         timeout=60)

    @property
    def err(self) -> str:
        """Everything the engine wrote on stderr so far."""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def send(self, text: str) -> float:
        self.send_raw(text.encode())
        return time.perf_counter()

    def line(self, timeout: float = 60) -> tuple[float, str]:
        text, stamp = self.read_line(timeout)
        return stamp, text

    def response(self, timeout: float = 60) -> list[tuple[float, str]]:
        """Lines up to (not including) the blank line that ends a response."""
        out = []
        while True:
            t, line = self.line(timeout)
            if line == "":
                return out
            out.append((t, line))

    def ask(self, command: str) -> str:
        self.send(command + "\n")
        lines = self.response()
        return "\n".join(ln for _, ln in lines)

    def quit(self) -> None:
        # quit answers "= ", the exit status is 0, and nothing follows the last response
        assert self.finish(timeout=30) == []


@pytest.fixture
def engine(tmp_path):
    g = Gtp(tmp_path / "stderr.log", "--quiet", "--playouts", "32")
    assert g.ask("1 reg_genmove b").startswith("=1 ")  # loads the network and numba first
    yield g
    g.kill()


@pytest.mark.parametrize("stopper", ["9 name\n", "\n", "# interrupt\n"])
def test_analysis_stops_at_once_on_any_input_line(engine, stopper):
    engine.send("2 lz-analyze b 10\n")
    assert engine.line()[1] == "=2 "
    infos = [engine.line() for _ in range(3)]
    sent = engine.send(stopper)
    rest = engine.response(timeout=10)
    closed = rest[-1][0] if rest else time.perf_counter()
    assert closed - sent < 1.0, "analysis did not stop at once"
    for _, line in infos + rest:  # nothing but info lines, each one well formed
        entries = LZ_ENTRY.findall(line)
        assert entries and line == " ".join(
            f"info move {m} visits {v} winrate {w} prior {p} lcb {lcb} order {o} pv {pv.strip()}"
            for m, v, w, p, lcb, o, pv in entries)
        assert [int(e[5]) for e in entries] == list(range(len(entries)))
        assert all(0 <= int(e[2]) <= 10000 and 0 <= int(e[4]) <= int(e[2]) + 1 for e in entries)
    if stopper.startswith("9"):
        assert [ln for _, ln in engine.response(timeout=10)] == ["=9 nogobot"]
    # Exactly one blank line closed it: the next response follows directly.
    assert engine.ask("10 protocol_version") == "=10 2"
    engine.quit()


def test_analysis_interval_is_respected(engine):
    engine.send("2 lz-analyze w 25\n")
    assert engine.line()[1] == "=2 "
    start = time.monotonic()
    times = []
    while time.monotonic() - start < 1.4:
        times.append(engine.line()[0])
    engine.send("name\n")
    engine.response()
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert 3 <= len(times) <= 8, times
    assert sum(gaps) / len(gaps) > 0.2 and min(gaps) > 0.1, gaps  # 0.25 s asked
    engine.ask("name")


def test_kata_and_sabaki_formats(engine):
    engine.send("3 kata-analyze b 10 ownership true\n")
    assert engine.line()[1] == "=3 "
    _, line = engine.line()
    engine.send("name\n")
    engine.response()
    engine.response()
    entries, own = line.split(" ownership ")
    assert KATA_ENTRY.match(entries)
    values = [float(v) for v in own.split()]
    assert len(values) == 81 and all(-1 <= v <= 1 for v in values)
    engine.send("4 analyze w 10\n")  # Sabaki's name: the kata format
    assert engine.line()[1] == "=4 "
    _, line = engine.line()
    engine.send("\n")
    engine.response()
    assert KATA_ENTRY.match(line) and "scoreLead" in line


def test_genmove_analyze_is_not_stopped_by_input(engine):
    # Enough playouts to outlast 0.3 s at two lanes' rate (about 15,000 a second on 2 cores).
    engine.ask("nogobot-param playouts 8000")
    start = engine.send("5 lz-genmove_analyze b 20\nname\n")
    lines = engine.response()
    took = lines[-1][0] - start
    assert lines[0][1] == "=5 " and re.fullmatch(rf"play {VERTEX}", lines[-1][1])
    assert all(LZ_ENTRY.match(ln) for _, ln in lines[1:-1]) and len(lines) >= 3
    assert took > 0.3, "a queued command stopped genmove_analyze"
    assert engine.response()[0][1] == "= nogobot"
    assert engine.ask("gogui-rules_side_to_move") == "= white"
    engine.ask("nogobot-param playouts 32")
    lines = engine.ask("6 kata-genmove_analyze w 5").split("\n")
    assert lines[0] == "=6 " and re.fullmatch(rf"play {VERTEX}", lines[-1])
    engine.quit()


def test_analysis_argument_errors(engine):
    assert engine.ask("lz-analyze x") == "? syntax error"
    assert engine.ask("lz-analyze b 10 ownership true") == "? syntax error"
    assert engine.ask("kata-analyze b 10 avoid b D4 1") == "? avoid is not supported"
    assert engine.ask("kata-genmove_analyze b 10 maxmoves") == "? syntax error"
    assert engine.ask("name") == "= nogobot"


def test_gogui_interrupt_stops_a_long_genmove_and_live_gfx(tmp_path):
    g = Gtp(tmp_path / "stderr.log", "--seconds", "30", "--quiet")
    try:
        assert g.ask("gogui-analyze_commands").startswith("= param/")
        assert g.ask("known_command gogui-interrupt") == "= true"
        g.send("1 genmove b\n")
        # Interrupt once the search shows itself (the network and kernels load first, which
        # takes longer on a loaded machine).
        deadline = time.monotonic() + 30
        while "\nVAR b " not in g.err and time.monotonic() < deadline:
            time.sleep(0.1)
        sent = g.send("# interrupt\n")
        t, line = g.response()[0]
        assert re.fullmatch(rf"=1 {VERTEX}", line)
        assert t - sent < 1.5, "genmove ignored the interrupt"
        err = g.err
        assert "gogui-gfx:\nINFLUENCE " in err and "\nVAR b " in err
        assert "\nTEXT Black to move: " in err
        assert err.rstrip().endswith("gogui-gfx: CLEAR")
        # The interrupt was for that genmove only; live graphics can be switched off.
        # 6,000 playouts take >= 0.6 s even with the reused tree and warm cache (about 9,000/s
        # here); a genmove still carrying the interrupt would answer in a few milliseconds.
        assert g.ask("nogobot-param playouts 6000") == "= "
        assert g.ask("nogobot-param live_gfx 0") == "= "
        before = len(g.err)
        start = g.send("2 genmove w\n")
        t, line = g.response()[0]
        assert re.fullmatch(rf"=2 {VERTEX}", line) and t - start > 0.2
        assert "gogui-gfx" not in g.err[before:]
        g.quit()
    finally:
        g.kill()


def test_gogui_start_up_commands_stay_light():
    """GoGui's referee copy asks for these at attach: no numba, network or numpy search."""
    script = textwrap.dedent("""
        import io, sys
        from nogobot.gtp import serve
        cmds = "list_commands\\ngogui-analyze_commands\\ngogui-interrupt\\n" \\
               "known_command lz-analyze\\nknown_command nogobot-param\\n"
        out = io.StringIO()
        serve(lambda: 1 / 0, instream=io.StringIO(cmds), outstream=out)
        assert "?" not in out.getvalue(), out.getvalue()
        print(*(m in sys.modules for m in ("numba", "nogobot.game.board", "onnxruntime",
                                              "nogobot.engine.player", "nogobot.engine.search")))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=False, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False"] * 5
