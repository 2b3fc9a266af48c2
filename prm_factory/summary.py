"""The end-of-run report: where the data is, what was labeled, and how much the labels can be trusted."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Console
from rich.table import Table

from prm_factory.console import print_whole
from prm_factory.flows.run_summary import RunSummary

# Below these, Monte Carlo values mostly say "this model rarely finishes correctly", not "this step is bad".
LOW_ACCURACY = 0.10
LOW_POSITIVE_SHARE = 0.10


def signal_warning(summary: RunSummary) -> str | None:
    """A plain sentence when MC values carry little signal, else None."""
    share = summary.tally.reaching_share
    if summary.chain_accuracy < LOW_ACCURACY or share < LOW_POSITIVE_SHARE:
        return (
            f"MC values carry little signal in this run: {summary.chain_accuracy:.0%} of chains are "
            f"correct and {share:.0%} of probed step prefixes ever reach the reference answer, so most "
            "soft labels are 0 because the model is weak, not because the steps are wrong. Point "
            "model.path at a stronger local checkpoint for useful MC labels (see README)."
        )
    return None


def label_table(summary: RunSummary) -> Table:
    """Consensus label (rows) against the verifier's verdict (columns)."""
    verdicts = ("correct", "incorrect", "unverifiable")
    table = Table(title="step labels: consensus x verifier verdict")
    table.add_column("consensus")
    for name in verdicts:
        table.add_column(name, justify="right")
    table.add_column("total", justify="right")
    by = summary.tally.labels
    for consensus in ("positive", "negative", "disputed", "unlabeled"):
        counts = [by[(consensus, v)] for v in verdicts]
        table.add_row(consensus, *map(str, counts), str(sum(counts)))
    totals = [sum(by[(c, v)] for c in ("positive", "negative", "disputed", "unlabeled")) for v in verdicts]
    table.add_row("total", *map(str, totals), str(sum(totals)), style="bold")
    return table


def engine_line(engine: dict) -> str:
    """One line of the engine's host-dependent settings and why (the runs table's `engine` column).

    >>> engine_line({"dtype": "float32", "dtype_reason": "auto", "threads_reason": "all 2 cores",
    ...              "cpu_flags": ["avx2"], "engine_process": "inline", "engine_process_reason": "auto"})
    'engine: dtype float32 (auto); threads: all 2 cores; process: inline (auto); CPU flags: avx2'
    """
    if "backend" in engine:
        return f"engine: {engine['backend']} servers {', '.join(engine.get('base_urls') or [])}"
    flags = " ".join(engine.get("cpu_flags") or []) or "-"
    process = engine.get("engine_process")  # runs recorded before it kept none
    where = f"process: {process} ({engine.get('engine_process_reason')}); " if process else ""
    return (
        f"engine: dtype {engine.get('dtype')} ({engine.get('dtype_reason')}); "
        f"threads: {engine.get('threads_reason')}; {where}CPU flags: {flags}"
    )


def print_summary(summary: RunSummary, console: Console | None = None, log_path: Path | None = None) -> None:
    """The report after the progress bars; `log_path` is where the engine's and libraries' output went."""
    console = console or Console()
    tally = summary.tally
    console.rule(f"run {summary.run_id}: {summary.status}")
    if summary.error:
        console.print(f"[red]error:[/red] {summary.error}", soft_wrap=True)
    console.print(f"dataset: {summary.dataset_root}  (version {summary.version})", soft_wrap=True)
    if log_path is not None:
        console.print(f"log (engine and library output): {log_path}", soft_wrap=True, highlight=False)
    console.print(
        f"problems {summary.problems}, chains {summary.chains}, steps {summary.steps}, "
        f"rejected input rows {len(summary.rejected)}"
    )
    for row in summary.rejected:
        console.print(f"  rejected {row.file}:{row.line} field {row.field}: {row.reason}")
    console.print(
        f"chain outcomes: {dict(tally.outcomes)}; chain accuracy {summary.chain_accuracy:.1%}; "
        f"rollout tokens {summary.rollout_tokens}; mean MC value {tally.mean_mc_value:.3f} "
        f"over {tally.mc_count} probed prefixes"
    )
    console.print("stage seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in summary.stage_seconds.items()))
    if summary.engine:
        console.print(engine_line(summary.engine), soft_wrap=True, highlight=False)
    if tally.steps:
        print_whole(console, label_table(summary))
    warning = signal_warning(summary) if tally.chains else None
    if warning:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    sql = (
        "SELECT verdict, consensus, count(*) AS n, avg(mc_value) AS mean_mc "
        "FROM steps GROUP BY ALL ORDER BY n DESC"
    )
    console.print("query it:")
    console.print(
        f"  prm-factory query --dataset {shlex.quote(summary.dataset_root)} {shlex.quote(sql)}",
        soft_wrap=True,
    )
