"""A generation run as a Prefect flow: one task per stage, domain logic in the stage packages.

load → start engine → per chunk of `resume.chunk_problems` problems: sample → segment+grade → verify steps
→ rollouts → (judge) → records staged as Parquet (storage/staging.py) → commit all staged chunks as one
dataset version. Memory is bounded by a chunk: the flow keeps running totals (labels/tally.py) and the
staged chunks' paths, never the run's chains or steps, and readers see the run only once it commits.
Math and code runs differ only in their `Domain` (flows/domains.py). The engine tasks retry (a crashed
engine is dropped and restarted); a failing run still records itself, with the error, in the runs table.

Resume: sample, segment+grade, verify and rollouts are cached per chunk under `<dataset root>/_cache` by
content keys (flows/resume.py), and a chunk whose rows were staged is reused whole, so the same config
started again after a crash skips the chunks and stages that finished and commits the same rows.
Engine tasks carry the `prm-engine` tag and sandbox-using tasks `prm-sandbox`, so a Prefect server's tag
concurrency limits keep two runs on one machine from overloading it (flows/serve.py). Every stage logs
greppable `prm-run ... event=...` lines (flows/observe.py) and the run publishes a markdown artifact with
label counts, cost and dataset version (flows/artifacts.py).
"""

from __future__ import annotations

import json
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import State, flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from config.run_config import RunConfig
from flows import artifacts
from flows.domains import Domain, domain_for, reference_identity
from flows.observe import StageEvents, event_line
from flows.resume import (
    StageKeys,
    chunk_key,
    chunks,
    is_cached,
    problems_fingerprint,
    stage_key,
    with_stage_cache,
)
from flows.run_record import RunOutput, run_record, utc_now
from flows.selection import labeled_problem_ids, pick_fresh
from flows.shards import ShardRun, select_shard
from flows.stage_clock import StageClock
from labels.assemble import (
    ChainIdentity,
    RecordContext,
    SampledChain,
    chunk_records,
    rollout_items,
    sampled_chain,
)
from labels.judge import Judge, JudgeResult, needs_judge, prompt_hash
from labels.tally import RunTally
from rollouts import ChainValues, estimate_values, make_strategy
from sampling.backends import drop_sampler, get_sampler
from sampling.chains import DrawnChain, draw_chains
from sampling.model_prep import resolve_model, weights_hash
from sampling.protocol import GenerationParams, Sampler
from sampling.vllm_sampler import EngineSettings, engine_choice, engine_record
from schemas.records import Chain, Problem, Rejection, RunInfo, Step
from storage.dataset import Dataset
from storage.staging import chunk_dir, drop_staged, is_staged, read_note, stage_chunk
from verifiers.identity import code_digest, identity_tag, labeler_identity
from verifiers.protocol import Verdict, Verifier


@dataclass
class RunSummary:
    run_id: str
    domain: str
    dataset_root: str
    version: int | None
    status: str
    error: str
    problems: int
    chains: int
    steps: int
    rejected: list[Rejection]
    chain_accuracy: float
    stage_seconds: dict[str, float]
    rollout_tokens: int
    tally: RunTally = field(default_factory=RunTally)  # totals over the committed rows (none when failed)
    cached_stages: list[str] = field(default_factory=list)
    engine: dict = field(default_factory=dict)  # the engine's host-dependent settings and why (runs.engine)
    parent_run_id: str | None = None  # a shard of a sharded run: its logical run and which shard (I/N)
    shard: str | None = None


