"""One self-contained HTML page describing a dataset version: what `prm-factory report` writes.

The page is meant to be mailed, attached to an issue or opened from an object store, so it carries
everything inline: CSS in a <style> element, plots as base64 SVG data URIs (each SVG is its own document, so
matplotlib's element ids cannot clash between plots), no script and no external reference. The markup is
one Jinja template (reports/templates/report.html.j2) rendered with autoescape, so every text that comes
from the dataset (problems, chains, steps, reasons, ids) is HTML-escaped: it is model output or user input.

Numbers are read with the same DuckDB views `prm-factory query` uses (storage.sql), aggregated in SQL, so
the page costs the same on ten million steps as on ten: only histograms and a few sample chains reach
Python.

>>> write_report(Dataset("prm-datasets/default"), Path("report.html"))          # doctest: +SKIP
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import jinja2

from prm_factory.labels.registry import registered_names
from prm_factory.reports.weights import (
    USED_SQL,
    dataset_joint_tables_of,
    dataset_tables_of,
    joint_rows,
    per_labeler_sources,
    weight_rows,
    weight_warnings,
)
from prm_factory.schemas.step_labels import first_error_column
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import connect
from prm_factory.storage.stats import HEADLINE_SQL

MAX_STEP_INDEX = 24
"""Step indices at or past this share one bucket ("24+") so long chains do not flatten the plots."""

MAX_STEP_CHARS = 1500
"""Longer step texts are cut in the sample chains: a runaway generation should not fill the page."""

MC_BINS = 20

VERDICTS = ("correct", "incorrect", "unverifiable")
CONSENSUS = ("positive", "negative", "disputed", "unlabeled")
COLOURS = {
    "correct": "#2e7d32",
    "positive": "#2e7d32",
    "incorrect": "#c62828",
    "negative": "#c62828",
    "disputed": "#ef6c00",
    "unverifiable": "#78909c",
    "unlabeled": "#b0bec5",
}
FIRST_ERROR_COLOURS = {"verifier": "#1565c0", "mc": "#8e24aa", "consensus": "#ef6c00"}
"""Colours of the first sources in the first-error plot; other label sources take PALETTE's in turn."""
PALETTE = ("#00897b", "#6d4c41", "#c0ca33", "#5e35b1", "#d81b60", "#546e7a")


# ---------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class SampleChain:
    """One chain shown on the page with its problem and its steps (dicts of step columns)."""

    chain: dict[str, Any]
    steps: list[dict[str, Any]]


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, already aggregated; `render_html` turns it into HTML."""

    dataset_root: str
    version: int
    headline: dict[str, Any]
    runs: list[dict[str, Any]]
    by_step_index: list[dict[str, Any]]  # one row per step index bucket: label counts, agreement, cost
    mc_histogram: list[dict[str, Any]]  # verdict, bin, n
    agreement_matrix: list[dict[str, Any]]  # verdict, hard_label, n
    first_error_positions: list[dict[str, Any]]  # source, position (None = no error), n
    samples: list[SampleChain]
    label_sources: list[dict[str, Any]] = field(default_factory=list)  # per label source: counts, labelers
    consensus_weights: list[dict[str, Any]] = field(
        default_factory=list
    )  # reports.weights: what votes weighed


BY_STEP_INDEX_SQL = f"""
SELECT
    least(step_index, {MAX_STEP_INDEX}) AS step_index,
    {", ".join(f"count(*) FILTER (WHERE verdict = '{v}') AS verdict_{v}" for v in VERDICTS)},
    {", ".join(f"count(*) FILTER (WHERE consensus = '{c}') AS consensus_{c}" for c in CONSENSUS)},
    count(*) FILTER (WHERE labels_agree IS NOT NULL) AS n_compared,
    count(*) FILTER (WHERE labels_agree) AS n_agree,
    count(*) FILTER (WHERE mc_value IS NOT NULL) AS n_mc_labels,
    count(*) FILTER (WHERE value_source = 'rollouts') AS n_rollout_labels,
    coalesce(sum(rollout_tokens), 0)::BIGINT AS rollout_tokens,
    coalesce(sum(rollout_seconds), 0.0) AS rollout_seconds
