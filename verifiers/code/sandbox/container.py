"""Container setup: the hardened arguments every sandbox container is created with, and its start and removal.

Every container: no network, read-only root, small tmpfs /work and /tmp, memory == memory+swap, a pids
limit, a CPU limit, all capabilities dropped, no-new-privileges, a non-root uid, no host path mounted,
no log driver (output only flows through the attach/exec stream). Containers carry the `LABEL` label
and their owner's pid, so `cleanup_leftovers()` removes what a crashed run left behind.

A container this process could not remove because the engine did not answer (it went down between create
and start, or during a replacement) is remembered in `UNREMOVED` and removed as soon as the engine answers
again: on the next successful create, in the pool's recovery and at its close. `cleanup_leftovers()` cannot
do that job, as it spares the containers of a live owner.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests
from docker.types import LogConfig, Ulimit

log = logging.getLogger(__name__)

# What a lost engine looks like from docker-py: no answer (requests), no client (DockerException,
# which APIError also is), or a socket error on the attach stream.
ENGINE_ERRORS: tuple[type[BaseException], ...] = (
    docker.errors.DockerException,
    requests.exceptions.RequestException,
    OSError,
)
# No answer at all: a container may exist that the caller never heard of (a create whose reply was lost).
NO_ANSWER: tuple[type[BaseException], ...] = (requests.exceptions.RequestException, OSError)

LABEL = "prm-factory.sandbox"
OWNER_LABEL = "prm-factory.sandbox.owner"
SANDBOX_USER = "10001:10001"
LAUNCHER_SOURCE = (Path(__file__).parent.parent / "launcher.py").read_text(encoding="utf-8")

# PID 1 of an "exec" dispatch container: it only reaps orphans (so killed job processes do not pile up
# as zombies against the pids limit). kill(-1) from the job spares PID 1, and signals from inside the
# container reach PID 1 only where it set a handler: it sets none (SIGCHLD aside), and ignores SIGINT.
REAPER_SOURCE = """
import os, signal
def reap(*_):
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
signal.signal(signal.SIGCHLD, reap)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    signal.pause()
"""
REAPER_COMMAND = ["python3", "-I", "-S", "-c", REAPER_SOURCE]

# PID 1 of a "server" dispatch container: the supervisor itself, taking framed requests on stdin.
SERVER_COMMAND = ["python3", "-I", "-S", "-c", LAUNCHER_SOURCE, "--serve"]


@dataclass(frozen=True)
class SandboxLimits:
    """Per-container resource limits; every job in a pool shares them."""

    memory_mb: int = 256
    pids: int = 64
    cpus: float = 1.0
    wall_seconds: float = 10.0
    output_cap_bytes: int = 1 << 20  # stdout and stderr together; more is an overflow (job killed)
    tmpfs_mb: int = 64


def container_kwargs(image: str, limits: SandboxLimits, command: list[str]) -> dict[str, Any]:
    """The `containers.create` arguments that make a container a sandbox. Pure, so it is unit-tested."""
    memory = f"{limits.memory_mb}m"
    return {
        "image": image,
        "command": command,
        "user": SANDBOX_USER,
        "working_dir": "/work",
        "hostname": "sandbox",
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {
            "/work": f"rw,nosuid,nodev,noexec,size={limits.tmpfs_mb}m,mode=1777",
            "/tmp": f"rw,nosuid,nodev,noexec,size={max(1, limits.tmpfs_mb // 4)}m,mode=1777",
        },
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": limits.pids,
        "nano_cpus": int(limits.cpus * 1e9),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ipc_mode": "none",
        "ulimits": [Ulimit(name="core", soft=0, hard=0), Ulimit(name="nofile", soft=256, hard=256)],
        "log_config": LogConfig(type="none"),
        # A fixed hash seed: the supervisor (whose interpreter python jobs fork from) iterates sets the same
        # way in every container, so a judge process replaying test code computes the same call arguments.
        "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONHASHSEED": "0"},
        "labels": {LABEL: "1", OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"},
        # Nothing in a sandbox needs a graceful stop: `docker stop` and an engine shutdown kill it at once
        # instead of waiting 10 s on a PID 1 that ignores SIGTERM.
        "stop_signal": "SIGKILL",
        "detach": True,
    }


def docker_client() -> docker.DockerClient:
    """A client for the local engine; raises `docker.errors.DockerException` when it does not answer."""
    client = docker.from_env(timeout=60)
    client.ping()
    return client


def cleanup_leftovers(client: docker.DockerClient | None = None, *, all_owners: bool = False) -> int:
    """Remove sandbox containers whose owning process is gone (all of them with `all_owners`).

    A run killed with SIGKILL cannot clean up after itself; the next run calls this on start.
    """
    client = client or docker_client()
    removed = 0
    host = socket.gethostname()
    # The low-level list: its entries carry the labels, so no per-container inspect can fail on a
    # container another process removes meanwhile (`containers.list` inspects each one, and raises then).
    for entry in client.api.containers(all=True, filters={"label": LABEL}):
        owner = (entry.get("Labels") or {}).get(OWNER_LABEL, "")
        owner_host, _, owner_pid = owner.rpartition(":")
        if not all_owners and owner_host == host and owner_pid.isdigit() and _pid_alive(int(owner_pid)):
            continue
        try:
            client.api.remove_container(entry["Id"], force=True)
        except docker.errors.NotFound:
            continue  # already gone: exactly what we wanted
        except docker.errors.APIError as exc:  # e.g. its removal is already in progress elsewhere
            log.warning("could not remove sandbox container %s: %s", entry["Id"][:12], exc)
            continue
        removed += 1
    return removed


class UnremovedContainers:
    """Ids (or names) of this process's containers whose removal the engine did not answer; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()

    def add(self, container: str) -> None:
        with self._lock:
            self._ids.add(container)

    def discard(self, container: str) -> None:
        with self._lock:
            self._ids.discard(container)

    def take(self) -> list[str]:
        """Every remembered container, forgotten here (a failed removal remembers it again)."""
        with self._lock:
            taken, self._ids = sorted(self._ids), set()
        return taken

    def snapshot(self) -> list[str]:
        with self._lock:
            return sorted(self._ids)


