"""GTP conformance runner: gogui-regress style ``.tst`` files plus built-in raw framing checks.

``nogobot conformance [--engine "CMD"] [FILES...]`` works on any GTP engine (default: this
Python running ``-m nogobot gtp``). With no FILES it runs every ``.tst`` file of
the suite: the repository's top-level ``gtp_conformance/``, which a wheel carries as
``nogobot/gtp_conformance/`` (``packagedata``).

File format (gogui-regress's, with two documented extensions):

* a line ``ID command ...`` (ID = digits, then blank) is a *test*; a line without an id is a
  setup command, which must succeed;
* ``#? [re]`` after a test: the command must succeed (``=``) and its text (after ``=ID``,
  trimmed) must fully match ``re`` (Python ``re``, MULTILINE|DOTALL); ``[!re]`` must not match;
  a trailing ``*`` marks an expected failure (reported, does not fail the run). A test with no
  pattern line passes when it succeeds. Any ``?`` answer fails a ``#?`` test, as in
  gogui-regress;
* ``#! [re]`` (extension) after a test: the command must FAIL (``?``) with a message fully
  matching ``re``; ``[!re]`` and ``*`` work the same way. gogui-regress treats ``#!`` as a
  comment and prints "unexpected FAIL" for such tests (its exit status is unaffected), so
  files that test error paths are meant for this runner;
* ``# @requires cmd ...`` (extension): skip the file unless the engine lists every command;
* ``# @name re`` (extension): skip the file unless the engine's ``name`` fully matches ``re``
  (for engine-specific conventions such as nogobot's exact error texts);
* other ``#`` lines are comments; blank lines are ignored.

Each file gets a fresh engine process (``tournament.gtp_client.GtpProcess``, the controller the
referee uses too) whose working directory is the file's directory (so ``loadsgf`` paths are
relative to it). Every response is also checked for framing: it starts
with ``=`` or ``?`` and the id that was sent, and exactly one blank line ends it. After the
file the runner sends ``quit`` (unless the file did) and requires exit status 0 and nothing
more on stdout. Raw-byte framing (CR, tabs, control characters, comments, invalid UTF-8,
EOF) cannot be written in a line-based file, so those are built-in checks run first.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..core.packagedata import data_dir
from ..tournament.gtp_client import EngineError, GtpProcess, Response

DEFAULT_TIMEOUT = 30.0
# The checkout's gtp_conformance/, or the package data of an installed wheel.
CONFORMANCE_DIR = data_dir("gtp_conformance", "*.tst")
_TEST_LINE = re.compile(r"(\d+)[ \t]+\S")


EngineDied = EngineError  # the engine closed stdout, exited or timed out


def _start(argv: list[str], cwd: str | Path | None, env: dict[str, str] | None,
           timeout: float) -> GtpProcess:
    return GtpProcess(argv, name="conformance", cwd=cwd, env=env, capture_stderr=True,
                      timeout=timeout)


def _command(engine: GtpProcess, line: str) -> tuple[Response, list[str]]:
    """Send one .tst line; the response and its framing problems (the id must be echoed)."""
    m = _TEST_LINE.match(line)
    engine.send_raw(line.encode("utf-8") + b"\n")
    resp = engine.read_response((m.group(1).lstrip("0") or "0") if m else "")
    return resp, resp.problems


# ------------------------------------------------------------------------------------------
# .tst files
# ------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    where: str  # "file:line"
    label: str  # "ID command"
    passed: bool
    expected_fail: bool = False
    detail: str = ""


@dataclass
class FileResult:
    path: str
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: str = ""


def _parse_pattern(spec: str, where: str) -> tuple[str, bool, bool]:
    """'[re]', '[!re]', optionally followed by '*' -> (re, negated, expected_fail)."""
    spec = spec.strip()
    expected_fail = spec.endswith("*")
    if expected_fail:
        spec = spec[:-1].rstrip()
    if not (spec.startswith("[") and spec.endswith("]")):
        raise ValueError(f"{where}: pattern must be written [regex]: {spec!r}")
    pattern = spec[1:-1].strip()
    negated = pattern.startswith("!")
    return (pattern[1:] if negated else pattern), negated, expected_fail


def _judge(resp: Response, want_ok: bool, pattern: str, negated: bool) -> str:
    """'' if the response meets the expectation, else why not."""
    if resp.ok != want_ok:
        return f"got {resp.raw!r}, expected {'success' if want_ok else 'failure'}"
    if pattern is None:
        return ""
    matched = re.fullmatch(pattern, resp.text, re.MULTILINE | re.DOTALL) is not None
    if matched == negated:
        return f"got {resp.text!r}, {'must not' if negated else 'must'} match [{pattern}]"
    return ""


def run_file(path: Path, argv: list[str], env: dict[str, str] | None,
             timeout: float, verbose: bool = False) -> FileResult:
    result = FileResult(str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    required = [w for ln in lines if ln.strip().startswith("# @requires")
                for w in ln.split()[2:]]
    names = [ln.strip()[len("# @name"):].strip() for ln in lines
             if ln.strip().startswith("# @name")]
    engine = _start(argv, path.parent, env, timeout)
    quit_sent = False
    pending: tuple | None = None  # (where, label, response, problems) awaiting its pattern

    def settle(kind: str | None, spec: str | None, where_pat: str) -> None:
        nonlocal pending
        where, label, resp, probs, is_test = pending
        pending = None
        expected_fail = False
        if kind is None:  # no pattern line: must succeed
            why = "" if resp.ok else f"got {resp.raw!r}"
        else:
            pattern, negated, expected_fail = _parse_pattern(spec, where_pat)
            why = _judge(resp, kind == "#?", pattern, negated)
        if probs:
            why = "; ".join([why] + probs if why else probs)
        if is_test or why:
            result.outcomes.append(Outcome(where, label if is_test else f"(setup) {label}",
                                           not why, expected_fail, why))

    try:
        if required:
            resp, probs = _command(engine, "list_commands")
            known = set(resp.text.split()) if resp.ok else set()
            missing = [c for c in required if c not in known]
            if missing:
                result.skipped = "engine lacks " + " ".join(missing)
                return result
        for pattern in names:
            resp, probs = _command(engine, "name")
            if not re.fullmatch(pattern, resp.text):
                result.skipped = f"engine name {resp.text!r} does not match [{pattern}]"
                return result
        for number, raw_line in enumerate(lines, start=1):
            line = raw_line.strip()
            where = f"{path.name}:{number}"
            if line.startswith(("#?", "#!")):
                if pending is None:
                    raise ValueError(f"{where}: pattern without a preceding command")
                settle(line[:2], line[2:], where)
                continue
            if pending is not None:
                settle(None, None, where)
            if not line or line.startswith("#"):
                continue
            if quit_sent:
                raise ValueError(f"{where}: command after quit")
            resp, probs = _command(engine, line)
            if verbose:
                print(f"  > {line}\n  < {resp.raw}")
            is_test = _TEST_LINE.match(line) is not None
            pending = (where, line, resp, probs, is_test)
            words = line.split()
            quit_sent = (words[1:2] if is_test else words[:1]) == ["quit"] and resp.ok
        if pending is not None:
            settle(None, None, f"{path.name}:end")
        for problem in engine.finish(send_quit=not quit_sent):
            result.outcomes.append(Outcome(f"{path.name}:end", "quit/exit", False, False,
                                           problem))
    except EngineDied as e:
        tail = engine.stderr_tail()
        result.outcomes.append(Outcome(path.name, "engine", False, False,
                                       f"{e}" + (f"; stderr: {tail}" if tail else "")))
    finally:
        engine.kill()
    return result


# ------------------------------------------------------------------------------------------
# Built-in raw framing checks (generic GTP: only commands every engine must have)
# ------------------------------------------------------------------------------------------

REQUIRED_COMMANDS = ("protocol_version", "name", "version", "known_command", "list_commands",
                     "quit", "boardsize", "clear_board", "komi", "play", "genmove")


def framing_checks(argv: list[str], env: dict[str, str] | None,
                   timeout: float) -> FileResult:
    result = FileResult("[built-in framing]")
    add = result.outcomes.append

    def expect(engine: GtpProcess, label: str, data: bytes, ident: str, ok: bool | None,
               text: str | None) -> Response | None:
        engine.send_raw(data)
        resp = engine.read_response(ident)
        why = list(resp.problems)
        if ok is not None and resp.ok != ok:
            why.append(f"expected {'success' if ok else 'failure'}")
        if text is not None and re.fullmatch(text, resp.text, re.MULTILINE | re.DOTALL) is None:
            why.append(f"text must match [{text}]")
        add(Outcome("framing", label, not why, False,
                    "; ".join(why) + f" (got {resp.raw!r})" if why else ""))
        return resp

    engine = _start(argv, None, env, timeout)
    try:
        expect(engine, "protocol_version without id", b"protocol_version\n", "", True, "2")
        name = expect(engine, "name", b"name\n", "", True, r".+")
        expect(engine, "id echoed", b"7 protocol_version\n", "7", True, "2")
        expect(engine, "the same id again", b"7 protocol_version\n", "7", True, "2")
        expect(engine, "id 0", b"0 protocol_version\n", "0", True, "2")
        expect(engine, "CR LF line end", b"8 name\r\n", "8", True, re.escape(name.text))
        expect(engine, "tabs as separators", b"\t9\tprotocol_version\t\n", "9", True, "2")
        expect(engine, "comment after command", b"10 protocol_version # x y\n", "10", True,
               "2")
        expect(engine, "empty, blank and comment lines get no response",
               b"\n   \n# only a comment\n\t\n11 protocol_version\n", "11", True, "2")
        expect(engine, "control characters deleted",
               b"12 proto\x01col_ver\x7fsion\x00\n", "12", True, "2")
        expect(engine, "two commands in one write (1)", b"13 name\n14 version\n", "13",
               True, None)
        resp = engine.read_response("14")
        add(Outcome("framing", "two commands in one write (2)", resp.ok and not resp.problems,
                    False, "; ".join(resp.problems) or ("" if resp.ok else resp.raw)))
        expect(engine, "unknown command", b"15 surely-not-a-gtp-command\n", "15", False,
               r"(?i)unknown command.*")
        expect(engine, "invalid UTF-8 is answered, not fatal", b"16 \xff\xfe\xc3(\n", "16",
               False, None)
        listed = expect(engine, "list_commands", b"17 list_commands\n", "17", True, r".+")
        names = listed.text.split("\n") if listed and listed.ok else []
        missing = [c for c in REQUIRED_COMMANDS if c not in names]
        add(Outcome("framing", "required commands listed (one per line)", not missing,
                    False, "missing: " + " ".join(missing) if missing else ""))
        bad = []
        for i, c in enumerate(names):
            engine.send_raw(f"{100 + i} known_command {c}\n".encode())
            resp = engine.read_response(str(100 + i))
            if resp.problems or not resp.ok or resp.text != "true":
                bad.append(c)
        add(Outcome("framing", "known_command true for every listed command", not bad, False,
                    "not known: " + " ".join(bad) if bad else ""))
        expect(engine, "known_command false", b"18 known_command surely-not-a-command\n",
               "18", True, "false")
        problems = engine.finish()
        add(Outcome("framing", "quit answers and exits 0", not problems, False,
                    "; ".join(problems)))
    except EngineDied as e:
        add(Outcome("framing", "engine", False, False, str(e)))
    finally:
        engine.kill()

    engine = _start(argv, None, env, timeout)
    try:
        expect(engine, "answers before EOF", b"1 name\n", "1", True, r".+")
        problems = engine.finish(send_quit=False)  # closes stdin: EOF
        add(Outcome("framing", "EOF exits 0", not problems, False, "; ".join(problems)))
    except EngineDied as e:
        add(Outcome("framing", "EOF", False, False, str(e)))
    finally:
        engine.kill()
    return result


# ------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------


def default_engine() -> tuple[list[str], dict[str, str]]:
    """This interpreter running ``-m nogobot gtp``, importable from any working directory."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                else "")
    # A small fixed search keeps a full run quick; the protocol does not depend on strength.
    return [sys.executable, "-m", "nogobot", "gtp", "--quiet", "--playouts", "64"], env


