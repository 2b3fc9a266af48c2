"""A generation run as a Prefect flow: the chunk loop and the run's finish; stages live elsewhere.

load → plan (model, labelers, every stage key: flows/plan.py) → start engine → per chunk of
`resume.chunk_problems` problems: sample → segment+grade → verify steps → rollouts → the run's other label
sources (the reference, the judge, plug-ins: labels/registry.py) → records staged as Parquet
(storage/staging.py) → commit all staged chunks as one dataset version. The tasks are in flows/tasks.py,
the cached stages and their keys are declared in flows/stages.py; the verify and rollouts stages compute
what the registry's `verifier` and `mc` sources turn into labels (`labels_of`, labels/sources/), as `label`
has them label its chains, so every label is made by a registered source. Memory is bounded by a chunk:
the flow keeps running totals (labels/tally.py) and the staged chunks' paths, never the run's chains or
steps, and readers see the run only once it commits. Math and code runs differ only in their `Domain`
(flows/domains.py). A failing run still records itself, with the error, in the runs table.

Resume: sample, segment+grade, verify and rollouts are cached per chunk under `<dataset root>/_cache` by
content keys (flows/resume.py), and a chunk whose rows were staged is reused whole, so the same config
started again after a crash skips the chunks and stages that finished and commits the same rows.
Every stage logs greppable `prm-run ... event=...` lines (flows/observe.py) and the run publishes a
markdown artifact with label counts, cost and dataset version (flows/artifacts.py).
"""

from __future__ import annotations

import json
import traceback
import uuid
from collections.abc import Sequence
from typing import Any

from prefect import State, flow, get_run_logger
from prefect.states import Failed

from prm_factory.config.run_config import RunConfig
from prm_factory.flows import artifacts, tasks
from prm_factory.flows.chunk_loop import ChunkLoop
from prm_factory.flows.domains import domain_for
from prm_factory.flows.engines import engine_settings, import_engine_in_background
from prm_factory.flows.observe import StageEvents, event_line
from prm_factory.flows.plan import (
    ChunkPlan,
    labeler_versions,
    needs_engine,
    plan_run,
    run_labelers,
)
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.run_state import ChunkRun, RunSources, RunState
from prm_factory.flows.run_summary import RunFailed, RunSummary
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.shards import ShardRun
from prm_factory.flows.stage_clock import StageClock
from prm_factory.flows.stages import GENERATION
from prm_factory.flows.tasks import RolloutStage
from prm_factory.labels.assemble import SampledChain, chunk_records
from prm_factory.labels.registry import stage_source
from prm_factory.labels.source import ChainLabels
from prm_factory.labels.sources.mc import MonteCarloSource
from prm_factory.labels.sources.verifier import VerifierSource
from prm_factory.labels.tally import RunTally
from prm_factory.rollouts import ChainValues
from prm_factory.sampling.vllm_sampler import engine_record
from prm_factory.schemas.records import Problem, Rejection
from prm_factory.storage.staging import chunk_dir
from prm_factory.verifiers.protocol import Verdict

__all__ = ["RunFailed", "RunSummary", "engine_settings", "generation_run", "run_generation"]

CHUNK_STAGES = tuple(GENERATION[name].clock_name for name in GENERATION.names("run"))
"""The clock names of a chunk's cached stages, in order (`sample`, `segment_grade`, `verify`, `rollouts`)."""


def label_chunk(run: ChunkRun, chunk: ChunkPlan) -> None:
    """One chunk from problems to staged rows through the stages GENERATION declares, each handed the
    chunk's values it reads (`ChunkExecutor.step`); only the chunk's totals and staged path outlive this
    call (flows/chunk_loop.py)."""
    index, part, keys, plan = chunk.index, chunk.problems, chunk.keys, run.plan
    rows = GENERATION["rows"]
    if run.loop.is_done(keys.staged):
        run.clock.reuse([*CHUNK_STAGES, *run.executor.timed_sources(run.sources.others), rows.clock_name])
        run.loop.reuse(keys.staged)
        run.clock.advanced("sample", index + 1, len(plan.chunks))
        return
    values = chunk_values(run, part)
    step = run.executor.step
    step(GENERATION["sample"], keys["sample"], values)
    run.clock.advanced("sample", index + 1, len(plan.chunks))
    step(GENERATION["segment"], keys["segment"], values)
    step(GENERATION["verify"], keys["verify"], values)
    sampled = values["sampled"]
    with_steps = sum(1 for c in sampled if c.steps)
    values["expected"] = max(values["done"] + with_steps, run.total_problems * run.config.sampling.n)
    stage: RolloutStage = step(GENERATION["rollouts"], keys["rollouts"], values)["rollout_stage"]
    run.progress.add_rollouts(stage, with_steps)
    by_chain = {v.chain_id: v for v in stage.values}
    labels = chunk_labels(run, sampled, values["verdicts"], stage.values)
    chains, steps = chunk_records(sampled, labels, plan.context, run.sources.registry)
    tally = RunTally.of(chains, steps, by_chain.values())
    tally.problems = len(part)
    directory = str(chunk_dir(run.root, keys.staged))
    values.update(directory=directory, chains=chains, steps=steps, tally=tally)
    step(rows, keys["rows"], values)
    run.loop.added(directory, tally)


