"""CLI commands over a dataset: query, versions, tag, stats, export, compact.

`app` is this group's Typer app; `register(app)` merges its commands into the main one (prm_factory/cli.py).
Every storage error becomes one line on stderr and exit status 1; tracebacks are for bugs only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pyarrow as pa
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from prm_factory.commands.options import (
    AgreementOnlyOption,
    AsOfOption,
    DatasetOption,
    FormatOption,
    OutputOption,
    SinceVersionOption,
    VersionOption,
)
from prm_factory.console import print_whole
from prm_factory.labels.registry import registered_names
from prm_factory.storage.errors import StorageError

F = TypeVar("F", bound=Callable[..., Any])

MAX_TABLE_ROWS = 200
"""Rows a terminal table shows; more is a job for --format csv/parquet or a LIMIT."""

FORMATS = ("table", "csv", "json", "parquet")

app = typer.Typer()
"""The dataset commands; prm_factory/cli.py merges them into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


def _dataset(path: Path | None):  # -> storage.dataset.Dataset, imported lazily to keep `--help` fast
    from prm_factory.api import open_dataset

    if path is None:
        from prm_factory.config.run_config import default_dataset_root

        path = default_dataset_root()
    return open_dataset(path)


def _version(dataset, version: str | None, as_of: str | None = None) -> int:
    """Turn --version (number or tag) or --as-of (time) into a dataset version number."""
    from prm_factory.storage.versions import resolve

    return resolve(dataset, version, as_of)


def _fail_cleanly(command: F) -> F:
    """Print storage errors as one line and exit 1, instead of a traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except StorageError as error:
            Console(stderr=True).print(f"[red]error:[/red] {error}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from error

    return wrapper  # type: ignore[return-value]


def _cell(value: Any) -> str:
    if value is None:
        return "∅"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def print_table(result: pa.Table, console: Console, title: str | None = None) -> None:
    """A rich table of an Arrow result, capped at MAX_TABLE_ROWS rows with a note of what was left out."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    rows = [
        [_cell(row[name]) for name in result.column_names]
        for row in result.slice(0, MAX_TABLE_ROWS).to_pylist()
    ]
    for index, name in enumerate(result.column_names):
        # short columns (ids, numbers, times) stay on one line; long text folds
        widest = max([len(name), *(len(row[index]) for row in rows)])
        table.add_column(name, overflow="fold", no_wrap=widest <= 24)
    for row in rows:
        table.add_row(*row)
    print_whole(console, table)  # whole when piped: no header cut to 80 columns
    hidden = result.num_rows - MAX_TABLE_ROWS
    if hidden > 0:
        console.print(f"… {hidden} more rows (add LIMIT, or use --format csv/json/parquet --output FILE)")
    console.print(f"{result.num_rows} row(s)", style="dim")


def write_result(result: pa.Table, fmt: str, output: Path | None) -> None:
    """Write a query result as csv, json (one array of objects) or parquet, to a file or stdout."""
    if fmt == "parquet":
        if output is None:
            raise typer.BadParameter("--format parquet needs --output FILE", param_hint="--output")
        import pyarrow.parquet as pq

        pq.write_table(result, output)
        return
    if fmt == "csv":
        import pyarrow.csv as pacsv

        if output is None:
            sink = pa.BufferOutputStream()
            pacsv.write_csv(result, sink)
            sys.stdout.write(sink.getvalue().to_pybytes().decode("utf-8"))
        else:
            pacsv.write_csv(result, output)
        return
    text = json.dumps(result.to_pylist(), ensure_ascii=False, default=str, indent=1)
    if output is None:
        sys.stdout.write(text + "\n")
    else:
        output.write_text(text + "\n", encoding="utf-8")


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise typer.BadParameter(
            f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", param_hint="--format"
        )


def emit(result: pa.Table, fmt: str, output: Path | None) -> None:
    """Print a result as a rich table, or write it in a machine format."""
    if fmt == "table":
        console = Console(record=output is not None)
        print_table(result, console)
        if output is not None:
            output.write_text(console.export_text(), encoding="utf-8")
        return
    write_result(result, fmt, output)


