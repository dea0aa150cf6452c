"""A GTP controller for one engine subprocess: send a command, wait for its full reply, time it.

Failures are exceptions with a ``kind`` the referee turns into a game result:

* :class:`EngineCrashed` (``crash``): the process exited, or closed stdout, or stdin is broken;
* :class:`EngineTimeout` (``timeout``): no complete reply within the timeout (the engine is
  killed, since a late reply would desynchronise the conversation);
* :class:`EngineGarbage` (``garbage``): the reply does not start with ``=`` or ``?``.

Timing: a reader thread stamps each stdout line with ``time.perf_counter()`` as it arrives, so the
measured time runs from just before the command is written to the arrival of the blank line that
ends the reply, and does not include the harness's own scheduling delays.

Engines run in their own session (process group) so that a Ctrl-C in the terminal reaches only
the harness, which then kills every engine group it started. An engine also sees EOF on stdin if
the harness dies; GTP engines exit on EOF.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path


class EngineError(Exception):
    kind = "error"


class EngineCrashed(EngineError):
    kind = "crash"


class EngineTimeout(EngineError):
    kind = "timeout"


class EngineGarbage(EngineError):
    kind = "garbage"


class GtpProcess:
    """One running engine. ``command()`` returns ``(ok, text, seconds)``."""

    def __init__(self, argv: list[str], *, name: str = "engine", cwd: str | None = None,
                 env: dict[str, str] | None = None, stderr_path: str | Path | None = None):
        self.name = name
        self.argv = list(argv)
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        err = open(self.stderr_path, "wb") if self.stderr_path is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=cwd,
                env=env, start_new_session=True, bufsize=0)
        except OSError as e:
            raise EngineCrashed(f"cannot start {self.argv[0]!r}: {e.strerror or e}") from e
        finally:
            if err is not subprocess.DEVNULL:
                err.close()
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"gtp-{name}")
        self._reader.start()
        self.dead = False

    def _read(self) -> None:
        out = self.proc.stdout
        try:
            for raw in iter(out.readline, b""):
                self._lines.put((raw.decode("utf-8", "replace"), time.perf_counter()))
        except (OSError, ValueError):
            pass
        self._lines.put((None, time.perf_counter()))

    # -- diagnostics ---------------------------------------------------------------------
    def stderr_tail(self, chars: int = 400) -> str:
        """The end of what the engine wrote on stderr (one line, for error messages)."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        with open(self.stderr_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - chars))
            text = f.read().decode("utf-8", "replace").strip()
        return " | ".join(line.strip() for line in text.splitlines()[-4:] if line.strip())

    def _crashed(self, what: str) -> EngineCrashed:
        self.dead = True
        try:
            code = self.proc.wait(timeout=1.0)
            how = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
        except subprocess.TimeoutExpired:
            how = "closed its output"
        tail = self.stderr_tail()
        return EngineCrashed(f"{what}: engine {how}" + (f"; stderr: {tail}" if tail else ""))

    # -- protocol ------------------------------------------------------------------------
    def command(self, cmd: str, timeout: float) -> tuple[bool, str, float]:
        """Send one command; wait up to ``timeout`` s for the whole reply.

        Returns (success, response text without the ``=``/``?`` and id, seconds elapsed)."""
        if self.dead:
            raise EngineCrashed(f"{cmd.split()[0]}: engine already dead")
        # Anything left unread belongs to no command: stale output is a protocol error.
        stale = self._drain()
        if stale is not None:
            raise EngineGarbage(f"unsolicited output before {cmd.split()[0]}: {stale[:80]!r}")
        t0 = time.perf_counter()
        try:
            self.proc.stdin.write((cmd + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed(f"writing {cmd.split()[0]!r}") from None
        deadline = t0 + timeout
        first: str | None = None
        body: list[str] = []
        while True:
            left = deadline - time.perf_counter()
            try:
                line, stamp = self._lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                self.kill()
                raise EngineTimeout(f"no reply to {cmd.split()[0]!r} within {timeout:.1f} s; "
                                    "engine killed") from None
            if line is None:
                raise self._crashed(f"while waiting for {cmd.split()[0]!r}")
            text = line.rstrip("\r\n")
            if first is None:
                if not text.strip():
                    continue  # tolerate blank lines before a response
                if text[0] not in "=?":
                    self.kill()
                    raise EngineGarbage(f"reply to {cmd.split()[0]!r} is not GTP: {text[:80]!r}")
                first = text
                continue
            if not text.strip():
                ok = first[0] == "="
                head = first[1:]
                # Strip an optional numeric id right after = or ?.
                i = 0
                while i < len(head) and head[i].isdigit():
                    i += 1
                lines = [head[i:].strip()] + body
                return ok, "\n".join(lines).strip(), stamp - t0
            body.append(text)

    def _drain(self) -> str | None:
        """Discard queued blank lines; return the first non-blank stale line, if any."""
        while True:
            try:
                line, _ = self._lines.get_nowait()
            except queue.Empty:
                return None
            if line is None:
                self._lines.put((None, time.perf_counter()))  # keep the EOF for command()
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
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
