"""What each vote of a dataset version weighed in its consensus: per source, verdict, reading kind and
where the problems come from, the precision the consensus used (labels/consensus.py) and where it came from
(a shipped table, one refined by an audit of N steps, or the unmeasured default), for `prm-factory stats`
and the report. A source with no table gets a warning: its votes weigh the conservative default. Steps two
sources labelled where a joint table measured them together get rows of their own (`verifier+reference`,
verdicts `correct+incorrect`): there the cell's share of right steps replaced both votes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prm_factory.labels.calibration import CalibrationTable, load_tables, shipped_tables
from prm_factory.labels.consensus import UNMEASURED_RATIO, domains_of
from prm_factory.labels.joint_calibration import JointTable, load_joint_tables
from prm_factory.labels.registry import registry
from prm_factory.labels.source import tables_per_labeler
from prm_factory.schemas.step_labels import split_labeler
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query

USED_SQL = """
SELECT source, verdict, coalesce(kind, '') AS kind, domain, problem_source,
       split_part(labeler, '+', 1) AS labeler, count(*) AS n
FROM step_labels WHERE verdict IN ('correct', 'incorrect')
GROUP BY ALL ORDER BY source, verdict, kind, domain, problem_source
"""


def weight_rows(
    counts: Sequence[dict[str, Any]],
    tables: dict[str, CalibrationTable],
    per_labeler: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One row per (source, verdict, kind, domain, problem source) of `counts` with the precision used
    (`per_labeler`: sources whose tables weigh only the labels of the labeler they measured, MC).

    >>> from prm_factory.labels.calibration import Cell
    >>> cells = (Cell("incorrect", "k", "math", 20, 19),)
    >>> t = CalibrationTable("verifier", "math-sympy@2", "shipped", 0.6, cells)
    >>> row = weight_rows([{"source": "verifier", "verdict": "incorrect", "kind": "k", "domain": "math",
    ...                     "problem_source": "gsm8k", "n": 3}], {"verifier": t})[0]
    >>> row["precision"], row["measured"], row["from"]
    (0.943, '19 / 20', 'shipped (math-sympy@2), incorrect/k@math')
    """
    rows = []
    for count in counts:
        source, verdict, kind = count["source"], count["verdict"], count["kind"] or None
        table = tables.get(source)
        labeler = count.get("labeler") or ""
        if source in per_labeler and table is not None and not table.measured(labeler):
            table = None  # its tables weigh their own labeler's labels only (labels.consensus.weigh_label)
        domains = domains_of(count["domain"] or "math", count["problem_source"])
        found = table.precision(verdict, kind, domains) if table is not None else None
        row = {
            "source": source,
            "verdict": verdict,
            "kind": kind or "",
            "problems": f"{count['domain']}/{count['problem_source']}",
            "labels": int(count["n"]),
            "labeler": count.get("labeler") or "",  # the labels' source version (without its code digest)
            "measured_labeler": "",
        }
        if found is None or table is None:
            share = UNMEASURED_RATIO / (1 + UNMEASURED_RATIO)
            row |= {"precision": round(share, 3), "measured": "", "from": "unmeasured default"}
        else:
            origin = f"{table.origin} ({table.labeler})" if table.labeler else table.origin
            if shipped_tables().get(source) == table:
                origin = f"shipped, {origin}"
            row |= {
                "precision": round(found.value, 3),
                "measured": f"{found.n_right} / {found.n}",
                "from": f"{origin}, {found.cell}",
                "measured_labeler": table.labeler,
            }
        rows.append(row)
    return rows


def joint_sql(pair: tuple[str, str]) -> str:
    """Steps both sources of `pair` labelled, counted per pair of verdicts and problems."""
    a, b = pair
    return f"""
SELECT a.verdict AS verdict_a, b.verdict AS verdict_b, a.domain, a.problem_source, count(*) AS n
FROM step_labels a JOIN step_labels b ON a.step_id = b.step_id
WHERE a.source = '{a}' AND b.source = '{b}'
  AND NOT (a.verdict = 'unverifiable' AND b.verdict = 'unverifiable')
GROUP BY ALL ORDER BY a.domain, a.problem_source, verdict_a, verdict_b
"""


