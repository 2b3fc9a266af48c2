"""The run report shown in the Prefect UI: a markdown artifact per run, keyed by config name.

Keying by the config's name (`prm-run-<name>`) makes the UI show one artifact history per scheduled config,
so an operator sees label counts, cost and dataset version of every hourly run side by side.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from prm_factory.labels.tally import RunTally

VERDICTS = ("correct", "incorrect", "unverifiable")
CONSENSUS = ("positive", "negative", "disputed", "unlabeled")


@dataclass(frozen=True)
class RunReport:
    """What the artifact shows; built from a run's totals (labels/tally.py), so tested without Prefect."""

    run_id: str
    config_name: str
    status: str
    error: str
    dataset_root: str
    version: int | None
    problems: int
    rejected: int
    tally: RunTally
    stage_seconds: dict[str, float]
    cached_stages: Sequence[str] = field(default_factory=tuple)


def artifact_key(config_name: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    slug = re.sub(r"[^a-z0-9-]+", "-", config_name.lower()).strip("-") or "default"
    return f"prm-run-{slug}"


def render_markdown(report: RunReport) -> str:
    """Markdown: headline, label counts (consensus x verdict), cost, dataset version."""
    tally = report.tally
    sampled_tokens, rollout_tokens, labeled = tally.sampled_tokens, tally.rollout_tokens, tally.labeled_steps
    seconds = sum(report.stage_seconds.values())
    lines = [
        f"# PRM run `{report.run_id}`: {report.status}",
        "",
        f"- config: `{report.config_name}`",
        f"- dataset: `{report.dataset_root}`, version **{report.version}**",
        f"- problems {report.problems}, chains {tally.chains} ({tally.correct_chains} correct), "
        f"steps {tally.steps}, rejected input rows {report.rejected}",
    ]
    if report.error:
        lines.append(f"- error: `{report.error}`")
    if report.cached_stages:
        lines.append(f"- resumed from cache: {', '.join(report.cached_stages)}")
    by = tally.labels
    lines += ["", "## Step labels (consensus x verifier verdict)", ""]
    lines.append("| consensus | " + " | ".join(VERDICTS) + " | total |")
    lines.append("|---" * (len(VERDICTS) + 2) + "|")
    for label in CONSENSUS:
        counts = [by[(label, v)] for v in VERDICTS]
        lines.append(f"| {label} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")
    per_label = f"{(sampled_tokens + rollout_tokens) / labeled:.1f}" if labeled else "n/a"
    lines += [
        "",
        "## Cost",
        "",
        "| sampled tokens | rollout tokens | stage seconds | tokens per labeled step |",
        "|---|---|---|---|",
        f"| {sampled_tokens} | {rollout_tokens} | {seconds:.1f} | {per_label} |",
        "",
        "Stage seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in report.stage_seconds.items()),
    ]
    return "\n".join(lines) + "\n"


def publish(report: RunReport) -> None:
    """Create the markdown artifact on the flow run's Prefect server (needs a flow run context)."""
    from prefect.artifacts import create_markdown_artifact

    create_markdown_artifact(
        markdown=render_markdown(report),
        key=artifact_key(report.config_name),
        description=f"run {report.run_id}: {report.status}, dataset version {report.version}",
    )
