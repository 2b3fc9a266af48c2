"""The math run as a Prefect flow: one task per stage, domain logic in the stage packages.

load → sample → segment+grade → verify steps → rollouts → write. The engine task retries (a crashed
engine is dropped and restarted); a failing run still records itself, with the error, in the runs table.
"""

from __future__ import annotations

import json
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from prm_factory.config import RunConfig
from prm_factory.provenance import git_commit, package_versions
from rollouts import ChainValues, RolloutItem, estimate_values, make_strategy
from sampling.chains import DrawnChain, draw_chains
from sampling.model_prep import resolve_model, weights_hash
from sampling.protocol import GenerationParams
from sampling.segment import segment
from sampling.vllm_sampler import EngineSettings, VLLMSampler, drop_sampler, get_sampler
from schemas.assemble import SampledChain, build_records, chain_id_for
from schemas.gsm8k import LoadedProblems, load_gsm8k
from schemas.records import Chain, Problem, Rejection, RunInfo, Step
from storage.dataset import Dataset
from verifiers.math import MathVerifier, MathVerifierConfig


@dataclass
class RunSummary:
    run_id: str
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
    step_rows: list[Step] = field(default_factory=list)
    chain_rows: list[Chain] = field(default_factory=list)


def engine_settings(config: RunConfig) -> EngineSettings:
    checkpoint, model_id = resolve_model(config.model.path)
    m = config.model
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=m.seed,
        max_model_len=m.max_model_len,
        dtype=m.dtype,
        enforce_eager=m.enforce_eager,
        enable_prefix_caching=m.enable_prefix_caching,
        cpu_kv_cache_gib=m.cpu_kv_cache_gib,
        gpu_memory_utilization=m.gpu_memory_utilization,
    )


def _with_engine(settings: EngineSettings, work: Callable[[VLLMSampler], object]) -> object:
    """Run `work` on the engine; a failure drops the engine so the task's retry starts a fresh one."""
    sampler = get_sampler(settings)
    try:
        return work(sampler)
    except Exception:
        drop_sampler(settings)
        raise


@task(name="load-problems", cache_policy=NO_CACHE)
def load_problems_task(config: RunConfig) -> LoadedProblems:
    loaded = load_gsm8k(config.problems.path, offset=config.problems.offset, limit=config.problems.limit)
    logger = get_run_logger()
    logger.info("loaded %d problems, rejected %d rows", len(loaded.problems), len(loaded.rejected))
    for row in loaded.rejected:
        logger.warning("rejected %s:%d field %s: %s", row.file, row.line, row.field, row.reason)
    return loaded


@task(name="start-engine", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE)
def start_engine_task(settings: EngineSettings) -> str:
    get_sampler(settings)
    return settings.model_id


@task(name="sample-chains", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE)
def sample_task(
    settings: EngineSettings, problems: list[Problem], params: GenerationParams
) -> list[DrawnChain]:
    drawn = _with_engine(settings, lambda sampler: draw_chains(sampler, problems, params))
    get_run_logger().info("sampled %d chains for %d problems", len(drawn), len(problems))
    return drawn  # type: ignore[return-value]


@task(name="segment-and-grade", cache_policy=NO_CACHE)
def segment_task(
    drawn: list[DrawnChain], config: RunConfig, verifier: MathVerifier, ids: dict[str, object]
) -> list[SampledChain]:
    sampled = []
    for chain in drawn:
        outcome = verifier.grade(chain.problem, chain.generation.text)
        sampled.append(
            SampledChain(
                chain_id=chain_id_for(
                    chain.problem.problem_id,
                    str(ids["model"]),
                    str(ids["weights"]),
                    str(ids["sampling"]),
                    int(ids["seed"]),
                    chain.sample_index,
                ),
                problem=chain.problem,
                prompt=chain.prompt,
                sample_index=chain.sample_index,
                generation=chain.generation,
                steps=tuple(segment(chain.generation.text, config.segmentation.mode)),
                outcome=outcome,
                final_answer=outcome.evidence.get("answer"),
            )
        )
    return sampled


@task(name="verify-steps", cache_policy=NO_CACHE)
def verify_task(sampled: list[SampledChain], verifier: MathVerifier) -> list[list]:
    return [verifier.check_steps(c.problem, [s.text for s in c.steps]) for c in sampled]


@task(name="rollouts", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE)
def rollouts_task(
    settings: EngineSettings, sampled: list[SampledChain], config: RunConfig, verifier: MathVerifier
) -> list[ChainValues]:
    r = config.rollouts
    items = [
        RolloutItem(
            chain_id=c.chain_id,
            problem=c.problem,
            prompt=c.prompt,
            chain_text=c.generation.text,
            step_ends=tuple(s.end for s in c.steps),
            outcome_correct=None if c.outcome.label == "unparsed" else c.outcome.label == "correct",
        )
        for c in sampled
        if c.steps
    ]
    params = GenerationParams(n=r.k, temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_tokens)
    strategy = make_strategy(r.strategy, rollouts_per_probe=r.k, max_steps=r.max_steps)
    logger = get_run_logger()

    def progress(done: int, total: int) -> None:
        logger.info("rollouts: %d/%d prefixes done", done, total)

    return _with_engine(  # type: ignore[return-value]
        settings,
        lambda sampler: estimate_values(items, strategy, sampler, verifier.grade, params, progress=progress),
    )


