"""Training rows: one chain's prompt, steps and step labels, from a dataset version or an export file.

Which steps a chain keeps is the exports' rule (exports.formats.select_steps, not a copy of it): the longest
prefix of steps whose label of the chosen source is set, with `--agreement-only` and `--since-version` as
there. The label sources are named as a trainer user thinks of them:

* `consensus`, and every registered label source by name (`verifier`, `reference`, `judge`, a plug-in's,
  labels.registry): the export kinds of the same name (booleans);
* `mc`: the Monte Carlo labels, hard (any rollout reached the reference) or, with `soft`, the MC value in
  [0, 1] as the regression target; the hard label stays the truth the evaluation compares against.

Held-out problems are chosen by a stable hash of `problem_id`, so a rerun, another machine or another
trainer (examples/train_prm_trl.py uses the same rule) holds out the same problems.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def label_sources() -> tuple[str, ...]:
    """What `train --label` and `score --label` may name: the consensus, then every registered source."""
    from prm_factory.labels.registry import registered_names

    return ("consensus", *registered_names())


class RowsError(ValueError):
    """The rows asked for cannot be built (unknown source, soft labels from a boolean source, bad file)."""


@dataclass(frozen=True)
class TrainRow:
    """One chain to train on: `labels` are the step truths (True = step right), `values` the soft targets
    (MC values) when training on soft labels, else None."""

    chain_id: str
    problem_id: str
    prompt: str
    steps: tuple[str, ...]
    labels: tuple[bool, ...]
    values: tuple[float, ...] | None = None


def export_kind(label: str, soft: bool) -> str:
    """The export label kind for a training label source.

    >>> export_kind("mc", soft=True), export_kind("consensus", soft=False)
    ('soft', 'consensus')
    """
    if label not in label_sources():
        raise RowsError(f"unknown label source {label!r}; choose one of {', '.join(label_sources())}")
    if soft and label != "mc":
        raise RowsError(f"--soft trains on MC values: it needs --label mc, not --label {label}")
    if soft:
        return "soft"
    return "hard" if label == "mc" else label


ROW_COLUMNS = ("chain_id", "problem_id", "problem_text", "text", "label", "positive")
"""The selected steps' columns a training row is made of (group_steps): DuckDB reads only what these and
the selection's rules need, a fraction of a steps file (measured: docs/training.md)."""
SOFT_ROW_COLUMNS = (*ROW_COLUMNS, "hard_label")


def rows_from_dataset(
    dataset: Any,
    version: int | None,
    label: str,
    *,
    soft: bool = False,
    agreement_only: bool = False,
    since_version: int | None = None,
    problem_filter: str | None = None,  # only some problems' chains (exports.formats.select_steps)
    connection: Any | None = None,  # a DuckDB connection over the version to run on (select_steps)
) -> list[TrainRow]:
    """The chains of a dataset version (storage.dataset.Dataset), steps chosen as the exports choose them."""
    from prm_factory.exports.formats import ExportOptions, select_steps

    options = ExportOptions(
        label=export_kind(label, soft),
        agreement_only=agreement_only,
        since_version=since_version,
    )
    steps = select_steps(
        dataset,
        version,
        options,
        prefix=True,
        problem_filter=problem_filter,
        connection=connection,
        columns=SOFT_ROW_COLUMNS if soft else ROW_COLUMNS,
    ).to_pylist()
    return group_steps(steps, soft)


def group_steps(steps: Sequence[dict[str, Any]], soft: bool) -> list[TrainRow]:
    """Step rows (ordered by chain and step index, with `label`, `positive` and for soft `hard_label`)
    grouped into chains. Soft rows take the MC hard label as truth; a chain is cut before a step without
    one, as the exports cut at a step without a label."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        grouped.setdefault(step["chain_id"], []).append(step)
    rows = []
    for chain_id, chain in grouped.items():
        if soft:
            kept = []
            for step in chain:
                if step.get("hard_label") is None:
                    break
                kept.append(step)
            labels = tuple(bool(s["hard_label"]) for s in kept)
            values: tuple[float, ...] | None = tuple(float(s["label"]) for s in kept)
        else:
            kept = chain
            labels = tuple(bool(s["positive"]) for s in kept)
            values = None
        if not kept:
            continue
        rows.append(
            TrainRow(
                chain_id=chain_id,
                problem_id=kept[0]["problem_id"],
                prompt=kept[0]["problem_text"],
                steps=tuple(s["text"].strip() for s in kept),
                labels=labels,
                values=values,
            )
        )
    return rows


def rows_from_export(path: Path) -> list[TrainRow]:
    """Rows of a `prm-factory export trl` file (.parquet or .jsonl): prompt, completions, labels, ids."""
    import pyarrow.parquet as pq

    if path.suffix == ".parquet":
        records = pq.read_table(path).to_pylist()
    elif path.suffix in (".jsonl", ".json"):
        import json

        lines = path.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
    else:
        raise RowsError(f"{path}: expected a .parquet or .jsonl file from `prm-factory export trl`")
    rows = []
    for number, record in enumerate(records):
        missing = {"prompt", "completions", "labels"} - set(record)
        if missing:
            raise RowsError(f"{path} row {number} lacks {sorted(missing)}: export it with `export trl`")
        if len(record["completions"]) != len(record["labels"]) or any(x is None for x in record["labels"]):
            raise RowsError(f"{path} row {number}: steps and labels differ in number, or a label is empty")
        chain_id = str(record.get("chain_id") or f"row {number}")
        rows.append(
            TrainRow(
                chain_id=chain_id,
                problem_id=str(record.get("problem_id") or chain_id),
                prompt=record["prompt"],
                steps=tuple(record["completions"]),
                labels=tuple(bool(label) for label in record["labels"]),
            )
        )
    return rows


def is_held_out(problem_id: str, fraction: float) -> bool:
    """Stable: the first 32 bits of sha256(problem_id) as a fraction of 2^32 - 1, below `fraction`.

    >>> is_held_out("p1", 0.0), is_held_out("p1", 1.0)
    (False, True)
    """
    return int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < fraction


def split_by_problem(rows: Sequence[TrainRow], fraction: float) -> tuple[list[TrainRow], list[TrainRow]]:
    """(train, held out): every chain of a problem on the same side."""
    held = [is_held_out(row.problem_id, fraction) for row in rows]
    return [r for r, h in zip(rows, held, strict=True) if not h], [
        r for r, h in zip(rows, held, strict=True) if h
    ]
