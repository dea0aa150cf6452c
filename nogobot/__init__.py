"""nogobot: a NoGo engine (GTP, batched MCTS on an ONNX network, self-play training)."""

__version__ = "0.1.0"
