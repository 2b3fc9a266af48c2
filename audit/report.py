"""The audit report: per source and for the consensus, precision and recall of `incorrect` and of `correct`
and first-error agreement with their intervals, the reviewers' agreement, the steps where a source was wrong
(linked to the review page), and one plot of every interval.

The same section goes into `prm-factory audit report` (a page of its own) and `prm-factory report --audit`
(a section of the dataset report): `section_html`. Like the dataset report, the page is self-contained (CSS
inline, the plot a base64 SVG, no script) and rendered with autoescape: notes and chain ids are user input.
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from prm_factory.audit.estimate import (
    METRIC_TITLES,
    METRICS,
    AuditEstimates,
    Kappa,
    ReviewedStep,
    estimate,
    kappa_with_interval,
)
from prm_factory.audit.human import human_labels
from prm_factory.audit.store import AuditStore, effective_answers

DEFAULT_PAGE_URL = "http://127.0.0.1:8765"
MAX_WRONG_SHOWN = 40
"""Steps listed per source where it disagreed with the reviewers (all of them are in the JSON)."""

SOURCE_COLOURS = {
    "verifier": "#1565c0",
    "reference": "#2e7d32",
    "mc": "#8e24aa",
    "judge": "#6d4c41",
    "prm": "#00838f",
    "consensus": "#ef6c00",
}


@dataclass(frozen=True)
class WrongStep:
    item_id: int
    source: str
    said: str
    human: str
    stratum: str
    chain_id: str
    step_index: int
    note: str


@dataclass(frozen=True)
class AuditReport:
    meta: dict[str, str]
    sources: list[str]
    estimates: AuditEstimates
    kappa: Kappa
    kappa_by_pair: dict[str, Kappa]
    answers: int
    answered_items: int
    items: int
    by_reviewer: dict[str, int]
    answer_mix: dict[str, int]
    wrong: dict[str, list[WrongStep]]
    uncovered: list[tuple[str, int]]  # strata with no decided review, with their sizes


def reviewed_steps(store: AuditStore) -> list[ReviewedStep]:
    """Every answered item with its resolved human label (None where not decided)."""
    items = {item.item_id: item for item in store.items()}
    labels = human_labels({i: (item.chain_id, item.step_index) for i, item in items.items()}, store.answers())
    by_step = {(label.chain_id, label.step_index): label for label in labels}
    steps = []
    for item in items.values():
        label = by_step.get((item.chain_id, item.step_index))
        if label is None:
            continue
        decided = label.verdict if label.verdict in ("correct", "incorrect") else None
        steps.append(
            ReviewedStep(
                item.item_id,
                item.stratum,
                item.votes,
                item.first_error_of,
                decided,  # type: ignore[arg-type]
                label.first_error,
            )
        )
    return steps


def kappa_pairs(store: AuditStore) -> dict[str, list[tuple[str, str]]]:
    """Per reviewer pair ("ana+ben"), the decided answers both gave to the same step: the first two
    reviewers of each step, in the order they answered."""
    by_item: dict[int, list] = {}
    for answer in sorted(effective_answers(store.answers()).values(), key=lambda a: a.answer_id):
        if answer.answer != "cant_tell":
            by_item.setdefault(answer.item_id, []).append(answer)
    pairs: dict[str, list[tuple[str, str]]] = {}
    for given in by_item.values():
        if len(given) >= 2:
            first, second = sorted(given[:2], key=lambda a: a.reviewer)
            pairs.setdefault(f"{first.reviewer}+{second.reviewer}", []).append((first.answer, second.answer))
    return pairs


def collect(store: AuditStore, replicates: int = 2000, seed: int = 0) -> AuditReport:
    """Everything the report shows, from the audit file alone (the dataset is not read again)."""
    strata = store.strata()
    populations = {s.stratum: s.population for s in strata}
    sources = store.sources()
    steps = reviewed_steps(store)
    estimates = estimate(steps, populations, sources, replicates=replicates, seed=seed)
    pairs = kappa_pairs(store)
    pooled = [pair for group in pairs.values() for pair in group]
    answers = store.answers()
    chosen = effective_answers(answers)
    notes = {item_id: a.note for (item_id, _), a in chosen.items() if a.note}
    items = {item.item_id: item for item in store.items()}
    wrong: dict[str, list[WrongStep]] = {source: [] for source in sources}
    for step in steps:
        if step.human is None:
            continue
        item = items[step.item_id]
        for source in sources:
            said = step.votes.get(source)
            if said is not None and said != step.human:
                wrong[source].append(
                    WrongStep(
                        step.item_id,
                        source,
                        said,
                        step.human,
                        step.stratum,
                        item.chain_id,
                        item.step_index,
                        notes.get(step.item_id, ""),
                    )
                )
    covered = {s.stratum for s in steps if s.human is not None}
    return AuditReport(
        meta=store.meta(),
        sources=sources,
        estimates=estimates,
        kappa=kappa_with_interval(pooled, replicates=replicates, seed=seed),
        kappa_by_pair={
            name: kappa_with_interval(group, replicates, seed) for name, group in sorted(pairs.items())
        },
        answers=len(answers),
        answered_items=len({a.item_id for a in answers}),
        items=len(items),
        by_reviewer=dict(sorted(Counter(a.reviewer for a in chosen.values()).items())),
        answer_mix=dict(sorted(Counter(a.answer for a in chosen.values()).items())),
        wrong=wrong,
        uncovered=[(s.stratum, s.population) for s in strata if s.stratum not in covered],
    )


# ---------------------------------------------------------------------------------------------- plot


def plot_intervals(report: AuditReport) -> str:
    """One panel per figure: each source's estimate and interval (a base64 SVG data URI)."""
    import matplotlib
    from matplotlib.figure import Figure

    sources = report.sources
    figure = Figure(figsize=(11, 1.2 + 0.32 * len(sources) * 1.0 + 1.2), layout="constrained")
    axes = figure.subplots(1, len(METRICS), sharey=True)
    for ax, metric in zip(axes, METRICS, strict=True):
        ax.set_title(METRIC_TITLES[metric], fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"], fontsize=7)
        ax.grid(axis="x", color="#eceff1")
        for row, source in enumerate(sources):
            figure_ = report.estimates.figures[source][metric]
            colour = SOURCE_COLOURS.get(source, "#455a64")
            if figure_.estimate is None:
                ax.text(0.5, row, "no steps", ha="center", va="center", fontsize=7, color="#90a4ae")
                continue
            ax.errorbar(
                [figure_.estimate],
                [row],
                xerr=[[figure_.estimate - figure_.low], [figure_.high - figure_.estimate]],
                fmt="o",
                color=colour,
                markersize=5,
                capsize=3,
            )
        ax.set_yticks(range(len(sources)), sources, fontsize=8)
        ax.set_ylim(len(sources) - 0.5, -0.5)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "audit-intervals", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# ---------------------------------------------------------------------------------------------- html

PAGES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


PAGES.filters["percent"] = _percent


def section_html(report: AuditReport, page_url: str = DEFAULT_PAGE_URL) -> Markup:
    """The audit section (tables, plot, wrong steps), escaped, to embed in a page."""
    html = PAGES.get_template("audit_section.html.j2").render(
        report=report,
        design=json.loads(report.meta.get("design", "{}")),
        metrics=METRICS,
        titles=METRIC_TITLES,
        plot=plot_intervals(report),
        page_url=page_url.rstrip("/"),
        max_wrong=MAX_WRONG_SHOWN,
    )
    return Markup(html)  # rendered with autoescape above: every text in it is escaped


def render_html(
    report: AuditReport, page_url: str = DEFAULT_PAGE_URL, generated: datetime | None = None
) -> str:
    return PAGES.get_template("audit_report.html.j2").render(
        report=report,
        section=section_html(report, page_url),
        generated=(generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
    )


def report_json(report: AuditReport) -> dict[str, Any]:
    """The figures as JSON (`audit report --json`): every estimate, kappa, coverage and every wrong step."""
    return {
        "dataset_root": report.meta.get("dataset_root"),
        "dataset_version": report.meta.get("dataset_version"),
        "design": json.loads(report.meta.get("design", "{}")),
        "sources": report.sources,
        "figures": {
            source: {metric: asdict(value) for metric, value in metrics.items()}
            for source, metrics in report.estimates.figures.items()
        },
        "coverage": asdict(report.estimates.coverage),
        "replicates": report.estimates.replicates,
        "kappa": asdict(report.kappa),
        "kappa_by_pair": {name: asdict(value) for name, value in report.kappa_by_pair.items()},
        "answers": report.answers,
        "answered_items": report.answered_items,
        "items": report.items,
        "by_reviewer": report.by_reviewer,
        "answer_mix": report.answer_mix,
        "wrong": {source: [asdict(step) for step in steps] for source, steps in report.wrong.items()},
        "uncovered_strata": [{"stratum": key, "population": n} for key, n in report.uncovered],
    }


def write_report(
    store: AuditStore,
    output: Path,
    page_url: str = DEFAULT_PAGE_URL,
    json_output: Path | None = None,
    replicates: int = 2000,
    seed: int = 0,
) -> AuditReport:
    report = collect(store, replicates, seed)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_html(report, page_url), encoding="utf-8")
    if json_output is not None:
        json_output.write_text(json.dumps(report_json(report), indent=1), encoding="utf-8")
    return report