class RunFailed(RuntimeError):
    """A run that failed and recorded itself; raised by a direct `generation_run` call, with its summary."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message, summary)  # both in args, so the exception pickles with Prefect results
        self.summary = summary

    def __str__(self) -> str:
        return str(self.args[0])


ENGINE_TAG = "prm-engine"
"""Tag on every task that drives the vLLM engine; a tag concurrency limit on it serialises engine work."""
SANDBOX_TAG = "prm-sandbox"
"""Tag on tasks that run code in the Docker sandbox (code runs only)."""


def engine_settings(config: RunConfig) -> EngineSettings:
    checkpoint, model_id = resolve_model(config.model.path)
    m = config.model
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=m.seed,
        max_model_len=m.max_model_len,
        dtype=m.dtype,
        cpu_threads=m.cpu_threads,
        enforce_eager=m.enforce_eager,
        tensor_parallel_size=m.tensor_parallel_size,
        pipeline_parallel_size=m.pipeline_parallel_size,
        data_parallel_size=m.data_parallel_size,
        quantization=m.quantization,
        max_num_seqs=m.max_num_seqs,
        max_num_batched_tokens=m.max_num_batched_tokens,
        engine_args=tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in m.engine_args.items())),
        enable_prefix_caching=m.enable_prefix_caching,
        cpu_kv_cache_gib=m.cpu_kv_cache_gib,
        gpu_memory_utilization=m.gpu_memory_utilization,
        backend=m.backend,
        base_urls=tuple(m.base_urls),
        served_model_name=m.served_model_name,
    )


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
    config: RunConfig, domain: Domain, sharded: ShardRun | None = None
) -> tuple[list[Problem], list]:
    """The run's problems and rejected rows; a shard keeps its hash slice of what the whole run would load
    (problems its own logical run labelled already still count as fresh, so every shard picks the same)."""
    p = config.problems
    logger = get_run_logger()
    if p.skip_labeled:
        labeled = labeled_problem_ids(config.dataset_root(), sharded.parent_run_id if sharded else None)
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
    if sharded is not None:
        whole = len(problems)
        problems = select_shard(problems, sharded.shard)
        rejected = rejected if sharded.keeps_rejections() else []
        logger.info(
            "shard %s of run %s: %d of %d problems",
            sharded.shard,
            sharded.parent_run_id,
            len(problems),
            whole,
        )
    logger.info("loaded %d %s problems, rejected %d rows", len(problems), domain.name, len(rejected))
    for row in rejected:
        logger.warning("rejected %s:%d field %s: %s", row.file, row.line, row.field, row.reason)
    return problems, rejected


@task(name="start-engine", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE, tags=[ENGINE_TAG])
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
    r = config.rollouts
    items = rollout_items(sampled)
    if not items:
        return RolloutStage([], None)
    params = GenerationParams(n=r.k, temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_tokens)
    strategy = make_strategy(r.strategy, rollouts_per_probe=r.k, max_steps=r.max_steps)
    logger = get_run_logger()

    events = StageEvents(run_id, logger)

    def progress(done: int, total: int) -> None:
        events.advanced("rollouts", progress_offset + done, progress_total or total)

    def work(sampler: Sampler) -> RolloutStage:
        before = _cache_totals(sampler)
        values = estimate_values(items, strategy, sampler, verifier.grade, params, progress=progress)
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
def commit_staged_task(root: str, run: RunInfo, staged: list[str], rejections: list[Rejection]) -> int:
    """Commit a streaming run's staged chunks (none for a failed run) as one dataset version."""
    return Dataset(root).commit_staged(run, [Path(d) for d in staged], rejections)


def run_labelers(
    verifier: Verifier, domain: Domain, config: RunConfig | None = None, judge_model: str = ""
) -> dict[str, dict[str, str]]:
    """Identities of the labelers a run uses (name, version, code digest): they key the labels and caches."""
    labelers = {"verifier": labeler_identity(verifier)}
    if domain.reference is not None:
        labelers["reference"] = reference_identity()
    if config is not None and config.judge.enabled:
        labelers["judge"] = {
            "name": judge_model,
            "version": prompt_hash(),
            "code": code_digest(("labels.judge",)),
        }
    return labelers


def labeler_versions(labelers: dict[str, dict[str, str]]) -> dict[str, str]:
    """The runs table's `verifier_versions`: each labeler's name -> version+code digest."""
    return {ident["name"]: f"{ident['version']}+{ident['code']}" for ident in labelers.values()}


