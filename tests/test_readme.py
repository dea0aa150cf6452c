"""The README and the manual are true: the README's set-up commands run from a fresh copy of the
repository, the README names every command, and the figures and lists the manual takes from the
code (`nogobot gtp` options in docs/engine.md, the must-fail conformance tests in
docs/gui-and-gtp.md) match the code. (The conformance suite's size is checked in
test_conformance.py, where the suite runs; links and shown commands in test_docs.py.)"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from nogobot.cli import main as cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
ENGINE_PAGE = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
GTP_PAGE = (ROOT / "docs" / "gui-and-gtp.md").read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    """The section under the heading (of any level) that starts with `title`, up to the next
    heading of the same or a higher level."""
    m = re.search(rf"^(#+) {re.escape(title)}", text, re.M)
    level = len(m.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, m.end())
    return text[m.start():end.start() if end else None]


def setup_commands() -> list[str]:
    """The shell commands of "Set up": its indented code lines, in order."""
    return [ln[4:] for ln in section("Set up").splitlines()
            if ln.startswith("    ") and not ln.startswith("     ") and ln.strip()]


def test_every_command_is_in_the_readme():
    for name, cmd in cli.commands.items():
        assert f"nogobot {name}" in README, f"`nogobot {name}` is not in the README"
        for sub in getattr(cmd, "commands", {}):
            if sub != "run":  # `nogobot train CONFIG` is `train run`
                assert re.search(rf"nogobot {name} [^`\n]*\b{sub}\b", README), (name, sub)


def test_gtp_usage_lists_every_option():
    usage = section("Running it: `nogobot gtp`", ENGINE_PAGE).split("It speaks GTP")[0]
    in_readme = set(re.findall(r"--[a-z][a-z-]*", usage))
    real = {opt for p in cli.commands["gtp"].params for opt in p.opts if opt.startswith("--")}
    real.discard("--help")
    assert in_readme == real, (f"missing from the README: {sorted(real - in_readme)}; "
                               f"not options: {sorted(in_readme - real)}")


def test_must_fail_count_for_gogui_regress():
    quoted = int(re.search(r"each of the\s+(\d+)\s+must-fail\s+tests", GTP_PAGE).group(1))
    real = sum(ln.startswith("#!") for p in (ROOT / "gtp_conformance").glob("*.tst")
               for ln in p.read_text().splitlines())
    assert quoted == real


def test_setup_section_has_the_first_contact_commands():
    cmds = setup_commands()
    assert cmds[0] == "pip install -e . && nogobot warmup && nogobot gtp"
    assert any(c.startswith("nogobot train ") for c in cmds)
    assert any(c.startswith("nogobot timeplot ") for c in cmds)


def fresh_copy(dst: Path) -> Path:
    """The files a clone would have: tracked plus untracked-but-not-ignored (so uncommitted
    work is tested too), copied from this working tree."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.split(b"\0")
    for raw in filter(None, names):
        src = ROOT / raw.decode()
        if src.is_file():
            (dst / raw.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / raw.decode())
    return dst