@app.command("query")
@_fail_cleanly
def query_command(
    sql: Annotated[
        str,
        typer.Argument(
            help="DuckDB SQL over the views problems, chains, steps, runs, "
            "rejections, label_stats, first_errors, step_labels (one row per step and label source)."
        ),
    ],
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    fmt: FormatOption = "table",
    output: OutputOption = None,
) -> None:
    """Run SQL over a dataset version (latest by default) and print or save the result."""
    from prm_factory.api import query

    _check_format(fmt)
    data = _dataset(dataset)
    emit(query(data, sql, version=_version(data, version, as_of), sources=registered_names()), fmt, output)


@app.command("versions")
@_fail_cleanly
def versions_command(
    dataset: DatasetOption = None,
    fmt: FormatOption = "table",
    output: OutputOption = None,
    counts: Annotated[bool, typer.Option(help="Count the rows each version holds.")] = True,
) -> None:
    """List dataset versions: run id, commit time, status, config hash, model, row counts, tags."""
    from prm_factory.storage.versions import list_versions, summaries_table

    _check_format(fmt)
    summaries = list_versions(_dataset(dataset), with_counts=counts)
    emit(summaries_table(summaries, short=fmt == "table"), fmt, output)


@app.command("tag")
@_fail_cleanly
def tag_command(
    name: Annotated[str, typer.Argument(help="Tag name, e.g. release-1 (starts with a letter).")],
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    note: Annotated[str, typer.Option(help="Why this version is tagged.")] = "",
    force: Annotated[bool, typer.Option("--force", help="Move the tag if it names another version.")] = False,
) -> None:
    """Put a named tag on a version (latest by default); use the tag wherever --version is accepted."""
    from prm_factory.storage.versions import set_tag

    data = _dataset(dataset)
    tagged = set_tag(data, name, _version(data, version, as_of), note=note, force=force)
    Console().print(f"tag {name} -> version {tagged}")


@app.command("stats")
@_fail_cleanly
def stats_command(
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    fmt: FormatOption = "table",
    output: OutputOption = None,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's cost table.")] = None,
) -> None:
    """Headline numbers of a version (counts, chain accuracy, label mix, agreement, rollout cost), then
    cost per run: labels per hour, rollouts and tokens per label."""
    from prm_factory.storage.stats import headline_stats, run_costs

    _check_format(fmt)
    data = _dataset(dataset)
    resolved = _version(data, version, as_of)
    costs = pa.Table.from_pylist(run_costs(data, resolved, run))
    if run is not None and costs.num_rows == 0:
        raise typer.BadParameter(f"no run {run!r} in this version", param_hint="--run")
    from prm_factory.reports.weights import weight_warnings, weights_used

    weights = weights_used(data, resolved, registered_names())  # what each vote weighed, and its origin
    for line in weight_warnings(weights):
        Console(stderr=True).print(line, highlight=False, soft_wrap=True)
    if fmt != "table":
        stats = headline_stats(data, resolved, registered_names())
        row = {**stats, "runs_cost": costs.to_pylist(), "consensus_weights": weights}
        emit(pa.Table.from_pylist([row]), fmt, output)
        return
    if run is None:
        stats = headline_stats(data, resolved, registered_names())
        emit(pa.table({"metric": list(stats), "value": [_cell(v) for v in stats.values()]}), fmt, output)
        if weights:
            emit(pa.Table.from_pylist(weights), fmt, output)
    rows = costs.to_pylist()  # one column per run: the metrics are many, the runs of a version few
    columns = {"cost": [name for name in costs.column_names if name != "run_id"]}
    for row in rows:
        columns[f"run {row['run_id'][:12]}"] = [_cell(row[name]) for name in columns["cost"]]
    emit(pa.table(columns), fmt, output)