def judge_settings(config: RunConfig, settings: EngineSettings) -> EngineSettings:
    """Where the judge runs: the run's own engine, or the OpenAI-compatible servers of `[judge]`."""
    j = config.judge
    if not j.base_urls:
        return settings
    checkpoint, model_id = (
        resolve_model(j.model_path) if j.model_path else (settings.checkpoint, settings.model_id)
    )
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=settings.seed,
        backend="openai",
        base_urls=tuple(j.base_urls),
        served_model_name=j.served_model_name,
    )


@task(name="judge", retries=1, retry_delay_seconds=[10], cache_policy=NO_CACHE)
def judge_task(
    settings: EngineSettings,
    config: RunConfig,
    sampled: list[SampledChain],
    verdicts: list[list[Verdict]],
    references: list[list[Verdict] | None],
    values: dict[str, ChainValues],
) -> dict[str, JudgeResult]:
    """The `judge` source for the chains the budget picks (`judge.budget`), in one engine call."""
    picked = []
    for chain, chain_verdicts, reference in zip(sampled, verdicts, references, strict=True):
        if not chain.steps:
            continue
        chain_values = values.get(chain.chain_id)
        hard = [None] * len(chain.steps)
        for value in chain_values.steps if chain_values else ():
            hard[value.step_index] = value.hard_label
        if config.judge.budget == "all" or needs_judge(
            [v.label for v in chain_verdicts], [v.label for v in reference] if reference else None, hard
        ):
            picked.append(chain)
    logger = get_run_logger()
    logger.info("judge: %d of %d chains picked (budget %s)", len(picked), len(sampled), config.judge.budget)
    if not picked:
        return {}
    params = GenerationParams(n=1, temperature=0.0, top_p=1.0, max_tokens=config.judge.max_tokens)

    def work(sampler: Sampler) -> dict[str, JudgeResult]:
        judge = Judge(sampler, settings.model_id, params)
        results = judge.judge_many([(c.problem.text, [s.text for s in c.steps]) for c in picked])
        return {c.chain_id: r for c, r in zip(picked, results, strict=True)}

    return _with_engine(settings, work)


def _stage_keys(
    config: RunConfig,
    problems: list[Problem],
    settings: EngineSettings,
    weights: str,
    labelers: dict[str, dict[str, str]],
) -> StageKeys:
    """Content keys of the cached stages (flows/resume.py); resource settings (KV cache size) stay out."""
    m = config.model
    return StageKeys.build(
        problems=problems_fingerprint(problems),
        engine={
            "model": settings.model_id,
            "weights": weights,
            "seed": m.seed,
            "dtype": engine_choice(settings).dtype,  # what `auto` became on this host
            "max_model_len": m.max_model_len,
        },
        sampling=config.sampling.model_dump(mode="json"),
        segmentation=config.segmentation.model_dump(mode="json"),
        verifier={
            **labelers["verifier"],  # name, version and code digest: a verifier fix invalidates the cache
            "config": config.verifier.model_dump(mode="json"),
            "sandbox": config.sandbox.model_dump(mode="json") if config.problems.domain == "code" else None,
        },
        rollouts=config.rollouts.model_dump(mode="json"),
        domain=config.problems.domain,
    )


@dataclass(frozen=True)
class RunPlan:
    """What every chunk of one run shares: engine, parameters, labelers, content keys, the chunks."""

    settings: EngineSettings
    judging: EngineSettings
    params: GenerationParams
    identity: ChainIdentity
    context: RecordContext
    labelers: dict[str, dict[str, str]]
    keys: StageKeys
    parts: list[list[Problem]]


@dataclass(frozen=True)
class ChunkKeys:
    """Content keys of one chunk's cached stages and of its staged rows."""

    sample: str
    segment: str
    verify: str
    rollouts: str
    staged: str


CHUNK_STAGES = ("sample", "segment_grade", "verify", "rollouts")