def chunk_values(run: ChunkRun, part: list[Problem]) -> dict[str, Any]:
    """What a chunk's stages read that no stage writes: the chunk's problems and the run's plan."""
    return {
        "problems": part,
        "settings": run.plan.settings,
        "params": run.plan.params,
        "domain": run.domain,
        "verifier": run.verifier,
        "identity": run.plan.identity,
        "config": run.config,
        "run_id": run.plan.context.run_id,
        "root": run.root,
        "done": run.progress.rollout_chains,
    }


CHUNK_GIVEN = ("problems", "settings", "params", "domain", "verifier", "identity", "config", "run_id", "root")
"""The names `chunk_values` provides (with `done`, `expected`, and the records `label_chunk` makes)."""


def chunk_labels(
    run: ChunkRun, sampled: list[SampledChain], verdicts: list[list[Verdict]], values: Sequence[ChainValues]
) -> dict[str, list[ChainLabels | None]]:
    """Every source's labels of the chunk's chains: the verifier's and MC's from their cached stages, then
    the run's other sources in order (each reads the labels before it)."""
    registry, setup = run.sources.registry, run.sources.setup
    labels: dict[str, list[ChainLabels | None]] = {
        "verifier": stage_source(registry, "verifier", VerifierSource).labels_of(verdicts, setup),
        "mc": stage_source(registry, "mc", MonteCarloSource).labels_of(sampled, values, setup),
    }
    return run.executor.label_sources(run.sources.others, sampled, labels, setup)


@flow(name="prm-generation-run", log_prints=True)
def generation_run(
    config: RunConfig, shard: str | None = None, parent_run_id: str | None = None
) -> RunSummary | State[RunSummary]:
    """One generation run (math or code, by `problems.source`); writes one new dataset version.

    `shard` ("I/N") makes it shard I of a logical run of N over the chunks a hash gives it
    (flows/shards.py), recorded with `parent_run_id` (derived from the config and N when not given).
    Returns the summary; a failed run returns a Failed state carrying it (see `run_generation`).
    """
    sharded = ShardRun.of(config, shard, parent_run_id)
    run_id = uuid.uuid4().hex[:16]
    root = str(config.dataset_root())
    logger = get_run_logger()
    events = StageEvents(run_id, logger)
    state = RunState(
        config=config,
        domain=domain_for(config),
        run_id=run_id,
        started=utc_now(),
        root=root,
        clock=StageClock(events, root, check_cache=config.resume.enabled),
        sharded=sharded,
    )
    clock, domain = state.clock, state.domain
    where = {"shard": str(sharded.shard), "parent": sharded.parent_run_id} if sharded else {}
    logger.info(
        event_line(run_id, "run", "begin", config=config.name, domain=domain.name, dataset=root, **where)
    )
    try:
        verifier = state.verifier = domain.make_verifier()
        load = tasks.load_problems_task
        problems, rejected = clock.once("load", lambda: load(config, domain, root, sharded))
        state.rejections = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in rejected]
        clock.current = "model"
        plan = state.plan = plan_run(config, domain, verifier, problems, run_id, sharded and sharded.shard)
        planned = sum(len(chunk.problems) for chunk in plan.chunks)
        if sharded is not None:
            logger.info(
                "shard %s of run %s: %d chunks, %d of %d problems",
                sharded.shard,
                sharded.parent_run_id,
                len(plan.chunks),
                planned,
                len(problems),
            )
        if needs_engine(root, config, plan):
            clock.once("engine_start", lambda: tasks.start_engine_task(plan.settings))
        sources = RunSources.of(config, domain, verifier, plan)
        executor = ChunkExecutor(root, domain.name, clock, resume=config.resume.enabled, config=config)
        progress, loop = state.progress, state.loop
        chunk_run = ChunkRun(
            config, domain, verifier, plan, root, clock, progress, planned, sources, executor, loop
        )
        for chunk in plan.chunks:
            label_chunk(chunk_run, chunk)
        clock.finish()
    except Exception as err:  # recorded in the runs table below; the CLI exits non-zero
        state.error, failed_stage = f"{type(err).__name__}: {err}", clock.current
        events.failed(failed_stage, state.error)
        logger.error("run failed in stage %s: %s\n%s", failed_stage, state.error, traceback.format_exc())
        clock.finish(*[stage for stage in clock.seconds() if stage != failed_stage])
    finally:
        close = getattr(state.verifier, "close", None)
        if callable(close):
            close()
    return finish_run(state)