@pytest.mark.slow
@pytest.mark.torch
def test_readme_setup_commands_from_a_fresh_copy(tmp_path):
    """Every command of "Set up", as written, in a fresh copy of the repository with an empty
    numba cache, run in this (already installed) environment: `pip install …` and `pytest` are
    left out (the copy's package is put first on PYTHONPATH instead), and the bare interactive
    `nogobot gtp` gets `genmove b` typed in."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    repo = fresh_copy(tmp_path / "nogobot")
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PYTHONPATH=str(repo), NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    outputs = []
    for line in setup_commands():
        for part in (p.strip() for p in line.split("&&")):
            if part.startswith(("pip install", "python -m pytest")):
                continue
            interactive = part == "nogobot gtp"
            res = subprocess.run(["bash", "-c", part], cwd=repo, env=env, text=True,
                                 input="genmove b\nquit\n" if interactive else None,
                                 capture_output=True, timeout=600, check=False)
            assert res.returncode == 0, f"{part}: {res.stderr[-2000:]}"
            outputs.append((part, res))
    ran = {part: res for part, res in outputs}
    # The package that ran is the copy's, not the installed one.
    where = subprocess.run([sys.executable, "-c", "import nogobot; print(nogobot.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert where.stdout.startswith(str(repo))
    warm = ran["nogobot warmup"]
    assert "search (features, MCTS) kernels: compiled" in warm.stdout  # the empty cache
    gtp = ran["nogobot gtp"]
    assert re.match(r"= [A-HJ][1-9]\n\n", gtp.stdout), gtp.stdout
    assert "compiling" not in gtp.stderr  # the warm-up did it
    playouts = [int(n) for n in re.findall(r"mcts: \S+ .* playouts (\d+) ", gtp.stderr)]
    assert playouts and playouts[0] > 100, gtp.stderr  # a real search, not 1 playout
    assert (repo / "runs/smoke/state.json").is_file()
    log = (repo / "runs/engine.log").read_text()
    assert len(re.findall(r"^time: (black|white) move", log, re.M)) == 2
    assert (repo / "runs/time.png").stat().st_size > 1000
    for cmd in setup_commands():
        assert shlex.split(cmd)  # every line is plain shell


@pytest.mark.slow
@pytest.mark.torch
def test_readme_training_chain_from_scratch(tmp_path):
    """The Training section's first two commands, as written (the bootstrap, then
    configs/cpu.yaml from its checkpoint) in a directory holding only configs/, with a tiny
    budget appended to each (their last options win) so that they take seconds."""
    pytest.importorskip("torch")
    block = section("Training")
    lines = [ln.strip().split("  #")[0].strip() for ln in block.splitlines()
             if ln.startswith("    ") and not ln.strip().startswith("#")]
    boot = next(ln for ln in lines if ln.startswith("nogobot train bootstrap"))
    train = next(ln for ln in lines if "nogobot train configs/cpu.yaml" in ln)
    assert lines.index(boot) < lines.index(train), "the bootstrap must come first"
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    for cmd, tiny in ((boot, " --games 10,10,10 --minutes 0.05 --eval-games 2"),
                      (train, " --generations 0")):
        res = subprocess.run(["bash", "-c", cmd + tiny], cwd=tmp_path, env=env, text=True,
                             capture_output=True, timeout=600, check=False)
        assert res.returncode == 0, f"{cmd}: {res.stderr[-2000:]}"
    assert (tmp_path / "runs/cpu1/state.json").is_file()


def test_the_readme_is_a_front_door():
    """At most 150 lines; the record lives in docs/results.md, which the README links."""
    assert len(README.splitlines()) <= 150, len(README.splitlines())
    assert "(docs/results.md)" in README


def test_the_ladder_step_in_the_readme_is_the_ledgers_latest():
    """The Strength section's ladder step names the ledger's two newest shipped nets with their
    Elo as the ledger has them (models/ledger.yaml, sp1 = 0)."""
    import yaml

    nets = yaml.safe_load((ROOT / "models" / "ledger.yaml").read_text())["nets"]
    shipped = sorted((n for n in nets if re.fullmatch(r"nogobot-b6c32-sp\d+", n["name"])),
                     key=lambda n: n["selfplay_games"])
    new, old = shipped[-1], shipped[-2]
    short = {n["name"]: n["name"].rsplit("-", 1)[1] for n in (new, old)}
    quoted = re.search(r"(sp\d+) reads \+(\d+) Elo and (sp\d+) \+(\d+)", section("Strength"))
    assert quoted, "the Strength section quotes no ladder step"
    assert (quoted.group(1), int(quoted.group(2)), quoted.group(3), int(quoted.group(4))) == \
        (short[new["name"]], new["elo"], short[old["name"]], old["elo"])
