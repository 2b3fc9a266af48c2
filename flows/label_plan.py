"""What every chunk of one `label` run shares, decided before its first chunk (flows/label_run.py): the
input read as a stream of chunks, each chain as the sources read it, the run's sources and their identities,
and each chunk's content key (the key its rows are staged and resumed by, flows/chunk_loop.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.domains import math_verifier
from prm_factory.flows.engines import engine_settings
from prm_factory.flows.resume import stage_key
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.stages import GENERATION
from prm_factory.flows.tasks import start_engine_task
from prm_factory.labels.assemble import RecordContext, SampledChain, external_problem, join_steps
from prm_factory.labels.consensus import weighing
from prm_factory.labels.registry import ALWAYS, Registry, configured, run_sources
from prm_factory.labels.source import LabelSource, SourceSetup, source_identity
from prm_factory.sampling.backends import get_sampler
from prm_factory.sampling.model_prep import weights_hash
from prm_factory.sampling.protocol import Generation, Sampler
from prm_factory.sampling.vllm_sampler import EngineSettings
from prm_factory.schemas.external_chains import ExternalChain, iter_external_chains
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem
from prm_factory.schemas.reference_solutions import ReferenceSolution, attach_reference_solutions
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.storage.staging import chunk_dir
from prm_factory.verifiers.math import MathVerifier
from prm_factory.verifiers.protocol import Verdict

EXTERNAL_MODEL = "external"


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


def staged_problem_ids(root: str, key: str) -> list[str]:
    """The problem ids of a staged chunk (a reused chunk's problems still count once across the run)."""
    file = chunk_dir(root, key) / "problems.parquet"
    return pq.read_table(file, columns=["problem_id"])["problem_id"].to_pylist() if file.is_file() else []
