"""nogobot: a NoGo engine (GTP, batched MCTS on an ONNX network, self-play training)."""

__version__ = "0.1.0"

from .core.kernelcache import drop_stale_kernels as _drop_stale_kernels
from .core.kernelcache import ensure_kernel_cache as _ensure_kernel_cache

_ensure_kernel_cache()  # before any numba kernel is defined: a read-only install still caches
_drop_stale_kernels()  # numba would keep a kernel's callees from other modules as they were
