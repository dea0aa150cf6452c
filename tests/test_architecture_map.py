"""docs/architecture.md's map stays true: every package, module and data file it names exists,
every package of nogobot is named, and the packages come in the layers' order
(test_layout.LAYERS, lowest first)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT
from test_layout import LAYERS

PACKAGE = ROOT / "nogobot"
PAGE = ROOT / "docs" / "architecture.md"
FILE = re.compile(r"^[\w./-]+\.(py|npz|sgf)$")


def layers_section(text: str) -> str:
    return text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]


def read_map(section: str) -> tuple[list[str], list[tuple[str, list[Path]]]]:
    """The packages the map names (in the order their bullets start), and each file it names
    with the folders it may be in: a bullet whose head is a package (`game/`, or bold
    `**`gtp/`, `tools/`**`) names files of that package; a bold head naming a module
    (`botzone.py`) makes the package root a place too; a path (`game/board.py`,
    `tests/test_x.py`) is looked up from the package, or from the repository for tests/."""
    packages: list[str] = []
    files: list[tuple[str, list[Path]]] = []
    places: list[Path] = [PACKAGE]
    for line in section.splitlines():
        bullet = re.match(r"^\s*- (\*\*(.+?)\*\*|(`\w+/`|`\w+\.py`))", line)
        if bullet:
            head = bullet.group(2) or bullet.group(3)
            named = [s[:-1] for s in re.findall(r"`(\w+/)`", head)]
            packages += [p for p in named if p not in packages]
            places = [PACKAGE / p for p in named]
            if re.search(r"`\w+\.py`", head):
                places.append(PACKAGE)
        for token in re.findall(r"`([^`]+)`", line):
            if not FILE.match(token):
                continue
            if "/" in token:
                base = ROOT if token.startswith("tests/") else PACKAGE
                files.append((token, [base]))
            else:
                files.append((token, list(places)))
    return packages, files


def test_every_file_the_map_names_exists():
    _, files = read_map(layers_section(PAGE.read_text(encoding="utf-8")))
    assert len(files) > 50, "the map names hardly any module"
    missing = [f"{name} (in {', '.join(str(p.relative_to(ROOT)) for p in where)})"
               for name, where in files if not any((p / name).exists() for p in where)]
    assert not missing, "docs/architecture.md names what is not there:\n" + "\n".join(missing)


def test_every_package_is_named_in_the_layers_order():
    packages, _ = read_map(layers_section(PAGE.read_text(encoding="utf-8")))
    real = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert set(packages) == real, (f"not on the map: {sorted(real - set(packages))}; "
                                   f"not packages: {sorted(set(packages) - real)}")
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    order = [layer[p] for p in packages]
    assert order == sorted(order), f"the map is not in the layers' order: {packages}"


def test_the_map_reader_sees_a_wrong_name():
    section = ("- **`game/`**: `board.py`, and `gone.py`.\n"
               "- **`gtp/`, `botzone.py`**: `engine.py`, `botzone.py`.\n"
               "  - `tools/`: `warmup.py`, see `game/board.py` and `tests/test_nothing.py`.\n"
               "  - `botzone.py`: the adapter; not `warmup.py`.\n")
    packages, files = read_map(section)
    assert packages == ["game", "gtp", "tools"]
    missing = [n for n, where in files if not any((p / n).exists() for p in where)]
    assert missing == ["gone.py", "tests/test_nothing.py", "warmup.py"]
