"""The installable package (issue 21): what a wheel carries and how an install finds it.

The slow test builds the wheel from the checkout (``pip wheel``, as ``pipx install .`` does),
installs it into a fresh virtual environment, and from a temporary directory outside the
checkout plays ``genmove b`` and passes the whole conformance suite with the installed
``nogobot``: the default net and the suite must come from the package data, not from the source
tree. The venv takes about 700 MB and is deleted afterwards. Fast tests cover the pieces:
pyproject.toml's package list and package data (the default net and the suite are kept once, in
the top-level ``models/`` and ``gtp_conformance/``, and mapped into the package),
``modelfile.resolve_model`` (``--model`` as a file or a shipped net's name) and
``kernelcache.ensure_kernel_cache`` (numba's cache when the install is read-only).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

import nogobot
from nogobot.net.modelfile import (
    DEFAULT_MODEL_NAME,
    INT8_MODEL_NAME,
    SHIPPED_MODEL_NAMES,
    ModelError,
    check_model,
    default_model_path,
    resolve_model,
    shipped_model_names,
    shipped_models_dir,
)
from nogobot.tools.conformance import CONFORMANCE_DIR

PACKAGE = Path(nogobot.__file__).resolve().parent
# What a wheel is built from: pyproject.toml names README.md as the long description, and maps
# the package data onto the top-level models/ and gtp_conformance/.
BUILD_INPUTS = ("pyproject.toml", "README.md", "nogobot", "models", "gtp_conformance")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# -- pyproject.toml: the packages and their data ------------------------------------------------


def test_every_package_is_listed():
    """The package list is explicit (two of its entries are the mapped data folders): a new
    subpackage missing from it would be left out of the wheel."""
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "nogobot").rglob("__init__.py")}
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    data = {"nogobot.models", "nogobot.gtp_conformance", "nogobot.gtp_conformance.sgf"}
    assert listed == found | data


def test_package_data_is_the_shipped_nets_and_the_suite_kept_at_the_top():
    tool = PYPROJECT["tool"]["setuptools"]
    assert tool["package-dir"] == {"nogobot.models": "models",
                                   "nogobot.gtp_conformance": "gtp_conformance"}
    nets = tool["package-data"]["nogobot.models"]
    assert sorted(nets) == sorted(f"{n}{ext}" for n in SHIPPED_MODEL_NAMES
                                  for ext in (".onnx", ".yaml"))
    assert SHIPPED_MODEL_NAMES == (DEFAULT_MODEL_NAME, INT8_MODEL_NAME)
    for name in nets:
        assert (ROOT / "models" / name).is_file(), name
    # Kept once: nothing of either folder inside the package's source tree.
    assert not (PACKAGE / "models").exists() and not (PACKAGE / "gtp_conformance").exists()
    # From a checkout, both are found at the top.
    assert shipped_models_dir() == ROOT / "models" and CONFORMANCE_DIR == ROOT / "gtp_conformance"
# Build outputs and caches that must not reach the wheel (numba's .nbi/.nbc are cache files).
NOT_SOURCES = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")


# -- --model: a file or a shipped net's name --------------------------------------------------


def test_default_net_is_in_models():
    path = default_model_path()
    assert path == resolve_model(None) == ROOT / "models" / f"{DEFAULT_MODEL_NAME}.onnx"
    check_model(path)  # sidecar beside it, checksum right
    # models/ holds other nets too; only the ones the wheel carries answer to a name.
    assert len(list((ROOT / "models").glob("*.onnx"))) > 2
    assert shipped_model_names() == [DEFAULT_MODEL_NAME, INT8_MODEL_NAME]
    assert resolve_model(INT8_MODEL_NAME) == ROOT / "models" / f"{INT8_MODEL_NAME}.onnx"
    with pytest.raises(ModelError, match="no shipped net has that name"):
        resolve_model("nogobot-b6c32-sp1")


def test_model_by_name_or_file(tmp_path, monkeypatch):
    assert resolve_model(DEFAULT_MODEL_NAME) == default_model_path()
    assert resolve_model(f"{DEFAULT_MODEL_NAME}.onnx") == default_model_path()
    # A file wins over a shipped name: a copy in the working directory is taken as given.
    monkeypatch.chdir(tmp_path)
    shutil.copy(default_model_path(), f"{DEFAULT_MODEL_NAME}.onnx")
    assert resolve_model(f"{DEFAULT_MODEL_NAME}.onnx") == Path(f"{DEFAULT_MODEL_NAME}.onnx")
    # A path is never looked up among the shipped nets.
    with pytest.raises(ModelError, match="model file not found"):
        resolve_model(f"elsewhere/{DEFAULT_MODEL_NAME}")


def test_unknown_model_names_the_shipped_nets():
    from nogobot.cli import main

    with pytest.raises(ModelError, match=rf"no-such-net: .*shipped: {DEFAULT_MODEL_NAME}"):
        resolve_model("no-such-net")
    res = CliRunner().invoke(main, ["gtp", "--model", "no-such-net"], input="name\n")
    assert res.exit_code == 1
    assert f"shipped: {DEFAULT_MODEL_NAME}" in res.output and "= nogobot" not in res.output


def test_engine_default_checks_its_int8_net_at_start_up(tmp_path, monkeypatch):
    """Where the CPU has int8 dot products the engine's default may load the int8 net, so a
    broken one stops `nogobot gtp` with one line before it speaks GTP; elsewhere the default
    never loads it and `warmup` does not list it."""
    from nogobot.cli import main
    from nogobot.core import machine
    from nogobot.net import modelfile

    bad = tmp_path / f"{INT8_MODEL_NAME}.onnx"
    good = modelfile.int8_model_path()
    bad.write_bytes(good.read_bytes()[:2000])  # truncated: the sidecar's checksum disagrees
    shutil.copy(good.with_suffix(".yaml"), bad.with_suffix(".yaml"))
    monkeypatch.setattr(modelfile, "int8_model_path", lambda: bad)
    monkeypatch.setattr(machine, "int8_dot_product", lambda: True)
    assert modelfile.default_engine_models() == [default_model_path(), bad]
    res = CliRunner().invoke(main, ["gtp"], input="name\n")
    assert res.exit_code == 1 and str(bad) in res.output and "= nogobot" not in res.output
    res = CliRunner().invoke(main, ["warmup", "--no-agents"])
    assert res.exit_code == 1 and str(bad) in res.output
    monkeypatch.setattr(machine, "int8_dot_product", lambda: False)
    assert modelfile.default_engine_models() == [default_model_path()]


# -- numba's cache on a read-only install ------------------------------------------------------

KERNEL = """
import numba

