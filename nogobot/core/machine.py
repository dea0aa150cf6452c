"""What the machine's CPU is, for benchmarks' headers and for the engine's choice of encoding,
and the cores a search gets (``search_cores``: two lanes need two).

Linux's /proc/cpuinfo answers both questions; elsewhere the CPU is ``platform``'s word for it
and int8 dot-product instructions count as absent (the int8 net is then not chosen by default).
"""

from __future__ import annotations

import functools
import os
import platform

# x86 flags of the instructions onnxruntime's int8 kernels multiply with (VNNI, AMX): where
# they are missing its u8s8 kernels gain far less and may saturate.
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
CPUINFO = "/proc/cpuinfo"


def _cpuinfo(key: str) -> str | None:
    """The first value of ``key`` in /proc/cpuinfo (None where there is no such file or key)."""
    try:
        with open(CPUINFO, encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name.strip() == key:
                    return value.strip()
    except OSError:
        pass
    return None


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo's, else ``platform``'s)."""
    return _cpuinfo("model name") or platform.processor() or platform.machine()


def search_cores(threads: int | None, lanes: int | None = 1) -> int:
    """The cores a search has: ``threads``, or every core. Two lanes need two (the network on
    one thread, the search's selection and rollouts on another): ValueError on fewer."""
    cores = threads or os.cpu_count() or 1
    if lanes == 2 and cores < 2:
        raise ValueError("two lanes need two cores (--threads 2 or more)")
    return cores


def machine() -> str:
    """The CPU's model name and core count, for a benchmark's header."""
    return f"{cpu_name()}, {os.cpu_count()} cores"


@functools.cache
def int8_dot_product() -> bool:
    """Whether the CPU has int8 dot-product instructions (x86 VNNI or AMX)."""
    flags = _cpuinfo("flags")
    return bool(flags) and not INT8_DOT_FLAGS.isdisjoint(flags.split())