def main(engine_cmd: str | None = None, files: list[str] | None = None, *,
         verbose: bool = False, timeout: float = DEFAULT_TIMEOUT, builtin: bool = True,
         out=None) -> int:
    """Run the checks and the files; print each result and a summary; 0 iff all pass."""
    out = out or sys.stdout
    if engine_cmd:
        argv, env = shlex.split(engine_cmd), None
    else:
        argv, env = default_engine()
    # None: the whole suite; an empty list: only the built-in checks.
    paths = sorted(CONFORMANCE_DIR.glob("*.tst")) if files is None else [Path(f) for f in files]
    results = []
    for path in ([None] if builtin else []) + paths:
        try:
            results.append(framing_checks(argv, env, timeout) if path is None else
                           run_file(path.resolve(), argv, env, timeout, verbose))
        except (ValueError, EngineError) as e:  # a malformed .tst file, an engine that
            where = str(path or "[built-in framing]")  # cannot start
            results.append(FileResult(where, [Outcome(where, "file" if isinstance(
                e, ValueError) else "engine", False, False, str(e))]))
    totals = {"passed": 0, "FAILED": 0, "expected failures": 0, "unexpected passes": 0}
    skipped = 0
    for res in results:
        if res.skipped:
            skipped += 1
            print(f"SKIP {res.path}: {res.skipped}", file=out)
            continue
        for o in res.outcomes:
            if o.passed:
                key, tag = (("unexpected passes", "PASS*") if o.expected_fail
                            else ("passed", "pass "))
            else:
                key, tag = (("expected failures", "fail*") if o.expected_fail
                            else ("FAILED", "FAIL "))
            totals[key] += 1
            print(f"{tag} {o.where:<24} {o.label}" + (f"  -- {o.detail}" if o.detail else ""),
                  file=out)
    summary = ", ".join(f"{n} {k}" for k, n in totals.items())
    print(f"\n{len(results)} files ({skipped} skipped): {summary}", file=out)
    out.flush()
    return 0 if totals["FAILED"] == 0 else 1
