"""Hardened Docker sandbox: a warm pool of long-lived containers, one supervised job at a time each.

Long-lived containers take jobs from the in-container supervisor (`launcher.py`), which gives every job a
fresh work dir, caps its output, enforces the wall-clock limit by killing the whole process tree, kills
anything the job left behind, and reports one nonce-tagged result. Four small modules:

- `container`: the hardened container settings, starting and removing containers, leftover cleanup;
- `protocol`: the request, Docker's stream framing and the supervisor's report (one parser), pure bytes;
- `dispatch`: getting one job to a container and its report back (attached stdin, or `docker exec`);
- `pool`: the warm pool, container replacement and Docker engine restarts.

Callers import from here; the names below are the package's public API.

    >>> with SandboxPool(ensure_image(), size=2, limits=SandboxLimits()) as pool:   # doctest: +SKIP
    ...     pool.run({"main.py": "print(6 * 7)"}, ["python3", "main.py"]).stdout
    '42\\n'
"""

from prm_factory.verifiers.code.sandbox.container import (
    LABEL,
    LAUNCHER_SOURCE,
    OWNER_LABEL,
    REAPER_SOURCE,
    SANDBOX_USER,
    SERVER_COMMAND,
    SandboxLimits,
    cleanup_leftovers,
    container_kwargs,
    docker_client,
    start_container,
)
from prm_factory.verifiers.code.sandbox.dispatch import Dispatch, exec_job
from prm_factory.verifiers.code.sandbox.pool import (
    ENGINE_ERRORS,
    LOST_CONTAINER_PROBLEMS,
    SandboxPool,
    SandboxUnavailable,
    lost_container,
    run_once,
)
from prm_factory.verifiers.code.sandbox.protocol import (
    EXEC_GRACE_SECONDS,
    NO_OPTIONS,
    ExecResult,
    JobOptions,
    SupervisorReport,
    parse_report,
)

__all__ = [
    "ENGINE_ERRORS",
    "EXEC_GRACE_SECONDS",
    "LABEL",
    "LAUNCHER_SOURCE",
    "LOST_CONTAINER_PROBLEMS",
    "NO_OPTIONS",
    "OWNER_LABEL",
    "REAPER_SOURCE",
    "SANDBOX_USER",
    "SERVER_COMMAND",
    "Dispatch",
    "ExecResult",
    "JobOptions",
    "SandboxLimits",
    "SandboxPool",
    "SandboxUnavailable",
    "SupervisorReport",
    "cleanup_leftovers",
    "container_kwargs",
    "docker_client",
    "exec_job",
    "lost_container",
    "parse_report",
    "run_once",
    "start_container",
]
