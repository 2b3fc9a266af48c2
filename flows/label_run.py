"""Label chains produced outside the factory (ProcessBench / PRM800K shape) and commit a dataset version.

Same records and provenance as a sampled run: the chain's model is "external", its steps are the given
steps, verdicts come from the math verifier, the final answer is graded against the row's reference answer
(`reference_answer`, `answer`, or a worked `solution`'s final line) exactly as sampled chains are, and the
config's other label sources label them as in a run (`[labels] sources`: the `reference` source aligns the
steps with a worked solution where the row has one; the judge, plug-ins). With `rollouts=True` every step
prefix is continued by the configured policy (the Math-Shepherd completer) with the run's rollout
strategy, costs and resume cache: the `mc` source.

The input is streamed (schemas.external_chains.iter_external_chains) `resume.chunk_chains` chains at a time
through the shared chunk loop (flows/chunk_loop.py): each chunk is labelled and staged, and the run commits
every staged chunk as one version at its end, so memory is bounded by a chunk, and a killed `label` started
again with the same input and config reuses the chunks it staged and labels only the rest.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, get_run_logger

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.chunk_loop import ChunkLoop, ChunkRecords
from prm_factory.flows.label_plan import (
    EXTERNAL_MODEL,
    LabelPlan,
    chain_chunks,
    plan_label,
    staged_problem_ids,
    to_sampled,
)
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.stages import EXTERNAL
from prm_factory.flows.stored_rows import committed_rows
from prm_factory.labels.assemble import SampledChain, chunk_records
from prm_factory.labels.registry import stage_source
from prm_factory.labels.sources.mc import MonteCarloSource
from prm_factory.labels.tally import RunTally
from prm_factory.rollouts import ChainValues
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.records import Chain, Problem, Rejection, Step
from prm_factory.schemas.reference_solutions import read_reference_solutions
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.verifiers.identity import labeler_identity

__all__ = ["EXTERNAL_MODEL", "LabelSummary", "label_external", "to_sampled"]


@dataclass
class LabelSummary:
    """What a `label` run committed: its totals (labels/tally.py) and rejected rows; `chains` and `steps`
    read the rows this run added back from the committed version (the run itself never holds them all; a
    rerun of an input already labelled alike adds none: the earlier run's rows stand)."""

    run_id: str
    dataset_root: str
    version: int
    tally: RunTally
    rejected: list[Rejection]
    reused_chunks: int = 0  # chunks an interrupted run had staged, committed without labelling them again

    @property
    def chains(self) -> list[Chain]:
        return committed_rows(self.dataset_root, self.version, self.run_id, "chains")

    @property
    def steps(self) -> list[Step]:
        return committed_rows(self.dataset_root, self.version, self.run_id, "steps")


def label_chunk(plan: LabelPlan, index: int, part: list[ExternalChain], seen: set[str]) -> ChunkRecords:
    """Label one chunk: its chains graded, each source's labels, MC values with --rollouts, the records."""
    values: list[ChainValues] = []
    if plan.policy is None:
        sampled = [to_sampled(c, c.file or plan.path, c.line, plan.verifier) for c in part]
    else:
        sampler = plan.policy.sampler()
        sampled = [
            to_sampled(
                c,
                c.file or plan.path,
                c.line,
                plan.verifier,
                sampler.render_chat(MATH_SYSTEM_PROMPT, math_user_prompt(c.problem)),
            )
            for c in part
        ]
        values = chunk_rollouts(plan, index, sampled)
    labels = plan.executor.label_sources([plan.registry["verifier"]], sampled, {}, plan.setup)
    if plan.policy is not None:
        mc = stage_source(plan.registry, "mc", MonteCarloSource)
        labels["mc"] = mc.labels_of(sampled, values, plan.setup)
    labels = plan.executor.label_sources(plan.others, sampled, labels, plan.setup)
    chains, steps = chunk_records(sampled, labels, plan.context, plan.registry)
    # each problem as first read; one an earlier chunk staged too is kept from there by the commit (its
    # merge keeps a key's first row), and its steps here still get its columns
    first: dict[str, Problem] = {}
    for chain in sampled:
        first.setdefault(chain.problem.problem_id, chain.problem)
    problems = list(first.values())
    tally = RunTally.of(chains, steps, values)
    tally.problems = sum(problem_id not in seen for problem_id in first)
    seen.update(first)
    return problems, chains, steps, tally


def chunk_rollouts(plan: LabelPlan, index: int, sampled: list[SampledChain]) -> list[ChainValues]:
    """Every step prefix of the chunk's chains continued by the policy; cached per chunk like a run's."""
    assert plan.policy is not None
    settings = plan.policy.settings
    key = EXTERNAL.run_keys(
        {
            "external_chains": [c.chain_id for c in sampled],
            "outcomes": [c.outcome.label for c in sampled],
            "engine": {"model": settings.model_id, "weights": plan.policy.weights, "seed": settings.seed},
            "rollouts": plan.config.rollouts.model_dump(mode="json"),
            "verifier": labeler_identity(plan.verifier),
        }
    )["rollouts"]
    stage = plan.executor.run(
        EXTERNAL["rollouts"], key, settings, sampled, plan.config, plan.verifier, plan.run_id
    )
    return stage.values


@flow(name="prm-label-external", log_prints=True)
def label_external(
    path: str, config: RunConfig, rollouts: bool = False, solutions: str | None = None
) -> LabelSummary:
    """Label the chains of `path`, a chunk at a time (module docstring); `solutions` (a GSM8K / MATH-style
    jsonl) fills in worked solutions by question text for chains that carry none, so the reference source
    can align them."""
    run_id = uuid.uuid4().hex[:16]
    started = utc_now()
    logger = get_run_logger()
    rejected: list[RejectedRow] = []
    table = None
    if solutions is not None:
        table, bad_rows = read_reference_solutions(solutions)
        rejected.extend(bad_rows)
    plan = plan_label(path, config, rollouts, run_id)
    loop = ChunkLoop(plan.root, resume=config.resume.enabled)
    seen: set[str] = set()
    try:
        for index, part in enumerate(chain_chunks(path, config.resume.chunk_chains, table, rejected)):
            key = plan.chunk_key(part)
            if loop.is_done(key):
                loop.reuse(key)
                seen.update(staged_problem_ids(plan.root, key))
            else:
                problems, chains, steps, tally = label_chunk(plan, index, part, seen)
                loop.stage(key, problems, chains, steps, tally)
            logger.info(
                "label: chunk %d staged (%d chains, %d steps so far)",
                index,
                loop.tally.chains,
                loop.tally.steps,
            )
    finally:
        close = getattr(plan.verifier, "close", None)
        if callable(close):
            close()
    if loop.reused:
        logger.info("label: %d chunks reused from an interrupted run", loop.reused)
    rejections = [Rejection(run_id, r.file, r.line, r.field, r.reason) for r in rejected]
    for r in rejections:
        logger.warning("rejected %s:%d %s: %s", r.file, r.line, r.field, r.reason)
    policy = plan.policy
    run = run_record(
        run_id=run_id,
        started_at=started,
        config=config,
        output=RunOutput(rejections=rejections, tally=loop.tally),
        model=policy.settings.model_id if policy else EXTERNAL_MODEL,
        weights_hash=policy.weights if policy else "",
        verifiers={
            i["name"]: f"{i['version']}+{i['code']}" for k, i in plan.labelers.items() if k != "policy"
        },
        config_json=json.dumps(
            {
                "label_input": str(Path(path).resolve()),
                "rollouts": rollouts,
                "reference_solutions": str(Path(solutions).resolve()) if solutions else None,
                **json.loads(config.to_json()),
            }
        ),
    )
    version = loop.commit(run, rejections)
    return LabelSummary(run_id, plan.root, version, loop.tally, rejections, loop.reused)
