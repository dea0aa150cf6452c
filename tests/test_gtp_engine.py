"""The GTP protocol layer (nogobot/gtp/engine.py) with a toy handler: preprocessing, ids,
framing, typed-argument dispatch, error texts, last-resort error catching, stream handling."""

from __future__ import annotations

import io

import pytest

from nogobot.gtp.engine import (
    HUGE,
    Engine,
    GtpError,
    color,
    command,
    format_response,
    integer,
    number,
    parse,
    preprocess,
    vertex,
)


class Toy:
    """A handler exercising every argument form."""

    def __init__(self):
        self.calls = []

    def cmd_add(self, a: int, b: int) -> str:
        return str(a + b)

    def cmd_echo(self, *words: str) -> str:
        return " ".join(words)

    def cmd_opt(self, c: color, n: int = 7) -> str:
        return f"{c} {n}"

    def cmd_half(self, x: float) -> str:
        return f"{x / 2:g}"

    def cmd_where(self, v: vertex) -> str:
        return v

    def cmd_zero(self) -> int:
        return 0  # a falsy result must still be printed (minigo bug)

    def cmd_nothing(self) -> None:
        self.calls.append("nothing")

    def cmd_lines(self) -> str:
        return "one\n\ntwo\n   \nthree\n\n"

    def cmd_board(self) -> str:
        return "\n  A B\n2 . .\n1 . ."

    def cmd_fail(self) -> str:
        raise GtpError("cannot do that")

    def cmd_crash(self) -> str:
        raise RuntimeError("boom\nsecond line")

    @command("toy-dashed_name")
    def cmd_dashed(self) -> str:
        return "dashed"


@pytest.fixture
def engine():
    return Engine(Toy(), name="toy", version="1.2", log=lambda msg: None)


def reply(engine, line):
    return engine.handle(line)


# -- preprocessing and parsing -----------------------------------------------------------


@pytest.mark.parametrize("raw, clean", [
    ("name\n", "name"),
    ("name\r\n", "name"),
    ("\tname\t\n", "name"),
    ("1\tplay\tb\te5\n", "1 play b e5"),
    ("na\x01me\x7f\n", "name"),
    ("name # comment # more\n", "name"),
    ("# only a comment\n", ""),
    ("   \n", ""),
    ("\x00\x1b\x08\n", ""),
    ("na\rme", "name"),
])
def test_preprocess(raw, clean):
    assert preprocess(raw) == clean


def test_parse_ids():
    assert parse("12 play b e5") == ("12", "play", ["b", "e5"])
    assert parse("play b e5") == (None, "play", ["b", "e5"])
    assert parse("007 name") == ("7", "name", [])
    assert parse("0 name") == ("0", "name", [])
    assert parse("12") == ("12", "", [])
    assert parse("-3 name") == (None, "-3", ["name"])
    big = "9" * 5000  # int() would refuse more than 4300 digits
    assert parse(big + " name") == (big, "name", [])


def test_argument_types():
    assert integer("17") == 17 and integer("+3") == 3 and integer("0009") == 9
    assert integer("9" * 5000) == HUGE
    for bad in ("-1", "1.0", "٣", "1_0", "", "0x10"):
        with pytest.raises(ValueError):
            integer(bad)
    assert number("6.5") == 6.5 and number("-7") == -7 and number(".5") == 0.5
    assert number("1e3") == 1000 and number("1e400") == float("inf")
    for bad in ("nan", "inf", "-inf", "1,5", "1_0", "abc", ""):
        with pytest.raises(ValueError):
            number(bad)
    assert [color(c) for c in ("b", "B", "black", "BLACK", "w", "White")] == list("bbbbww")
    for bad in ("x", "bl", "", "blackk"):
        with pytest.raises(ValueError):
            color(bad)
    assert vertex("e5") == "E5" and vertex("PaSs") == "PASS" and vertex("Z99") == "Z99"
    for bad in ("5", "E", "E5x", "resign", "É5", "E-5", "E٣"):
        with pytest.raises(ValueError):
            vertex(bad)


# -- framing -------------------------------------------------------------------------------


