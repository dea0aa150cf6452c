"""The conformance runner (nogobot/conformance.py): the whole gtp_conformance suite must pass
against `nogobot gtp`, and the runner itself must catch bad engines (tested with a small fake
engine whose faults are switched on from its command line)."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT

from nogobot.tools import conformance

FAKE_ENGINE = textwrap.dedent('''
    """A minimal GTP engine with switchable faults (argv: fault names)."""
    import sys, time
    faults = set(sys.argv[1:])
    out = sys.stdout
    commands = ["protocol_version", "name", "version", "known_command", "list_commands",
                "quit", "boardsize", "clear_board", "komi", "play", "genmove", "echo", "fail"]
    for raw in sys.stdin.buffer:
        raw = raw.decode("utf-8", "replace")
        raw = "".join(ch for ch in raw if ch == "\t" or 32 <= ord(ch) != 127)
        line = raw.split("#")[0].replace("\t", " ").strip()
        if not line:
            continue
        words = line.split()
        ident = words.pop(0) if words[0].isdigit() else ""
        if "bad-id" in faults and ident:
            ident = str(int(ident) + 1)
        cmd, args = (words[0], words[1:]) if words else ("", [])
        if "crash" in faults and cmd == "echo":
            sys.exit(3)
        if "hang" in faults and cmd == "echo":
            time.sleep(60)
        if "noise" in faults:
            out.write("debug: thinking\\n")
        ok, text = True, ""
        if cmd == "protocol_version":
            text = "2"
        elif cmd == "name":
            text = "fake"
        elif cmd == "version":
            text = "0.0"
        elif cmd in ("boardsize", "clear_board", "komi", "play"):
            pass
        elif cmd == "genmove":
            text = "resign"
        elif cmd == "known_command":
            text = "true" if args and args[0] in commands else "false"
        elif cmd == "list_commands":
            text = "\\n".join(commands)
        elif cmd == "echo":
            text = " ".join(args)
        elif cmd == "fail":
            ok, text = False, " ".join(args) or "failed"
        elif cmd == "quit":
            pass
        else:
            ok, text = False, "unknown command"
        out.write(("=" if ok else "?") + ident + " " + text + "\\n\\n")
        if "extra-blank" in faults:
            out.write("\\n")
        out.flush()
        if cmd == "quit":
            sys.exit(5 if "bad-exit" in faults else 0)
''')


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return lambda *faults: shlex.join([sys.executable, str(script), *faults])


def run(engine, files, **kw):
    out = io.StringIO()
    kw.setdefault("timeout", 10)
    status = conformance.main(engine, [str(f) for f in files], out=out, **kw)
    return status, out.getvalue()


def tst(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.slow  # every script of the suite through nogobot gtp: about 30 s
def test_whole_suite_passes_against_nogobot():
    out = io.StringIO()
    status = conformance.main(None, None, out=out)
    report = out.getvalue()
    assert status == 0, "\n".join(ln for ln in report.splitlines() if not ln.startswith("pass"))
    assert " 0 FAILED" in report and "(0 skipped)" in report
    files = sorted(p.name for p in conformance.CONFORMANCE_DIR.glob("*.tst"))
    assert len(files) >= 12
    assert int(report.rsplit("files", 1)[0].split()[-1]) == len(files) + 1  # + built-in
    # The README quotes the suite's size; it must not drift from the real count.
    passed = int(re.search(r"(\d+) passed", report).group(1))
    quoted = re.search(r"passes all ([\d,]+) checks", (ROOT / "README.md").read_text())
    assert quoted and int(quoted.group(1).replace(",", "")) == passed, (
        f"README says {quoted and quoted.group(1)} conformance checks, the suite has {passed}")


def test_cli_entry_point(fake, tmp_path):
    path = tst(tmp_path, "ok.tst", """
        1 echo hello
        #? [hello]
    """)
    def cli(engine):
        return subprocess.run([sys.executable, "-m", "nogobot", "conformance", "--engine",
                               engine, str(path)], capture_output=True, text=True, timeout=60,
                              check=False)

    res = cli(fake())
    assert res.returncode == 0, res.stdout
    assert "pass  ok.tst:2" in res.stdout
    bad = cli(fake("bad-id"))
    assert bad.returncode == 1


def test_generic_framing_checks_pass_on_a_correct_engine(fake):
    status, report = run(fake(), [])
    assert status == 0, report
    assert "21 passed" in report


def test_pattern_semantics(fake, tmp_path):
    path = tst(tmp_path, "p.tst", """
        # a comment
        1 echo a b
        #? [a b]
        2 echo a b
        #? [a.*]
        3 echo a b
        #? [!x.*]
        4 echo one
        #? [two]*
        5 echo one
        #? [one]*
        6 fail illegal move
        #! [illegal move]
        7 fail illegal move
        #! [!syntax error]
        8 echo ok
        9 echo multi
        #? [MULTI]
    """)
    status, report = run(fake(), [path], builtin=False)
    lines = {ln.split()[1].split(":")[1]: ln for ln in report.splitlines() if "p.tst:" in ln}
    assert status == 1
    for line_no in ("3", "5", "7", "13", "15", "17"):
        assert lines[line_no].startswith("pass "), lines[line_no]
    assert lines["9"].startswith("fail*")  # expected failure
    assert lines["11"].startswith("PASS*")  # unexpected pass
    assert lines["18"].startswith("FAIL ")  # case-sensitive full match
    assert "1 FAILED, 1 expected failures, 1 unexpected passes" in report


def test_error_expectations_and_setup_failures(fake, tmp_path):
    path = tst(tmp_path, "e.tst", """
        fail setup breaks
        1 echo fine
        #! [.*]
        2 fail with text
        #? [.*]
        3 fail
        4 fail other text
        #! [illegal move]
    """)
    status, report = run(fake(), [path], builtin=False)
    assert status == 1
    assert "(setup) fail setup breaks" in report
    assert "5 FAILED" in report  # the setup line and tests 1-4


def test_requires_and_name_gating(fake, tmp_path):
    needs = tst(tmp_path, "needs.tst", """
        # @requires echo gogui-rules_legal_moves
        1 echo x
        #? [y]
    """)
    named = tst(tmp_path, "named.tst", """
        # @name nogobot.*
        1 echo x
        #? [y]
    """)
    present = tst(tmp_path, "present.tst", """
        # @requires echo fail
        # @name fak.
        1 echo x
        #? [x]
    """)
    status, report = run(fake(), [needs, named, present], builtin=False)
    assert status == 0, report
    assert "SKIP" in report and "engine lacks gogui-rules_legal_moves" in report
    assert "does not match [nogobot.*]" in report
    assert "pass  present.tst:4" in report


@pytest.mark.parametrize("fault, symptom", [
    ("bad-id", "response id"),
    ("extra-blank", "extra empty line"),
    ("noise", "does not start with '=' or '?'"),
    ("crash", "engine closed its output"),
    ("hang", "no response within"),
    ("bad-exit", "exit status 5"),
])
def test_bad_engines_are_caught(fake, tmp_path, fault, symptom):
    path = tst(tmp_path, "t.tst", """
        1 echo a
        #? [a]
        2 echo b
        #? [b]
    """)
    status, report = run(fake(fault), [path], builtin=False, **(
        {"timeout": 2} if fault == "hang" else {}))
    assert status == 1
    assert symptom in report


def test_built_in_checks_catch_framing_faults(fake):
    for fault in ("bad-id", "noise", "extra-blank", "bad-exit"):
        status, _ = run(fake(fault), [])
        assert status == 1, fault


def test_malformed_files_are_reported(fake, tmp_path):
    orphan = tst(tmp_path, "orphan.tst", """
        #? [x]
    """)
    brackets = tst(tmp_path, "brackets.tst", """
        1 echo x
        #? x
    """)
    after_quit = tst(tmp_path, "after.tst", """
        quit
        1 echo x
    """)
    status, report = run(fake(), [orphan, brackets, after_quit], builtin=False)
    assert status == 1
    assert "pattern without a preceding command" in report
    assert "pattern must be written [regex]" in report
    assert "command after quit" in report


def test_quit_inside_a_file(fake, tmp_path):
    path = tst(tmp_path, "q.tst", """
        1 echo a
        2 quit
        #? []
    """)
    status, report = run(fake(), [path], builtin=False)
    assert status == 0, report
    status, report = run(fake("bad-exit"), [path], builtin=False)
    assert status == 1 and "exit status 5" in report


def test_working_directory_is_the_files_directory(tmp_path):
    sub = tmp_path / "d"
    sub.mkdir()
    (sub / "g.sgf").write_text("(;SZ[3];B[bb])")
    path = tst(sub, "cwd.tst", """
        1 loadsgf g.sgf
        #? []
        2 gogui-rules_board
        #? [\\. \\. \\.\\n\\. X \\.\\n\\. \\. \\.]
    """)
    status, report = run(None, [path], builtin=False)
    assert status == 0, report
