"""Exports of a dataset version in the shapes trainers read.

* `trl`: TRL stepwise supervision, one row per chain: `prompt`, `completions` (step texts), `labels`
  (booleans).
  TRL casts labels to int, so soft labels need an explicit `threshold` (label = soft_label >= threshold).
  Soft labels are MC's (`label="soft"`) or the consensus's `p_correct` (`label="consensus"`, `soft=True`:
  `--label consensus --soft`), the probability that the step is right (labels/consensus.py).
* `openrlhf`: OpenRLHF process-reward format: `input` (prompt and steps, each step followed by the
  placeholder token) and `value` (one label per placeholder: "+"/"-", or floats for soft labels without a
  threshold); train with `--input_key input --label_key value --placeholder_token ки --reward_tokens + -`.
* `math-shepherd`: the Math-Shepherd layout: `input` with " ки" after each step, `label` the same text with
  each "ки" replaced by "+" or "-", and `task` (the problem source).
* `steps`: one flat row per step with its problem's source and domain and every label column, for Hugging
  Face `datasets` (`load_dataset("parquet" | "json", data_files=...)`) or any analysis.

Which steps a chain keeps: a step is *usable* when it passes the filters (its label of the chosen kind is
not null; with `agreement_only`, verifier and MC agree on it; with `since_version`, it was not yet visible at
that version). Chain formats take the longest usable prefix of each chain (a label sequence with holes would
silently shift labels onto the wrong steps), and with `stop_at_first_error` end at the first negative step,
as TRL's and PRM800K's phase-2 conventions do. Chains with no usable step are left out.

`check_trl_tokenization` (CLI: `export FORMAT --check-tokenizer MODEL_DIR`) runs the trainer's tokenization
over the rows (TRL's own PRMTrainer for `trl`; the placeholder-id lookup of OpenRLHF / Math-Shepherd for the
other chain formats, with `--placeholder TAG` when "ки" is not one token for the model) and fails, naming
each bad row, unless every labelled step lands on exactly one label position (exports/tokenizer_check.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from prm_factory.exports.tokenizer_check import (
    TrainerSettings,
    TrlUnavailable,
    check_placeholder_rows,
    check_rows,
    load_tokenizer,
    placeholder_problem,
)
from prm_factory.labels.registry import registered_names
from prm_factory.schemas.step_labels import McColumns, columns_of
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import StorageError
from prm_factory.storage.sql import connect

LabelKind = str  # "hard", "soft", "consensus", or a registered label source's name (label_kinds())
ExportFormat = Literal["trl", "openrlhf", "math-shepherd", "steps"]
EXPORT_FORMATS: tuple[str, ...] = ("trl", "openrlhf", "math-shepherd", "steps")
MC_KINDS: tuple[str, ...] = ("hard", "soft")
"""The MC source's two label kinds: its hard label, its value as a soft label (needs --threshold)."""

PLACEHOLDER = "ки"
"""Math-Shepherd's step tag, which OpenRLHF's PRM recipe also uses as the placeholder token."""


def label_kinds() -> tuple[str, ...]:
    """What `--label` may name: MC's hard and soft labels, the consensus, and every registered source
    (labels.registry; `mc` is the hard label)."""
    return (*MC_KINDS, "consensus", *registered_names())


def label_sql(kind: str) -> str:
    """The raw label of a kind as SQL over `steps AS s`; NULL means "no label of this kind" (unverifiable,
    disputed, no rollouts, a source that did not run)."""
    if kind == "soft":
        return "s.soft_label"
    if kind == "consensus":
        return "CASE s.consensus WHEN 'positive' THEN true WHEN 'negative' THEN false END"
    if ":" in kind:  # a config's `package.module:SOURCE`: its labels are stored under its name
        from prm_factory.labels.registry import RegistryError, load_object

        try:
            kind = load_object(kind).name
        except RegistryError as error:
            raise ExportError(str(error)) from None
    elif kind not in label_kinds():
        raise ExportError(f"unknown label kind {kind!r}; choose one of {', '.join(label_kinds())}")
    columns = columns_of("mc" if kind == "hard" else kind)
    if isinstance(columns, McColumns):
        return f"s.{columns.verdict}"
    return f"CASE s.{columns.verdict} WHEN 'correct' THEN true WHEN 'incorrect' THEN false END"


