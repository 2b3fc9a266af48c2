"""One source's label of one step (`StepLabel`), and where a source's labels live on the step row.

Every label source writes the same shape: a verdict (`correct` / `incorrect` / `unverifiable`), an optional
value in [0, 1] (an MC value, a PRM's score), a reason, evidence (JSON), the labeler that wrote it
(name@version+code digest) and, where the source names one, the kind of reading behind it (the verifier's
claim class), by which its vote may be weighed. A step record holds its labels as one tuple
(`records.Step.labels`), whatever sources ran.

Stored, each source's labels take their own columns of the steps table, so a query or an aggregate over
millions of steps reads one column per field it names, as it did before sources became plug-ins (a map or
list column made a label-count aggregate about 6x slower in DuckDB, see docs/labels.md). A source named
`NAME` is stored in `NAME_verdict`, `NAME_value`, `NAME_reason`, `NAME_evidence`, `NAME_labeler` and
`NAME_kind` (`reference` and `judge` already were); a new source's columns join the table by schema
evolution the first time it writes. The two sources older than the plug-ins keep the columns every dataset
has: the verifier's label is `verdict`, `verdict_reason`, `verdict_evidence` and its labeler the three
columns `verifier`, `verifier_version`, `verifier_code`; the MC label is `hard_label` (its verdict as a
boolean), `mc_value` (= `soft_label`), and its evidence the rollout columns (`n_rollouts`, ...). So a
dataset written before this module reads as it was. The long view `step_labels` (storage/views.py) shows
every source's labels as rows (step, source, verdict, value, reason, evidence, labeler, kind).

>>> label = StepLabel("reference", "incorrect", None, "quantity off the reference", '{"q": 5}', "ref@1+ab")
>>> columns_of("reference").encode(label)["reference_verdict"]
'incorrect'
>>> columns_of("verifier").decode({"verdict": "correct", "verdict_reason": "2 + 2 = 4 holds",
...     "verdict_evidence": "{}", "verifier": "math-sympy", "verifier_version": "2.5.0",
...     "verifier_code": "3fa2", "verdict_kind": None}).labeler
'math-sympy@2.5.0+3fa2'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

VERDICTS: tuple[str, ...] = ("correct", "incorrect", "unverifiable")
"""A step label's verdict: `unverifiable` is no vote (a check that could not run is never `incorrect`)."""

LABEL_FIELDS: tuple[str, ...] = ("verdict", "value", "reason", "evidence", "labeler", "kind")


@dataclass(frozen=True)
class StepLabel:
    """One source's label of one step; see the module docstring."""

    source: str
    verdict: str  # correct | incorrect | unverifiable
    value: float | None = None  # a score in [0, 1] where the source gives one (MC value, a PRM's P(right))
    reason: str = ""
    evidence: str = "{}"  # JSON
    labeler: str = ""  # name@version+code digest (the judge: model@prompt hash)
    kind: str | None = None  # the reading behind the verdict, where the source names one

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.source}: unknown verdict {self.verdict!r}; expected one of {VERDICTS}")
        if self.value is not None and not 0.0 <= self.value <= 1.0:
            raise ValueError(f"{self.source}: value {self.value} outside [0, 1]")


def label_of(labels: Iterable[StepLabel], source: str) -> StepLabel | None:
    """The label `source` gave, or None when it did not label this step."""
    return next((label for label in labels if label.source == source), None)


@dataclass(frozen=True)
class LabelColumns:
    """The step-table columns one source's labels are stored in (None: that field is not stored)."""

    source: str
    verdict: str
    value: str | None
    reason: str | None
    evidence: str | None
    labeler: str | None
    kind: str | None

    def arrow_fields(self) -> list[pa.Field]:
        """Columns in table order; a generic source's are all nullable (it may not run on a step)."""
        fields = [pa.field(self.verdict, pa.string(), nullable=True)]
        if self.value is not None:
            fields.append(pa.field(self.value, pa.float64(), nullable=True))
        for name in (self.reason, self.evidence, self.labeler, self.kind):
            if name is not None:
                fields.append(pa.field(name, pa.string(), nullable=True))
        return fields

    def encode(self, label: StepLabel | None) -> dict[str, Any]:
        """Column values of one step's label (None: the source did not label the step: all null)."""
        values: dict[str, Any] = {self.verdict: label.verdict if label else None}
        pairs = (
            (self.value, "value"),
            (self.reason, "reason"),
            (self.evidence, "evidence"),
            (self.labeler, "labeler"),
            (self.kind, "kind"),
        )
        for column, name in pairs:
            if column is not None:
                values[column] = getattr(label, name) if label else None
        return values

    def decode(self, row: Mapping[str, Any]) -> StepLabel | None:
        """The label stored in a row; None where the source did not label it (or its columns are absent)."""
        verdict = row.get(self.verdict)
        if verdict is None:
            return None
        return StepLabel(
            self.source,
            verdict,
            row.get(self.value) if self.value else None,
            (row.get(self.reason) if self.reason else None) or "",
            (row.get(self.evidence) if self.evidence else None) or "{}",
            (row.get(self.labeler) if self.labeler else None) or "",
            row.get(self.kind) if self.kind else None,
        )

    def sql(self) -> dict[str, str]:
        """SQL of each label field over a `steps` row, for the long view (NULL where not stored)."""
        types = {"value": "DOUBLE"}
        return {
            name: (column if column else f"CAST(NULL AS {types.get(name, 'VARCHAR')})")
            for name, column in zip(
                LABEL_FIELDS,
                (self.verdict, self.value, self.reason, self.evidence, self.labeler, self.kind),
                strict=True,
            )
        }


