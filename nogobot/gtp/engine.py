"""GTP version 2 protocol layer: line preprocessing, ids, dispatch, framing. Knows nothing of NoGo.

*Handler* objects provide the commands (an engine composes one or more, as minigo's
``gtp_engine`` registers handlers): every method named ``cmd_<name>`` is a GTP command
``<name>`` (a method can take another wire name with the :func:`command` decorator, for names
such as ``gogui-rules_board``). Arguments are converted from the parameter annotations:

* ``str``, ``int`` (ASCII digits only), ``float`` (finite decimal), or any callable
  ``str -> value`` that raises ``ValueError`` on bad input (e.g. :func:`color`, :func:`vertex`);
* parameters with defaults are optional, ``*args`` takes the rest;
* missing, extra or unconvertible arguments answer ``? syntax error``.

A handler returns the response text (``None`` or ``""`` for an empty success) or raises
:class:`GtpError` with the failure text. Any other exception becomes ``? internal error: ...``
with the traceback on stderr, so no input can crash the loop.

Framing (GTP spec §3, GNU Go's gtp_main_loop):

* input: CR and control characters other than HT/LF are deleted, ``#`` starts a comment, HT
  becomes a space, and empty lines are ignored; invalid UTF-8 is replaced, never fatal;
* output: ``=[id] result`` or ``?[id] message`` then one empty line, flushed at once. A result
  never contains an empty line (blank lines inside are replaced by ``.``), so the controller
  always finds the end of the response.

Long commands (analysis, GoGui interrupt): ``run`` reads input on a reader thread, so a command
that is still running can see that input arrived. Optional handler hooks: ``attach_channel``
(given the engine's :class:`Channel`), ``on_input`` (called as each input line arrives) and
``hidden_commands`` (names of its commands it does not offer). The :class:`Channel` has
``input_pending`` (an Event, set while any input line or EOF waits), ``interrupted`` (set while
a raw ``# interrupt`` line, which GoGui sends during a long command, waits), and
``write_partial`` to send the first part of a success response at once (``=id`` on its own
line, then lines; the command's return value ends it, then the blank line). Lines are still
dispatched strictly one after another.
"""

from __future__ import annotations

import inspect
import os
import queue
import re
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, TextIO

