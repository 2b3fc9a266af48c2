"""Scale-out: step verification spread over worker processes or a Dask cluster (`runner.task_runner`).

Verification is the stage that parallelises without the engine: every chain is checked on its own. With
`processes` (Prefect's ProcessPoolTaskRunner, this machine) or `dask` (prefect-dask's DaskTaskRunner, a
local or remote cluster), chains go out in chunks of `runner.verify_chunk`, each chunk a task that builds
its own verifier on the worker (a verifier holds worker processes or sandbox containers, which do not
pickle), and each chunk is cached under `_cache/` like the other stages. The runner is opened here, around
the verification stage only, so served deployments (which load the flow from its entrypoint and lose any
`with_options`) scale out the same way as `prm-factory run`. The default `threads` keeps the single verify
task that shares the run's verifier.

prefect-dask is optional (`pip install prefect-dask==0.3.7`, it resolves beside prefect 3.7.7 without
changing prefect or fastapi); `make_task_runner` says so in one line when it is missing.
"""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from prm_factory.config.run_config import ConfigError, RunConfig
from prm_factory.flows.domains import domain_for
from prm_factory.flows.resume import stage_key, with_stage_cache
from prm_factory.labels.assemble import SampledChain
from prm_factory.verifiers.protocol import Verdict

DASK_PIN = "prefect-dask==0.3.7"


def make_task_runner(config: RunConfig) -> Any | None:
    """The task runner verification chunks go to; None for `threads` (the single verify task)."""
    r = config.runner
    if r.task_runner == "threads":
        return None
    if r.task_runner == "processes":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=r.workers)
    try:
        from prefect_dask import DaskTaskRunner
    except ModuleNotFoundError as err:
        raise ConfigError(
            f"runner.task_runner = 'dask' needs the prefect-dask package (pip install {DASK_PIN})"
        ) from err
    if r.dask_address:
        return DaskTaskRunner(address=r.dask_address)
    return DaskTaskRunner(cluster_kwargs={"n_workers": r.workers, "threads_per_worker": 1})


def chunked(items: list[SampledChain], size: int) -> list[list[SampledChain]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


@task(name="verify-chunk", retries=1, retry_delay_seconds=10, cache_policy=NO_CACHE)
def verify_chunk_task(chunk: list[SampledChain], config: RunConfig) -> list[list[Verdict]]:
    """Verify one chunk of chains with a verifier built here (on the Dask worker), closed afterwards."""
    verifier = domain_for(config).make_verifier()
    try:
        return [verifier.check_steps(c.problem, [s.text for s in c.steps]) for c in chunk]
    finally:
        close = getattr(verifier, "close", None)
        if callable(close):
            close()


def spread_verify(
    key: str | None, config: RunConfig, root: str, sampled: list[SampledChain], verifier: Any
) -> list[list[Verdict]]:
    """The `verify` stage spread over the configured runner (flows/runner.py; `verifier` is made again in
    each worker from the config)."""
    return verify_in_chunks(sampled, config, root, key or "")


def verify_in_chunks(
    sampled: list[SampledChain], config: RunConfig, root: str, verify_key: str
) -> list[list[Verdict]]:
    """Submit one task per chunk to the configured runner and join the verdicts in chain order."""
    runner = make_task_runner(config)
    if runner is None:
        raise ConfigError("verify_in_chunks needs runner.task_runner = 'processes' or 'dask'")
    chunks = chunked(sampled, config.runner.verify_chunk)
    with runner:
        futures = []
        for index, chunk in enumerate(chunks):
            key = stage_key("verify-chunk", {"from": verify_key, "index": index}, code=())
            runnable = with_stage_cache(verify_chunk_task, root, key if config.resume.enabled else None)
            futures.append(runner.submit(runnable, {"chunk": chunk, "config": config}))
        return [verdicts for future in futures for verdicts in future.result()]
