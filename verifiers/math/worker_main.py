"""Entry point of a bounded worker process,
`python -m prm_factory.verifiers.math.worker_main READ_FD WRITE_FD MEMORY_MB`, or of the process's fork
server, which forks such workers ready-made (fork_server.py):
`python -m prm_factory.verifiers.math.worker_main fork-server SOCKET_FD`.

Kept apart from `bounded` so running it never imports that module twice (once as `__main__`).

Before anything else the worker forks a small watcher that kills it when its parent dies. The worker's own
watch thread (bounded._worker_main) cannot run while C code holds the GIL (a huge integer power inside
SymPy), so a worker whose parent was killed mid-item (a reward worker past its deadline, a killed run)
would compute on, an orphan, until its memory cap stopped it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from multiprocessing.connection import Connection


def _parent_of(pid: int) -> int | None:
    """The parent pid of `pid` (Linux /proc), or None where it cannot be read (the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def watch_from_outside(poll_s: float = 0.5) -> None:
    """Fork a watcher (no imports, its pipes closed) that SIGKILLs this process once its parent is gone,
    and exits when this process has ended. Only where /proc can be read (Linux); elsewhere a no-op."""
    worker, parent = os.getpid(), os.getppid()
    if _parent_of(worker) != parent or not hasattr(os, "fork"):
        return
    if os.fork() != 0:
        return
    os.closerange(3, 65536)  # the worker's pipes: its parent must see EOF when the worker ends
    try:
        while True:
            time.sleep(poll_s)
            if os.getppid() != worker:  # the worker ended (this watcher was re-parented)
                break
            if _parent_of(worker) != parent:  # the worker was re-parented: its parent is gone
                os.kill(worker, signal.SIGKILL)
                break
    finally:
        os._exit(0)


def _work(read_fd: int, write_fd: int, memory_mb: int, prepared: bool = False) -> None:
    """The worker loop on the pipe ends the caller passed (imports first unless `prepared`)."""
    from prm_factory.verifiers.math.bounded import _Duplex, _worker_main

    conn = _Duplex(Connection(read_fd, writable=False), Connection(write_fd, readable=False))
    _worker_main(conn, memory_mb, prepared=prepared)


def _forked_work(read_fd: int, write_fd: int, memory_mb: int) -> None:
    """A worker forked by the fork server: it dies with the server as a spawned one with its caller."""
    watch_from_outside()
    _work(read_fd, write_fd, memory_mb, prepared=True)


if __name__ == "__main__":
    watch_from_outside()
    if sys.argv[1] == "fork-server":
        import socket

        from prm_factory.verifiers.math.bounded import prepare_worker
        from prm_factory.verifiers.math.fork_server import serve

        serve(socket.socket(fileno=int(sys.argv[2])), prepare_worker, _forked_work)
    else:
        _work(*(int(arg) for arg in sys.argv[1:4]))
