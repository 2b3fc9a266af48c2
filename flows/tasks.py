"""The Prefect tasks of a run, one per stage; each wraps a stage package's pure work (flows/ only wires).

Engine tasks carry the `prm-engine` tag and sandbox-using tasks `prm-sandbox` (added where a code run uses
them), so a Prefect server's tag concurrency limits keep two runs on one machine from overloading it
(flows/serve.py). Engine tasks retry; a failure drops the engine so the retry starts a fresh one. An engine
start that failed on the config or the checkpoint (a missing path, no weights, an unknown architecture) fails
at once: a retry would only repeat it. Their cache policy is set per call from the stage's content key
(flows/stages.py, flows/resume.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import Task, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.states import State

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import Domain
from prm_factory.flows.observe import StageEvents
from prm_factory.flows.selection import labeled_problem_ids, pick_fresh
from prm_factory.flows.shards import ShardRun
from prm_factory.labels.assemble import ChainIdentity, SampledChain, rollout_items, sampled_chain
from prm_factory.labels.source import ChainLabels, LabelSource, SourceSetup
from prm_factory.labels.sources.mc import chain_values
from prm_factory.labels.tally import RunTally
from prm_factory.rollouts import ChainValues
from prm_factory.sampling.backends import drop_sampler, get_sampler
from prm_factory.sampling.chains import DrawnChain, draw_chains
from prm_factory.sampling.model_prep import ModelPrepError
from prm_factory.sampling.protocol import GenerationParams, Sampler
from prm_factory.sampling.vllm_sampler import EngineSettings
from prm_factory.schemas.records import Chain, Problem, Rejection, RunInfo, Step
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.staging import stage_chunk
from prm_factory.verifiers.protocol import Verdict, Verifier

ENGINE_TAG = "prm-engine"
"""Tag on every task that drives the vLLM engine; a tag concurrency limit on it serialises engine work."""
SANDBOX_TAG = "prm-sandbox"
"""Tag on tasks that run code in the Docker sandbox (code runs only)."""


def _with_engine(settings: EngineSettings, work: Callable[[Sampler], Any]) -> Any:
    """Run `work` on the engine; a failure drops the engine so the task's retry starts a fresh one."""
    sampler = get_sampler(settings)
    try:
        return work(sampler)
    except Exception:
        drop_sampler(settings)
        raise


@task(name="load-problems", cache_policy=NO_CACHE)
def load_problems_task(
    config: RunConfig, domain: Domain, root: str, sharded: ShardRun | None = None
) -> tuple[list[Problem], list]:
    """The run's problems and rejected rows. A shard loads what the whole run would load (problems its own
    logical run labelled already still count as fresh, so every shard picks the same) and takes its chunks of
    them in the plan (flows/plan.py); only shard 0 records the rejected rows."""
    p = config.problems
    logger = get_run_logger()
    if p.skip_labeled:
        labeled = labeled_problem_ids(root, sharded.parent_run_id if sharded else None)
        candidates, rejected_all = domain.load(config, None)
        problems, rejected = pick_fresh(candidates, rejected_all, labeled, p.limit)
        logger.info(
            "skip_labeled: %d of %d candidate problems already labeled, picked %d fresh",
            sum(1 for c in candidates if c.problem_id in labeled),
            len(candidates),
            len(problems),
        )
    else:
        problems, rejected = domain.load(config, p.limit)
    if sharded is not None and not sharded.keeps_rejections():
        rejected = []
    logger.info("loaded %d %s problems, rejected %d rows", len(problems), domain.name, len(rejected))
    for row in rejected:
        logger.warning("rejected %s:%d field %s: %s", row.file, row.line, row.field, row.reason)
    return problems, rejected


PERMANENT_START_ERRORS: tuple[type[BaseException], ...] = (
    FileNotFoundError,  # the checkpoint folder or a file in it is missing
    NotADirectoryError,
    ModelPrepError,  # no config.json / no weight files / no embedded model
    ValueError,  # a config vLLM or transformers refuses (unknown architecture, bad engine argument)
    TypeError,
    ImportError,  # a backend not installed
)
"""Errors of an engine start that a retry would repeat: the same config and files give the same error."""


def retry_transient(task: Task, task_run: TaskRun, state: State) -> bool:
    """Prefect's `retry_condition_fn`: retry a failed engine start unless its error is a config or checkpoint
    error (PERMANENT_START_ERRORS); what is left (an engine process that died, a timeout, memory) may pass
    on a retry."""
    error = state.result(raise_on_failure=False)
    return not isinstance(error, PERMANENT_START_ERRORS)


@task(
    name="start-engine",
    retries=2,
    retry_delay_seconds=5,
    retry_condition_fn=retry_transient,
    cache_policy=NO_CACHE,
    tags=[ENGINE_TAG],
)
def start_engine_task(settings: EngineSettings) -> str:
    get_sampler(settings)
    return settings.model_id


@task(name="sample-chains", retries=2, retry_delay_seconds=[5, 20], cache_policy=NO_CACHE, tags=[ENGINE_TAG])
def sample_task(
    settings: EngineSettings, problems: list[Problem], params: GenerationParams, domain: Domain
) -> list[DrawnChain]:
    if not problems:  # nothing left to label (skip_labeled): no engine needed
        return []
    drawn = _with_engine(
        settings, lambda s: draw_chains(s, problems, params, domain.system_prompt, domain.user_prompt)
    )
    get_run_logger().info("sampled %d chains for %d problems", len(drawn), len(problems))
    return drawn