def finish_run(state: RunState) -> RunSummary | State[RunSummary]:
    """Commit the staged chunks (or, for a failed run, only its record), publish the report, summarise."""
    config, clock, plan, sharded, error = state.config, state.clock, state.plan, state.sharded, state.error
    root, run_id, rejections = state.root, state.run_id, state.rejections
    failed_stage = clock.current
    loop = state.loop
    if error:  # a failed run adds only its own record (and the rows it rejected), never partial labels
        if not config.resume.enabled:  # nothing will reuse them
            loop.drop()
        loop = ChunkLoop(root, config.resume.enabled)  # commits no chunk
    tally = loop.tally
    verifier = state.verifier
    labelers = plan.labelers if plan else (run_labelers(verifier, state.domain) if verifier else {})
    run = run_record(
        run_id=run_id,
        started_at=state.started,
        config=config,
        output=RunOutput(rejections=rejections, tally=tally),
        model=plan.settings.model_id if plan else "",
        weights_hash=plan.identity.weights_hash if plan else "",
        verifiers=labeler_versions(labelers),
        error=error,
        stage_seconds=clock.seconds(),
        prefix_cache_hit_rate=state.progress.hit_rate(),
        engine=engine_record(plan.settings) if plan else None,
        shard=sharded.record() if sharded else None,
    )
    version = clock.once("write", lambda: loop.commit(run, rejections))
    get_run_logger().info(
        event_line(
            run_id, "run", "end", status=run.status, version=version, chains=tally.chains, steps=tally.steps
        )
    )
    artifacts.publish(
        artifacts.RunReport(
            run_id=run_id,
            config_name=config.name,
            status=run.status,
            error=error,
            dataset_root=root,
            version=version,
            problems=tally.problems,
            rejected=len(rejections),
            tally=tally,
            stage_seconds=clock.seconds(),
            cached_stages=tuple(clock.cached_stages()),
        )
    )
    summary = RunSummary(
        run_id=run_id,
        domain=state.domain.name,
        dataset_root=root,
        version=version,
        status=run.status,
        error=error,
        problems=tally.problems,
        chains=tally.chains,
        steps=tally.steps,
        rejected=rejections,
        chain_accuracy=run.chain_accuracy,
        stage_seconds=clock.seconds(),
        rollout_tokens=run.rollout_tokens,
        tally=tally,
        cached_stages=clock.cached_stages(),
        engine=json.loads(run.engine),
        parent_run_id=sharded.parent_run_id if sharded else None,
        shard=str(sharded.shard) if sharded else None,
    )
    if error:  # the flow run is Failed in the UI (and for automations), the summary travels with it
        message = f"run {run_id} failed in stage {failed_stage}: {error}"
        return Failed(message=message, data=RunFailed(message, summary))
    return summary


def run_generation(
    config: RunConfig, shard: str | None = None, parent_run_id: str | None = None
) -> RunSummary:
    """Run the flow and return its summary, also when the run failed (its Prefect state is then Failed).

    Calling `generation_run` directly raises for a failed run; the CLI wants the summary either way to
    print it and exit non-zero. An exception the flow did not turn into a summary is raised here.
    """
    import_engine_in_background(config)
    state = generation_run(config, shard, parent_run_id, return_state=True)
    outcome = state.result(raise_on_failure=False)
    if isinstance(outcome, RunSummary):
        return outcome
    if isinstance(outcome, RunFailed):
        return outcome.summary
    if isinstance(outcome, BaseException):
        raise outcome
    raise TypeError(f"generation_run returned {type(outcome).__name__}, not a RunSummary")
