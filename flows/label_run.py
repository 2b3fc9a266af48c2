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

import hashlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq
from prefect import flow, get_run_logger

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.chunk_loop import ChunkLoop, ChunkRecords
from prm_factory.flows.domains import math_verifier
from prm_factory.flows.engines import engine_settings
from prm_factory.flows.resume import stage_key
from prm_factory.flows.run_record import RunOutput, run_record, utc_now
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.stages import EXTERNAL, GENERATION
from prm_factory.flows.stored_rows import committed_rows
from prm_factory.flows.tasks import start_engine_task
from prm_factory.labels.assemble import (
    RecordContext,
    SampledChain,
    chunk_records,
    external_problem,
    join_steps,
)
from prm_factory.labels.consensus import weighing
from prm_factory.labels.registry import ALWAYS, Registry, configured, run_sources
from prm_factory.labels.source import LabelSource, SourceSetup, source_identity
from prm_factory.labels.sources.mc import from_values
from prm_factory.labels.tally import RunTally
from prm_factory.rollouts import ChainValues
from prm_factory.sampling.backends import get_sampler
from prm_factory.sampling.model_prep import weights_hash
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
from prm_factory.sampling.protocol import Generation, Sampler
from prm_factory.sampling.vllm_sampler import EngineSettings
from prm_factory.schemas.external_chains import ExternalChain, iter_external_chains
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Rejection, Step
from prm_factory.schemas.reference_solutions import (
    ReferenceSolution,
    attach_reference_solutions,
    read_reference_solutions,
)
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.storage.staging import chunk_dir
from prm_factory.verifiers.identity import labeler_identity
from prm_factory.verifiers.math import MathVerifier
from prm_factory.verifiers.protocol import Verdict

EXTERNAL_MODEL = "external"


@dataclass
class LabelSummary:
    """What a `label` run committed: its totals (labels/tally.py) and rejected rows; `chains` and `steps`
    read the run's rows back from the committed version (the run itself never holds them all)."""

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


def chain_chunks(
    path: str, size: int, solutions: dict[str, ReferenceSolution] | None, rejected: list[RejectedRow]
) -> Iterator[list[ExternalChain]]:
    """The input's chains `size` at a time, in file order, worked solutions attached; rejected rows are
    appended to `rejected` as the stream passes them."""
    part: list[ExternalChain] = []
    for row in iter_external_chains(path):
        if isinstance(row, RejectedRow):
            rejected.append(row)
            continue
        part.append(row)
        if len(part) == size:
            yield attach_reference_solutions(part, solutions) if solutions else part
            part = []
    if part:
        yield attach_reference_solutions(part, solutions) if solutions else part


def chains_digest(part: list[ExternalChain]) -> str:
    """A content hash of a chunk's chains as read (text, labels, file and line: all end in its rows)."""
    payload = json.dumps([asdict(chain) for chain in part], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class LabelPlan:
    """What every chunk of one `label` run shares: its sources, their identities, the record context."""

    run_id: str
    root: str
    path: str
    config: RunConfig
    verifier: MathVerifier
    setup: SourceSetup
    registry: Registry
    others: list[LabelSource]
    labelers: dict[str, dict[str, str]]
    context: RecordContext
    executor: ChunkExecutor
    policy: Policy | None  # the MC completer, with --rollouts

    def chunk_key(self, part: list[ExternalChain]) -> str:
        """The chunk's rows are decided by its chains and the run's labelers (their configs and versions)."""
        return stage_key(
            "label-rows",
            {
                "chains": chains_digest(part),
                "labels": self.context.label_config_hash,
                "rollouts": self.config.rollouts.model_dump(mode="json") if self.policy else None,
            },
            code=LABEL_ROWS_CODE,
        )


LABEL_ROWS_CODE = (
    *GENERATION["rows"].code,
    "prm_factory.flows.label_run",
    "prm_factory.schemas.external_chains",
)
"""The code that decides a label chunk's rows beyond its labelers (whose versions are in the key already)."""


@dataclass
class Policy:
    """The MC completer of `label --rollouts`: started at the first chunk that needs it."""

    settings: EngineSettings
    weights: str

    def sampler(self) -> Sampler:
        start_engine_task(self.settings)
        return get_sampler(self.settings)


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
        by_chain = {v.chain_id: v for v in values}
        model = plan.policy.settings.model_id
        labels["mc"] = [from_values(by_chain.get(c.chain_id), len(c.steps), model) for c in sampled]
    labels = plan.executor.label_sources(plan.others, sampled, labels, plan.setup)
    chains, steps = chunk_records(sampled, labels, plan.context, plan.registry)
    problems = list({c.problem.problem_id: c.problem for c in sampled}.values())
    tally = RunTally.of(chains, steps, values)
    tally.problems = sum(p.problem_id not in seen for p in problems)
    seen.update(p.problem_id for p in problems)
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


def plan_label(path: str, config: RunConfig, rollouts: bool, run_id: str) -> LabelPlan:
    """The run's sources and their identities, decided once before the first chunk."""
    root = str(config.dataset_root())
    verifier = math_verifier(config)
    chosen = run_sources(config.labels.sources, config.judge.enabled)
    engine_wanted = rollouts or any("engine" in s.needs for s in chosen if s.name not in ALWAYS)
    settings = engine_settings(config) if engine_wanted else None
    policy = None
    if rollouts:
        assert settings is not None
        policy = Policy(settings, weights_hash(Path(settings.checkpoint)))
    setup = SourceSetup(config, "math", verifier, settings, run_id, pipeline="label", rollouts=rollouts)
    others = [s for s in chosen if s.name not in ALWAYS and s.applies(setup)]
    registry = configured(config.labels.sources)
    labelers = {"verifier": source_identity(registry["verifier"], setup)}  # as run and relabel key it
    if policy is not None:
        labelers["policy"] = {"name": policy.settings.model_id, "version": policy.weights, "code": ""}
    labelers.update({source.name: source_identity(source, setup) for source in others})
    weighs = weighing(config)
    labelers["consensus"] = weighs.identity()  # the tables the consensus read: recorded with the run
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
    executor = ChunkExecutor(root, "math", resume=config.resume.enabled, config=config)
    return LabelPlan(
        run_id, root, path, config, verifier, setup, registry, others, labelers, context, executor, policy
    )


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


def staged_problem_ids(root: str, key: str) -> list[str]:
    """The problem ids of a staged chunk (a reused chunk's problems still count once across the run)."""
    file = chunk_dir(root, key) / "problems.parquet"
    return pq.read_table(file, columns=["problem_id"])["problem_id"].to_pylist() if file.is_file() else []
