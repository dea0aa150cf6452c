"""GTP version 2 protocol layer: line preprocessing, ids, dispatch, framing. Knows nothing of NoGo.

A *handler* object provides the commands: every method named ``cmd_<name>`` is a GTP command
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
"""

from __future__ import annotations

import inspect
import re
import sys
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
    """The GTP loop around a handler; also answers the protocol commands itself.

    Protocol commands: protocol_version, name, version, known_command, list_commands, quit."""

    def __init__(self, handler: Any, *, name: str, version: str,
                 log: Callable[[str], None] | None = None):
        self.name = name
        self.version = version
        self.log = log or (lambda msg: None)
        self.done = False
        self.on_input = getattr(handler, "on_input", None)
        self.commands: dict[str, _Command] = {}
        for owner in (self, handler):
            for attr in dir(type(owner)):
                if attr.startswith("cmd_"):
                    fn = getattr(owner, attr)
                    self.commands[getattr(fn, "gtp_name", attr[4:])] = _Command(fn)

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
        try:
            return format_response(True, ident, cmd(args))
        except GtpError as e:
            return format_response(False, ident, str(e) or "failed")
        except Exception as e:  # noqa: BLE001 -- last resort: one command never kills the engine
            self.log(f"internal error in {name!r}:\n{traceback.format_exc()}")
            return format_response(False, ident, f"internal error: {type(e).__name__}: {e}")

    def run(self, instream: Any, outstream: Any) -> int:
        """Read commands until quit or EOF; returns the exit status (0).

        ``instream`` may be binary (bytes lines are decoded as UTF-8 with replacement) or text;
        ``outstream`` may be binary (UTF-8 is written) or text."""
        write = _writer(outstream)
        while not self.done:
            try:
                raw = instream.readline()
            except (OSError, ValueError):  # closed stream: treat as EOF
                break
            if not raw:
                break
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", errors="replace")
            if self.on_input is not None:
                self.on_input()  # e.g. stop pondering: any input line interrupts background work
            response = self.handle(raw)
            if response is not None:
                try:
                    write(response)
                except (BrokenPipeError, OSError, ValueError):
                    self.log("output closed; exiting")
                    break
        if self.on_input is not None:
            self.on_input()  # end background work before exiting
        return 0


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
