"""The protocol engine's support for long commands (nogobot/gtp/engine.py ``Channel``), with a
toy handler and no NoGo: partial output framing, stop on any input line, GoGui's raw
``# interrupt`` lines, EOF, and failures after a response has begun."""

from __future__ import annotations

import io
import os
import threading
import time

import pytest

from nogobot.gtp.engine import Engine, GtpError


class Streamer:
    """Commands that write partial output and watch the channel's events."""

    def attach_channel(self, channel):
        self.channel = channel

    def cmd_stream(self) -> str:
        """'=' line, then a tick every 20 ms until any input line arrives."""
        self.channel.write_partial("")
        i = 0
        while not self.channel.input_pending.wait(0.02):
            self.channel.write_partial(f"tick {i}")
            i += 1
        return "end"

    def cmd_long(self, seconds: float = 5.0) -> str:
        """A long computation that a GoGui interrupt stops."""
        hit = self.channel.interrupted.wait(seconds)
        return "interrupted" if hit else "finished"

    def cmd_partial_then_fail(self) -> str:
        self.channel.write_partial("first\n\nafter a blank line")
        raise GtpError("too late for a failure")

    def cmd_partial_then_crash(self) -> str:
        self.channel.write_partial("first")
        raise RuntimeError("boom")

    def cmd_echo(self, *words: str) -> str:
        return " ".join(words)


class Output:
    """A stdout stand-in that records when each chunk arrived."""

    def __init__(self):
        self.chunks: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def write(self, text: str) -> None:
        with self.lock:
            self.chunks.append((time.monotonic(), text))

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        with self.lock:
            return "".join(t for _, t in self.chunks)

    def wait_for(self, needle: str, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while needle not in self.text:
            assert time.monotonic() < end, f"{needle!r} not seen in {self.text!r}"
            time.sleep(0.005)


class Running:
    """Engine.run in a thread, reading a real pipe (the file-descriptor path stdin takes)."""

    def __init__(self):
        self.logged: list[str] = []
        self.engine = Engine(Streamer(), name="toy", version="1", log=self.logged.append)
        r, self.w = os.pipe()
        self.instream = os.fdopen(r, "rb", buffering=0)
        self.out = Output()
        self.status = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.status = self.engine.run(self.instream, self.out)

    def send(self, data: str) -> float:
        os.write(self.w, data.encode())
        return time.monotonic()

    def close(self, timeout: float = 10.0) -> int:
        if self.w is not None:
            os.close(self.w)
            self.w = None
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "engine did not stop at EOF"
        return self.status


@pytest.fixture
def running():
    r = Running()
    yield r
    if r.w is not None:
        r.close()


@pytest.mark.parametrize("stopper", ["2 echo next\n", "\n", "# interrupt\n", "   \t\n"])
def test_streaming_stops_on_any_input_line(running, stopper):
    running.send("1 stream\n")
    running.out.wait_for("tick 2\n")
    sent = running.send(stopper)
    running.out.wait_for("end\n\n")
    end_time = next(t for t, chunk in running.out.chunks if chunk.endswith("end\n\n"))
    assert end_time - sent < 0.5  # "at once" (the toy polls every 20 ms)
    running.send("3 echo after\n")
    running.out.wait_for("=3 after\n\n")
    assert running.close() == 0
    text = running.out.text
    head, rest = text.split("\n", 1)
    assert head == "=1 "
    body, tail = rest.split("\n\n", 1)  # exactly one blank line closes the stream
    lines = body.split("\n")
    assert lines[-1] == "end" and all(ln.startswith("tick ") for ln in lines[:-1])
    expected_tail = ("=2 next\n\n" if stopper.startswith("2") else "") + "=3 after\n\n"
    assert tail == expected_tail


def test_interrupt_stops_the_running_command_only(running):
    running.send("1 long\n")
    time.sleep(0.2)
    sent = running.send("# interrupt\n")
    running.out.wait_for("=1 interrupted\n\n")
    assert running.out.chunks[-1][0] - sent < 0.5
    # The interrupt line was consumed: the next long command runs to its end.
    running.send("2 long 0.3\n")
    running.out.wait_for("=2 finished\n\n")


def test_interrupt_sent_with_the_command_applies_to_it(running):
    running.send("1 long\n# interrupt\n2 long 0.2\n")
    running.out.wait_for("=2 finished\n\n")
    assert running.out.text == "=1 interrupted\n\n=2 finished\n\n"


def test_other_lines_do_not_interrupt_a_long_command(running):
    running.send("1 long 0.4\n2 echo queued\n")
    running.out.wait_for("=2 queued\n\n")
    assert running.out.text == "=1 finished\n\n=2 queued\n\n"


def test_eof_ends_a_stream_and_the_engine(running):
    running.send("1 stream\n")
    running.out.wait_for("tick 0\n")
    assert running.close() == 0
    assert running.out.text.endswith("end\n\n")


def test_queued_lines_after_eof_still_stop_streams():
    """All input (and EOF) read before the stream starts: it still ends at once."""
    engine = Engine(Streamer(), name="toy", version="1")
    out = io.StringIO()
    assert engine.run(io.StringIO("1 stream\n2 echo x\n"), out) == 0
    assert out.getvalue() == "=1 \nend\n\n=2 x\n\n"
    out = io.StringIO()
    assert engine.run(io.StringIO("1 stream\n"), out) == 0  # EOF right behind it
    assert out.getvalue() == "=1 \nend\n\n"


def test_failure_after_partial_output_closes_the_response():
    logged = []
    engine = Engine(Streamer(), name="toy", version="1", log=logged.append)
    assert engine.handle("5 partial_then_fail") == "=5 \nfirst\n.\nafter a blank line\n\n"
    assert any("too late for a failure" in m for m in logged)
    assert engine.handle("6 partial_then_crash") == "=6 \nfirst\n\n"
    assert any("Traceback" in m for m in logged)
    assert engine.handle("7 echo still alive") == "=7 still alive\n\n"


def test_handle_without_run_returns_partial_output_whole():
    engine = Engine(Streamer(), name="toy", version="1")
    engine.channel.input_pending.set()  # as if the next command had arrived
    assert engine.handle("stream") == "= \nend\n\n"
    assert engine.handle("echo a") == "= a\n\n"
