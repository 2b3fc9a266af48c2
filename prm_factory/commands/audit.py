"""`prm-factory audit ...`: draw a sample of a dataset version's steps, review it in a browser, report each
label source's precision and recall with intervals, and move the answers in and out of other tools.

    prm-factory audit sample audits/first --size 300                  # stratified, of the latest version
    prm-factory audit serve audits/first                              # http://127.0.0.1:8765/
    prm-factory audit report audits/first -o audit.html --json audit.json
    prm-factory audit labels audits/first -o human-labels.jsonl       # the answers as per-step human labels
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from prm_factory.commands.dataset import _dataset, _fail_cleanly, _version
from prm_factory.commands.options import AsOfOption, DatasetOption, VersionOption
from prm_factory.console import fail, print_whole

app = typer.Typer(
    no_args_is_help=True, help="Audit the labels: a review page, a human source, precision with CIs."
)
"""The `audit` group; prm_factory/cli.py adds it to the main app under that name."""


def register(parent: typer.Typer) -> None:
    """Add this group to `parent` (the main app, or a test's) as `audit`."""
    parent.add_typer(app, name="audit")


F = TypeVar("F", bound=Callable[..., Any])

AuditArgument = Annotated[
    Path, typer.Argument(metavar="AUDIT", help="The audit's folder (holds audit.sqlite).")
]


def _audit_file_errors(command: F) -> F:
    """An audit file damaged while a command reads it: one line naming the file's trouble, exit 1."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import sqlite3

        from prm_factory.audit.store import AuditError

        try:
            return command(*args, **kwargs)
        except (AuditError, sqlite3.DatabaseError) as error:
            fail(f"the audit file cannot be read: {error}", 1)

    return wrapper  # type: ignore[return-value]


def _open(audit: Path):  # -> audit.store.AuditStore
    from prm_factory.audit.store import AuditError, AuditStore

    try:
        return AuditStore.open(audit)
    except AuditError as error:
        fail(str(error), 1)


@app.command("sample")
@_fail_cleanly
def sample(
    audit: AuditArgument,
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    size: Annotated[int, typer.Option(min=1, help="Steps to draw.")] = 300,
    seed: Annotated[int, typer.Option(help="Seed of the draw and of the review order.")] = 0,
    design: Annotated[
        str, typer.Option(help="stratified | uncertain (disagreements and near-threshold PRM scores first).")
    ] = "stratified",
    double: Annotated[float, typer.Option(min=0, max=1, help="Share of steps asked of two reviewers.")] = 0.1,
    equal_share: Annotated[
        float, typer.Option(min=0, max=1, help="Share of the budget spread evenly over the strata.")
    ] = 0.5,
    problem_set: Annotated[
        list[str] | None, typer.Option(help="Only these problem sets (repeatable).")
    ] = None,
    domain: Annotated[
        list[str] | None, typer.Option(help="Only these domains: math, code (repeatable).")
    ] = None,
    run: Annotated[list[str] | None, typer.Option(help="Only steps of these runs (repeatable).")] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            help="Only steps with SOURCE=VALUE, e.g. verifier=incorrect, consensus=disputed (repeatable)."
        ),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(help="Audit only these sources (default: every source in the dataset)."),
    ] = None,
    scores: Annotated[
        Path | None, typer.Option(help="PRM step scores from `prm-factory score --dataset ... -o FILE`.")
    ] = None,
    prm_threshold: Annotated[
        float, typer.Option(help="A PRM score at or above this calls a step correct.")
    ] = 0.5,
    prm_margin: Annotated[
        float, typer.Option(help="Scores this close to the threshold count as uncertain.")
    ] = 0.1,
) -> None:
    """Draw an audit sample from a dataset version into AUDIT (a new folder)."""
    from prm_factory.audit.create import create_audit
    from prm_factory.audit.sample import Filters, SampleDesign, SampleError
    from prm_factory.audit.store import AuditError

    if scores is not None and not scores.is_file():
        fail(f"scores file not found: {scores}")
    data = _dataset(dataset)
    resolved = _version(data, version, as_of)
    try:
        chosen = SampleDesign(
            size=size,
            seed=seed,
            mode=design,  # type: ignore[arg-type]  # SampleDesign checks it
            double_share=double,
            equal_share=equal_share,
            prm_threshold=prm_threshold,
            prm_margin=prm_margin,
            filters=Filters(
                tuple(problem_set or ()), tuple(domain or ()), tuple(run or ()), tuple(label or ())
            ),
        )
        store = create_audit(data, audit, chosen, resolved, source, scores)
    except (SampleError, AuditError) as error:
        fail(str(error))
    console = Console()
    items = store.items()
    strata = store.strata()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("stratum", "steps", "drawn", "inclusion", "uncertain"):
        table.add_column(name, no_wrap=name != "stratum")
    for row in strata:
        share = row.drawn / row.population if row.population else 0.0
        table.add_row(
            escape(row.stratum),
            str(row.population),
            str(row.drawn),
            f"{share:.3g}",
            "yes" if row.uncertain else "",
        )
    print_whole(console, table)
    doubles = sum(item.reviews_needed == 2 for item in items)
    console.print(
        f"audit {audit}: {len(items)} steps of {sum(s.population for s in strata)} (version {resolved}), "
        f"{len(strata)} strata, {doubles} asked of two reviewers; sources {', '.join(store.sources())}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"review them: prm-factory audit serve {audit}", highlight=False, soft_wrap=True)


@app.command("serve")
@_audit_file_errors
def serve(
    audit: AuditArgument,
    host: Annotated[
        str, typer.Option(help="Address to listen on; beyond loopback a token is required.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="PRM_FACTORY_AUDIT_TOKEN",
            help="Token the page requires (default: none on loopback, a fresh one elsewhere).",
        ),
    ] = None,
) -> None:
    """Serve the review page of AUDIT until interrupted."""
    from prm_factory.audit.server import run, serve_token
    from prm_factory.audit.store import AuditError

    _open(audit)  # fail before binding when AUDIT is no audit
    try:
        required = serve_token(host, token)
    except AuditError as error:
        fail(str(error))
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{port}/"
    Console().print(
        f"reviewing {audit} at {url}" + (f"?token={required}" if required else "") + "  (Ctrl+C stops)",
        highlight=False,
        soft_wrap=True,
    )
    run(audit, host, port, required)


@app.command("report")
@_audit_file_errors
def report(
    audit: AuditArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "audit-report.html"
    ),
    json_output: Annotated[
        Path | None, typer.Option("--json", help="Also write the figures as JSON.")
    ] = None,
    page_url: Annotated[
        str, typer.Option(help="Where `audit serve` runs: the wrong steps link to its item pages.")
    ] = "http://127.0.0.1:8765",
    replicates: Annotated[int, typer.Option(min=100, help="Bootstrap replicates.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
) -> None:
    """Per source and for the consensus: precision and recall with 95 % intervals, kappa, wrong steps."""
    from prm_factory.audit.estimate import METRIC_TITLES, METRICS
    from prm_factory.audit.report import write_report

    store = _open(audit)
    shown = write_report(store, output, page_url, json_output, replicates, seed)
    console = Console()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("source")
    for metric in METRICS:
        table.add_column(METRIC_TITLES[metric], no_wrap=True)
    for source in shown.sources:
        cells = []
        for metric in METRICS:
            figure = shown.estimates.figures[source][metric]
            cells.append(
                "–"
                if figure.estimate is None
                else f"{100 * figure.estimate:.1f} [{100 * figure.low:.1f}, {100 * figure.high:.1f}]"
                f" n={figure.n}"
            )
        table.add_row(source, *cells)
    print_whole(console, table)
    coverage = shown.estimates.coverage
    found = shown.kappa
    interval = "" if found.low is None else f" [{found.low:.2f}, {found.high:.2f}]"
    kappa = "–" if found.kappa is None else f"{found.kappa:.2f}{interval} over {found.n} steps"
    console.print(
        f"{coverage.decided} steps decided, {coverage.undecided} undecided; strata covered "
        f"{coverage.covered_strata}/{coverage.strata}; kappa {kappa}; wrote {output}"
        + (f" and {json_output}" if json_output else ""),
        highlight=False,
        soft_wrap=True,
    )


@app.command("status")
@_audit_file_errors
def status(audit: AuditArgument) -> None:
    """Answers so far, per reviewer, and the reviews the sample still asks for."""
    store = _open(audit)
    console = Console()
    reviewers = store.reviewers()
    for name in reviewers:
        progress = store.progress(name)
        console.print(
            f"{name}: {progress.reviewer_answered} answered, "
            f"{progress.reviewer_queue - progress.reviewer_answered} open",
            highlight=False,
        )
    total = store.progress(reviewers[0] if reviewers else "-")
    console.print(
        f"{total.answered_slots} of {total.needed_slots} reviews given; {len(store.items())} steps",
        highlight=False,
    )


@app.command("labels")
@_audit_file_errors
def labels(
    audit: AuditArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="JSON Lines file to write.")] = Path(
        "human-labels.jsonl"
    ),
) -> None:
    """The answers as per-step `human` labels (a JSON object per step: verdict, reviewers, time, answers)."""
    from dataclasses import asdict

    from prm_factory.audit.human import human_labels

    store = _open(audit)
    items = {item.item_id: (item.chain_id, item.step_index) for item in store.items()}
    produced = human_labels(items, store.answers())
    meta = store.meta()
    with output.open("w", encoding="utf-8") as sink:
        for row in produced:
            record = {
                "dataset_root": meta["dataset_root"],
                "dataset_version": int(meta["dataset_version"]),
                **asdict(row),
            }
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for row in produced:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    Console().print(f"wrote {len(produced)} human step labels {counts} to {output}", highlight=False)


ToolOption = Annotated[str, typer.Option("--tool", help="label-studio | argilla")]


@app.command("export")
@_audit_file_errors
def export_command(
    audit: AuditArgument,
    tool: ToolOption,
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write the tool's files into.")],
) -> None:
    """Write the sample for Label Studio (tasks.json + labeling-config.xml) or Argilla (a Dataset.from_disk
    folder)."""
    from prm_factory.audit.interop import InteropError, export

    store = _open(audit)
    try:
        written = export(store, tool, output)
    except InteropError as error:
        fail(str(error))
    Console().print(
        f"wrote {len(store.items())} steps for {tool}: {', '.join(str(p) for p in written)}",
        highlight=False,
        soft_wrap=True,
    )


@app.command("import")
@_audit_file_errors
def import_command(
    audit: AuditArgument,
    tool: ToolOption,
    export_file: Annotated[
        Path,
        typer.Argument(
            metavar="EXPORT",
            help="The tool's export: Label Studio JSON / JSON-MIN, Argilla records.json or folder.",
        ),
    ],
) -> None:
    """Add the answers of a Label Studio or Argilla export to AUDIT (twice adds nothing)."""
    from prm_factory.audit.interop import InteropError, import_answers, read

    store = _open(audit)
    if not export_file.exists():
        fail(f"not found: {export_file}")
    try:
        answers = read(tool, export_file)
        added, present = import_answers(store, answers, tool)
    except InteropError as error:
        fail(str(error), 1)
    reviewers = sorted({a.reviewer for a in answers})
    Console().print(
        f"{added} answers added, {present} already there, from {len(reviewers)} reviewers "
        f"({', '.join(reviewers)})",
        highlight=False,
        soft_wrap=True,
    )