# Canonical failure texts (spec §6.3 and GNU Go); handlers raise GtpError with these.
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"
ILLEGAL_MOVE = "illegal move"
UNACCEPTABLE_SIZE = "unacceptable size"
CANNOT_UNDO = "cannot undo"
CANNOT_SCORE = "cannot score"
CANNOT_LOAD_FILE = "cannot load file"

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # everything but HT; LF only ends a line
_INT = re.compile(r"[+]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_VERTEX = re.compile(r"[A-Za-z][0-9]+")
_INTERRUPT = re.compile(r"[\s\x00-\x1f\x7f]*#[\s\x00-\x1f\x7f]*interrupt\b", re.IGNORECASE)
HUGE = 10**30
_COLORS = {"b": "b", "black": "b", "w": "w", "white": "w"}


class GtpError(Exception):
    """A command failed; the message is the text after ``?``."""


class GtpSyntaxError(GtpError):
    def __init__(self, message: str = SYNTAX_ERROR):
        super().__init__(message)


# ------------------------------------------------------------------------------------------
# Argument types
# ------------------------------------------------------------------------------------------


def integer(token: str) -> int:
    """Unsigned decimal int in ASCII digits (Python's int() would also take '٣' or '1_0').

    Values of more than 30 digits are clamped to ``HUGE`` (int() refuses over 4300 digits, and
    no GTP quantity is that large)."""
    if not _INT.fullmatch(token):
        raise ValueError(f"not an integer: {token!r}")
    digits = token.lstrip("+").lstrip("0") or "0"
    return HUGE if len(digits) > 30 else int(digits)


def number(token: str) -> float:
    """A decimal float such as ``6.5``, ``-1``, ``1e3`` (no nan/inf words, no underscores).

    A literal too large for a float gives ``inf``; callers that need a finite value check."""
    if not _FLOAT.fullmatch(token):
        raise ValueError(f"not a number: {token!r}")
    return float(token)


def color(token: str) -> str:
    """GTP colour (b, black, w, white in any case) -> 'b' or 'w'."""
    try:
        return _COLORS[token.lower()]
    except KeyError:
        raise ValueError(f"not a colour: {token!r}") from None


def vertex(token: str) -> str:
    """GTP vertex syntax: a letter and digits, or pass -> upper case ('PASS' for pass).

    Only the syntax is checked here; whether the vertex is on the board (or a column I) is for
    the game layer to decide (that is an illegal move, not a syntax error)."""
    if token.lower() == "pass":
        return "PASS"
    if not _VERTEX.fullmatch(token) or not token.isascii():
        raise ValueError(f"not a vertex: {token!r}")
    return token.upper()


def boolean(token: str) -> bool:
    if token in ("true", "false"):
        return token == "true"
    raise ValueError(f"not a boolean: {token!r}")


_BUILTIN_TYPES: dict[Any, Callable[[str], Any]] = {int: integer, float: number, str: str,
                                                     bool: boolean}


def command(name: str) -> Callable[[Callable], Callable]:
    """Decorator giving a ``cmd_*`` method a GTP name that is not a Python identifier."""

    def mark(fn: Callable) -> Callable:
        fn.gtp_name = name
        return fn

    return mark


# ------------------------------------------------------------------------------------------
# Parsing and framing helpers
# ------------------------------------------------------------------------------------------


def preprocess(line: str) -> str:
    """Spec §3.1: drop control characters (not HT), cut the comment, HT -> space, strip."""
    line = _CONTROL.sub("", line)
    hash_at = line.find("#")
    if hash_at >= 0:
        line = line[:hash_at]
    return line.replace("\t", " ").strip(" ")


def parse(line: str) -> tuple[str | None, str, list[str]]:
    """A preprocessed, non-empty line -> (id or None, command name, arguments)."""
    tokens = line.split(" ")
    tokens = [t for t in tokens if t]
    ident = None
    if tokens[0].isascii() and tokens[0].isdigit():
        ident = tokens.pop(0).lstrip("0") or "0"  # no int(): it refuses > 4300 digits
    if not tokens:
        return ident, "", []
    return ident, tokens[0], tokens[1:]


def _clean_lines(text: str) -> list[str]:
    """Response text -> lines without control characters, trailing blanks or empty lines."""
    lines = [_CONTROL.sub("", ln).rstrip() for ln in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return [ln or "." for ln in lines]


def format_response(ok: bool, ident: str | None, text: str | None) -> str:
    """``=id text`` / ``?id text`` plus the blank line that ends it; no empty line inside."""
    text = "" if text is None else str(text)
    lines = [_CONTROL.sub("", ln).rstrip() for ln in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    lead = ""
    if len(lines) > 1 and not lines[0]:
        lead = "\n"  # a leading newline (board pictures) is kept: the '= ' line is not empty
        while not lines[0]:
            lines.pop(0)
    body = lead + "\n".join(ln or "." for ln in lines)
    return f"{'=' if ok else '?'}{ident or ''} {body}\n\n"


# ------------------------------------------------------------------------------------------
# Engine
# ------------------------------------------------------------------------------------------


class Channel:
    """What a running command sees of its connection (see the module docstring).

    Outside ``Engine.run`` (``Engine.handle`` called directly, or a handler used alone) the
    events are only set by whoever sets them, and partial output is kept and returned with
    the rest of the response."""

    def __init__(self) -> None:
        self.input_pending = threading.Event()
        self.interrupted = threading.Event()
        self._write: Callable[[str], None] | None = None  # set by Engine.run
        self._ident: str | None = None
        self._opened = False
        self._kept: list[str] = []

    @property
    def opened(self) -> bool:
        """True once part of the current response was written."""
        return self._opened

    def write_partial(self, text: str = "") -> None:
        """Send ``text`` now as lines of the current *success* response; the first call first
        writes ``=id`` on its own line. Empty lines become ``.``; ``""`` writes nothing more."""
        out = "" if self._opened else f"={self._ident or ''} \n"
        self._opened = True
        out += "".join(ln + "\n" for ln in _clean_lines(text)) if text else ""
        self._emit(out)

    def _emit(self, text: str) -> None:
        if not text:
            return
        if self._write is None:
            self._kept.append(text)
            return
        try:
            self._write(text)
        except (BrokenPipeError, OSError, ValueError):
            self.input_pending.set()  # nobody listens any more: let long commands end

    def _begin(self, ident: str | None) -> None:
        self._ident, self._opened, self._kept = ident, False, []

    def _finish(self, text: Any) -> str:
        """The rest of an opened response: ``text``'s lines, then the blank line."""
        text = "" if text is None else str(text)
        rest = "".join(self._kept) + "".join(ln + "\n" for ln in _clean_lines(text)) + "\n"
        self._kept = []
        return rest


class _Command:
    """One registered command: the bound method and its argument converters."""

    def __init__(self, fn: Callable):
        self.fn = fn
        sig = inspect.signature(fn, eval_str=True)
        self.converters: list[Callable[[str], Any]] = []
        self.required = 0
        self.rest: Callable[[str], Any] | None = None
        for p in sig.parameters.values():
            conv = _BUILTIN_TYPES.get(p.annotation, p.annotation)
            if conv is inspect.Parameter.empty:
                conv = str
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                self.rest = conv
            elif p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                            inspect.Parameter.POSITIONAL_OR_KEYWORD):
                self.converters.append(conv)
                if p.default is inspect.Parameter.empty:
                    self.required += 1

    def __call__(self, args: list[str]) -> Any:
        n = len(args)
        if n < self.required or (self.rest is None and n > len(self.converters)):
            raise GtpSyntaxError()
        values = []
        try:
            for i, token in enumerate(args):
                conv = self.converters[i] if i < len(self.converters) else self.rest
                values.append(conv(token))
        except (ValueError, OverflowError):
            raise GtpSyntaxError() from None
        return self.fn(*values)


class Engine:
    """The GTP loop around its handlers; also answers the protocol commands itself.

    Protocol commands: protocol_version, name, version, known_command, list_commands, quit.
    A command of a later handler replaces an earlier one's of the same name."""

    def __init__(self, *handlers: Any, name: str, version: str,
                 log: Callable[[str], None] | None = None):
        self.name = name
        self.version = version
        self.log = log or (lambda msg: None)
        self.done = False
        self.channel = Channel()
        self._lock = threading.Lock()
        self._queued = 0  # input lines read but not yet dispatched
        self._interrupts = 0  # of which '# interrupt' lines
        self._eof = False
        self._input_hooks: list[Callable[[], None]] = []
        self.handlers = handlers
        self.commands: dict[str, _Command] = {}
        self._offer(self)
        for handler in handlers:
            self._offer(handler)
            self._connect(handler)

    def _offer(self, handler: Any) -> None:
        """Offer ``handler``'s ``cmd_*`` methods as commands."""
        for attr in dir(type(handler)):
            if attr.startswith("cmd_"):
                fn = getattr(handler, attr)
                self.commands[getattr(fn, "gtp_name", attr[4:])] = _Command(fn)

    def _connect(self, handler: Any) -> None:
        """Connect ``handler``'s optional hooks (see the module docstring)."""
        for name in getattr(handler, "hidden_commands", ()):  # listed only if answered
            self.commands.pop(name, None)
        attach = getattr(handler, "attach_channel", None)
        if attach is not None:
            attach(self.channel)
        on_input = getattr(handler, "on_input", None)
        if on_input is not None:
            self._input_hooks.append(on_input)

    def _input_arrived(self) -> None:
        """Tell the handlers that an input line arrived (e.g. stop pondering)."""
        for hook in self._input_hooks:
            hook()

    # -- protocol commands ----------------------------------------------------------------
    def cmd_protocol_version(self) -> str:
        return "2"

    def cmd_name(self) -> str:
        return self.name

    def cmd_version(self) -> str:
        return self.version

    def cmd_known_command(self, name: str) -> str:
        return "true" if name in self.commands else "false"

    def cmd_list_commands(self) -> str:
        return "\n".join(sorted(self.commands))

    def cmd_quit(self) -> None:
        self.done = True

    # -- dispatch -------------------------------------------------------------------------
    def handle(self, raw: str) -> str | None:
        """One raw input line -> the framed response, or None for a line that is ignored."""
        line = preprocess(raw)
        if not line:
            return None
        ident, name, args = parse(line)
        cmd = self.commands.get(name)
        if cmd is None:
            return format_response(False, ident, UNKNOWN_COMMAND)
        channel = self.channel
        channel._begin(ident)
        try:
            result = cmd(args)
        except GtpError as e:
            if channel.opened:  # too late for '?': the response is closed as it stands
                self.log(f"{name}: failed after its response began: {e}")
                return channel._finish(None)
            return format_response(False, ident, str(e) or "failed")
        except Exception as e:  # noqa: BLE001 -- last resort: one command never kills the engine
            self.log(f"internal error in {name!r}:\n{traceback.format_exc()}")
            if channel.opened:
                return channel._finish(None)
            return format_response(False, ident, f"internal error: {type(e).__name__}: {e}")
        if channel.opened:
            return channel._finish(result)
        return format_response(True, ident, result)

    def run(self, instream: Any, outstream: Any) -> int:
        """Read commands until quit or EOF; returns the exit status (0).

        ``instream`` may be binary (bytes lines are decoded as UTF-8 with replacement) or text;
        ``outstream`` may be binary (UTF-8 is written) or text."""
        write = _writer(outstream)
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_lines, args=(instream, lines), daemon=True,
                         name="gtp-reader").start()
        self.channel._write = write
        try:
            while not self.done:
                raw = self._next_line(lines)
                if raw is None:
                    break
                self._input_arrived()  # e.g. stop pondering: any input line ends background work
                response = self.handle(raw)
                if response is not None:
                    try:
                        write(response)
                    except (BrokenPipeError, OSError, ValueError):
                        self.log("output closed; exiting")
                        break
        finally:
            self.channel._write = None
        self._input_arrived()  # end background work before exiting
        return 0

    # -- input ----------------------------------------------------------------------------
    def _read_lines(self, instream: Any, lines: queue.Queue) -> None:
        """Reader thread: queue every input line (None at EOF) and keep the channel's events
        up to date, so a running command sees input as soon as it arrives."""
        channel = self.channel
        source = _line_source(instream)
        while True:
            try:
                raw = next(source)
            except (OSError, ValueError, StopIteration):  # closed stream: treat as EOF
                raw = ""
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", errors="replace")
            with self._lock:
                if not raw:
                    lines.put(None)
                    self._eof = True
                    channel.input_pending.set()  # stays set: EOF also ends long commands
                    return
                lines.put(raw)
                self._queued += 1
                if _INTERRUPT.match(raw):
                    self._interrupts += 1
                    channel.interrupted.set()
                channel.input_pending.set()

    def _next_line(self, lines: queue.Queue) -> str | None:
        """The next input line (None at EOF); the events then describe what is still queued,
        so an interrupt read during a command applies to that command and no later one."""
        raw = lines.get()
        with self._lock:
            if raw is not None:
                self._queued -= 1
                if _INTERRUPT.match(raw):
                    self._interrupts -= 1
                if self._queued == 0 and not self._eof:
                    self.channel.input_pending.clear()
                if self._interrupts == 0:
                    self.channel.interrupted.clear()
        return raw


def _line_source(instream: Any):
    """Lines of ``instream``. A stream backed by a file descriptor (stdin) is read with
    os.read: a daemon thread blocked in ``BufferedReader.readline`` holds the reader's lock,
    and at interpreter exit after ``quit`` (the controller keeps the pipe open) Python then
    aborts with "could not acquire lock for <stdin>"."""
    try:
        fd = instream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        fd = None
    if fd is None:
        while True:
            yield instream.readline()
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
        while True:
            end = pending.find(b"\n")
            if end < 0:
                break
            yield pending[:end + 1]
            pending = pending[end + 1:]


def _writer(outstream: Any) -> Callable[[str], None]:
    binary = getattr(outstream, "buffer", None)
    if binary is not None:
        def write(text: str) -> None:
            binary.write(text.encode("utf-8", errors="replace"))
            binary.flush()
    else:
        def write(text: str) -> None:
            outstream.write(text)
            outstream.flush()
    return write


def stderr_logger(errstream: TextIO | None, quiet: bool = False) -> Callable[[str], None]:
    """A log function writing one message per call to ``errstream`` (default sys.stderr)."""

    def log(msg: str) -> None:
        if quiet:
            return
        stream = errstream if errstream is not None else sys.stderr
        try:
            stream.write(msg.rstrip("\n") + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass

    return log
