"""Scheduled runs: one Prefect deployment per config, all served by one long-running process.

`prm-factory serve a.toml b.toml --cron "0 * * * *"` builds a deployment of `generation_run` per config
(the config travels as the deployment's `config` parameter, so the UI shows and can edit it), sets tag
concurrency limits for the engine and the sandbox, and serves them with a runner limit on concurrent flow
runs. Cron schedules and concurrency limits live on the Prefect API server: serving needs a real one
(`prefect server start` and `PREFECT_API_URL`); the temporary server a plain `prm-factory run` starts
refuses to schedule, which `require_api_server` says in one line instead of serving nothing.

Why three limits: each flow run is a subprocess with its own vLLM engine, so `max_runs` (the runner's limit,
default 1) is what keeps memory bounded on one machine; each deployment also has a concurrency limit of 1, so
a slow run of a config is never overlapped by its next scheduled run; and the `prm-engine` / `prm-sandbox`
tag limits bound engine and Docker work across several serve processes sharing one server and machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm_factory.config.run_config import ConfigError, RunConfig

DEFAULT_CRON = "0 * * * *"


@dataclass(frozen=True)
class ServedConfig:
    """A config file and the config read from it."""

    path: Path
    config: RunConfig


def validate_cron(expression: str) -> str:
    """The cron string if Prefect's scheduler accepts it, else ConfigError with one line.

    >>> validate_cron("0 * * * *")
    '0 * * * *'
    """
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    try:
        CronSchedule(cron=expression)
    except ValidationError as err:
        reason = str(err.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"bad cron schedule {expression!r}: {reason}") from err
    return expression


def deployment_name(served: ServedConfig) -> str:
    """`<config name>-<file stem>`: unique per file even when two configs keep the default name."""
    raw = f"{served.config.name}-{served.path.stem}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-")


def build_deployments(
    configs: Sequence[ServedConfig], cron: str, *, timezone: str | None = None
) -> list[Any]:
    """One `RunnerDeployment` of `generation_run` per config, on `cron`, with the config as parameter."""
    from prefect.client.schemas.schedules import CronSchedule

    from prm_factory.flows.generation_run import generation_run

    validate_cron(cron)
    names = [deployment_name(c) for c in configs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"two configs give the same deployment name: {', '.join(duplicates)}")
    deployments = []
    for served, name in zip(configs, names, strict=True):
        deployments.append(
            generation_run.to_deployment(
                name=name,
                schedule=CronSchedule(cron=cron, timezone=timezone),
                parameters={"config": served.config.model_dump(mode="json")},
                tags=["prm-factory", served.config.problems.domain],
                concurrency_limit=1,
                description=f"prm-factory run of {served.path} on '{cron}'",
            )
        )
    return deployments


def require_api_server() -> str:
    """The configured Prefect API URL; ConfigError when there is none (only the temporary server)."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value() or os.environ.get("PREFECT_API_URL", "")
    if not url:
        raise ConfigError(
            "scheduled runs need a Prefect API server: start one with `prefect server start` and set "
            "PREFECT_API_URL=http://127.0.0.1:4200/api (the temporary server cannot schedule)"
        )
    return url


def ensure_tag_limits(engine_slots: int, sandbox_slots: int) -> dict[str, int]:
    """Create or update the tag concurrency limits on the server; returns {tag: slots}."""
    from prefect.client.orchestration import get_client

    from prm_factory.flows.tasks import ENGINE_TAG, SANDBOX_TAG

    wanted = {ENGINE_TAG: engine_slots, SANDBOX_TAG: sandbox_slots}
    with get_client(sync_client=True) as client:
        for tag, slots in wanted.items():
            client.create_concurrency_limit(tag=tag, concurrency_limit=slots)
    return wanted


def serve_deployments(deployments: Sequence[Any], max_runs: int) -> None:
    """Serve until interrupted; at most `max_runs` flow runs (each with its own engine) at once."""
    from prefect import serve

    serve(*deployments, limit=max_runs)
