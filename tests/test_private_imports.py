"""No module of nogobot reaches into another's private names (issue 20): a name with a leading
underscore is its module's own business. What one module needs from another is public there, with
a comment saying who uses it. The check is an AST scan of every module under nogobot/:
``from <nogobot module> import _name`` and ``module._name`` where ``module`` was bound by importing
a nogobot module."""

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "nogobot"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The absolute module an ImportFrom reads from ('' when it is not nogobot's)."""
    if node.level == 0:
        return node.module or ""
    base = here.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_uses(path: Path) -> list[str]:
    """``path:line: what`` for every cross-module use of a private nogobot name in ``path``."""
    here = _module_of(path)
    tree = ast.parse(path.read_text(), str(path))
    found, modules = [], set()  # local names bound to nogobot modules
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "nogobot":
                    modules.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, here, path.name == "__init__.py")
            if source.split(".")[0] != "nogobot":
                continue
            for a in node.names:
                if _is_private(a.name) and source != here:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {source} "
                                 f"import {a.name}")
                elif not node.module or node.level and not _is_private(a.name):
                    modules.add(a.asname or a.name)  # possibly a submodule: `from . import board`
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_another_modules_private_names():
    found = [use for path in sorted(PACKAGE.rglob("*.py")) for use in private_uses(path)]
    assert not found, ("private names used across modules (make them public in their module, "
                       "with a comment saying who needs them):\n" + "\n".join(found))


def test_the_scan_sees_both_forms(tmp_path):
    """The checker itself: it flags an imported private name and a module's private attribute,
    and passes public ones and a module's own private names."""
    pkg = tmp_path / "nogobot"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    bad = pkg / "sub" / "bad.py"
    bad.write_text("from ..board import _play, play_stone\nfrom .. import warmup\n"
                   "import nogobot.game.sgf as s\nwarmup._lock\ns._to_flat\nwarmup.load\n")
    good = pkg / "good.py"
    good.write_text("from .board import play_stone\nimport os\nos._exit\n_x = 1\n")
    import test_private_imports as me

    old = me.ROOT
    me.ROOT = tmp_path
    try:
        uses = private_uses(bad)
        assert private_uses(good) == []
    finally:
        me.ROOT = old
    assert [u.split(": ", 1)[1] for u in uses] == [
        "from nogobot.board import _play", "warmup._lock", "s._to_flat"]
