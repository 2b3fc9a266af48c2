"""The records the factory writes, one Delta table each, and their Arrow schemas.

Records are frozen dataclasses so the pure stages pass them around safely; `to_table` turns a list of
them into an Arrow table with the declared schema, so every writer and reader agrees on column types.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from prm_factory.schemas.step_labels import (
    CORE_SOURCES,
    StepLabel,
    decode_labels,
    encode_labels,
    first_error_column,
    label_arrow_fields,
    label_of,
    stored_sources,
)


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
    # what decided this row's labels (config + labeler identities); a changed labeler replaces the row in a
    # new dataset version, older versions keep theirs
    label_config_hash: str | None = None
    # chains labelled from elsewhere (`prm-factory label`): the input row's own id, to join labels back
    source_row_id: str | None = None
    # each label source's first error (its own rule: labels.source.LabelSource.first_error), stored as
    # `first_error_<source>`; a source that found none (or did not run on the chain) is absent
    first_errors: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One step of a chain with every source's label of it and the consensus over them."""

    step_id: str
    chain_id: str
    problem_id: str
    run_id: str
    step_index: int
    text: str
    char_start: int
    char_end: int
    consensus: str  # positive | negative | disputed | unlabeled (labels.consensus)
    labels_agree: bool | None  # every source that voted voted alike; None: at most one voted
    first_error: bool  # the chain's earliest `negative` step
    model: str
    label_config_hash: str
    # one label per source that labelled the step (schemas.step_labels: verdict, value, reason, evidence,
    # labeler), stored in that source's own columns
    labels: tuple[StepLabel, ...] = ()
    # the probability that the step is right given every source's label (labels.consensus, the model and
    # its calibration tables); the consensus follows from it. None: no vote, or a row written before it
    p_correct: float | None = None

    def label(self, source: str) -> StepLabel | None:
        """The label `source` gave this step, None when it did not label it."""
        return label_of(self.labels, source)


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


LABEL_MAPS = ("labels", "first_errors")
"""Record fields that hold one entry per label source and are stored one column group per source
(schemas.step_labels): a step's labels, a chain's first errors."""


def arrow_schema(record_type: type, sources: Sequence[str] = CORE_SOURCES) -> pa.Schema:
    """Arrow schema of a record dataclass; `X | None` fields are nullable, the rest are not. A record with
    per-source fields gets the columns of `sources` (every table has the core sources' columns)."""
    fields = []
    for f in dataclasses.fields(record_type):
        if f.name == "labels":
            fields.extend(label_arrow_fields(sources))
            continue
        if f.name == "first_errors":
            fields.extend(pa.field(first_error_column(s), pa.int64(), nullable=True) for s in sources)
            continue
        type_name = f.type if isinstance(f.type, str) else f.type.__name__
        fields.append(pa.field(f.name, ARROW_TYPES[type_name], nullable=type_name.endswith("| None")))
    return pa.schema(fields)


def record_sources(records: Sequence[Any]) -> list[str]:
    """The core sources, then every other source the records carry a label or first error of."""
    sources = list(CORE_SOURCES)
    for record in records:
        named = [label.source for label in getattr(record, "labels", ())]
        named.extend(getattr(record, "first_errors", {}))
        sources.extend(name for name in named if name not in sources)
    return sources


def to_table(record_type: type, records: Sequence[Any]) -> pa.Table:
    sources = record_sources(records)
    schema = arrow_schema(record_type, sources)
    names = [f.name for f in dataclasses.fields(record_type)]
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    for record in records:
        row: dict[str, Any] = {}
        for name in names:
            if name == "labels":
                row.update(encode_labels(record.labels, sources))
            elif name == "first_errors":
                row.update({first_error_column(s): record.first_errors.get(s) for s in sources})
            else:
                row[name] = getattr(record, name)
        for name in schema.names:
            columns[name].append(row[name])
    return pa.Table.from_pydict(columns, schema=schema)


def from_table(record_type: type, table: pa.Table) -> list[Any]:
    names = [f.name for f in dataclasses.fields(record_type) if f.name not in LABEL_MAPS]
    has_labels = any(f.name == "labels" for f in dataclasses.fields(record_type))
    has_first_errors = any(f.name == "first_errors" for f in dataclasses.fields(record_type))
    sources = stored_sources(table.column_names)
    first_errors = [c for c in table.column_names if c.startswith("first_error_")]
    records = []
    for row in table.to_pylist():
        extra: dict[str, Any] = {}
        if has_labels:
            extra["labels"] = decode_labels(row, sources)
        if has_first_errors:
            extra["first_errors"] = {
                c.removeprefix("first_error_"): row[c] for c in first_errors if row.get(c) is not None
            }
        records.append(record_type(**{n: row.get(n) for n in names}, **extra))
    return records


RECORD_TYPES: dict[str, type] = {
    "problems": Problem,
    "chains": Chain,
    "steps": Step,
    "rejections": Rejection,
    "runs": RunInfo,
}
