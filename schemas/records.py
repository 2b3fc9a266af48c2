"""The records the factory writes, one Delta table each, and their Arrow schemas.

Records are frozen dataclasses so the pure stages pass them around safely; `to_table` turns a list of
them into an Arrow table with the declared schema, so every writer and reader agrees on column types.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class Problem:
    problem_id: str
    source: str  # dataset name, e.g. "gsm8k"
    domain: str  # "math" | "code"
    text: str
    reference_answer: str | None = None  # math: final answer as written by the source
    reference_solution: str | None = None  # gold solution text where the source has one
    tests: str | None = None  # code: JSON test spec
    source_file: str | None = None
    source_line: int | None = None


@dataclass(frozen=True)
class Chain:
    chain_id: str
    problem_id: str
    run_id: str
    model: str
    sampling: str  # JSON of the sampling parameters
    seed: int
    sample_index: int
    prompt: str
    text: str
    n_tokens: int
    finish_reason: str
    final_answer: str | None
    outcome: str  # correct | incorrect | unparsed
    outcome_reason: str
    outcome_evidence: str  # JSON: extracted answer span (math), per-test results (code)
    n_steps: int
    first_error_verifier: int | None  # first step the verifier calls incorrect
    first_error_mc: int | None  # first step no rollout could rescue
    # what decided this row's labels (config + labeler identities); a changed labeler replaces the row in a
    # new dataset version, older versions keep theirs
    label_config_hash: str | None = None
    first_error_reference: int | None = None  # first step the reference alignment calls incorrect
    first_error_judge: int | None = None  # earliest wrong step a generative judge named (-1: none)
    # chains labelled from elsewhere (`prm-factory label`): the input row's own id, to join labels back
    source_row_id: str | None = None


@dataclass(frozen=True)
class Step:
    step_id: str
    chain_id: str
    problem_id: str
    run_id: str
    step_index: int
    text: str
    char_start: int
    char_end: int
    verdict: str  # correct | incorrect | unverifiable
    verdict_reason: str
    verdict_evidence: str  # JSON
    verifier: str
    verifier_version: str
    mc_value: float | None  # fraction of rollouts from this prefix that end correct
    n_rollouts: int
    n_rollouts_correct: int
    hard_label: bool | None  # any rollout reached the reference (Math-Shepherd HE)
    soft_label: float | None  # = mc_value (Math-Shepherd SE)
    value_source: str  # "rollouts" | "outcome" (last step: the chain's own outcome) | "none"
    consensus: str  # positive | negative | disputed | unlabeled
    labels_agree: bool | None
    first_error: bool
    rollout_tokens: int
    rollout_seconds: float
    model: str
    label_config_hash: str
    # rollouts from this prefix the grader could judge; mc_value = n_rollouts_correct / n_rollouts_judged
    n_rollouts_judged: int = 0
    verifier_code: str = ""  # digest of the verifier's source (verifiers.identity): the label's provenance
    # the `reference` source: alignment with a worked reference solution (labels.reference); None when the
    # source did not run, `unverifiable` when it could not say
    reference_verdict: str | None = None
    reference_reason: str | None = None
    reference_evidence: str | None = None  # JSON
    reference_labeler: str | None = None  # name@version+code digest
    # the `judge` source: a generative critic naming the earliest wrong step (labels.judge); None: not run
    judge_verdict: str | None = None
    judge_reason: str | None = None
    judge_labeler: str | None = None  # judge model @ prompt hash


@dataclass(frozen=True)
class Rejection:
    """An input row the run refused, with where it was and why."""

    run_id: str
    file: str
    line: int
    field: str
    reason: str


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    started_at: str
    ended_at: str
    status: str  # succeeded | failed
    error: str
    config: str  # full config, JSON
    config_hash: str
    git_commit: str
    package_versions: str  # JSON
    model: str
    model_weights_hash: str
    verifier_versions: str  # JSON
    counts: str  # JSON
    stage_seconds: str  # JSON
    n_problems: int
    n_chains: int
    n_steps: int
    n_rejected: int
    chain_accuracy: float
    rollout_tokens: int
    rollouts_drawn: int = 0  # rollouts the engine generated (a prefix shared by chains is drawn once)
    rollout_seconds: float = 0.0  # engine seconds spent on rollouts
    prefix_cache_hit_rate: float | None = None  # share of rollout prompt tokens served from the prefix cache
    engine: str = "{}"  # JSON: host-dependent engine settings (dtype, thread binding), each with its reason
    # A sharded run (flows/shards.py): the logical run it is part of, and which shard; None when unsharded.
    # Added after the first release: older runs tables get the columns by schema evolution (null there).
    parent_run_id: str | None = None
    shard_index: int | None = None
    shard_count: int | None = None
    # What the run promises about drawing the same tokens again (sampling/reproducibility.py):
    # batch-invariant | fixed-batch | none; the reason and the numerics it needs are in `engine`. Null in runs
    # written before the column (schema evolution).
    reproducibility: str | None = None


ARROW_TYPES: dict[Any, pa.DataType] = {
    str: pa.string(),
    "str": pa.string(),
    "str | None": pa.string(),
    "int": pa.int64(),
    "int | None": pa.int64(),
    "float": pa.float64(),
    "float | None": pa.float64(),
    "bool": pa.bool_(),
    "bool | None": pa.bool_(),
}


def arrow_schema(record_type: type) -> pa.Schema:
    """Arrow schema of a record dataclass; `X | None` fields are nullable, the rest are not."""
    fields = []
    for f in dataclasses.fields(record_type):
        type_name = f.type if isinstance(f.type, str) else f.type.__name__
        fields.append(pa.field(f.name, ARROW_TYPES[type_name], nullable=type_name.endswith("| None")))
    return pa.schema(fields)


def to_table(record_type: type, records: Sequence[Any]) -> pa.Table:
    schema = arrow_schema(record_type)
    columns = {name: [getattr(r, name) for r in records] for name in schema.names}
    return pa.Table.from_pydict(columns, schema=schema)


def from_table(record_type: type, table: pa.Table) -> list[Any]:
    names = [f.name for f in dataclasses.fields(record_type)]
    return [record_type(**{n: row.get(n) for n in names}) for row in table.to_pylist()]


RECORD_TYPES: dict[str, type] = {
    "problems": Problem,
    "chains": Chain,
    "steps": Step,
    "rejections": Rejection,
    "runs": RunInfo,
}
