"""The one GTP controller for an engine subprocess: the tournament referee and the conformance
runner both talk to engines through ``GtpProcess``.

Two levels:

* ``send_raw(bytes)`` and ``read_response(ident)``: what the conformance runner needs; the
  response comes back with its framing problems listed (an extra empty line before it, CR line
  ends, a head that is not ``=``/``?``, a wrong id), never judged;
* ``command(cmd, timeout)``: what the referee needs: send one command, wait for its whole reply,
  return ``(ok, text, seconds)``, and turn every failure into an exception with a ``kind`` the
  referee makes a game result of:

  * :class:`EngineCrashed` (``crash``): the process exited, or closed stdout, or stdin is broken;
  * :class:`EngineTimeout` (``timeout``): no complete reply within the timeout (the engine is
    killed, since a late reply would desynchronise the conversation);
  * :class:`EngineGarbage` (``garbage``): the reply does not start with ``=`` or ``?``, or output
    arrived that belongs to no command.

Timing: a reader thread stamps each stdout line with ``time.perf_counter()`` as it arrives, so the
measured time runs from just before the command is written to the arrival of the blank line that
ends the reply, and does not include the harness's own scheduling delays.

stderr goes to a log file (``stderr_path``), or is kept in memory (its last lines, ``capture``),
or is discarded. Engines run in their own session (process group) so that a Ctrl-C in the
terminal reaches only the harness, which then kills every engine group it started. An engine also
sees EOF on stdin if the harness dies; GTP engines exit on EOF.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_HEAD = re.compile(r"([=?])(\d*)(?: (.*)|)$", re.DOTALL)


class EngineError(Exception):
    kind = "error"


class EngineCrashed(EngineError):
    kind = "crash"


class EngineTimeout(EngineError):
    kind = "timeout"


class EngineGarbage(EngineError):
    kind = "garbage"


@dataclass
class Response:
    """One response as read: ``text`` is the result after ``=id``/``?id``, lines joined by
    newlines and trimmed; ``raw`` the lines as read (without the ending blank line)."""

    ok: bool
    ident: str  # "" when the response carries no id
    text: str
    raw: str
    seconds: float = 0.0  # from the last write to the blank line that ended it
    problems: list[str] = field(default_factory=list)  # framing problems, empty when clean


class GtpProcess:
    """One running engine (see the module docstring)."""

    def __init__(self, argv: list[str], *, name: str = "engine", cwd: str | Path | None = None,
                 env: dict[str, str] | None = None, stderr_path: str | Path | None = None,
                 capture_stderr: bool = False, timeout: float = 30.0):
        self.name = name
        self.argv = list(argv)
        self.timeout = timeout  # default for read_response
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        self._stderr_lines: list[str] = []
        if self.stderr_path is not None:
            err = open(self.stderr_path, "wb")
        else:
            err = subprocess.PIPE if capture_stderr else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd,
                env=env, start_new_session=True, bufsize=0)
        except OSError as e:
            raise EngineCrashed(f"cannot start {self.argv[0]!r}: {e.strerror or e}") from e
        finally:
            if self.stderr_path is not None:
                err.close()
        self._lines: queue.Queue = queue.Queue()
        self._sent = time.perf_counter()
        self.dead = False
        self._readers = [threading.Thread(target=self._read, daemon=True, name=f"gtp-{name}")]
        if capture_stderr and self.stderr_path is None:
            self._readers.append(threading.Thread(target=self._read_stderr, daemon=True,
                                                  name=f"gtp-{name}-err"))
        for reader in self._readers:
            reader.start()

    # Each output pipe is closed by the thread that reads it, after its last read: closed from
    # another thread, its descriptor number could be reused by the next engine's pipe before
    # this thread's pending read, which would then steal that engine's first byte.
    def _read(self) -> None:
        out = self.proc.stdout
        try:
            for raw in iter(out.readline, b""):
                self._lines.put((raw.decode("utf-8", "replace"), time.perf_counter()))
        except (OSError, ValueError):
            pass
        finally:
            out.close()
        self._lines.put((None, time.perf_counter()))

    def _read_stderr(self) -> None:
        err = self.proc.stderr
        try:
            for raw in iter(err.readline, b""):
                self._stderr_lines = (self._stderr_lines
                                      + [raw.decode("utf-8", "replace")])[-20:]
        except (OSError, ValueError):
            pass
        finally:
            err.close()

    # -- diagnostics ---------------------------------------------------------------------
    def stderr_tail(self, chars: int = 400) -> str:
        """The end of what the engine wrote on stderr (one line, for error messages)."""
        if self.stderr_path is not None:
            if not self.stderr_path.exists():
                return ""
            with open(self.stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - chars))
                text = f.read().decode("utf-8", "replace")
        else:
            text = "".join(self._stderr_lines)[-chars:]
        return " | ".join(ln.strip() for ln in text.strip().splitlines()[-4:] if ln.strip())

    def _crashed(self, what: str) -> EngineCrashed:
        self.dead = True
        try:
            code = self.proc.wait(timeout=1.0)
            how = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
        except subprocess.TimeoutExpired:
            how = "closed its output"
        tail = self.stderr_tail()
        return EngineCrashed(f"{what}: engine {how}" + (f"; stderr: {tail}" if tail else ""))

    # -- raw level (conformance) ---------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (the conformance runner's framing checks)."""
        if self.dead:
            raise EngineCrashed("engine already dead")
        self._sent = time.perf_counter()
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed("cannot write to the engine") from None

    def _line(self, deadline: float, what: str) -> tuple[str, float]:
        try:
            line, stamp = self._lines.get(timeout=max(0.0, deadline - time.perf_counter()))
        except queue.Empty:
            raise EngineTimeout(f"no response {what}") from None
        if line is None:
            self._lines.put((None, stamp))  # stay at EOF for later reads
            raise EngineCrashed("engine closed its output")
        return line, stamp

    def read_response(self, ident: str = "", timeout: float | None = None,
                      garbage_fatal: bool = False) -> Response:
        """The next response and its framing problems. Raises EngineTimeout when it is not
        complete within ``timeout`` (default: the one given at start), EngineCrashed at EOF,
        and with ``garbage_fatal`` EngineGarbage at once when its first line is not a GTP head
        (otherwise that is listed among the problems)."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.perf_counter() + timeout
        what = f"within {timeout:g} s"
        problems = []
        first, _ = self._line(deadline, what)
        while first in ("\n", "\r\n"):
            problems.append("extra empty line before a response")
            first, _ = self._line(deadline, what)
        if garbage_fatal and first[:1] not in ("=", "?"):
            raise EngineGarbage(f"reply is not GTP: {first.rstrip()[:80]!r}")
        body = [first]
        while True:
            line, stamp = self._line(deadline, what)
            if line in ("\n", "\r\n"):
                break
            body.append(line)
        if any(ln.endswith("\r\n") for ln in body):
            problems.append("CR in the response line ends")
        lines = [ln.rstrip("\r\n") for ln in body]
        raw = "\n".join(lines)
        seconds = stamp - self._sent
        m = _HEAD.match(raw)
        if not m:
            problems.append(f"response does not start with '=' or '?': {lines[0]!r}")
            return Response(False, "", raw, raw, seconds, problems)
        if m.group(2) != ident:
            problems.append(f"response id {m.group(2)!r} but {ident!r} was sent")
        return Response(m.group(1) == "=", m.group(2), (m.group(3) or "").strip(), raw, seconds,
                        problems)

    def read_line(self, timeout: float | None = None) -> tuple[str, float]:
        """The next output line (without its line end) and when it arrived
        (``time.perf_counter()``): for commands whose output streams (``lz-analyze``), read
        line by line. Raises EngineTimeout or EngineCrashed as ``read_response`` does."""
        timeout = self.timeout if timeout is None else timeout
        line, stamp = self._line(time.perf_counter() + timeout, f"within {timeout:g} s")
        return line.rstrip("\r\n"), stamp

    def finish(self, send_quit: bool = True, timeout: float | None = None) -> list[str]:
        """Quit (optionally), close stdin, wait for the exit; returns the problems: the quit
        reply, the exit status, output after the last response."""
        timeout = self.timeout if timeout is None else timeout
        problems = []
        try:
            if send_quit:
                self.send_raw(b"quit\n")
                resp = self.read_response("", timeout)
                problems += resp.problems
                if not resp.ok:
                    problems.append(f"quit failed: {resp.raw!r}")
        except EngineError as e:
            problems.append(f"quit: {e}")
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return problems + ["engine did not exit after quit/EOF"]
        if status != 0:
            problems.append(f"exit status {status}")
        leftover = []
        while True:
            try:
                line, _ = self._lines.get(timeout=2.0)
            except queue.Empty:
                break
            if line is None:
                self._lines.put((None, 0.0))
                break
            leftover.append(line)
        if leftover:
            problems.append(f"output after the last response: {''.join(leftover)[:200]!r}")
        return problems

    # -- command level (referee) ---------------------------------------------------------
    def command(self, cmd: str, timeout: float) -> tuple[bool, str, float]:
        """Send one command; wait up to ``timeout`` s for the whole reply.

        Returns (success, response text without the ``=``/``?`` and id, seconds elapsed).
        Blank lines before a reply are tolerated; an id in the reply is not checked."""
        word = cmd.split()[0] if cmd.split() else cmd
        if self.dead:
            raise EngineCrashed(f"{word}: engine already dead")
        # Anything left unread belongs to no command: stale output is a protocol error.
        stale = self._drain()
        if stale is not None:
            raise EngineGarbage(f"unsolicited output before {word}: {stale[:80]!r}")
        try:
            self.send_raw((cmd + "\n").encode())
        except EngineCrashed:
            raise self._crashed(f"writing {word!r}") from None
        try:
            resp = self.read_response(timeout=timeout, garbage_fatal=True)
        except EngineTimeout:
            self.kill()
            raise EngineTimeout(f"no reply to {word!r} within {timeout:.1f} s; "
                                "engine killed") from None
        except EngineCrashed:
            raise self._crashed(f"while waiting for {word!r}") from None
        except EngineGarbage as e:
            self.kill()
            raise EngineGarbage(f"{word!r}: {e}") from None
        return resp.ok, resp.text, resp.seconds

    def _drain(self) -> str | None:
        """Discard queued blank lines; return the first non-blank stale line, if any."""
        while True:
            try:
                line, stamp = self._lines.get_nowait()
            except queue.Empty:
                return None
            if line is None:
                self._lines.put((None, stamp))  # keep the EOF for command()
                return None
            if line.strip():
                return line.strip()

    # -- shutdown ------------------------------------------------------------------------
    def kill(self) -> None:
        """Kill the engine's whole process group (it may have started children)."""
        self.dead = True
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._close_pipes()

    def close(self, grace: float = 2.0) -> None:
        """``quit`` politely, then kill whatever is still running."""
        if not self.dead and self.proc.poll() is None:
            try:
                self.command("quit", timeout=grace)
            except EngineError:
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def _close_pipes(self) -> None:
        """Close stdin; the output pipes are their reader threads' to close, at EOF (which the
        killed group gives at once; a child that escaped it keeps its thread waiting)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for reader in self._readers:
            reader.join(timeout=1.0)
