"""What every layer may use: atomic file writes, where the package's data folders are, what the
machine's CPU is (``machine``), and numba's kernel cache (``kernelcache``, set up when the
package is imported)."""
