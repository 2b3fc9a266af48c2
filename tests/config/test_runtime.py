"""Process-wide settings (config/runtime.py): malloc's arenas are capped where glibc runs the process."""

from __future__ import annotations

import subprocess
import sys

from prm_factory.config.runtime import MALLOC_ARENAS, limit_malloc_arenas

PROBE = """
import ctypes, threading
from prm_factory.config.runtime import limit_malloc_arenas
print(limit_malloc_arenas())
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
together = threading.Barrier(8)
def work():  # each thread allocates while the others live (a finished thread's arena is reused)
    held = libc.malloc(1 << 12)
    together.wait()
    libc.free(held)
threads = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
libc.malloc_stats()
"""


def _arenas(env: dict[str, str] | None = None) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env, timeout=60
    )
    # glibc's malloc_stats writes one "Arena N:" block per arena to stderr
    return done.stdout.strip(), done.stderr.count("Arena ")


def test_a_process_makes_no_more_arenas_than_the_cap(monkeypatch):
    import os

    capped, arenas = _arenas({k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"})
    assert capped == "True" and 1 <= arenas <= MALLOC_ARENAS
    # without the cap (the environment's own setting wins) eight allocating threads make more
    mine, more = _arenas({**os.environ, "MALLOC_ARENA_MAX": "16"})
    assert mine == "False" and more > MALLOC_ARENAS
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False


def test_the_cli_gives_arrow_the_system_allocator_unless_the_environment_chooses():
    """mimalloc kept a commit's freed batches (issue 48): the CLI's processes allocate Arrow buffers with
    glibc malloc, whose arenas are capped; a user's ARROW_DEFAULT_MEMORY_POOL still wins."""
    import os

    probe = "import prm_factory.cli, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    chosen = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert chosen.stdout.strip() == "system", chosen.stderr
    env["ARROW_DEFAULT_MEMORY_POOL"] = "mimalloc"
    kept = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert kept.stdout.strip() == "mimalloc", kept.stderr
