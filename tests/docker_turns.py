"""Turns on the machine's one Docker engine, shared by the suite's workers (and any other pytest session).

The engine tests and the Docker tests run on two xdist workers at once (tests/conftest.py), and some tests on
each side stop and restart dockerd, which kills every sandbox container on the machine. A test that uses
Docker (and a fixture that keeps containers warm across tests) holds a shared turn; a restart takes the
turn exclusively, so it waits until no sandbox is in use anywhere and nothing starts one until it is back.
The turn is an `flock` on a file in the temporary folder: held per process, released if the process dies.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class DockerTurns:
    """Shared and exclusive turns for this process (one descriptor: a restart inside a shared turn of the
    same process converts it instead of waiting on itself)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._shared = 0
        self._guard = threading.Lock()

    def _descriptor(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        return self._fd

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._guard:
            if self._shared == 0:
                fcntl.flock(self._descriptor(), fcntl.LOCK_SH)
            self._shared += 1
        try:
            yield
        finally:
            with self._guard:
                self._shared -= 1
                if self._shared == 0:
                    fcntl.flock(self._descriptor(), fcntl.LOCK_UN)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._guard:
            fcntl.flock(self._descriptor(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            with self._guard:  # back to what this process held before
                fcntl.flock(self._descriptor(), fcntl.LOCK_SH if self._shared else fcntl.LOCK_UN)


DOCKER_TURNS = DockerTurns(Path(tempfile.gettempdir()) / "prm-factory-dockerd.lock")


def own_sandboxes() -> dict[str, list[str]]:
    """A container filter for the sandboxes this process made: a test that counts sandboxes counts only its
    own, since the engine tests' code runs on another xdist worker make theirs meanwhile."""
    from prm_factory.verifiers.code.sandbox import LABEL
    from prm_factory.verifiers.code.sandbox.container import OWNER_LABEL

    return {"label": [LABEL, f"{OWNER_LABEL}={socket.gethostname()}:{os.getpid()}"]}