def plan_run(
    config: RunConfig, domain: Domain, verifier: Verifier, problems: list[Problem], run_id: str
) -> RunPlan:
    """Resolve the model and build what the chunks share (the `model` stage of a run)."""
    settings = engine_settings(config)
    weights = weights_hash(Path(settings.checkpoint))
    judging = judge_settings(config, settings)
    labelers = run_labelers(verifier, domain, config, judging.model_id)
    s = config.sampling
    params = GenerationParams(n=s.n, temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens)
    sampling_json = json.dumps(params.to_dict(), sort_keys=True)
    context = RecordContext(
        run_id=run_id,
        model_id=settings.model_id,
        sampling_json=sampling_json,
        seed=settings.seed,
        verifier_name=verifier.name,
        verifier_version=verifier.version,
        label_config_hash=config.label_config_hash(labelers),
        verifier_code=labelers["verifier"]["code"],
        reference_labeler=identity_tag(labelers["reference"]) if "reference" in labelers else None,
    )
    return RunPlan(
        settings=settings,
        judging=judging,
        params=params,
        identity=ChainIdentity(settings.model_id, weights, sampling_json, settings.seed),
        context=context,
        labelers=labelers,
        keys=_stage_keys(config, problems, settings, weights, labelers),
        parts=chunks(problems, config.resume.chunk_problems),
    )


def chunk_keys(plan: RunPlan, config: RunConfig, index: int, part: list[Problem]) -> ChunkKeys:
    """The chunk's stage keys; its staged rows are keyed by content only when resume is on (else per run)."""
    keys = plan.keys
    rollouts = chunk_key(keys.rollouts, index, part)
    verify = chunk_key(keys.verify, index, part)
    if config.resume.enabled:
        staged = stage_key(
            "rows",
            {
                "from": [rollouts, verify],
                "labels": plan.context.label_config_hash,
                "judge": [config.judge.model_dump(mode="json"), plan.judging.model_id],
            },
            code=("labels", "storage.staging", "storage.dataset", "schemas.records"),
        )
    else:
        staged = f"{plan.context.run_id}-c{index:04d}"
    return ChunkKeys(
        sample=chunk_key(keys.sample, index, part),
        segment=chunk_key(keys.segment, index, part),
        verify=verify,
        rollouts=rollouts,
        staged=staged,
    )


def needs_engine(root: str, config: RunConfig, plan: RunPlan) -> bool:
    """Whether any chunk still has engine work: a resumed run whose chunks are staged or whose engine
    stages are cached, or a run with no (fresh) problems left, never starts the engine, the most
    expensive minute of a small run."""
    if not config.resume.enabled:
        return bool(plan.parts)
    for index, part in enumerate(plan.parts):
        keys = chunk_keys(plan, config, index, part)
        if is_staged(chunk_dir(root, keys.staged)):
            continue
        if not (is_cached(root, keys.sample) and is_cached(root, keys.rollouts)):
            return True
    return False


@dataclass
class RunProgress:
    """What a streaming run keeps across chunks: totals, staged chunk paths, prefix cache counters."""

    tally: RunTally = field(default_factory=RunTally)
    staged: list[str] = field(default_factory=list)
    rollout_chains: int = 0  # chains whose rollouts are done, for the rollouts progress bar
    cache_queried: int = 0
    cache_hit: int = 0
    has_cache_counters: bool = False

    def add_rollouts(self, stage: RolloutStage, chains: int) -> None:
        self.rollout_chains += chains
        if stage.prefix_cache is not None:
            self.has_cache_counters = True
            self.cache_queried += stage.prefix_cache[0]
            self.cache_hit += stage.prefix_cache[1]

    def hit_rate(self) -> float | None:
        """Prefix cache hit rate over every chunk that has counters."""
        return self.cache_hit / self.cache_queried if self.has_cache_counters and self.cache_queried else None


@dataclass(frozen=True)
class ChunkRun:
    """Everything one chunk's stages need (the run's plan, its config, where to report)."""

    config: RunConfig
    domain: Domain
    verifier: Verifier
    plan: RunPlan
    root: str
    clock: StageClock
    progress: RunProgress
    total_problems: int