@task(name="write-dataset", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
def write_task(
    root: str,
    run: RunInfo,
    problems: list[Problem],
    chains: list[Chain],
    steps: list[Step],
    rejections: list[Rejection],
) -> int:
    return Dataset(root).commit_run(run, problems, chains, steps, rejections)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@flow(name="prm-math-run", log_prints=True)
def math_run(config: RunConfig) -> RunSummary:
    """One generation run on math problems; writes one new dataset version."""
    run_id = uuid.uuid4().hex[:16]
    started = _now()
    root = str(config.dataset_root())
    seconds: dict[str, float] = {}
    verifier = MathVerifier(
        MathVerifierConfig(
            timeout_s=config.verifier.timeout_seconds,
            last_number_fallback=config.verifier.last_number_fallback,
        )
    )
    state: dict = {"problems": [], "rejections": [], "chains": [], "steps": [], "model": "", "weights": ""}

    def timed(stage: str, fn: Callable[[], object]) -> object:
        t0 = time.perf_counter()
        result = fn()
        seconds[stage] = round(time.perf_counter() - t0, 2)
        print(f"stage {stage}: {seconds[stage]:.1f}s")
        return result

    error = ""
    try:
        loaded: LoadedProblems = timed("load", lambda: load_problems_task(config))  # type: ignore[assignment]
        state["problems"] = loaded.problems
        state["rejections"] = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in loaded.rejected]
        settings = engine_settings(config)
        state["model"], state["weights"] = settings.model_id, weights_hash(Path(settings.checkpoint))
        timed("engine_start", lambda: start_engine_task(settings))
        s = config.sampling
        params = GenerationParams(n=s.n, temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens)
        sampling_json = json.dumps(params.to_dict(), sort_keys=True)
        drawn = timed("sample", lambda: sample_task(settings, loaded.problems, params))
        ids = {
            "model": settings.model_id,
            "weights": state["weights"],
            "sampling": sampling_json,
            "seed": settings.seed,
        }
        sampled: list[SampledChain] = timed(  # type: ignore[assignment]
            "segment_grade", lambda: segment_task(drawn, config, verifier, ids)
        )
        verdicts: list[list] = timed("verify", lambda: verify_task(sampled, verifier))  # type: ignore[assignment]
        values: list[ChainValues] = timed(  # type: ignore[assignment]
            "rollouts", lambda: rollouts_task(settings, sampled, config, verifier)
        )
        by_chain = {v.chain_id: v for v in values}
        for chain, chain_verdicts in zip(sampled, verdicts, strict=True):
            record, step_rows = build_records(
                chain,
                chain_verdicts,
                by_chain.get(chain.chain_id),
                run_id=run_id,
                model_id=settings.model_id,
                sampling_json=sampling_json,
                seed=settings.seed,
                verifier_name=verifier.name,
                verifier_version=verifier.version,
                label_config_hash=config.label_config_hash(),
            )
            state["chains"].append(record)
            state["steps"].extend(step_rows)
    except Exception as err:  # recorded in the runs table, then re-raised
        error = f"{type(err).__name__}: {err}"
        get_run_logger().error("run failed: %s\n%s", error, traceback.format_exc())

    chains: list[Chain] = state["chains"]
    steps: list[Step] = state["steps"]
    accuracy = sum(c.outcome == "correct" for c in chains) / len(chains) if chains else 0.0
    rollout_tokens = sum(s.rollout_tokens for s in steps)
    run = RunInfo(
        run_id=run_id,
        started_at=started,
        ended_at=_now(),
        status="failed" if error else "succeeded",
        error=error,
        config=config.to_json(),
        config_hash=config.config_hash(),
        git_commit=git_commit(),
        package_versions=json.dumps(package_versions(), sort_keys=True),
        model=state["model"],
        model_weights_hash=state["weights"],
        verifier_versions=json.dumps({verifier.name: verifier.version}),
        counts=json.dumps(
            {
                "problems": len(state["problems"]),
                "chains": len(chains),
                "steps": len(steps),
                "rejected": len(state["rejections"]),
            }
        ),
        stage_seconds=json.dumps(seconds),
        n_problems=len(state["problems"]),
        n_chains=len(chains),
        n_steps=len(steps),
        n_rejected=len(state["rejections"]),
        chain_accuracy=accuracy,
        rollout_tokens=rollout_tokens,
    )
    if error:  # keep whatever finished stages produced out of the tables: a failed run adds only its record
        state["problems"], chains, steps = [], [], []
    version = timed(
        "write", lambda: write_task(root, run, state["problems"], chains, steps, state["rejections"])
    )
    summary = RunSummary(
        run_id=run_id,
        dataset_root=root,
        version=version,
        status=run.status,
        error=error,  # type: ignore[arg-type]
        problems=len(state["problems"]),
        chains=len(chains),
        steps=len(steps),
        rejected=state["rejections"],
        chain_accuracy=accuracy,
        stage_seconds=seconds,
        rollout_tokens=rollout_tokens,
        step_rows=steps,
        chain_rows=chains,
    )
    return summary