def label_sources_of(kind: str) -> tuple[str, ...]:
    """The label sources whose columns a kind reads (the views must show them)."""
    if kind in ("consensus",):
        return ()
    if ":" in kind:  # a config's `package.module:SOURCE`, by its name
        from prm_factory.labels.registry import RegistryError, load_object

        try:
            return (load_object(kind).name,)
        except RegistryError as error:  # `--label a:b` names no module: one line, exit 1
            raise ExportError(str(error)) from None
    return ("mc",) if kind in MC_KINDS else (kind,)


class ExportError(StorageError):
    """An export asked for something ill-defined (e.g. booleans from soft labels without a threshold)."""


@dataclass(frozen=True)
class ExportOptions:
    """What to export: the label kind, and which steps count (see the module docstring)."""

    label: LabelKind = "hard"
    threshold: float | None = None  # soft labels: positive when soft_label >= threshold
    soft: bool = False  # with label "consensus": its p_correct as the soft label
    sources: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    agreement_only: bool = False
    since_version: int | None = None
    stop_at_first_error: bool = False
    placeholder: str = PLACEHOLDER  # openrlhf / math-shepherd step tag; must be one token for the model
    extra_columns: tuple[str, ...] = field(default=("chain_id", "problem_id", "source", "domain"))


def soft_column(options: ExportOptions) -> str | None:
    """The soft label's column: MC's value (`soft`), the consensus's `p_correct` (`consensus`, `soft`);
    None for boolean labels. `soft` with another label is an error."""
    if options.label == "soft":
        return "s.soft_label"
    if options.soft:
        if options.label != "consensus":
            raise ExportError(
                f"--soft takes the consensus's p_correct: it needs --label consensus, not {options.label}"
            )
        return "s.p_correct"
    return None


def _label_sql(options: ExportOptions) -> str:
    return soft_column(options) or label_sql(options.label)


def _positive_sql(options: ExportOptions) -> str:
    """SQL of the boolean label; soft labels become booleans only through the explicit threshold."""
    soft = soft_column(options)
    if soft is not None:
        if options.threshold is None:
            return "NULL::BOOLEAN"
        return f"({soft} >= {float(options.threshold)!r})"
    return label_sql(options.label)


