"""Process-wide settings every entry point applies before importing Prefect or vLLM."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

RUNTIME_DEFAULTS = {
    "HF_HUB_OFFLINE": "1",  # no weights or data from a hub, ever
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # the temporary local server needs longer than the default on a busy 2-core machine
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_LOGGING_LEVEL": "WARNING",
    "TOKENIZERS_PARALLELISM": "false",
    # Arrow's buffers from glibc malloc (arenas capped below) rather than mimalloc, which kept a commit's
    # freed batches: `label` of 100,000 steps peaked at 856 MiB (process tree) with mimalloc and 776 with
    # this, 10,000 steps 751 and 713; the same throughput at 40,000 steps (issue 48)
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}

# what `prm-factory run` adds: its own bars replace the libraries' (weight loading and the like), whose
# carriage-return redraws would only clutter the run's log file (see prm_factory.progress.output_to_log)
QUIET_DEFAULTS = {"TQDM_DISABLE": "1"}


MALLOC_ARENAS = 2
"""glibc malloc arenas a process may create (`M_ARENA_MAX`; glibc's default is 8 per core). Arrow's and
DuckDB's worker threads each allocate in an arena of their own, and memory freed in one is not reused by
another: a relabel of 100,000 steps peaked at 988 MiB with the default and 935 with 2 (the process tree
with its Prefect server; the walk 880 -> 850). Set before any thread starts; `MALLOC_ARENA_MAX` in the
environment wins."""

_M_ARENA_MAX = -8  # glibc malloc.h


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap this process's glibc malloc arenas (MALLOC_ARENAS) unless the environment sets
    MALLOC_ARENA_MAX; False where there is no glibc (musl, macOS) or the call fails."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def apply_runtime_defaults() -> None:
    """Set every RUNTIME_DEFAULTS key the environment does not set already, and cap malloc's arenas."""
    for key, value in RUNTIME_DEFAULTS.items():
        os.environ.setdefault(key, value)
    limit_malloc_arenas()


def apply_quiet_defaults() -> None:
    """Set every QUIET_DEFAULTS key the environment does not set already (`prm-factory run` only)."""
    for key, value in QUIET_DEFAULTS.items():
        os.environ.setdefault(key, value)


def _ldconfig_path(soname: str) -> str | None:
    """The path `ldconfig -p` lists for a shared library's soname, or None."""
    try:
        listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ", 1)[0] == soname and Path(path).exists():
            return path
    return None


def tcmalloc_library() -> str | None:
    """libtcmalloc_minimal.so.4 from Debian's libtcmalloc-minimal4 (scripts/setup.sh), or None."""
    return _ldconfig_path("libtcmalloc_minimal.so.4")


def intel_openmp_library() -> str | None:
    """libiomp5.so of the `intel-openmp` wheel in this interpreter's environment, or None."""
    path = Path(sys.prefix) / "lib" / "libiomp5.so"
    return str(path) if path.exists() else None