def joint_weight_rows(counts: Sequence[dict[str, Any]], table: JointTable) -> list[dict[str, Any]]:
    """One row per pair of verdicts whose steps weighed a joint cell instead of the two votes
    (labels/joint_calibration.py): its `precision` is the cell's share of right steps, P(right)."""
    rows = []
    for count in counts:
        domains = domains_of(count["domain"] or "math", count["problem_source"])
        verdicts = (count["verdict_a"], count["verdict_b"])
        found = table.probability(verdicts, domains)
        if found is None:
            continue
        rows.append(
            {
                "source": table.name,
                "verdict": "+".join(verdicts),
                "kind": "(read together)",
                "problems": f"{count['domain']}/{count['problem_source']}",
                "labels": int(count["n"]),
                "precision": round(found.value, 3),
                "measured": f"{found.n_right} / {found.n} right",
                "from": f"joint table ({'+'.join(table.labelers)}), {found.cell}",
            }
        )
    return rows


def joint_rows(
    run_sql: Callable[[str], list[dict[str, Any]]], joint: Mapping[tuple[str, str], JointTable]
) -> list[dict[str, Any]]:
    """`joint_weight_rows` of every joint table in `joint` (the ones the version's consensus reads:
    labels.joint_calibration.load_joint_tables), `run_sql(sql)` giving the counted rows (none for a pair
    the dataset's labels do not hold)."""
    return [
        row for pair, table in joint.items() for row in joint_weight_rows(run_sql(joint_sql(pair)), table)
    ]


def _local_root(dataset: Dataset) -> Path | None:
    return Path(dataset.root) if "://" not in dataset.root else None


def dataset_tables_of(dataset: Dataset) -> dict[str, CalibrationTable]:
    """The calibration tables a version's consensus reads: shipped, and those its audits refined."""
    return load_tables(None, _local_root(dataset))


def dataset_joint_tables_of(dataset: Dataset) -> dict[tuple[str, str], JointTable]:
    """The joint tables a version's consensus reads: shipped, and those its audits refined."""
    return load_joint_tables(_local_root(dataset))


def weights_used(dataset: Dataset, version: int | None, sources: Sequence[str]) -> list[dict[str, Any]]:
    """`weight_rows` of a version's labels, with the tables its consensus reads (shipped, and those its
    audits refined: labels.calibration.load_tables)."""
    counts = query(dataset, USED_SQL, version, sources).to_pylist()
    together = joint_rows(
        lambda sql: query(dataset, sql, version, sources).to_pylist(), dataset_joint_tables_of(dataset)
    )
    return weight_rows(counts, dataset_tables_of(dataset), per_labeler_sources()) + together


def per_labeler_sources() -> list[str]:
    """The registered sources whose tables weigh only their own labeler's labels (MC: its policy's)."""
    return [name for name, source in registry().items() if tables_per_labeler(source)]


def same_release(labeler: str, measured: str) -> bool:
    """Do labels of `labeler` read with a table measured on `measured` without a warning? The same source
    and the same `major.minor`: a patch release (`2.14.0` -> `2.14.1`) keeps its rules and only fails
    closed more often or runs faster (CHANGELOG.md: every eval set's figures identical), so its precision is
    the one measured; a minor or major release changes rules, whose precision the old table does not know.

    >>> table = "math-sympy@2.14.0"
    >>> same_release("math-sympy@2.14.1", table), same_release("math-sympy@2.15.0", table)
    (True, False)
    """
    name, version, _ = split_labeler(labeler)
    measured_name, measured_version, _ = split_labeler(measured)
    return name == measured_name and version.split(".")[:2] == measured_version.split(".")[:2]


def weight_warnings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per source whose votes weighed the unmeasured default, and one per source whose labels
    are of another release than the one its table measured (`same_release`: a changed labeler's precision
    may have moved, its table is a measurement of the old one)."""
    sources = sorted({row["source"] for row in rows if row["from"] == "unmeasured default"})
    lines = [
        f"warning: {source} has no calibration table for some of its verdicts: they weigh the conservative "
        f"default (odds x{UNMEASURED_RATIO:g}) and alone never make a step negative; `relabel "
        f"--calibrate-from-audit` measures them"
        for source in sources
    ]
    other = sorted(
        {
            (row["source"], row["labeler"], row["measured_labeler"])
            for row in rows
            if row.get("labeler")
            and row.get("measured_labeler")
            and not same_release(row["labeler"], row["measured_labeler"])
        }
    )
    lines += [
        f"warning: {source}'s labels are {labeler}, its calibration table measured {measured}: the "
        f"precision their votes weigh may have moved (`prm-factory eval --calibrate` measures a table on "
        f"labelled sets, `relabel --calibrate-from-audit` on your reviewed steps)"
        for source, labeler, measured in other
    ]
    return lines
