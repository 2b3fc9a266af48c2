"""`prm-factory report`: one self-contained HTML page describing a dataset version.

Its options are the shared ones (prm_factory.commands.options) and its error handling the dataset commands'
(prm_factory.commands.dataset), so --dataset, --version (number or tag) and --as-of mean the same everywhere
and a storage error is one line and exit 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from prm_factory.commands.dataset import _dataset, _fail_cleanly, _version
from prm_factory.commands.options import AsOfOption, DatasetOption, VersionOption
from prm_factory.console import fail

app = typer.Typer()
"""The report command; prm_factory/cli.py merges it into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


@app.command("report")
@_fail_cleanly
def report_command(
    dataset: DatasetOption = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="HTML file to write (default: report-v<VERSION>.html)."),
    ] = None,
    samples: Annotated[
        int, typer.Option("--samples", min=0, help="Sample chains shown with their step labels.")
    ] = 6,
    search: Annotated[
        Path | None,
        typer.Option("--search", help="JSON of `prm-factory search-eval`: adds its table and plot."),
    ] = None,
    audit: Annotated[
        Path | None,
        typer.Option("--audit", help="An audit folder (`prm-factory audit sample`): adds its figures."),
    ] = None,
    audit_page_url: Annotated[
        str, typer.Option(help="Where `audit serve` runs: the audit's wrong steps link there.")
    ] = "http://127.0.0.1:8765",
) -> None:
    """Write an HTML report of a version: counts, label mix, MC values, agreement, first errors, cost (and
    with --audit, each source's precision and recall measured by human review)."""
    from prm_factory.reports.dataset_report import (
        write_report,  # matplotlib loads only when a report is asked for
    )

    data = _dataset(dataset)
    resolved = _version(data, version, as_of)
    target = output or Path(f"report-v{resolved}.html")
    results = None
    if search is not None:
        import json

        results = json.loads(search.read_text(encoding="utf-8"))
    section = None
    if audit is not None:
        section = _audit_section(audit, audit_page_url)
    shown = write_report(data, target, resolved, n_samples=samples, search=results, audit=section)
    Console().print(
        f"wrote report of version {shown.version} ({shown.headline['chains']} chains, "
        f"{shown.headline['steps']} steps, {len(shown.samples)} samples) to {target}",
        highlight=False,
        soft_wrap=True,
    )


def _audit_section(audit: Path, page_url: str):  # -> markupsafe.Markup
    """The audit's section of the page (the figures of the version the audit was drawn from)."""
    from prm_factory.audit.report import collect, section_html
    from prm_factory.audit.store import AuditError, AuditStore

    try:
        store = AuditStore.open(audit)
    except AuditError as error:
        fail(str(error), 1)
    return section_html(collect(store), page_url)
