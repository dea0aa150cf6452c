"""Training side of nogobot (needs the ``train`` extra: torch, onnx).

The engine never imports this package. ``model.py`` is the only definition of the network
architecture; ``export.py`` turns a checkpoint into the ONNX model + YAML sidecar the engine loads;
``bootstrap.py`` trains the small default model from cheap greedy self-play.
"""


def require_torch() -> None:
    """Raise the ``ImportError`` (naming the module) at once when torch is missing, for a
    command that would otherwise import it deep inside a run (the CLI turns it into one line)."""
    import torch  # noqa: F401