@task(name="segment-and-grade", retries=1, retry_delay_seconds=10, cache_policy=NO_CACHE)
def segment_task(
    drawn: list[DrawnChain], domain: Domain, verifier: Verifier, identity: ChainIdentity
) -> list[SampledChain]:
    return [
        sampled_chain(
            chain,
            identity,
            domain.segment(chain.generation.text),
            verifier.grade(chain.problem, chain.generation.text),
        )
        for chain in drawn
    ]


@task(name="verify-steps", retries=1, retry_delay_seconds=10, cache_policy=NO_CACHE)
def verify_task(sampled: list[SampledChain], verifier: Verifier) -> list[list[Verdict]]:
    return [verifier.check_steps(c.problem, [s.text for s in c.steps]) for c in sampled]


@task(name="rollouts", retries=2, retry_delay_seconds=[5, 20], cache_policy=NO_CACHE, tags=[ENGINE_TAG])
def rollouts_task(
    settings: EngineSettings,
    sampled: list[SampledChain],
    config: RunConfig,
    verifier: Verifier,
    run_id: str = "",
    progress_offset: int = 0,
    progress_total: int | None = None,
) -> RolloutStage:
    """Rollouts of `sampled` (one chunk of the run); progress counts chains across all chunks (the total
    is an estimate until the last chunk: chains without steps draw no rollouts)."""
    if not rollout_items(sampled):
        return RolloutStage([], None)
    setup = SourceSetup(config, config.problems.domain, verifier, settings, run_id)
    logger = get_run_logger()

    events = StageEvents(run_id, logger)

    def progress(done: int, total: int) -> None:
        events.advanced("rollouts", progress_offset + done, progress_total or total)

    def work(sampler: Sampler) -> RolloutStage:
        before = _cache_totals(sampler)
        values = chain_values(sampled, setup, sampler, progress=progress)
        after = _cache_totals(sampler)
        counters = None
        if before is not None and after is not None and after[0] > before[0]:
            counters = (after[0] - before[0], after[1] - before[1])
            logger.info("rollouts: prefix cache hit rate %.3f", counters[1] / counters[0])
        return RolloutStage(values, counters)

    return _with_engine(settings, work)


@dataclass(frozen=True)
class RolloutStage:
    values: list[ChainValues]
    prefix_cache: tuple[int, int] | None  # (queried, hit) prompt tokens; None: backend has no counters


def _cache_totals(sampler: Sampler) -> tuple[int, int] | None:
    totals = getattr(sampler, "prefix_cache_totals", None)
    if totals is None:
        return None
    try:
        return totals()
    except (OSError, RuntimeError, ValueError) as err:  # counters are provenance, not worth failing a run
        get_run_logger().warning("prefix cache counters unreadable: %s", err)
        return None


TALLY_NOTE = "tally.json"


@task(name="stage-rows", retries=1, retry_delay_seconds=[2], cache_policy=NO_CACHE)
def stage_task(
    root: str,
    directory: str,
    problems: list[Problem],
    chains: list[Chain],
    steps: list[Step],
    tally: RunTally,
) -> None:
    """Write one chunk's rows to the staging area, with its totals beside them (for a reuse)."""
    tables = Dataset(root).chunk_tables(problems, chains, steps)
    stage_chunk(Path(directory), tables, {TALLY_NOTE: tally.to_json()})


@task(name="write-dataset", retries=3, retry_delay_seconds=[2, 5, 15], cache_policy=NO_CACHE)
def write_task(
    root: str,
    run: RunInfo,
    problems: list[Problem],
    chains: list[Chain],
    steps: list[Step],
    rejections: list[Rejection],
) -> int:
    """Commit records held in memory (labelled external chains, relabels) as one dataset version."""
    return Dataset(root).commit_run(run, problems, chains, steps, rejections)


@task(name="commit-staged", retries=3, retry_delay_seconds=[2, 5, 15], cache_policy=NO_CACHE)
def commit_staged_task(
    root: str, run: RunInfo, staged: list[str], rejections: list[Rejection], replaces: bool = False
) -> int:
    """Commit a streaming run's staged chunks (none for a failed run) as one dataset version (`replaces`:
    a relabel, written by one rewrite of each table; storage.dataset.Dataset.commit_staged)."""
    return Dataset(root).commit_staged(run, [Path(d) for d in staged], rejections, replaces)


@task(name="label-source", retries=1, retry_delay_seconds=[10], cache_policy=NO_CACHE)
def label_task(
    source: LabelSource,
    sampled: list[SampledChain],
    prior: dict[str, list[ChainLabels | None]],
    setup: SourceSetup,
) -> list[ChainLabels | None]:
    """One label source's batch call over a chunk's chains (labels.source.LabelSource.label)."""
    from prm_factory.labels.registry import call_source

    labels = call_source(source, sampled, prior, setup)  # a plug-in's failure: one LabelSourceFailed line
    labelled = sum(chain_labels is not None for chain_labels in labels)
    get_run_logger().info("%s: labelled %d of %d chains", source.name, labelled, len(sampled))
    return labels