UNREMOVED = UnremovedContainers()


def remove_or_remember(api: docker.APIClient, container: str) -> bool:
    """Remove a container (id or name); True when it is gone (also when it was already).

    An engine that cannot be reached, or fails the removal on its side (5xx, e.g. while shutting down),
    leaves it in `UNREMOVED` for `remove_unremoved`; a refusal the engine means (4xx, e.g. a removal
    already in progress) is only logged. Never raises an engine error.
    """
    try:
        api.remove_container(container, force=True)
    except docker.errors.NotFound:
        log.debug("sandbox container %s already gone", _short(container))  # exactly what we wanted
    except ENGINE_ERRORS as exc:
        if isinstance(exc, docker.errors.APIError) and exc.is_client_error():
            log.warning("could not remove sandbox container %s: %s", _short(container), exc)
            return False
        UNREMOVED.add(container)
        log.warning(
            "sandbox container %s not removed yet, again once the engine answers: %s", _short(container), exc
        )
        return False
    else:
        log.debug("sandbox container %s removed", _short(container))
    UNREMOVED.discard(container)
    return True


def remove_unremoved(api: docker.APIClient) -> int:
    """Remove the containers whose removal failed while the engine was away; returns how many are gone."""
    pending = UNREMOVED.take()
    if not pending:
        return 0
    gone = sum(remove_or_remember(api, container) for container in pending)
    log.warning("sandbox containers left while the engine was away: %d of %d gone now", gone, len(pending))
    return gone


def start_container(client: docker.DockerClient, kwargs: dict[str, Any]) -> Any:
    """Create and start a container; one whose start fails for any reason is removed again (no `Created`
    leftovers), or remembered and removed once the engine answers, where it could not be reached.

    The container gets a unique name first, so that even a create whose reply was lost (the engine went
    down mid-request) leaves a container this process can name for removal.
    """
    create_kwargs = {k: v for k, v in kwargs.items() if k != "detach"}
    create_kwargs.setdefault("name", f"prm-sandbox-{uuid.uuid4().hex[:16]}")
    try:
        container = client.containers.create(**create_kwargs)
    except NO_ANSWER as exc:
        if not isinstance(exc, docker.errors.DockerException):  # an answer (APIError is an OSError too)
            UNREMOVED.add(create_kwargs["name"])  # may exist; removing one that does not is a NotFound
        raise
    remove_unremoved(client.api)  # the engine answers again: the moment to remove what it left
    try:
        container.start()
    except BaseException as exc:
        log.warning("sandbox container %s did not start (%s); removing it", container.id[:12], exc)
        remove_or_remember(client.api, container.id)
        raise
    return container


def _short(container: str) -> str:
    """An id as `docker ps` shows it; a name whole."""
    return container[:12] if len(container) == 64 else container


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
