"""One logical run fanned out as N flow runs over a Prefect work pool, one shard each (flows/shards.py).

Prefect does the scheduling: `deploy_generation` registers `generation_run` as a deployment on a work pool
(by module path, so every node that has prm-factory installed can load it; no image, no code upload),
`submit_shards` creates one flow run of it per shard with `run_deployment`, and the workers started with
`prefect worker start --pool NAME` on each node pick them up, each flow run in its own process with its
own engine. Nothing here schedules, retries or places work: a crashed or failed shard is submitted again
alone (the same parameters; its chunks are reused from the dataset root's `_staging/` and `_cache/`).

All nodes must see the dataset root at the same path (a shared filesystem: staging and the stage caches
are local files), so relative paths in the config are made absolute on the submitting machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prm_factory.config.run_config import ConfigError, RunConfig
from prm_factory.flows.shards import Shard

DEPLOYMENT_NAME = "prm-shards"
FLOW_NAME = "prm-generation-run"
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CRASHED", "CANCELLED"})


@dataclass(frozen=True)
class SubmittedShard:
    shard: Shard
    flow_run_id: str
    flow_run_name: str


def ensure_work_pool(pool: str) -> str:
    """The pool's type, creating a `process` pool of that name when there is none."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            return client.read_work_pool(pool).type
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
            return "process"


def deploy_generation(pool: str) -> str:
    """Create (or update) the shards' deployment on `pool`; returns its `flow/deployment` name."""
    from prefect.deployments.runner import EntrypointType

    from prm_factory.flows.generation_run import generation_run

    generation_run.deploy(
        name=DEPLOYMENT_NAME,
        work_pool_name=pool,
        entrypoint_type=EntrypointType.MODULE_PATH,  # `flows.generation_run.generation_run` on every node
        build=False,
        push=False,
        print_next_steps=False,
        ignore_warnings=True,
        tags=["prm-factory", "shards"],
        description="One shard of a prm-factory run (parameters: config, shard I/N, parent_run_id)",
    )
    return f"{FLOW_NAME}/{DEPLOYMENT_NAME}"


def submit_shards(
    deployment: str, config: RunConfig, shards: Sequence[Shard], parent_run_id: str
) -> list[SubmittedShard]:
    """One flow run of the deployment per shard, returned at once (the workers run them)."""
    from prefect.deployments import run_deployment

    parameters = {"config": config.model_dump(mode="json"), "parent_run_id": parent_run_id}
    submitted = []
    for shard in shards:
        name = f"{config.name}-{parent_run_id[:8]}-shard-{shard.index}-of-{shard.count}"
        flow_run = run_deployment(
            deployment,
            parameters={**parameters, "shard": str(shard)},
            flow_run_name=name,
            timeout=0,  # do not wait here: `wait_for_shards` follows all of them together
            tags=["prm-factory", f"parent-{parent_run_id}"],
        )
        submitted.append(SubmittedShard(shard, str(flow_run.id), name))
    return submitted


def shard_states(submitted: Sequence[SubmittedShard]) -> dict[str, str]:
    """flow run id -> its state type (SCHEDULED, PENDING, RUNNING, COMPLETED, FAILED, CRASHED, ...)."""
    from prefect.client.orchestration import get_client

    states = {}
    with get_client(sync_client=True) as client:
        for item in submitted:
            flow_run = client.read_flow_run(item.flow_run_id)
            states[item.flow_run_id] = flow_run.state.type.value if flow_run.state else "UNKNOWN"
    return states


def wait_for_shards(
    submitted: Sequence[SubmittedShard],
    poll_seconds: float = 5.0,
    on_change: Callable[[SubmittedShard, str], Any] | None = None,
    timeout_seconds: float | None = None,
) -> dict[str, str]:
    """Poll until every shard's flow run is in a final state; `on_change` hears every state change."""
    last: dict[str, str] = {}
    started = time.monotonic()
    while True:
        states = shard_states(submitted)
        for item in submitted:
            if states[item.flow_run_id] != last.get(item.flow_run_id) and on_change is not None:
                on_change(item, states[item.flow_run_id])
        last = states
        if all(state in FINAL_STATES for state in states.values()):
            return states
        if timeout_seconds is not None and time.monotonic() - started > timeout_seconds:
            raise TimeoutError(f"shards not finished after {timeout_seconds:.0f}s: {states}")
        time.sleep(poll_seconds)


def shards_to_run(shard: str | None, shards: int | None) -> list[Shard]:
    """`--shards N` (all of them) or `--shard I/N` (one, e.g. a rerun); one of the two.

    >>> [str(s) for s in shards_to_run(None, 2)], [str(s) for s in shards_to_run("1/2", None)]
    (['0/2', '1/2'], ['1/2'])
    """
    if (shard is None) == (shards is None):
        raise ConfigError("give --shards N (every shard) or --shard I/N (one shard)")
    if shards is not None:
        return [Shard(index, shards) for index in range(shards)]
    return [Shard.parse(shard)]