ExportFormatArgument = Annotated[str, typer.Argument(help="trl | openrlhf | math-shepherd | steps")]
ExportOutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="File to write: .parquet or .jsonl.")
]
LabelSourceOption = Annotated[
    str,
    typer.Option(
        help="Label: hard | soft (MC's hard label and value) | consensus | a label source: "
        + " | ".join(registered_names())
        + " (labels/registry.py; plug-ins included)."
    ),
]
ThresholdOption = Annotated[
    float | None, typer.Option(help="Soft labels: positive when soft_label >= THRESHOLD.")
]
SourcesOption = Annotated[list[str] | None, typer.Option("--source", help="Keep these sources (repeatable).")]
DomainsOption = Annotated[list[str] | None, typer.Option("--domain", help="Keep these domains (repeatable).")]
StopAtFirstErrorOption = Annotated[
    bool, typer.Option("--stop-at-first-error", help="End each chain at its first negative step.")
]
CheckTokenizerOption = Annotated[
    Path | None,
    typer.Option(
        "--check-tokenizer",
        help="Tokenize every row as the trainer does with this checkpoint's tokenizer (trl: TRL's "
        "PRMTrainer; openrlhf / math-shepherd: the placeholder-token lookup) and fail, naming each "
        "bad row, unless every labelled step lands on exactly one label position.",
    ),
]
PlaceholderOption = Annotated[
    str,
    typer.Option(
        help="openrlhf / math-shepherd: the step tag written after each step; it must be one token "
        "for the trainer's tokenizer (--check-tokenizer says so and names tags that are)."
    ),
]
StepSeparatorOption = Annotated[
    str | None,
    typer.Option(help="With --check-tokenizer: PRMConfig.step_separator (default: TRL's)."),
]
MaxLengthOption = Annotated[
    int | None,
    typer.Option(
        help="With --check-tokenizer: PRMConfig.max_length (trl, default TRL's) or the trainer's "
        "--max_len (openrlhf / math-shepherd, default no truncation)."
    ),
]
MaxCompletionLengthOption = Annotated[
    int | None, typer.Option(help="With --check-tokenizer: PRMConfig.max_completion_length.")
]


@app.command("export")
@_fail_cleanly
def export_command(
    fmt: ExportFormatArgument,
    output: ExportOutputOption,
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    label: LabelSourceOption = "hard",
    threshold: ThresholdOption = None,
    soft: Annotated[
        bool, typer.Option("--soft", help="With --label consensus: its p_correct as the soft label.")
    ] = False,
    source: SourcesOption = None,
    domain: DomainsOption = None,
    agreement_only: AgreementOnlyOption = False,
    since_version: SinceVersionOption = None,
    stop_at_first_error: StopAtFirstErrorOption = False,
    check_tokenizer: CheckTokenizerOption = None,
    placeholder: PlaceholderOption = "ки",
    step_separator: StepSeparatorOption = None,
    max_length: MaxLengthOption = None,
    max_completion_length: MaxCompletionLengthOption = None,
) -> None:
    """Export a version for a trainer (TRL, OpenRLHF, Math-Shepherd) or as flat step rows."""
    from prm_factory.api import export
    from prm_factory.exports.formats import check_trl_tokenization, write_export

    data = _dataset(dataset)
    resolved = _version(data, version, as_of)
    table = export(
        data,
        fmt,  # type: ignore[arg-type]  # checked by export_table
        version=resolved,
        label=label,
        threshold=threshold,
        sources=source or (),
        domains=domain or (),
        agreement_only=agreement_only,
        since_version=None if since_version is None else _version(data, since_version),
        stop_at_first_error=stop_at_first_error,
        placeholder=placeholder,
        soft=soft,
    )
    if check_tokenizer is not None:
        from prm_factory.exports.tokenizer_check import TrainerSettings

        settings = TrainerSettings(step_separator, max_length, max_completion_length)
        checked = check_trl_tokenization(table, fmt, check_tokenizer, settings, placeholder)
        Console().print(f"tokenizer check: all {checked} rows align with {check_tokenizer}", soft_wrap=True)
    write_export(table, output)
    Console().print(f"wrote {table.num_rows} rows ({fmt}, version {resolved}, {label} labels) to {output}")


@app.command("compact")
@_fail_cleanly
def compact_command(
    dataset: DatasetOption = None,
    retention_hours: Annotated[
        float, typer.Option(help="Delete replaced files older than this; older untagged versions may go.")
    ] = 168.0,
    no_vacuum: Annotated[bool, typer.Option("--no-vacuum", help="Only compact; delete no file.")] = False,
) -> None:
    """Compact small files of every table and apply the retention period (tagged versions are kept)."""
    from prm_factory.storage.maintenance import compact

    reports = compact(_dataset(dataset), retention_hours=None if no_vacuum else retention_hours)
    rows = [
        {
            "table": r.kind,
            "files_before": r.files_before,
            "files_after": r.files_after,
            "deleted": r.files_deleted,
        }
        for r in reports
    ]
    emit(pa.Table.from_pylist(rows), "table", None)