def label_chunk(run: ChunkRun, index: int, part: list[Problem]) -> None:
    """One chunk from problems to staged rows; only its totals and staged path outlive this call."""
    keys = chunk_keys(run.plan, run.config, index, part)
    directory = chunk_dir(run.root, keys.staged)
    stages = [*CHUNK_STAGES, *(("judge",) if run.config.judge.enabled else ()), "stage_rows"]
    if run.config.resume.enabled and is_staged(directory):
        run.clock.reuse(stages)
        run.progress.tally.merge(RunTally.from_json(read_note(directory, TALLY_NOTE)))
        run.progress.staged.append(str(directory))
        run.clock.advanced("sample", index + 1, len(run.plan.parts))
        return
    sampled, verdicts = sample_and_verify(run, index, part, keys)
    values = chunk_rollouts(run, sampled, keys)
    references = chain_references(run.domain, sampled)
    judged: dict[str, JudgeResult] = {}
    if run.config.judge.enabled:
        plan = run.plan
        judged = run.clock.run(
            "judge", lambda: judge_task(plan.judging, run.config, sampled, verdicts, references, values)
        )
    chains, steps = chunk_records(sampled, verdicts, values, references, judged, run.plan.context)
    tally = RunTally.of(chains, steps, values.values())
    tally.problems = len(part)
    run.clock.run("stage_rows", lambda: stage_task(run.root, str(directory), part, chains, steps, tally))
    run.progress.tally.merge(tally)
    run.progress.staged.append(str(directory))


def _resumable(run: ChunkRun, task_: Any, key: str) -> Any:
    return with_stage_cache(task_, run.root, key if run.config.resume.enabled else None)


def _sandbox_tags(run: ChunkRun) -> list[str]:
    return [SANDBOX_TAG] if run.domain.name == "code" else []


def sample_and_verify(
    run: ChunkRun, index: int, part: list[Problem], keys: ChunkKeys
) -> tuple[list[SampledChain], list[list[Verdict]]]:
    """Sample the chunk's chains, segment and grade them, and verify their steps."""
    from flows.scaleout import verify_in_chunks

    plan, clock = run.plan, run.clock
    sample = _resumable(run, sample_task, keys.sample)
    drawn = clock.run("sample", lambda: sample(plan.settings, part, plan.params, run.domain), [keys.sample])
    clock.advanced("sample", index + 1, len(plan.parts))
    segment = _resumable(run, segment_task, keys.segment).with_options(tags=_sandbox_tags(run))
    sampled = clock.run(
        "segment_grade", lambda: segment(drawn, run.domain, run.verifier, plan.identity), [keys.segment]
    )
    if run.config.runner.task_runner != "threads":
        verdicts = clock.run("verify", lambda: verify_in_chunks(sampled, run.config, run.root, keys.verify))
    else:
        verify = _resumable(run, verify_task, keys.verify).with_options(tags=_sandbox_tags(run))
        verdicts = clock.run("verify", lambda: verify(sampled, run.verifier), [keys.verify])
    return sampled, verdicts


def chunk_rollouts(run: ChunkRun, sampled: list[SampledChain], keys: ChunkKeys) -> dict[str, ChainValues]:
    """Monte Carlo values of the chunk's chains, by chain id."""
    task_ = _resumable(run, rollouts_task, keys.rollouts).with_options(tags=[ENGINE_TAG, *_sandbox_tags(run)])
    progress = run.progress
    done = progress.rollout_chains
    with_steps = sum(1 for c in sampled if c.steps)
    expected = max(done + with_steps, run.total_problems * run.config.sampling.n)
    stage: RolloutStage = run.clock.run(
        "rollouts",
        lambda: task_(
            run.plan.settings, sampled, run.config, run.verifier, run.plan.context.run_id, done, expected
        ),
        [keys.rollouts],
    )
    progress.add_rollouts(stage, with_steps)
    return {v.chain_id: v for v in stage.values}


def chain_references(domain: Domain, sampled: list[SampledChain]) -> list[list[Verdict] | None]:
    """The `reference` source's verdicts per chain, where the domain has one."""
    if domain.reference is None:
        return [None] * len(sampled)
    return [domain.reference(c.problem, [s.text for s in c.steps], c.outcome.label) for c in sampled]