def generic_columns(source: str) -> LabelColumns:
    """`NAME_verdict`, `NAME_value`, ... for a source named NAME."""
    return LabelColumns(source, *(f"{source}_{name}" for name in LABEL_FIELDS))


class VerifierColumns(LabelColumns):
    """The verifier's label in the columns every dataset has: `verdict`, `verdict_reason`,
    `verdict_evidence`, the labeler split into `verifier`, `verifier_version`, `verifier_code`; its reading
    kind in `verdict_kind`. The verdict is not nullable in tables written before the plug-ins, so a step the
    verifier did not label is stored `unverifiable` with an empty labeler."""

    PARTS = ("verifier", "verifier_version", "verifier_code")

    def __init__(self) -> None:
        super().__init__(
            "verifier", "verdict", None, "verdict_reason", "verdict_evidence", None, "verdict_kind"
        )

    def arrow_fields(self) -> list[pa.Field]:
        text = ("verdict", "verdict_reason", "verdict_evidence", *self.PARTS)
        return [
            *(pa.field(name, pa.string(), nullable=False) for name in text),
            pa.field("verdict_kind", pa.string(), nullable=True),
        ]

    def encode(self, label: StepLabel | None) -> dict[str, Any]:
        label = label or StepLabel("verifier", "unverifiable", reason="not checked")
        name, version, code = split_labeler(label.labeler)
        return {
            "verdict": label.verdict,
            "verdict_reason": label.reason,
            "verdict_evidence": label.evidence,
            "verifier": name,
            "verifier_version": version,
            "verifier_code": code,
            "verdict_kind": label.kind,
        }

    def decode(self, row: Mapping[str, Any]) -> StepLabel | None:
        if row.get("verdict") is None:
            return None
        parts = [row.get(name) or "" for name in self.PARTS]
        return StepLabel(
            "verifier",
            row["verdict"],
            None,
            row.get("verdict_reason") or "",
            row.get("verdict_evidence") or "{}",
            join_labeler(*parts) if parts[0] else "",
            row.get("verdict_kind"),
        )

    def sql(self) -> dict[str, str]:
        return {
            **super().sql(),
            "labeler": "CASE WHEN verifier <> '' THEN verifier || '@' || verifier_version || '+' || "
            "verifier_code END",
        }


MC_EVIDENCE: dict[str, tuple[str, pa.DataType, Any]] = {
    # evidence key: (column, type, value when MC did not label the step)
    "value_source": ("value_source", pa.string(), "none"),
    "n_rollouts": ("n_rollouts", pa.int64(), 0),
    "n_correct": ("n_rollouts_correct", pa.int64(), 0),
    "n_judged": ("n_rollouts_judged", pa.int64(), 0),
    "tokens": ("rollout_tokens", pa.int64(), 0),
    "seconds": ("rollout_seconds", pa.float64(), 0.0),
}
"""The MC label's evidence, stored one typed column per key (cost queries sum them)."""


class McColumns(LabelColumns):
    """The MC label in the columns every dataset has: its verdict as `hard_label` (True: some rollout from
    the prefix reached the answer, Math-Shepherd's hard estimate; None: unknown), its value as `mc_value`
    and `soft_label` (the same number, Math-Shepherd's soft estimate), its evidence as the rollout columns
    (`MC_EVIDENCE`). Its reason and labeler are not stored: the reason is re-read from the counts, the
    labeler is the policy model (the step's `model`)."""

    def __init__(self) -> None:
        super().__init__("mc", "hard_label", "mc_value", None, None, None, None)

    def arrow_fields(self) -> list[pa.Field]:
        return [
            pa.field("hard_label", pa.bool_(), nullable=True),
            pa.field("mc_value", pa.float64(), nullable=True),
            pa.field("soft_label", pa.float64(), nullable=True),
            *(pa.field(column, kind, nullable=False) for column, kind, _ in MC_EVIDENCE.values()),
        ]

    def encode(self, label: StepLabel | None) -> dict[str, Any]:
        evidence = json.loads(label.evidence) if label else {}
        values: dict[str, Any] = {
            "hard_label": None
            if label is None or label.verdict == "unverifiable"
            else label.verdict == "correct",
            "mc_value": label.value if label else None,
            "soft_label": label.value if label else None,
        }
        for key, (column, _, absent) in MC_EVIDENCE.items():
            values[column] = evidence.get(key, absent)
        return values

    def decode(self, row: Mapping[str, Any]) -> StepLabel | None:
        if "hard_label" not in row:
            return None
        evidence = {key: row.get(column, absent) for key, (column, _, absent) in MC_EVIDENCE.items()}
        return mc_label(row["hard_label"], row.get("mc_value"), evidence, f"mc@{row.get('model') or ''}")

    def sql(self) -> dict[str, str]:
        evidence = ", ".join(f"'{key}': {column}" for key, (column, _, _) in MC_EVIDENCE.items())
        return {
            "verdict": "CASE hard_label WHEN true THEN 'correct' WHEN false THEN 'incorrect' "
            "ELSE 'unverifiable' END",
            "value": "mc_value",
            "reason": "CASE WHEN n_rollouts_judged > 0 THEN n_rollouts_correct::VARCHAR || ' of ' || "
            "n_rollouts_judged::VARCHAR || ' judged rollouts reached the answer' ELSE value_source END",
            "evidence": f"to_json({{{evidence}}})::VARCHAR",
            "labeler": "'mc@' || model",
            "kind": "CASE WHEN value_source IN ("
            + ", ".join(f"'{kind}'" for kind in MC_KINDS)
            + ") THEN value_source END",  # as `mc_label` reads it
        }


