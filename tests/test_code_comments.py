"""The package's comments and docstrings say what and why, not when or how a match went.

A comment in nogobot/ carries no date, no issue number of this project and no match result:
those belong to the record (docs/results.md) and to git's history, and a comment points there
where the evidence matters. References to upstream bugs (numba's, onnxruntime's, ...) may stay.
Only comments and docstrings are read (``tokenize`` and ``ast``): strings the program prints,
such as a CLI's help text or a benchmark's reference figure, are not comments.

The self-tests feed the scanner a synthetic snippet of each form, so a pattern that stopped
matching would fail here rather than pass silently.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "nogobot"

_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
           "December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
_RESULT_WORDS = r"beat|beats|won|wins|lost|loses|lose|drew|draws|scored|scores|went|leads?|led"
# A result: 25-15, 10.5-5.5, 14/16 (not 0.40-0.60, nor a 3-5% range).
_SCORE = r"(?<![\w.])\d+(?:\.5)?[-/–]\d+(?:\.5)?(?![\w%]|\.\d)"

FORBIDDEN = {
    "date": re.compile(rf"\b20\d\d-[01]\d(-[0-3]\d)?\b|\b(?:{_MONTHS})\.? +(?:[0-3]?\d, +)?20\d\d\b"),
    "issue number": re.compile(r"\bissues? *#? *\d+\b|\(#\d+\)|\bPR *#\d+\b", re.IGNORECASE),
    "match score": re.compile(
        # 25-15, 28-4 or 14/16 beside a result word or a game count
        rf"\b(?:{_RESULT_WORDS})\b(?:\s+[\w'.,+-]+){{0,4}}?\s+\(?{_SCORE}"
        rf"|{_SCORE}\)?\s+(?:over|in|after|of|from)\s+\d+\s+games\b"
        r"|\b\d+/\d+\s+(?:games|wins|losses|as (?:white|black))\b"
        r"|\b\d+ of (?:the )?\d+ (?:games|losses|wins)\b"
        # Elo figures: +330 Elo, Elo +602
        r"|[+-]\d+(?:\.\d+)?\s*Elo\b|\bElo\s*[+-]\d+",
        re.IGNORECASE),
}

# A match of the ledger named in a comment is a record too (a pointer into docs/results.md says
# where to read it): the folder names under tournaments/ledger/ that hold a hyphen, with their
# numbered runs (ledger-rave-6).
LEDGER = ROOT / "tournaments" / "ledger"


def ledger_pattern(names) -> re.Pattern | None:
    names = sorted((n for n in names if "-" in n), key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<![\w/-])(?:" + "|".join(map(re.escape, names)) + r")(?:-\d+)?(?![\w-])")


LEDGER_NAMES = ledger_pattern(p.name for p in LEDGER.iterdir() if p.is_dir()) \
    if LEDGER.is_dir() else None

# Upstream bugs may be referenced: a hit on the same line as one of these names is allowed.
UPSTREAM = re.compile(r"\b(?:numba|onnxruntime|numpy|torch|pytorch|llvm|cpython|setuptools|"
                      r"gogui|sabaki)\b|github\.com/(?!\S*nogobot)", re.IGNORECASE)


def comment_texts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in ``source``."""
    texts = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            texts.append((tok.start[0], tok.string))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                texts.append((body[0].lineno, body[0].value.value))
    return texts


def offences(source: str, ledger: re.Pattern | None = None) -> list[tuple[int, str, str]]:
    """(line, kind, the words) for each date, issue number, match score or (with ``ledger``)
    ledger match in a comment or a docstring of ``source``."""
    patterns = dict(FORBIDDEN)
    if ledger is not None:
        patterns["ledger match"] = ledger
    found = []
    for first, text in comment_texts(source):
        for k, line in enumerate(text.splitlines()):
            for kind, pattern in patterns.items():
                for m in pattern.finditer(line):
                    if kind == "issue number" and UPSTREAM.search(line):
                        continue
                    found.append((first + k, kind, m.group(0)))
    return found


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_dates_issue_numbers_or_match_scores_in_comments(path):
    found = offences(path.read_text(encoding="utf-8"), LEDGER_NAMES)
    assert not found, "\n".join(f"{path.relative_to(ROOT)}:{line}: {kind}: {words!r}"
                                for line, kind, words in found)


# -- self-tests: each form is caught, and the look-alikes that are not records are not ---------

CAUGHT = [
    ("# measured 2026-11-24 on the guest", "date"),
    ("# (sp6-rave-900, 2026-11)", "date"),
    ('"""Tuned in Nov 2026."""', "date"),
    ("# the net misreads safe points (issue 19)", "issue number"),
    ("# see Issue #12", "issue number"),
    ("# fixed in (#57)", "issue number"),
    ("x = 1  # 0.02 beat 0.05 25-15 at 20k sims", "match score"),
    ("# the default engine beats rave 28-4 over 32 games", "match score"),
    ("# 14/16 as white", "match score"),
    ("# won 3 of 8 games", "match score"),
    ("# it missed proven wins in 3 of 8 losses", "match score"),
    ("# a proven loss turned once in 21 games (1-20 in 21 games)", "match score"),
    ("# sp3 +330 Elo over the baseline", "match score"),
    ("def f():\n    '''Chosen because it won 56-44.'''", "match score"),
]

NOT_CAUGHT = [
    "# planes 4-7 are the liberties",
    "# i.e. 81-61, 60-41, 40-29, 28-0 empty points",
    "# concurrent games per worker (GPU: 64-256)",
    "# works around numba issue 4321 (reference counts in a loop)",
    "# https://github.com/numba/numba/issues/4321",
    "# 3 of 8 moves were searched",
    "# a win rate within 0.40-0.60",
    "# it won 3-5% more often",
    "# compiling took 23-28 s",
    'print("2026-11-24 is not a comment")',
    "# docs/results.md gives the matches that chose this value",
]


@pytest.mark.parametrize("snippet,kind", CAUGHT)
def test_the_scanner_catches_each_form(snippet, kind):
    assert [k for _, k, _ in offences(snippet + "\n")] == [kind]


@pytest.mark.parametrize("snippet", NOT_CAUGHT)
def test_the_scanner_leaves_ranges_upstream_bugs_and_code_alone(snippet):
    assert offences(snippet + "\n") == []


def test_the_scanner_catches_a_ledger_match_by_name():
    ledger = ledger_pattern(["rave-900", "ledger-rave", "candidates"])
    assert [k for _, k, _ in offences("# held 55-90 s (rave-900-2)\n", ledger)] == ["ledger match"]
    assert [w for _, _, w in offences("# starved (ledger-rave-6)\n", ledger)] == ["ledger-rave-6"]
    # a path is a pointer, a word without a hyphen is not a match's name
    assert offences("# see tournaments/ledger/rave-900/\n# the candidates\n", ledger) == []


def test_the_ledger_names_are_read():
    if not LEDGER.is_dir():
        pytest.skip("no tournaments/ledger/ in this checkout")
    assert LEDGER_NAMES is not None and LEDGER_NAMES.search("# see ledger-rave-9")
