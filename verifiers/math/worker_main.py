"""Entry point of a bounded worker process:
`python -m prm_factory.verifiers.math.worker_main READ_FD WRITE_FD MEMORY_MB`.

Kept apart from `bounded` so running it never imports that module twice (once as `__main__`).
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from prm_factory.verifiers.math.bounded import _Duplex, _worker_main

if __name__ == "__main__":
    read_fd, write_fd, memory_mb = (int(arg) for arg in sys.argv[1:4])
    _worker_main(
        _Duplex(Connection(read_fd, writable=False), Connection(write_fd, readable=False)), memory_mb
    )
