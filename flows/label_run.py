"""Label chains produced outside the factory (ProcessBench / PRM800K shape) and commit a dataset version.

Same records and provenance as a sampled run: the chain's model is "external", its steps are the given
steps, verdicts come from the math verifier, and the final answer is graded when a reference is known.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.domains import math_verifier
from flows.generation_run import write_task
from flows.run_record import RunOutput, run_record, utc_now
from prm_factory.config import RunConfig
from sampling.protocol import Generation
from schemas.assemble import SampledChain, build_records, external_problem, join_steps
from schemas.external_chains import ExternalChain, read_external_chains
from schemas.ids import content_id
from schemas.records import Chain, Problem, Rejection, Step
from schemas.rejected import RejectedRow
from verifiers.math import MathVerifier
from verifiers.protocol import Verdict

EXTERNAL_MODEL = "external"


@dataclass
class LabelSummary:
    run_id: str
    dataset_root: str
    version: int
    chains: list[Chain]
    steps: list[Step]
    rejected: list[Rejection]


def to_sampled(chain: ExternalChain, file: str, line: int, verifier: MathVerifier) -> SampledChain:
    problem: Problem = external_problem(
        f"external:{chain.source_format}", chain.problem, chain.reference_answer, file, line
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
        prompt="",
        sample_index=0,
        generation=Generation(text, 0, "external"),
        steps=spans,
        outcome=outcome,
        final_answer=chain.final_answer,
    )


@task(name="read-external-chains", cache_policy=NO_CACHE)
def read_task(path: str) -> tuple[list[ExternalChain], list[RejectedRow]]:
    return read_external_chains(path)


@task(name="verify-external-steps", cache_policy=NO_CACHE)
def verify_task(sampled: list[SampledChain], verifier: MathVerifier) -> list[list[Verdict]]:
    return [verifier.check_steps(c.problem, [s.text for s in c.steps]) for c in sampled]


@flow(name="prm-label-external", log_prints=True)
def label_external(path: str, config: RunConfig) -> LabelSummary:
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    verifier = math_verifier(config)
    chains_in, rejected = read_task(path)
    logger = get_run_logger()
    rejections = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in rejected]
    for r in rejections:
        logger.warning("rejected %s:%d %s: %s", r.file, r.line, r.field, r.reason)
    sampled = [to_sampled(c, path, c.line, verifier) for c in chains_in]
    verdicts = verify_task(sampled, verifier)
    chains: list[Chain] = []
    steps: list[Step] = []
    label_hash = config.label_config_hash()
    for chain, chain_verdicts in zip(sampled, verdicts, strict=True):
        record, rows = build_records(
            chain,
            chain_verdicts,
            None,
            run_id=run_id,
            model_id=EXTERNAL_MODEL,
            sampling_json="{}",
            seed=0,
            verifier_name=verifier.name,
            verifier_version=verifier.version,
            label_config_hash=label_hash,
        )
        chains.append(record)
        steps.extend(rows)
    problems = list({c.problem.problem_id: c.problem for c in sampled}.values())
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput(problems, chains, steps, rejections),
        model=EXTERNAL_MODEL,
        verifiers={verifier.name: verifier.version},
        config_json=json.dumps({"label_input": str(Path(path).resolve()), **json.loads(config.to_json())}),
    )
    root = str(config.dataset_root())
    version = write_task(root, run, problems, chains, steps, rejections)
    return LabelSummary(run_id, root, version, chains, steps, rejections)