@flow(name="prm-generation-run", log_prints=True)
def generation_run(
    config: RunConfig, shard: str | None = None, parent_run_id: str | None = None
) -> RunSummary | State[RunSummary]:
    """One generation run (math or code, by `problems.source`); writes one new dataset version.

    `shard` ("I/N") makes it shard I of a logical run of N over a hash slice of the problems
    (flows/shards.py), recorded with `parent_run_id` (derived from the config and N when not given).
    Returns the summary; a failed run returns a Failed state carrying it (see `run_generation`).
    """
    sharded = ShardRun.of(config, shard, parent_run_id)
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    domain = domain_for(config)
    root = str(config.dataset_root())
    logger = get_run_logger()
    events = StageEvents(run_id, logger)
    clock = StageClock(events, root, check_cache=config.resume.enabled)
    progress = RunProgress()
    where = {"shard": str(sharded.shard), "parent": sharded.parent_run_id} if sharded else {}
    logger.info(
        event_line(run_id, "run", "begin", config=config.name, domain=domain.name, dataset=root, **where)
    )

    error = failed_stage = ""
    verifier: Verifier | None = None
    plan: RunPlan | None = None
    rejections: list[Rejection] = []
    try:
        verifier = domain.make_verifier()
        problems, rejected = clock.once("load", lambda: load_problems_task(config, domain, sharded))
        rejections = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in rejected]
        clock.current = "model"
        plan = plan_run(config, domain, verifier, problems, run_id)
        if needs_engine(root, config, plan):
            clock.once("engine_start", lambda: start_engine_task(plan.settings))
        chunk_run = ChunkRun(config, domain, verifier, plan, root, clock, progress, len(problems))
        for index, part in enumerate(plan.parts):
            label_chunk(chunk_run, index, part)
        clock.finish()
    except Exception as err:  # recorded in the runs table below; the CLI exits non-zero
        error, failed_stage = f"{type(err).__name__}: {err}", clock.current
        events.failed(failed_stage, error)
        logger.error("run failed in stage %s: %s\n%s", failed_stage, error, traceback.format_exc())
        clock.finish(*[stage for stage in clock.seconds() if stage != failed_stage])
    finally:
        close = getattr(verifier, "close", None)
        if callable(close):
            close()
    return finish_run(
        config, domain, run_id, started, clock, progress, plan, verifier, rejections, error, sharded
    )


def finish_run(
    config: RunConfig,
    domain: Domain,
    run_id: str,
    started: str,
    clock: StageClock,
    progress: RunProgress,
    plan: RunPlan | None,
    verifier: Verifier | None,
    rejections: list[Rejection],
    error: str,
    sharded: ShardRun | None = None,
) -> RunSummary | State[RunSummary]:
    """Commit the staged chunks (or, for a failed run, only its record), publish the report, summarise."""
    root = str(config.dataset_root())
    failed_stage = clock.current
    tally, staged = progress.tally, progress.staged
    if error:  # a failed run adds only its own record (and the rows it rejected), never partial labels
        if not config.resume.enabled:  # nothing will reuse them
            drop_staged([Path(d) for d in staged])
        tally, staged = RunTally(), []
    labelers = plan.labelers if plan else (run_labelers(verifier, domain) if verifier else {})
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput(rejections=rejections, tally=tally),
        model=plan.settings.model_id if plan else "",
        weights_hash=plan.identity.weights_hash if plan else "",
        verifiers=labeler_versions(labelers),
        error=error,
        stage_seconds=clock.seconds(),
        prefix_cache_hit_rate=progress.hit_rate(),
        engine=engine_record(plan.settings) if plan else None,
        shard=sharded.record() if sharded else None,
    )
    version = clock.once("write", lambda: commit_staged_task(root, run, staged, rejections))
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
        domain=domain.name,
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
    state = generation_run(config, shard, parent_run_id, return_state=True)
    outcome = state.result(raise_on_failure=False)
    if isinstance(outcome, RunSummary):
        return outcome
    if isinstance(outcome, RunFailed):
        return outcome.summary
    if isinstance(outcome, BaseException):
        raise outcome
    raise TypeError(f"generation_run returned {type(outcome).__name__}, not a RunSummary")
