"""The manual stays true: every relative link in README.md and docs/*.md resolves (the file, and
its `#anchor` as GitHub slugs headings), and every `nogobot …` command they show in code parses:
its subcommand path exists, click accepts its options (the command is invoked in process with
`--help` appended, so option names are checked but no work is done), and a value shown for a
choice (`--device auto|cpu`, `nogobot agent greedy`) is one of the choices. The checkers are
tested too, on a broken link and a renamed command, so that they can fail."""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from nogobot.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# Shell words that end a command: pipes, redirections, command lists.
SHELL_END = re.compile(r"^(\||\|\||&&|;|&|[0-9]?>>?.*|<.*)$")


@dataclass(frozen=True)
class Shown:
    """A `nogobot …` command as a page shows it."""
    page: str
    line: int
    text: str


def prose_and_code(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The page's lines outside code blocks (with code spans blanked, so `[a](b)` inside
    backticks is no link) and its code: each indented or fenced block line and each code span.
    HTML comments are neither."""
    prose, code = [], []
    fenced = False
    # HTML comments are not shown (they mark places still to fill): keep only their line breaks.
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if fenced or (line.startswith("    ") and not line.lstrip().startswith(("-", "*", "|"))):
            code.append((number, line))
            continue
        for span in CODE_SPAN.finditer(line):
            code.append((number, span.group(2)))
        prose.append((number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)))
    return prose, code


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation removed
    (letters, digits, `-`, `_` and spaces kept), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = "".join(ch for ch in text
                   if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def heading_text_lines(path: Path) -> list[str]:
    """Headings with their code spans kept: `## GTP engine: \\`nogobot gtp\\`` slugs with the
    words inside the backticks."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced and re.match(r"^#{1,6}\s", line):
            out.append(line)
    return out


def page_anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in heading_text_lines(path):
        slug = github_slug(re.sub(r"^#{1,6}\s+|\s+#*\s*$", "", line))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    """Each relative link of a page whose file or anchor does not exist, as `page:line: link`."""
    prose, _ = prose_and_code(page.read_text(encoding="utf-8"))
    problems = []
    for number, line in prose:
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.name}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif anchor and (dest.suffix != ".md" or anchor not in page_anchors(dest)):
                problems.append(f"{where}: no such heading")
    return problems


def shown_commands(page: Path) -> list[Shown]:
    """The `nogobot …` commands in a page's code: from the word `nogobot` to the end of the
    shell command, with usage lines that continue a block (`    [--opt X]`, or after a `\\`)
    joined to it, and commands quoted inside others (`-referee "nogobot gtp"`) found too."""
    _, code = prose_and_code(page.read_text(encoding="utf-8"))
    joined: list[tuple[int, str]] = []
    for number, text in code:
        text = text.replace("\\|", "|")  # a table cell's escaped bar
        stripped = text.strip()
        if joined and (stripped.startswith("[") or joined[-1][1].endswith("\\")):
            previous_number, previous = joined[-1]
            joined[-1] = (previous_number, previous.rstrip("\\") + " " + stripped)
        else:
            joined.append((number, text))
    found = []
    for number, text in joined:
        for command in commands_in(text):
            found.append(Shown(page.name, number, command))
    return found


def split_words(text: str) -> list[str]:
    """Shell words (a `#` comment dropped); prose-like code that shlex cannot read is split on
    blanks."""
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split("#")[0].split()


def commands_in(text: str) -> list[str]:
    if not re.search(r"(^|[\s\"'(|])nogobot(\s|$)", text):
        return []
    words = split_words(text)
    out = []
    for i, word in enumerate(words):
        if " " in word:  # a quoted command line, e.g. gogui-twogtp's -black "nogobot gtp …"
            out.extend(commands_in(word))
        elif word == "nogobot":
            rest, depth = [], 0
            for j in range(i + 1, len(words)):
                w = words[j]
                # A bar inside [...] or before a PLACEHOLDER lists alternatives, not a pipe.
                alternative = w == "|" and (depth > 0 or next_is_placeholder(words, j))
                if depth == 0 and SHELL_END.match(w) and not alternative:
                    break
                depth += w.count("[") - w.count("]")
                rest.append(w)
            out.append(" ".join(shlex.quote(w) for w in ["nogobot", *rest]))
    return out


def next_is_placeholder(words: list[str], index: int) -> bool:
    following = words[index + 1] if index + 1 < len(words) else ""
    return bool(re.match(r"^\[?[A-Z][A-Z_.]", following))


def is_placeholder(word: str) -> bool:
    """`M`, `CONFIG.yaml`, `GAME.sgf…`, `...`: stands for what the reader fills in."""
    return bool(re.match(r"^[A-Z][A-Z0-9_]*([.:=]|…|$)", word)) or set(word) <= set(".…")


def usage_words(command: str) -> list[str]:
    """A shown command's words after `nogobot`, usage markup removed: `[--model M]` gives
    `--model M`, `…` and bars between alternatives go."""
    words = []
    for w in shlex.split(command)[1:]:
        w = w.strip("[]")
        if w and w not in ("|", "…", "..."):
            words.append(w)
    return words


def resolve(words: list[str]) -> tuple[list[str], click.Command, list[str]]:
    """The subcommand path the words name, its click command, and the words after the path.
    A group given a PLACEHOLDER (`nogobot COMMAND --help`) is the group itself."""
    command: click.Command = cli
    path: list[str] = []
    rest = list(words)
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    if isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        if is_placeholder(rest[0]) and not rest[0].endswith((".yaml", ".yml")):
            return path, command, []
        if "run" in command.commands:  # `nogobot train CONFIG` is `nogobot train run CONFIG`
            return [*path, "run"], command.commands["run"], rest
    return path, command, rest


