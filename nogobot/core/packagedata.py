"""Where the package's data folders are: inside an installed package, or in the checkout.

The repository keeps each data folder once, at its top level: ``models/`` (every released net,
the default among them) and ``gtp_conformance/`` (the GTP suite). A wheel carries the default
net and the whole suite inside the package, as ``nogobot/models/`` and
``nogobot/gtp_conformance/``: pyproject.toml maps those two package-data folders onto the
top-level ones (``[tool.setuptools.package-dir]``) and names the files to take. An editable
install or a source tree on ``sys.path`` has no such folders inside ``nogobot/``, so
``data_dir`` falls back to the checkout's folder beside the package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_dir(name: str, probe: str) -> Path:
    """The folder ``name`` (``models`` or ``gtp_conformance``): the package's own copy when it
    holds a file matching ``probe`` (an installed wheel), else the checkout's top-level
    folder; the package's path when neither exists (a broken install: the caller's error
    then names the file the wheel should have carried). A real directory either way:
    onnxruntime and the GTP engines open files by path (nogobot is never zip-imported)."""
    packaged = Path(str(resources.files("nogobot").joinpath(name)))
    if packaged.is_dir() and any(packaged.glob(probe)):
        return packaged
    checkout = Path(__file__).resolve().parents[2] / name
    return checkout if checkout.is_dir() else packaged
