"""Label chains produced outside the factory (ProcessBench / PRM800K shape) and commit a dataset version.

Same records and provenance as a sampled run: the chain's model is "external", its steps are the given
steps, verdicts come from the math verifier, the final answer is graded against the row's reference answer
(`reference_answer`, `answer`, or a worked `solution`'s final line) exactly as sampled chains are, and the
config's other label sources label them as in a run (`[labels] sources`: the `reference` source aligns the
steps with a worked solution where the row has one; the judge, plug-ins). With `rollouts=True` every step
prefix is continued by the configured policy (the Math-Shepherd completer) with the run's rollout
strategy, costs and resume cache: the `mc` source.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import math_verifier
from prm_factory.flows.engines import engine_settings
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.stages import EXTERNAL
from prm_factory.flows.tasks import start_engine_task, write_task
from prm_factory.labels.assemble import (
    RecordContext,
    SampledChain,
    chunk_records,
    external_problem,
    join_steps,
)
from prm_factory.labels.consensus import weighing
from prm_factory.labels.registry import ALWAYS, configured, run_sources
from prm_factory.labels.source import SourceSetup, source_identity
from prm_factory.labels.sources.mc import from_values
from prm_factory.rollouts import ChainValues
from prm_factory.sampling.backends import get_sampler
from prm_factory.sampling.model_prep import weights_hash
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
from prm_factory.sampling.protocol import Generation
from prm_factory.schemas.external_chains import ExternalChain, read_external_chains
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Rejection, Step
from prm_factory.schemas.reference_solutions import attach_reference_solutions, read_reference_solutions
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.verifiers.identity import labeler_identity
from prm_factory.verifiers.math import MathVerifier
from prm_factory.verifiers.protocol import Verdict

EXTERNAL_MODEL = "external"


@dataclass
class LabelSummary:
    run_id: str
    dataset_root: str
    version: int
    chains: list[Chain]
    steps: list[Step]
    rejected: list[Rejection]


def to_sampled(
    chain: ExternalChain, file: str, line: int, verifier: MathVerifier, prompt: str = ""
) -> SampledChain:
    problem: Problem = external_problem(
        f"external:{chain.source_format}",
        chain.problem,
        chain.reference_answer,
        file,
        line,
        reference_solution=chain.reference_solution,
    )
    text, spans = join_steps(chain.steps)
    if problem.reference_answer:
        graded = chain.final_answer if chain.final_answer is not None else text
        outcome = verifier.grade(problem, f"The answer is {graded}" if chain.final_answer else graded)
    else:
        outcome = Verdict("unparsed", "no reference answer to grade against")
    return SampledChain(
        chain_id=content_id("external-chain", chain.source_format, chain.id, problem.problem_id, text),
        problem=problem,
        prompt=prompt,
        sample_index=0,
        generation=Generation(text, 0, "external"),
        steps=spans,
        outcome=outcome,
        final_answer=chain.final_answer,
        source_row_id=chain.id,
        external=chain,
    )


@task(name="read-external-chains", cache_policy=NO_CACHE)
def read_task(path: str) -> tuple[list[ExternalChain], list[RejectedRow]]:
    return read_external_chains(path)


def _rollout_values(
    chains_in: list[ExternalChain],
    path: str,
    config: RunConfig,
    verifier: MathVerifier,
    run_id: str,
    root: str,
) -> tuple[list[SampledChain], list[ChainValues], str, str]:
    """Continue every step prefix with the policy; returns the chains (with the policy's prompt), their
    values, the policy model id and its weights hash. Cached like a sampled run's rollouts stage."""
    settings = engine_settings(config)
    weights = weights_hash(Path(settings.checkpoint))
    start_engine_task(settings)
    sampler = get_sampler(settings)
    sampled = [
        to_sampled(
            c,
            c.file or path,
            c.line,
            verifier,
            sampler.render_chat(MATH_SYSTEM_PROMPT, math_user_prompt(c.problem)),
        )
        for c in chains_in
    ]
    key = EXTERNAL.run_keys(
        {
            "external_chains": [c.chain_id for c in sampled],
            "outcomes": [c.outcome.label for c in sampled],
            "engine": {"model": settings.model_id, "weights": weights, "seed": settings.seed},
            "rollouts": config.rollouts.model_dump(mode="json"),
            "verifier": labeler_identity(verifier),
        }
    )["rollouts"]
    executor = ChunkExecutor(root, "math", resume=config.resume.enabled, config=config)
    stage = executor.run(EXTERNAL["rollouts"], key, settings, sampled, config, verifier, run_id)
    return sampled, stage.values, settings.model_id, weights


@flow(name="prm-label-external", log_prints=True)
def label_external(
    path: str, config: RunConfig, rollouts: bool = False, solutions: str | None = None
) -> LabelSummary:
    """Label the chains of `path`; `solutions` (a GSM8K / MATH-style jsonl) fills in worked solutions by
    question text for chains that carry none, so the reference source can align them."""
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    root = str(config.dataset_root())
    verifier = math_verifier(config)
    chains_in, rejected = read_task(path)
    if solutions is not None:
        table, bad_rows = read_reference_solutions(solutions)
        chains_in = attach_reference_solutions(chains_in, table)
        rejected = [*rejected, *bad_rows]
    logger = get_run_logger()
    rejections = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in rejected]
    for r in rejections:
        logger.warning("rejected %s:%d %s: %s", r.file, r.line, r.field, r.reason)
    values: list[ChainValues] = []
    policy, weights = EXTERNAL_MODEL, ""
    if rollouts and chains_in:
        sampled, values, policy, weights = _rollout_values(chains_in, path, config, verifier, run_id, root)
    else:
        sampled = [to_sampled(c, c.file or path, c.line, verifier) for c in chains_in]
    chosen = run_sources(config.labels.sources, config.judge.enabled)
    engine_wanted = rollouts or any("engine" in s.needs for s in chosen if s.name not in ALWAYS)
    setup = SourceSetup(
        config,
        "math",
        verifier,
        engine_settings(config) if engine_wanted and sampled else None,
        run_id,
        pipeline="label",
        rollouts=rollouts,
    )
    others = [s for s in chosen if s.name not in ALWAYS and s.applies(setup)]
    registry = configured(config.labels.sources)
    executor = ChunkExecutor(root, "math", resume=config.resume.enabled, config=config)
    labels = executor.label_sources([registry["verifier"]], sampled, {}, setup)
    if rollouts:
        by_chain = {v.chain_id: v for v in values}
        labels["mc"] = [from_values(by_chain.get(c.chain_id), len(c.steps), policy) for c in sampled]
    labelers = {"verifier": source_identity(registry["verifier"], setup)}  # as run and relabel key it
    if rollouts:
        labelers["policy"] = {"name": policy, "version": weights, "code": ""}
    labelers.update({source.name: source_identity(source, setup) for source in others})
    weighs = weighing(config)
    labelers["consensus"] = weighs.identity()  # the tables the consensus read: recorded with the run
    if sampled:
        labels = executor.label_sources(others, sampled, labels, setup)
    context = RecordContext(
        run_id=run_id,
        model_id=EXTERNAL_MODEL,
        sampling_json="{}",
        seed=0,
        verifier_name=verifier.name,
        verifier_version=verifier.version,
        label_config_hash=config.label_config_hash(labelers),
        weighing=weighs,
    )
    chains, steps = chunk_records(sampled, labels, context, registry)
    problems = list({c.problem.problem_id: c.problem for c in sampled}.values())
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput(problems, chains, steps, rejections, values),
        model=policy,
        weights_hash=weights,
        verifiers={i["name"]: f"{i['version']}+{i['code']}" for k, i in labelers.items() if k != "policy"},
        config_json=json.dumps(
            {
                "label_input": str(Path(path).resolve()),
                "rollouts": rollouts,
                "reference_solutions": str(Path(solutions).resolve()) if solutions else None,
                **json.loads(config.to_json()),
            }
        ),
    )
    version = write_task(root, run, problems, chains, steps, rejections)
    return LabelSummary(run_id, root, version, chains, steps, rejections)