@numba.njit(cache=True)
def plus_one(x):
    return x + 1
"""


def _ensure_cache_in_child(tmp_path: Path, setup: str) -> tuple[str, list[str]]:
    """Run ``ensure_kernel_cache`` in a fresh interpreter (it sets the process's environment
    and numba's config), then compile a cached kernel; the folder chosen and its cache files."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    code = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from nogobot.core.kernelcache import ensure_kernel_cache
        read_only = Path("/proc/nogobot-test")  # /proc refuses new folders, even to root
        tmp = Path(sys.argv[1])
    """) + textwrap.dedent(setup) + textwrap.dedent("""
        chosen = ensure_kernel_cache(package_dir=read_only, candidates=candidates)
        assert os.environ["NUMBA_CACHE_DIR"] == chosen
        sys.path.insert(0, str(tmp))
        import kernel
        assert kernel.plus_one(1) == 2
        print(chosen)
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    chosen = res.stdout.strip()
    return chosen, sorted(p.name for p in Path(chosen).rglob("*.nb*"))


def test_read_only_install_caches_kernels_in_a_private_folder(tmp_path):
    """The package's __pycache__ and the home cache cannot be written; a folder anyone may
    write to is refused (numba loads code from its cache); the private one is used."""
    chosen, files = _ensure_cache_in_child(tmp_path, """
        shared = tmp / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        candidates = [(read_only / "home", False), (shared, True), (tmp / "private", True)]
    """)
    assert chosen == str(tmp_path / "private")
    assert any(f.endswith(".nbi") for f in files) and any(f.endswith(".nbc") for f in files)
    assert not list((tmp_path / "shared").iterdir())


def test_read_only_install_with_nowhere_to_cache_still_runs(tmp_path):
    chosen, files = _ensure_cache_in_child(tmp_path, """
        candidates = [(read_only / "home", False)]
    """)
    try:
        assert Path(chosen).name.startswith("nogobot-numba-") and files
    finally:
        shutil.rmtree(chosen, ignore_errors=True)


def test_writable_install_keeps_numbas_default(tmp_path):
    code = ("import os, sys; from pathlib import Path;"
            " from nogobot.core.kernelcache import ensure_kernel_cache;"
            " print(ensure_kernel_cache(package_dir=Path(sys.argv[1])),"
            " os.environ.get('NUMBA_CACHE_DIR'))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["None", "None"]


def test_a_kernels_callee_changed_in_another_module_is_recompiled(tmp_path):
    """numba checks a cached kernel against its own file only: f (in a.py) calling g (in b.py)
    kept g's old code after b.py changed. ``drop_stale_kernels`` drops the package's cached
    kernels when a kernel module changes, and only then."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from numba import njit\n\nfrom .b import g\n\n\n"
                              "@njit(cache=True)\ndef f(x):\n    return g(x) * 10\n")

    def write_b(body: str) -> None:
        (pkg / "b.py").write_text(f"from numba import njit\n\n\n@njit(cache=True)\n"
                                  f"def g(x):\n    return {body}\n")

    code = ("import sys; from pathlib import Path;"
            " from nogobot.core.kernelcache import drop_stale_kernels;"
            " dropped = drop_stale_kernels(Path(sys.argv[1]));"
            " from pkg.a import f; print(dropped, f(1))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def run() -> str:
        res = subprocess.run([sys.executable, "-c", code, str(pkg)], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stdout.strip()

    write_b("x + 1")
    assert run() == "False 20"  # compiled and cached
    assert run() == "False 20"  # loaded from the cache
    assert list((pkg / "__pycache__").glob("a.*.nbi"))
    write_b("x + 22")
    assert run() == "True 230"  # f's cache dropped with g's, though a.py is as it was
    assert run() == "False 230"
    (pkg / "__init__.py").write_text("# no kernel here\n")
    assert run() == "False 230"  # a module without kernels changed: the caches stay


def test_stale_kernel_check_finds_numbas_cache_folder(tmp_path, monkeypatch):
    from numba.core.caching import UserProvidedCacheLocator

    from nogobot.core import kernelcache

    source = Path(kernelcache.__file__).parents[1] / "agents"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert kernelcache.cache_folder(source) == tmp_path / \
        UserProvidedCacheLocator.get_suitable_cache_subpath(str(source / "rave.py"))
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert kernelcache.cache_folder(source) == source / "__pycache__"


# -- the wheel, installed into a fresh venv -----------------------------------------------------


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing that would put the checkout (or another
    site-packages) on the installed interpreter's path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP",
                        "NUMBA_CACHE_DIR")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def _run(argv, cwd, timeout, input=None) -> subprocess.CompletedProcess:
    res = subprocess.run([str(a) for a in argv], cwd=cwd, env=_clean_env(), input=input,
                         capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, (f"{argv}: exit {res.returncode}\n{res.stdout[-3000:]}\n"
                                 f"{res.stderr[-3000:]}")
    return res


@pytest.fixture(scope="module")
def installed():
    """(wheel, venv's bin/, a working directory outside the checkout); all deleted after."""
    with tempfile.TemporaryDirectory(prefix="nogobot-wheel-") as tmp:
        tmp = Path(tmp)
        # Build from a copy of the sources: an in-tree build would reuse a stale build/ folder.
        src = tmp / "src"
        src.mkdir()
        for name in BUILD_INPUTS:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, src / name, ignore=NOT_SOURCES)
            else:
                shutil.copy(ROOT / name, src / name)
        _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-q", "-w", tmp / "dist"],
             cwd=tmp, timeout=300)
        wheel, = (tmp / "dist").glob("nogobot-*.whl")
        _run([sys.executable, "-m", "venv", tmp / "venv"], cwd=tmp, timeout=120)
        bin_dir = tmp / "venv" / ("Scripts" if os.name == "nt" else "bin")
        # Within pytest-timeout's 1200 s for the setup and the first test together.
        _run([bin_dir / "python", "-m", "pip", "install", "-q", wheel], cwd=tmp, timeout=600)
        work = tmp / "elsewhere"
        work.mkdir()
        yield wheel, bin_dir, work


@pytest.mark.slow
def test_wheel_carries_the_shipped_nets_and_the_suite_only(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    suite = sorted("gtp_conformance/" + p.relative_to(CONFORMANCE_DIR).as_posix()
                   for p in CONFORMANCE_DIR.rglob("*") if p.is_file())
    assert suite and set(suite) <= {n.removeprefix("nogobot/") for n in names}
    nets = [n for n in names if n.endswith((".onnx", ".pt", ".npz"))]
    # The shipped nets, and rave's pattern table (its tree priors, a few tens of kB).
    assert sorted(nets) == ["nogobot/agents/rave-patterns.npz",
                            *sorted(f"nogobot/models/{n}.onnx" for n in SHIPPED_MODEL_NAMES)]
    assert {f"nogobot/models/{n}.yaml" for n in SHIPPED_MODEL_NAMES} <= set(names)
    # The endgame truth suite (`nogobot bench endgame`).
    assert {"nogobot/tools/endgame_suite/positions.jsonl",
            "nogobot/tools/endgame_suite/README.md"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith((".nbi", ".nbc"))]


@pytest.mark.slow
def test_installed_nogobot_is_the_venvs_own(installed):
    _, bin_dir, work = installed
    code = ("import sys, nogobot; from nogobot.net.modelfile import default_model_path;"
            " from nogobot.tools.conformance import CONFORMANCE_DIR;"
            " print(nogobot.__file__, default_model_path(), CONFORMANCE_DIR, *sys.path, sep='\\n')")
    lines = _run([bin_dir / "python", "-c", code], cwd=work, timeout=120).stdout.splitlines()
    venv = bin_dir.parent.resolve()
    for path in lines[:3]:
        assert Path(path).resolve().is_relative_to(venv), path
    assert not [p for p in lines[3:] if p and Path(p).resolve().is_relative_to(ROOT)]


@pytest.mark.slow
def test_installed_engine_plays_a_legal_first_move(installed):
    _, bin_dir, work = installed
    res = _run([bin_dir / "nogobot", "gtp", "--quiet", "--playouts", "64",
                "--model", DEFAULT_MODEL_NAME],
               cwd=work, timeout=600, input="boardsize 9\nclear_board\ngenmove b\nquit\n")
    replies = [r.strip() for r in res.stdout.split("\n\n") if r.strip()]
    assert replies[:2] == ["=", "="] and replies[-1] == "="
    move = re.fullmatch(r"= ([A-HJ][1-9])", replies[2])
    assert move, res.stdout  # a point on the empty 9x9 board: every one is legal, pass is not
    assert "Traceback" not in res.stderr
    # With no --model the engine's default loads from the wheel, and stderr names which net.
    res = _run([bin_dir / "nogobot", "gtp", "--playouts", "64"], cwd=work, timeout=600,
               input="genmove b\nquit\n")
    assert re.match(r"= [A-HJ][1-9]\n\n", res.stdout), res.stdout
    assert any(f"network: {n} (" in res.stderr for n in SHIPPED_MODEL_NAMES), res.stderr


@pytest.mark.slow
def test_installed_engine_passes_the_conformance_suite(installed):
    _, bin_dir, work = installed
    engine = f'"{bin_dir / "nogobot"}" gtp --quiet --playouts 64'
    # A generous reply timeout: the venv's first engine may still be compiling its kernels.
    res = _run([bin_dir / "nogobot", "conformance", "--engine", engine, "--timeout", "300"],
               cwd=work, timeout=1200)
    files = len(list(CONFORMANCE_DIR.glob("*.tst"))) + 1  # + built-in framing
    assert f"\n{files} files (0 skipped):" in res.stdout, res.stdout[-2000:]
    assert " 0 FAILED" in res.stdout


@pytest.mark.slow
def test_installed_bench_endgame_reads_the_packaged_suite(installed):
    _, bin_dir, work = installed
    res = _run([bin_dir / "nogobot", "bench", "endgame", "--nodes", "1000", "--limit", "1",
                "--depth", "30", "--no-engine", "--no-rave", "--json"], cwd=work, timeout=600)
    assert json.loads(res.stdout)["depths"]["30"]["positions"] == 1