def select_steps(
    dataset: Dataset,
    version: int | None,
    options: ExportOptions,
    prefix: bool,
    problem_filter: str | None = None,
    connection: Any | None = None,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """Steps to export, ordered by chain and step index, with `label` (raw) and `positive` (boolean).

    `prefix` keeps, per chain, only the longest usable prefix (chain formats); otherwise every usable step.
    `problem_filter`, an SQL condition on `problem_id`, keeps only those problems' steps: every rule here
    looks at one chain at a time and a chain has one problem, so disjoint filters that cover all problems
    cut the selection into pieces that together are the whole (the trainer streams a version this way,
    training/chain_source.py).

    `connection`: a DuckDB connection over this version (storage.sql.connect with `label_sources_of` the
    label kind) to run on and leave open, for a caller that selects many pieces of one version (each new
    in-memory database starts and stops its own worker threads); by default one is opened and closed here.

    `columns`: only these columns of the result (step columns, `problem_text`, `label`, `positive`), so
    DuckDB reads only the Parquet columns they and the rules need; by default every column.
    """
    if options.threshold is not None and soft_column(options) is None:
        raise ExportError("--threshold applies to soft labels only")
    borrowed = connection is not None
    if connection is None:
        connection = connect(dataset, version, label_sources_of(options.label))
    try:
        if options.soft and "p_correct" not in connection.sql("SELECT * FROM steps LIMIT 0").columns:
            raise ExportError(
                "this dataset version has no p_correct (written before it): `prm-factory relabel` computes it"
            )
        since_filter = ""
        if options.since_version is not None:
            old = dataset.tables(options.since_version)["steps"]
            if problem_filter is None:
                connection.register("since_steps", old.scanner(columns=["step_id"]).to_reader())
            else:  # only these problems' old steps: the anti-join's set stays as small as the piece
                connection.register("since_all", old.scanner(columns=["step_id", "problem_id"]).to_reader())
                connection.execute(
                    f"CREATE VIEW since_steps AS SELECT step_id FROM since_all WHERE {problem_filter}"
                )
            since_filter = "AND s.step_id NOT IN (SELECT step_id FROM since_steps)"
        usable = f"""
            {_label_sql(options)} IS NOT NULL
            {"AND s.labels_agree IS TRUE" if options.agreement_only else ""}
            {since_filter}
        """
        positive = _positive_sql(options)
        stop_filter = (
            "AND step_index <= coalesce(first_negative, 2147483647)" if options.stop_at_first_error else ""
        )
        shown = (
            ", ".join(f'"{name}"' for name in columns)
            if columns
            else "* EXCLUDE (usable, first_unusable, first_negative)"
        )
        sql = f"""
            WITH base AS (
                SELECT s.* EXCLUDE (source, domain),
                       coalesce(s.source, p.source) AS source, coalesce(s.domain, p.domain) AS domain,
                       p.text AS problem_text,
                       {_label_sql(options)} AS label, {positive} AS positive,
                       coalesce({usable}, false) AS usable
                FROM steps AS s
                JOIN problems AS p USING (problem_id)
                WHERE (len($sources) = 0 OR list_contains($sources, p.source))
                  AND (len($domains) = 0 OR list_contains($domains, p.domain))
                  AND ({problem_filter or "true"})
            ), bounded AS (
                SELECT *,
                    min(CASE WHEN NOT usable THEN step_index END) OVER chain AS first_unusable,
                    min(CASE WHEN positive = false THEN step_index END) OVER chain AS first_negative
                FROM base
                WINDOW chain AS (PARTITION BY chain_id)
            )
            SELECT {shown}
            FROM bounded
            WHERE {"step_index < coalesce(first_unusable, 2147483647)" if prefix else "usable"}
              {stop_filter}
            ORDER BY chain_id, step_index
        """
        params = {"sources": list(options.sources), "domains": list(options.domains)}
        return connection.sql(sql, params=params).to_arrow_table()
    finally:
        if not borrowed:
            connection.close()
        elif options.since_version is not None:  # a borrowed connection keeps nothing of this call
            connection.execute("DROP VIEW IF EXISTS since_steps")
            connection.unregister("since_steps")  # DuckDB: a no-op where nothing has the name
            connection.unregister("since_all")


def _chains(steps: pa.Table, placeholder: str = PLACEHOLDER) -> list[dict]:
    """Group ordered step rows into chains: shared columns once, per-step columns as lists (a step's own
    copy of the placeholder is dropped: it would be read as one more step tag)."""
    chains: list[dict] = []
    current: dict | None = None
    for row in steps.to_pylist():
        if current is None or current["chain_id"] != row["chain_id"]:
            current = {
                "chain_id": row["chain_id"],
                "problem_id": row["problem_id"],
                "source": row["source"],
                "domain": row["domain"],
                "prompt": row["problem_text"],
                "texts": [],
                "labels": [],
                "positives": [],
            }
            chains.append(current)
        current["texts"].append(row["text"].strip().replace(placeholder, ""))
        current["labels"].append(row["label"])
        current["positives"].append(row["positive"])
    return chains


def _require_booleans(options: ExportOptions, fmt: str) -> None:
    if soft_column(options) is not None and options.threshold is None:
        raise ExportError(
            f"{fmt} needs boolean labels: give --threshold T to turn soft labels into soft_label >= T"
        )


def export_table(
    dataset: Dataset, fmt: ExportFormat, version: int | None, options: ExportOptions
) -> pa.Table:
    """The rows of one export format as an Arrow table."""
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if options.stop_at_first_error:
        _require_booleans(options, "--stop-at-first-error")
    if fmt == "steps":
        steps = select_steps(dataset, version, options, prefix=False)
        return steps.drop_columns(["problem_text"])
    if fmt in ("trl", "math-shepherd"):
        _require_booleans(options, fmt)
    chains = _chains(select_steps(dataset, version, options, prefix=True), options.placeholder)
    meta = {name: [c[name] for c in chains] for name in options.extra_columns}
    if fmt == "trl":
        return pa.table(
            {
                "prompt": [c["prompt"] for c in chains],
                "completions": pa.array([c["texts"] for c in chains], pa.list_(pa.string())),
                "labels": pa.array([c["positives"] for c in chains], pa.list_(pa.bool_())),
                **meta,
            }
        )
    tag = options.placeholder
    inputs = [c["prompt"] + "\n" + "\n".join(f"{text} {tag}" for text in c["texts"]) for c in chains]
    if fmt == "openrlhf":
        if soft_column(options) is not None and options.threshold is None:
            values = pa.array([c["labels"] for c in chains], pa.list_(pa.float64()))
        else:
            values = pa.array(
                [["+" if p else "-" for p in c["positives"]] for c in chains], pa.list_(pa.string())
            )
        return pa.table({"input": inputs, "value": values, **meta})
    labelled = []
    for chain in chains:
        text = (
            chain["prompt"]
            + "\n"
            + "\n".join(
                f"{step} {'+' if positive else '-'}"
                for step, positive in zip(chain["texts"], chain["positives"], strict=True)
            )
        )
        labelled.append(text)
    return pa.table({"input": inputs, "label": labelled, "task": [c["source"] for c in chains], **meta})


def check_trl_tokenization(
    table: pa.Table,
    fmt: str,
    model_dir: Path,
    settings: TrainerSettings,
    placeholder: str = PLACEHOLDER,
) -> int:
    """Fail unless every labelled step of every row lands on exactly one label position after the
    trainer's tokenization with the tokenizer in `model_dir` (see exports.tokenizer_check): TRL's
    PRMTrainer for `trl`, the placeholder-token layout of OpenRLHF / Math-Shepherd for `openrlhf` and
    `math-shepherd` (there `settings.max_length` is the trainer's `--max_len`, None for no truncation).
    The error names every bad row. Returns the number of rows checked."""
    if fmt not in ("trl", "openrlhf", "math-shepherd"):
        raise ExportError(
            f"--check-tokenizer checks the chain exports (trl, openrlhf, math-shepherd), not {fmt}"
        )
    try:
        tokenizer = load_tokenizer(model_dir)
        if fmt == "trl":
            problems = check_rows(table.to_pylist(), tokenizer, settings)
        else:
            whole = placeholder_problem(placeholder, tokenizer) if fmt == "openrlhf" else None
            if whole is not None:
                raise ExportError(f"tokenizer check ({model_dir}), nothing written: {whole}")
            problems = check_placeholder_rows(
                table.to_pylist(), fmt, placeholder, tokenizer, settings.max_length
            )
    except (TrlUnavailable, FileNotFoundError, OSError) as error:
        raise ExportError(f"tokenizer check: {error}") from error
    if problems:
        lines = "\n".join(f"  {problem.row_id}: {problem.reason}" for problem in problems)
        raise ExportError(
            f"{len(problems)} of {table.num_rows} rows would train misaligned with the tokenizer of "
            f"{model_dir} (nothing written):\n{lines}"
        )
    return table.num_rows


def write_export(table: pa.Table, path: Path) -> None:
    """Write by suffix: .parquet, or .jsonl/.json (JSON Lines, which `datasets` reads as "json")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
        return
    if path.suffix in (".jsonl", ".json"):
        with path.open("w", encoding="utf-8") as sink:
            for batch in table.to_batches(max_chunksize=4096):
                for row in batch.to_pylist():
                    sink.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    raise ExportError(f"cannot tell the file format of {path}: use .parquet, .jsonl or .json")