FROM steps
GROUP BY 1
ORDER BY 1
"""

MC_HISTOGRAM_SQL = f"""
SELECT verdict, least(floor(mc_value * {MC_BINS}), {MC_BINS - 1})::INTEGER AS bin, count(*) AS n
FROM steps
WHERE mc_value IS NOT NULL
GROUP BY ALL
ORDER BY ALL
"""

AGREEMENT_SQL = "SELECT verdict, hard_label, count(*) AS n FROM steps GROUP BY ALL ORDER BY ALL"


def _capped(column: str) -> str:
    """SQL for a step index capped at MAX_STEP_INDEX that stays NULL (DuckDB's least() skips NULLs)."""
    return f"CASE WHEN {column} IS NULL THEN NULL ELSE least({column}, {MAX_STEP_INDEX}) END"


def first_error_sql(sources: Sequence[str]) -> str:
    """Where each label source (its `first_error_<source>` column of chains) and the consensus put each
    chain's first error; a NULL position is a chain without one."""
    parts = [
        f"SELECT '{source}' AS source, {_capped(first_error_column(source))} AS position, count(*) AS n "
        "FROM chains GROUP BY ALL"
        for source in sources
    ]
    parts.append(
        f"SELECT 'consensus', {_capped('first_error_index')}, count(*) FROM first_errors GROUP BY ALL"
    )
    return "\nUNION ALL\n".join(parts)


LABEL_SOURCES_SQL = """
SELECT source, count(*) AS steps_labelled,
       count(*) FILTER (WHERE verdict = 'correct') AS correct,
       count(*) FILTER (WHERE verdict = 'incorrect') AS incorrect,
       count(*) FILTER (WHERE verdict = 'unverifiable') AS unverifiable,
       avg(value) AS mean_value,
       string_agg(DISTINCT labeler, ', ' ORDER BY labeler) AS labelers
FROM step_labels
GROUP BY source
"""

SAMPLE_LABELS_SQL = """
SELECT chain_id, step_index, source, verdict, value, reason
FROM step_labels
WHERE chain_id IN (SELECT unnest($chain_ids)) AND source NOT IN ('verifier', 'mc')
ORDER BY chain_id, step_index, source
"""
"""The labels of the sample chains' steps beyond the verifier's and MC's (which have their own pills)."""


RUNS_SQL = """
SELECT left(run_id, 16) AS run_id, started_at, status, model, left(config_hash, 12) AS config_hash,
       n_problems, n_chains, n_steps, n_rejected, chain_accuracy, rollout_tokens
FROM runs
ORDER BY started_at, run_id
"""

# Round-robin over three kinds of chain (with a disputed step, solved, other), so a few samples show the
# interesting cases; chain ids are content hashes, so ordering by them is a stable pseudo-random pick.
SAMPLE_CHAINS_SQL = """
WITH disputes AS (SELECT chain_id, bool_or(consensus = 'disputed') AS disputed FROM steps GROUP BY chain_id),
ranked AS (
    SELECT c.chain_id, kind, row_number() OVER (PARTITION BY kind ORDER BY c.chain_id) AS rank
    FROM chains AS c
    LEFT JOIN disputes AS d USING (chain_id),
    LATERAL (SELECT CASE WHEN d.disputed THEN 0 WHEN c.outcome = 'correct' THEN 1 ELSE 2 END AS kind)
)
SELECT c.* EXCLUDE (prompt, text, sampling, outcome_evidence), p.source, p.domain, p.text AS problem_text,
       p.reference_answer
FROM ranked AS r
JOIN chains AS c USING (chain_id)
LEFT JOIN problems AS p USING (problem_id)
ORDER BY r.rank, r.kind
LIMIT $n
"""

SAMPLE_STEPS_SQL = """
SELECT chain_id, step_index, text, verdict, verdict_reason, verifier, mc_value, n_rollouts,
       n_rollouts_correct, hard_label, value_source, consensus, labels_agree, first_error
FROM steps
WHERE chain_id IN (SELECT unnest($chain_ids))
ORDER BY chain_id, step_index
"""


def _rows(connection: duckdb.DuckDBPyConnection, sql: str, **params: Any) -> list[dict[str, Any]]:
    cursor = connection.execute(sql, params or None)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def collect(dataset: Dataset, version: int | None = None, n_samples: int = 6) -> ReportData:
    """Read and aggregate everything the page shows from one dataset version (None = latest)."""
    resolved = dataset.resolve_version(version)
    connection = connect(dataset, resolved, registered_names())
    try:
        headline: dict[str, Any] = {}
        for sql in HEADLINE_SQL.values():
            headline.update(_rows(connection, sql)[0])
        chains = _rows(connection, SAMPLE_CHAINS_SQL, n=n_samples) if n_samples > 0 else []
        for chain in chains:  # each label source's first error, by source
            chain["first_errors"] = {
                name.removeprefix("first_error_"): chain[name]
                for name in chain
                if name.startswith("first_error_")
            }
        chain_ids = [chain["chain_id"] for chain in chains]
        steps = _rows(connection, SAMPLE_STEPS_SQL, chain_ids=chain_ids) if chain_ids else []
        others = _rows(connection, SAMPLE_LABELS_SQL, chain_ids=chain_ids) if chain_ids else []
        for step in steps:
            step["labels"] = [
                label
                for label in others
                if (label["chain_id"], label["step_index"]) == (step["chain_id"], step["step_index"])
            ]
        label_sources = _rows(connection, LABEL_SOURCES_SQL)
        present = {row["source"] for row in label_sources}  # sources that labelled this version
        chain_columns = {row[0] for row in connection.execute("DESCRIBE chains").fetchall()}
        ordered = [
            *(s for s in registered_names() if s in present),
            *sorted(present - set(registered_names())),
        ]
        with_first_errors = [s for s in ordered if first_error_column(s) in chain_columns]
        return ReportData(
            dataset_root=dataset.root,
            version=resolved,
            headline=headline,
            runs=_rows(connection, RUNS_SQL),
            by_step_index=_rows(connection, BY_STEP_INDEX_SQL),
            mc_histogram=_rows(connection, MC_HISTOGRAM_SQL),
            agreement_matrix=_rows(connection, AGREEMENT_SQL),
            first_error_positions=_rows(connection, first_error_sql(with_first_errors)),
            samples=[
                SampleChain(chain, [step for step in steps if step["chain_id"] == chain["chain_id"]])
                for chain in chains
            ],
            label_sources=label_sources,
            consensus_weights=weight_rows(
                _rows(connection, USED_SQL), dataset_tables_of(dataset), per_labeler_sources()
            )
            + joint_rows(lambda sql: _rows(connection, sql), dataset_joint_tables_of(dataset)),
        )
    finally:
        connection.close()


# ---------------------------------------------------------------------------------------------- plots


def _figure(width: float = 7.5, height: float = 3.2) -> Any:
    """A matplotlib Figure outside pyplot: no global figure registry, no GUI backend, safe in threads."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg_data_uri(figure: Any, salt: str) -> str:
    """The figure as a base64 SVG data URI; the salt makes matplotlib's element ids stable per plot."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _no_data(ax: Any, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#607d8b")
    ax.set_xticks([])
    ax.set_yticks([])


def _headroom(ax: Any, tallest: float) -> None:
    """Leave room above the tallest bar for the legend (stacked zero-height bars pin autoscaling).

    Only used on count axes, so their ticks are whole numbers too.
    """
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(0, max(tallest, 1) * 1.3)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _index_labels(indices: Sequence[int]) -> list[str]:
    return [f"{i}+" if i >= MAX_STEP_INDEX else str(i) for i in indices]


def plot_label_mix(rows: list[dict[str, Any]]) -> str:
    """Stacked bars per step index: verifier verdicts (left) and consensus labels (right)."""
    figure = _figure(height=3.4)
    for ax, (prefix, labels, title) in zip(
        figure.subplots(1, 2),
        (("verdict", VERDICTS, "verifier verdict"), ("consensus", CONSENSUS, "consensus label")),
        strict=True,
    ):
        ax.set_title(f"{title} by step index", fontsize=10)
        if not rows:
            _no_data(ax, "no steps")
            continue
        positions = list(range(len(rows)))
        bottom = [0] * len(rows)
        for label in labels:
            counts = [row[f"{prefix}_{label}"] for row in rows]
            ax.bar(positions, counts, bottom=bottom, color=COLOURS[label], label=label, width=0.8)
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        ax.set_xticks(positions, _index_labels([row["step_index"] for row in rows]), fontsize=7)
        ax.set_xlabel("step index")
        ax.set_ylabel("steps")
        _headroom(ax, max(bottom))
        ax.legend(fontsize=7, loc="upper right")
    return _svg_data_uri(figure, "label-mix")


def plot_mc_histogram(rows: list[dict[str, Any]]) -> str:
    """MC value histogram, stacked by the verifier's verdict on the same step."""
    figure = _figure()
    ax = figure.subplots()
    ax.set_title("Monte Carlo value of steps (stacked by verdict)", fontsize=10)
    if not rows:
        _no_data(ax, "no MC values")
        return _svg_data_uri(figure, "mc-histogram")
    width = 1 / MC_BINS
    bottom = [0] * MC_BINS
    for verdict in VERDICTS:
        counts = [0] * MC_BINS
        for row in rows:
            if row["verdict"] == verdict:
                counts[row["bin"]] += row["n"]
        lefts = [i * width for i in range(MC_BINS)]
        ax.bar(lefts, counts, width=width, bottom=bottom, align="edge", color=COLOURS[verdict], label=verdict)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    ax.set_xlim(0, 1)
    ax.set_xlabel("MC value (fraction of rollouts from the prefix that reach the reference)")
    ax.set_ylabel("steps")
    _headroom(ax, max(bottom))
    ax.legend(fontsize=7, loc="upper right")
    return _svg_data_uri(figure, "mc-histogram")


def plot_agreement(matrix: list[dict[str, Any]], by_index: list[dict[str, Any]]) -> str:
    """Verdict x MC hard label counts (left) and the agreement rate per step index (right)."""
    figure = _figure(height=3.4)
    left, right = figure.subplots(1, 2, width_ratios=(1, 1.4))
    hard_labels: tuple[bool | None, ...] = (True, False, None)
    counts = [
        [sum(r["n"] for r in matrix if r["verdict"] == v and r["hard_label"] is h) for h in hard_labels]
        for v in VERDICTS
    ]
    peak = max((n for row in counts for n in row), default=0)
    left.imshow(counts, cmap="Blues", vmin=0, vmax=max(peak, 1), aspect="auto")
    for i, row in enumerate(counts):
        for j, n in enumerate(row):
            left.text(j, i, str(n), ha="center", va="center", color="white" if n > peak / 2 else "black")
    left.set_xticks(range(3), ["MC: can reach", "MC: cannot", "no MC label"], fontsize=7)
    left.set_yticks(range(3), VERDICTS, fontsize=8)
    left.set_title("verdict vs MC hard label (steps)", fontsize=10)
    right.set_title("agreement rate where both labelled", fontsize=10)
    compared = [row for row in by_index if row["n_compared"]]
    if not compared:
        _no_data(right, "no step has both labels")
    else:
        positions = list(range(len(compared)))
        rates = [row["n_agree"] / row["n_compared"] for row in compared]
        right.bar(positions, rates, color="#1565c0", width=0.7)
        right.set_xticks(positions, _index_labels([row["step_index"] for row in compared]), fontsize=7)
        right.set_ylim(0, 1.05)
        right.set_xlabel("step index")
        right.set_ylabel("agreement rate")
    return _svg_data_uri(figure, "agreement")


def plot_first_errors(rows: list[dict[str, Any]]) -> str:
    """Where each source puts a chain's first error; the last group counts chains with none."""
    figure = _figure()
    ax = figure.subplots()
    ax.set_title("first-error position per chain", fontsize=10)
    if not rows:
        _no_data(ax, "no chains")
        return _svg_data_uri(figure, "first-errors")
    positions = sorted({row["position"] for row in rows if row["position"] is not None})
    slots = [*positions, None]
    sources = list(dict.fromkeys(row["source"] for row in rows))
    width = 0.8 / len(sources)
    for k, source in enumerate(sources):
        colour = source_colour(source, sources)
        counts = [
            sum(r["n"] for r in rows if r["source"] == source and r["position"] == slot) for slot in slots
        ]
        xs = [i + (k - (len(sources) - 1) / 2) * width for i in range(len(slots))]
        ax.bar(xs, counts, width=width, color=colour, label=source)
    ax.set_xticks(range(len(slots)), [*_index_labels(positions), "none"], fontsize=7)
    ax.set_xlabel("step index of the first error")
    ax.set_ylabel("chains")
    _headroom(ax, max(r["n"] for r in rows))
    ax.legend(fontsize=7, loc="upper right")
    return _svg_data_uri(figure, "first-errors")


def source_colour(source: str, sources: Sequence[str]) -> str:
    """The first sources keep their colours; others take the palette's in their order."""
    if source in FIRST_ERROR_COLOURS:
        return FIRST_ERROR_COLOURS[source]
    others = [s for s in sources if s not in FIRST_ERROR_COLOURS]
    return PALETTE[others.index(source) % len(PALETTE)]


def plot_cost(rows: list[dict[str, Any]]) -> str:
    """Rollout tokens spent per MC label, by step index (early prefixes need longer rollouts)."""
    figure = _figure(height=2.8)
    ax = figure.subplots()
    ax.set_title("rollout tokens per MC step label, by step index", fontsize=10)
    labelled = [row for row in rows if row["n_mc_labels"]]
    if not labelled:
        _no_data(ax, "no MC labels")
        return _svg_data_uri(figure, "cost")
    positions = list(range(len(labelled)))
    ax.bar(positions, [r["rollout_tokens"] / r["n_mc_labels"] for r in labelled], color="#5d4037", width=0.7)
    ax.set_xticks(positions, _index_labels([row["step_index"] for row in labelled]), fontsize=7)
    ax.set_xlabel("step index")
    ax.set_ylabel("tokens / label")
    return _svg_data_uri(figure, "cost")


def plot_search(rows: list[dict[str, Any]]) -> str:
    """Accuracy against the number of samples N per search method, with 95 % intervals (the rows of
    `prm-factory search-eval`'s JSON; the oracle pass@N drawn dashed as the ceiling)."""
    figure = _figure(width=10, height=3.8)  # room for the legend beside the axes
    ax = figure.subplots()
    ax.set_title("held-out accuracy at N samples per problem (95 % CI)", fontsize=10)
    if not rows:
        _no_data(ax, "no search results")
        return _svg_data_uri(figure, "search")
    methods = list(dict.fromkeys(row["method"] for row in rows))
    for k, method in enumerate(methods):
        points = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        xs = [r["n"] * (1 + 0.012 * (k - len(methods) / 2)) for r in points]  # dodge overlapping bars
        ys = [100 * r["accuracy"] for r in points]
        errors = [
            [100 * (r["accuracy"] - r["ci_low"]) for r in points],
            [100 * (r["ci_high"] - r["accuracy"]) for r in points],
        ]
        style = "--" if method.startswith("pass@") else "-"
        ax.errorbar(xs, ys, yerr=errors, label=method, linestyle=style, marker="o", markersize=3, capsize=2)
    ax.set_xscale("log", base=2)
    ns = sorted({row["n"] for row in rows})
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("N (chains sampled per problem)")
    ax.set_ylabel("accuracy %")
    ax.legend(fontsize=7, ncols=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg_data_uri(figure, "search")


def search_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's table: one row per method, accuracy % [CI] per N, Δ and compute at the largest N."""
    ns = sorted({row["n"] for row in rows})
    table: list[dict[str, Any]] = []
    for method in dict.fromkeys(row["method"] for row in rows):
        cells = {r["n"]: r for r in rows if r["method"] == method}
        line: dict[str, Any] = {"method": method}
        for n in ns:
            r = cells.get(n)
            line[f"N = {n}"] = (
                ""
                if r is None
                else f"{100 * r['accuracy']:.1f} [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"
            )
        top = cells.get(ns[-1])
        delta = None if top is None else top.get("vs_majority")
        line[f"Δ vs majority, N = {ns[-1]}"] = (
            ""
            if delta is None
            else f"{100 * delta:+.1f} "
            f"[{100 * top['vs_majority_low']:+.1f}, {100 * top['vs_majority_high']:+.1f}]"
        )
        line["policy tokens / problem"] = None if top is None else round(top["policy_tokens"])
        line["RM tokens / problem"] = None if top is None else round(top["scorer_tokens"])
        table.append(line)
    return table


# ---------------------------------------------------------------------------------------------- page

PAGE = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # dataset texts are model output or user input: escaped wherever they land
    finalize=lambda value: "∅" if value is None else value,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def _number(value: Any) -> str:
    if value is None:
        return "∅"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


PAGE.filters["number"] = _number


def cost_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Total rollout cost and its cost per MC step label (None where nothing was labelled).

    The denominator is every step with an MC value, including last steps valued by the chain's own
    outcome at no rollout cost: that is the price of a label as a training set sees it.
    """
    tokens = sum(row["rollout_tokens"] for row in rows)
    seconds = sum(row["rollout_seconds"] for row in rows)
    labels = sum(row["n_mc_labels"] for row in rows)
    return {
        "MC step labels": labels,
        "of which from rollouts": sum(row["n_rollout_labels"] for row in rows),
        "rollout tokens": tokens,
        "rollout seconds": seconds,
        "tokens per label": tokens / labels if labels else None,
        "seconds per label": seconds / labels if labels else None,
    }


def render_html(
    data: ReportData,
    generated_at: datetime | None = None,
    search: dict[str, Any] | None = None,
    audit: Any | None = None,
) -> str:
    """The whole page as one string; every dataset text in it is escaped. `search` is the JSON of
    `prm-factory search-eval` (or bench/bench_search.py): its table and plot get their own section. `audit`
    is an audit's section (audit.report.section_html, already escaped): per-source precision and recall with
    intervals from human review of this data."""
    plots = {
        "label_mix": plot_label_mix(data.by_step_index),
        "mc_histogram": plot_mc_histogram(data.mc_histogram),
        "agreement": plot_agreement(data.agreement_matrix, data.by_step_index),
        "first_errors": plot_first_errors(data.first_error_positions),
        "cost": plot_cost(data.by_step_index),
    }
    if search is not None:
        plots["search"] = plot_search(search.get("rows", []))
    return PAGE.get_template("report.html.j2").render(
        data=data,
        generated=(generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        headline={k: v for k, v in data.headline.items() if not k.startswith("rollout_")},
        cost=cost_summary(data.by_step_index),
        plots=plots,
        colours=COLOURS,
        verdicts=VERDICTS,
        consensus_labels=CONSENSUS,
        max_step_chars=MAX_STEP_CHARS,
        search=search,
        search_rows=search_table(search.get("rows", [])) if search else [],
        audit_section=audit,
        weight_warnings=weight_warnings(data.consensus_weights),
    )


def write_report(
    dataset: Dataset,
    output: Path,
    version: int | None = None,
    n_samples: int = 6,
    search: dict[str, Any] | None = None,
    audit: Any | None = None,
) -> ReportData:
    """Collect a version's numbers, render the page and write it to `output`; returns what it showed."""
    data = collect(dataset, version, n_samples)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_html(data, search=search, audit=audit), encoding="utf-8")
    return data
