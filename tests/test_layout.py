"""The repository as its design card draws it (issue 38), and the package's shape.

* The top level holds the design card's entries (pyproject.toml, README.md, nogobot/, models/,
  tournaments/, tests/, gtp_conformance/) and the few others each explained here, nothing more
  (the tracked files, ``git ls-files``: untracked local folders such as runs/ or .venv/ are
  not the repository's).
* No import circles among nogobot's modules, counting imports made inside functions: a module's
  imports, read with ``ast``, make a graph, and a strongly connected component of more than one
  module is a circle (docs/architecture.md, "Principles").
* No module is over 500 lines but the few numba kernel modules named below.
* ``campaign/`` holds one resumable training state per line of work, each named in its README,
  and every training config's ``init_checkpoint`` in the repository is there.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

PACKAGE = ROOT / "nogobot"

# The design card's layout (docs/architecture.md, "The repository").
DESIGN_CARD = {"pyproject.toml", "README.md", "nogobot", "models", "tournaments", "tests",
               "gtp_conformance"}
# Beyond the card, and why.
EXPLAINED = {
    "configs": "training configs (YAML) that `nogobot train run` takes",
    "docs": "the manual that README.md links",
    "campaign": "the resumable training state, one folder per line of work",
    ".ci": "the CI script",
    ".gitignore": "keeps build outputs, caches, runs/ and results out of git",
}

MAX_LINES = 500
# Modules of numba kernels may be longer: a kernel and the helpers it inlines have to live in
# one module for numba's cache to stay valid (kernelcache.drop_stale_kernels), and splitting the
# rules or the tree arrays across modules would scatter one data structure's code.
KERNEL_MODULES = {
    "game/board.py": "the rules: union-find blocks, liberty bitsets, legal masks, zobrist",
    "engine/mcts.py": "the array tree: select with virtual loss, expand, back up, reroot",
}


def _tracked_top_level() -> set[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return {p.split("/")[0] for p in out.stdout.decode().split("\0") if p}


def test_top_level_is_the_design_card_and_nothing_unexplained():
    top = _tracked_top_level()
    assert top - DESIGN_CARD - set(EXPLAINED) == set(), "unexplained at the top level"
    assert DESIGN_CARD <= top, f"missing: {sorted(DESIGN_CARD - top)}"
    assert set(EXPLAINED) <= top, f"explained but gone: {sorted(set(EXPLAINED) - top)}"


def test_architecture_page_draws_the_same_top_level():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## The repository", 1)[1].split("\n## ", 1)[0]
    for name in sorted(DESIGN_CARD | set(EXPLAINED)):
        shown = name + ("/" if (ROOT / name).is_dir() else "")
        assert f"{shown} " in section or f"`{shown}`" in section, f"{shown} not in the layout"


# -- imports --------------------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: Path, known) -> list[tuple[str, int, bool]]:
    """(module imported, line, made inside a function) for each import of a nogobot module in
    ``path``; ``from X import y`` counts as importing X.y when that is a module, else X."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: None if path.name == "__init__.py" else -1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                       for a in node.names]
        for target in targets:
            if target in known and target != name:
                found.append((target, node.lineno, id(node) in in_function))
    return found


def import_graph() -> dict[str, list[tuple[str, int, bool]]]:
    mods = modules()
    return {name: imports(name, path, mods) for name, path in mods.items()}


def cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w, _, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_function_level_circles():
    graph = {"a": [("b", 1, False)], "b": [("c", 2, True)], "c": [("a", 3, True)], "d": []}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": [("b", 1, False)], "b": []}) == []


def test_imports_are_read_at_every_level():
    graph = import_graph()
    # A function-level import across packages (cli/engine.py: ``from ..engine.player import``)
    # and a module-level one (engine/player.py: ``from .search import``) are both seen.
    assert any(m == "nogobot.engine.player" and inner
               for m, _, inner in graph["nogobot.cli.engine"])
    assert any(m == "nogobot.engine.search" and not inner
               for m, _, inner in graph["nogobot.engine.player"])


def test_no_import_circles():
    graph = import_graph()
    found = cycles(graph)
    detail = [f"{a} -> {b} (line {line}{', in a function' if inner else ''})"
              for component in found for a in component
              for b, line, inner in graph[a] if b in component]
    assert not found, "import circles:\n" + "\n".join(detail)


# The package's layers, lowest first (docs/architecture.md draws them). A module may import its
# own layer and those below it, never one above: the engine knows nothing of GTP, training or Ray.
LAYERS = [
    {"core", "openings"},                                    # atomic writes, data folders
    {"game"},                                                # rules, points, SGF
    {"net"},                                                 # features, ONNX evaluators
    {"engine"},                                              # tree, solver, search, clock, player
    {"agents"},                                              # baseline players
    {"gtp", "analysis", "tournament", "botzone", "tools"},  # front ends and tools
    {"train"},                                               # self-play training (torch)
    {"cluster"},                                             # Ray
    {"cli", "__main__"},                                     # the command line
]


def layer_of(module: str) -> int | None:
    """The layer index of ``nogobot.X[...]``; None for the package root (``__version__`` and
    the kernel-cache set-up run at import, below every layer)."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return next(i for i, names in enumerate(LAYERS) if parts[1] in names)


def test_every_package_has_a_layer():
    named = set().union(*LAYERS)
    top = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
           if (p.is_dir() and (p / "__init__.py").exists())
           or (p.suffix == ".py" and p.name != "__init__.py")}
    assert top == named, f"unlayered: {sorted(top - named)}, gone: {sorted(named - top)}"


def test_no_module_imports_a_layer_above_its_own():
    bad = []
    for name, found in import_graph().items():
        mine = layer_of(name)
        if mine is None:
            continue
        for target, line, _ in found:
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                bad.append(f"{name} (line {line}) imports {target}")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_layer_check_sees_an_upward_import():
    assert layer_of("nogobot.engine.search") < layer_of("nogobot.gtp.engine")
    assert layer_of("nogobot") is None


# -- module size ----------------------------------------------------------------------------------


def test_no_module_over_500_lines_but_the_kernels():
    sizes = {p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in PACKAGE.rglob("*.py")}
    over = {m: n for m, n in sizes.items() if n > MAX_LINES and m not in KERNEL_MODULES}
    assert not over, f"over {MAX_LINES} lines (split along a real seam): {over}"
    for m in KERNEL_MODULES:
        text = (PACKAGE / m).read_text(encoding="utf-8")
        assert "@njit" in text, f"{m} is exempt as a kernel module but holds no njit kernel"
        assert sizes[m] > MAX_LINES, f"{m} is under {MAX_LINES} lines: drop its exemption"


# -- training state -------------------------------------------------------------------------------


def test_campaign_holds_one_state_per_line_of_work():
    from nogobot.train.campaign import read_campaign

    folder = ROOT / "campaign"
    lines = sorted(p.name for p in folder.iterdir() if p.is_dir())
    assert lines, "campaign/ holds no training state"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for name in lines:
        state = read_campaign(folder / name)  # raises on a missing or bad state.yaml
        assert (folder / name / f"stage{state['stage']}.pt").is_file()
        assert f"`{name}/`" in readme, f"campaign/README.md does not say what {name}/ is"


def test_configs_start_from_what_the_repository_keeps():
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        init = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("init_checkpoint")
        if init and not init.startswith("runs/"):  # runs/: written by a command first
            assert (ROOT / init).exists(), f"{path.name}: init_checkpoint {init} is not there"
