"""The engine path never imports torch, ray, nogobot.train or nogobot.cluster: the bot runs on
numpy, numba and onnxruntime alone (docs/architecture.md, "Layers")."""

import subprocess
import sys

CODE = """
import io, sys
from click.testing import CliRunner
from nogobot.cli import main
from nogobot.gtp import serve
from nogobot.net.inference import load_evaluator
from nogobot.engine.player import MCTSAgent
agent = MCTSAgent(load_evaluator(None), playouts=32, seconds=None, log=None)
out = io.StringIO()
serve(lambda: agent, instream=io.StringIO("boardsize 9\\ngenmove b\\ngenmove w\\n"),
      outstream=out, errstream=io.StringIO())
assert out.getvalue().count("= ") >= 3, out.getvalue()
bad = sorted(m for m in sys.modules if m in ("torch", "ray")
             or m.startswith(("torch.", "ray.", "nogobot.train", "nogobot.cluster")))
print("LOADED:" + ",".join(bad))
"""


def test_engine_path_does_not_import_torch():
    res = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "LOADED:\n" in res.stdout, res.stdout