def test_format_response():
    assert format_response(True, None, "2") == "= 2\n\n"
    assert format_response(True, "5", "") == "=5 \n\n"
    assert format_response(True, None, None) == "= \n\n"
    assert format_response(True, None, 0) == "= 0\n\n"
    assert format_response(False, "3", "illegal move") == "?3 illegal move\n\n"
    # Empty and blank lines inside a result are never emitted; a leading newline is kept.
    assert format_response(True, None, "a\n\nb\n \nc\n\n") == "= a\n.\nb\n.\nc\n\n"
    assert format_response(True, None, "\nrow1\nrow2") == "= \nrow1\nrow2\n\n"
    assert format_response(True, None, "x\r\ny\x00") == "= x\ny\n\n"


def test_ids_echoed_and_results(engine):
    assert reply(engine, "add 2 3") == "= 5\n\n"
    assert reply(engine, "42 add 2 3") == "=42 5\n\n"
    assert reply(engine, "zero") == "= 0\n\n"
    assert reply(engine, "9 nothing") == "=9 \n\n"
    assert reply(engine, "lines") == "= one\n.\ntwo\n.\nthree\n\n"
    assert reply(engine, "board") == "= \n  A B\n2 . .\n1 . .\n\n"
    assert reply(engine, "toy-dashed_name") == "= dashed\n\n"


def test_ignored_lines(engine):
    for line in ("", "\n", "   \n", "# comment\n", "\t\r\n", "\x01\x02\n"):
        assert reply(engine, line) is None


def test_dispatch_errors(engine):
    assert reply(engine, "7 nosuch") == "?7 unknown command\n\n"
    assert reply(engine, "ADD 1 2") == "? unknown command\n\n"  # names are case-sensitive
    assert reply(engine, "12") == "?12 unknown command\n\n"
    assert reply(engine, "add 1") == "? syntax error\n\n"
    assert reply(engine, "add 1 2 3") == "? syntax error\n\n"
    assert reply(engine, "add one 2") == "? syntax error\n\n"
    assert reply(engine, "half 1,5") == "? syntax error\n\n"
    assert reply(engine, "opt b") == "= b 7\n\n"
    assert reply(engine, "opt white 3") == "= w 3\n\n"
    assert reply(engine, "opt x") == "? syntax error\n\n"
    assert reply(engine, "opt b 1 2") == "? syntax error\n\n"
    assert reply(engine, "echo") == "= \n\n"
    assert reply(engine, "echo a  b\tc") == "= a b c\n\n"
    assert reply(engine, "3 fail") == "?3 cannot do that\n\n"


def test_internal_errors_are_caught_and_logged():
    logged = []
    engine = Engine(Toy(), name="toy", version="1", log=logged.append)
    out = reply(engine, "5 crash")
    assert out.startswith("?5 internal error: RuntimeError: boom\n")
    assert out.endswith("\n\n") and "\n\n" not in out[:-2]
    assert logged and "Traceback" in logged[0]
    assert reply(engine, "add 1 1") == "= 2\n\n"  # still alive


def test_protocol_commands(engine):
    assert reply(engine, "protocol_version") == "= 2\n\n"
    assert reply(engine, "name") == "= toy\n\n"
    assert reply(engine, "version") == "= 1.2\n\n"
    assert reply(engine, "known_command add") == "= true\n\n"
    assert reply(engine, "known_command toy-dashed_name") == "= true\n\n"
    assert reply(engine, "known_command dashed") == "= false\n\n"
    assert reply(engine, "known_command known_command") == "= true\n\n"
    assert reply(engine, "known_command") == "? syntax error\n\n"
    listed = reply(engine, "list_commands")[2:-2].split("\n")
    assert listed == sorted(listed)
    assert {"add", "echo", "toy-dashed_name", "protocol_version", "quit"} <= set(listed)
    assert "dashed" not in listed


def test_run_until_quit_binary_streams(engine):
    data = b"1 name\r\n\xff\xfe bad\n# c\n\n2 add 1 2\n3 quit\n4 name\n"
    out = io.BytesIO()

    class Out:  # a binary-backed text stream, like sys.stdout
        buffer = out

    assert engine.run(io.BytesIO(data), Out()) == 0
    assert out.getvalue().decode() == ("=1 toy\n\n? unknown command\n\n=2 3\n\n=3 \n\n")


def test_run_until_eof_text_streams(engine):
    out = io.StringIO()
    assert engine.run(io.StringIO("name\nadd 2 2"), out) == 0  # last line without newline
    assert out.getvalue() == "= toy\n\n= 4\n\n"


def test_run_survives_closed_output(engine):
    class Closed:
        def write(self, text):
            raise BrokenPipeError

        def flush(self):
            pass

    assert engine.run(io.StringIO("name\nname\n"), Closed()) == 0