MC_KINDS = ("rollouts", "inferred", "outcome")
"""Where an MC value came from, its label's reading kind: drawn from the step's prefix, implied by a search
(no rollouts of its own), or the chain's own graded outcome (the last step). Their precisions differ."""


def mc_label(hard: bool | None, value: float | None, evidence: Mapping[str, Any], labeler: str) -> StepLabel:
    """The MC source's label of a step from its hard label, MC value and rollout counts; its kind is where
    the value came from (`MC_KINDS`, from the evidence, so a stored label reads back the same)."""
    verdict = "unverifiable" if hard is None else ("correct" if hard else "incorrect")
    judged, correct = evidence.get("n_judged", 0), evidence.get("n_correct", 0)
    if judged:
        reason = f"{correct} of {judged} judged rollouts reached the answer"
    else:
        reason = str(evidence.get("value_source", "none"))
    source = evidence.get("value_source")
    kind = source if source in MC_KINDS else None
    return StepLabel("mc", verdict, value, reason, json.dumps(dict(evidence), sort_keys=True), labeler, kind)


LEGACY_COLUMNS: dict[str, LabelColumns] = {"verifier": VerifierColumns(), "mc": McColumns()}

CORE_SOURCES: tuple[str, ...] = ("verifier", "mc", "reference", "judge")
"""Sources whose columns every steps table is created with: the four of the first release, so today's
column names (`verdict`, `hard_label`, `reference_verdict`, `judge_verdict`, ...) exist in every dataset."""


def columns_of(source: str) -> LabelColumns:
    """Where `source`'s labels are stored."""
    return LEGACY_COLUMNS.get(source) or generic_columns(source)


def split_labeler(tag: str) -> tuple[str, str, str]:
    """`name@version+code` -> (name, version, code); a tag without `@` is a bare name.

    >>> split_labeler("math-sympy@2.5.0+3fa2"), split_labeler("")
    (('math-sympy', '2.5.0', '3fa2'), ('', '', ''))
    """
    name, _, rest = tag.rpartition("@")
    if not name:
        return rest, "", ""
    version, _, code = rest.rpartition("+")
    return (name, version, code) if version else (name, rest, "")


def join_labeler(name: str, version: str, code: str) -> str:
    return f"{name}@{version}+{code}"


def stored_sources(column_names: Iterable[str]) -> list[str]:
    """The label sources a steps table has columns for: the core ones, then any `NAME_verdict` column's."""
    names = set(column_names)
    found = [source for source in CORE_SOURCES if columns_of(source).verdict in names]
    for column in sorted(names):
        if column.endswith("_verdict") and column not in ("verdict",):
            source = column.removesuffix("_verdict")
            if source not in found and f"{source}_labeler" in names:
                found.append(source)
    return found


def first_error_column(source: str) -> str:
    """The chains-table column of a source's first error (`first_error_verifier`, `first_error_mc`, ...)."""
    return f"first_error_{source}"


def label_arrow_fields(sources: Sequence[str]) -> list[pa.Field]:
    """The steps-table columns of these sources, in order."""
    return [field for source in sources for field in columns_of(source).arrow_fields()]


def encode_labels(labels: Sequence[StepLabel], sources: Sequence[str]) -> dict[str, Any]:
    """One step's label columns for these sources (a source absent from `labels` stores nulls)."""
    by_source = {label.source: label for label in labels}
    unknown = set(by_source) - set(sources)
    if unknown:
        raise ValueError(f"labels of sources with no columns here: {sorted(unknown)}")
    values: dict[str, Any] = {}
    for source in sources:
        values.update(columns_of(source).encode(by_source.get(source)))
    return values


def decode_labels(row: Mapping[str, Any], sources: Sequence[str]) -> tuple[StepLabel, ...]:
    """The labels stored in one steps row, for these sources."""
    return tuple(label for source in sources if (label := columns_of(source).decode(row)) is not None)