def bad_choices(command: click.Command, rest: list[str]) -> list[str]:
    """Values shown for choice-typed parameters that are not among their choices."""
    options = {opt: p for p in command.params if isinstance(p, click.Option)
               for opt in (*p.opts, *p.secondary_opts)}
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    problems = []
    positional = 0
    i = 0
    while i < len(rest):
        word = rest[i]
        name, eq, value = word.partition("=")
        param = None
        if name in options:
            param = options[name]
            if param.is_flag or param.count:
                value = None
            elif not eq:
                i += 1
                value = rest[i] if i < len(rest) else None
        elif not word.startswith("-") and positional < len(arguments):
            param, value = arguments[positional], word
            if not param.multiple and param.nargs == 1:
                positional += 1
        i += 1
        if param is None or value is None or not isinstance(param.type, click.Choice):
            continue
        for alternative in value.split("|"):
            if alternative and not is_placeholder(alternative) and \
                    alternative not in param.type.choices:
                problems.append(f"{param.name}={alternative} (choices: {param.type.choices})")
    return problems


def alternatives(words: list[str]) -> list[list[str]]:
    """One word list per subcommand a shown command names: `nogobot bench rules|nn` is two."""
    command: click.Command = cli
    for i, word in enumerate(words):
        if not isinstance(command, click.Group):
            break
        if "|" in word:
            return [expanded for choice in word.split("|")
                    for expanded in alternatives([*words[:i], choice, *words[i + 1:]])]
        if word not in command.commands:
            break
        command = command.commands[word]
    return [words]


def command_problem(command: str) -> str | None:
    """Why a shown command would not parse, or None."""
    for words in alternatives(usage_words(command)):
        path, click_command, rest = resolve(words)
        last = next((p for p in click_command.params if rest and rest[-1] in p.opts), None)
        if isinstance(last, click.Option) and not (last.is_flag or last.count):
            rest = [*rest, "VALUE"]  # `--playouts` named in passing: --help is not its value
        result = CliRunner().invoke(cli, [*path, *rest, "--help"], catch_exceptions=True)
        if result.exit_code != 0:
            return f"`nogobot {' '.join([*path, *rest])} --help` exits {result.exit_code}: " \
                   f"{result.output.strip().splitlines()[-1:]}"
        bad = bad_choices(click_command, rest)
        if bad:
            return f"`nogobot {' '.join(words)}`: not a choice: {bad}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_the_readme_links_every_page_of_the_manual():
    prose, _ = prose_and_code((ROOT / "README.md").read_text(encoding="utf-8"))
    linked = {m.group(1).partition("#")[0] for _, line in prose for m in LINK.finditer(line)}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in linked, f"README.md does not link docs/{page.name}"


def all_shown() -> list[Shown]:
    return [shown for page in PAGES for shown in shown_commands(page)]


def test_the_pages_show_commands():
    paths = {" ".join(resolve(usage_words(s.text))[0]) for s in all_shown()}
    for expected in ("gtp", "warmup", "train run", "bench search", "analysis", "tournament"):
        assert expected in paths, f"no page shows `nogobot {expected}`"


@pytest.mark.parametrize("shown", all_shown(), ids=lambda s: f"{s.page}:{s.line}")
def test_every_shown_command_parses(shown):
    assert command_problem(shown.text) is None, (shown, command_problem(shown.text))


def test_the_link_checker_finds_a_broken_file_and_a_broken_anchor(tmp_path):
    (tmp_path / "a.md").write_text("# Title\n\n## Time `control`\n\nSee [b](b.md), "
                                   "[here](#time-control), [gone](#nowhere) and "
                                   "[c](c.md#title).\n`[not a link](x.md)`\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("# Other\n", encoding="utf-8")
    problems = broken_links(tmp_path / "a.md")
    assert problems == ["a.md:5: b.md: no such file", "a.md:5: #nowhere: no such heading",
                        "a.md:5: c.md#title: no such heading"]


def test_github_slugs():
    assert github_slug("Set up (fresh machine, Python ≥ 3.11)") == "set-up-fresh-machine-python--311"
    assert github_slug("GTP engine: `nogobot gtp`") == "gtp-engine-nogobot-gtp"
    assert github_slug("Ablation: GARB, extra heads, liberty features") == \
        "ablation-garb-extra-heads-liberty-features"


def test_the_command_checker_finds_renamed_commands_options_and_choices():
    assert command_problem("nogobot gtp --time 900") is None
    assert command_problem("nogobot train configs/cpu.yaml --run-dir runs/x") is None
    assert command_problem("nogobot bench search") is None
    assert command_problem("nogobot gtpx --time 900") is not None  # renamed command
    assert command_problem("nogobot bench searches") is not None  # renamed subcommand
    assert command_problem("nogobot gtp --clock 900") is not None  # renamed option
    assert command_problem("nogobot gtp --device cpu|gpu") is not None  # not a choice
    assert command_problem("nogobot agent randomly") is not None  # not a choice
    assert command_problem("nogobot bench rules|nn") is None
    assert command_problem("nogobot bench rules|neural") is not None


def test_commands_are_found_in_code_only(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("Run nogobot gtp in prose.\n\n    nogobot gtp [--model M]\n"
                    "                [--ponder]\n\n"
                    "`printf 'genmove b\\n' | nogobot gtp --time 60 2> x.log` and "
                    "`gogui-regress \"nogobot gtp --quiet\" x.tst`\n", encoding="utf-8")
    assert [s.text for s in shown_commands(page)] == [
        "nogobot gtp '[--model' 'M]' '[--ponder]'", "nogobot gtp --time 60",
        "nogobot gtp --quiet"]
