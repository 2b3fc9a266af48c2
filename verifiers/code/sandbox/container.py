"""Container setup: the hardened arguments every sandbox container is created with, and its start and removal.

Every container: no network, read-only root, small tmpfs /work and /tmp, memory == memory+swap, a pids
limit, a CPU limit, all capabilities dropped, no-new-privileges, a non-root uid, no host path mounted,
no log driver (output only flows through the attach/exec stream). Containers carry the `LABEL` label
and their owner's pid, so `cleanup_leftovers()` removes what a crashed run left behind.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.types import LogConfig, Ulimit

log = logging.getLogger(__name__)

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


def start_container(client: docker.DockerClient, kwargs: dict[str, Any]) -> Any:
    """Create and start a container, removing it again if the start fails (no half-made leftovers)."""
    create_kwargs = {k: v for k, v in kwargs.items() if k != "detach"}
    container = client.containers.create(**create_kwargs)
    try:
        container.start()
    except docker.errors.APIError:
        remove_quietly(container)
        raise
    return container


def remove_quietly(container: Any) -> None:
    """Remove a container; one already gone is fine, one that will not go is logged, never raised."""
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass  # already gone: exactly what we wanted
    except docker.errors.APIError as exc:
        log.warning("could not remove sandbox container %s: %s", container.short_id, exc)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
