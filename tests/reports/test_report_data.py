"""What `reports.dataset_report.collect` reads from a version: the numbers every plot and card is
drawn from."""

from __future__ import annotations

import duckdb

from prm_factory.reports.dataset_report import MAX_STEP_INDEX, _capped, collect, cost_summary


def test_counts_and_label_mix_match_the_records(report_dataset):
    data = collect(report_dataset, version=1)
    assert data.version == 1
    assert (data.headline["chains"], data.headline["steps"], data.headline["problems"]) == (8, 24, 2)
    assert [row["step_index"] for row in data.by_step_index] == [0, 1, 2]
    totals = {
        name: sum(row[name] for row in data.by_step_index)
        for name in data.by_step_index[0]
        if name.startswith(("verdict_", "consensus_", "n_"))
    }
    assert totals["verdict_correct"] == 10 and totals["verdict_incorrect"] == 4
    assert totals["verdict_unverifiable"] == 10
    assert (totals["consensus_positive"], totals["consensus_negative"]) == (10, 8)
    assert (totals["consensus_disputed"], totals["consensus_unlabeled"]) == (2, 4)
    assert (totals["n_compared"], totals["n_agree"]) == (14, 12)
    first_index = data.by_step_index[0]
    assert (first_index["verdict_correct"], first_index["verdict_unverifiable"]) == (6, 2)


def test_agreement_matrix_and_mc_histogram(report_dataset):
    data = collect(report_dataset, version=1)
    matrix = {(row["verdict"], row["hard_label"]): row["n"] for row in data.agreement_matrix}
    assert matrix[("correct", True)] == 8 and matrix[("correct", False)] == 2
    assert matrix[("incorrect", False)] == 4 and matrix[("unverifiable", None)] == 4
    assert sum(row["n"] for row in data.mc_histogram) == 20  # every step with an MC value
    ones = [row for row in data.mc_histogram if row["bin"] == 19]
    assert ones == [{"verdict": "correct", "bin": 19, "n": 2}]  # MC 1.0 falls in the last bin


def test_first_error_positions_per_source(report_dataset):
    data = collect(report_dataset, version=1)
    by_source: dict[str, dict[int | None, int]] = {}
    for row in data.first_error_positions:
        by_source.setdefault(row["source"], {})[row["position"]] = row["n"]
    assert by_source["verifier"] == {None: 4, 1: 2, 2: 2}
    assert by_source["mc"] == {None: 2, 0: 2, 1: 4}
    assert by_source["consensus"] == {None: 2, 1: 4, 2: 2}


def test_cost_per_label(report_dataset):
    cost = cost_summary(collect(report_dataset, version=1).by_step_index)
    assert cost["MC step labels"] == 20 and cost["of which from rollouts"] == 14
    assert cost["rollout tokens"] == 1400 and cost["rollout seconds"] == 7.0
    assert cost["tokens per label"] == 70.0 and cost["seconds per label"] == 0.35


def test_versions_and_empty_version(report_dataset):
    assert collect(report_dataset).headline["chains"] == 16  # latest = version 2
    empty = collect(report_dataset, version=0)
    assert empty.headline["steps"] == 0 and empty.by_step_index == [] and empty.samples == []
    assert cost_summary(empty.by_step_index)["tokens per label"] is None


def test_samples_mix_disputed_solved_and_other_chains(report_dataset):
    samples = collect(report_dataset, version=1, n_samples=3).samples
    assert len(samples) == 3
    kinds = set()
    for sample in samples:
        assert [step["step_index"] for step in sample.steps] == [0, 1, 2]
        assert all(step["chain_id"] == sample.chain["chain_id"] for step in sample.steps)
        if any(step["consensus"] == "disputed" for step in sample.steps):
            kinds.add("disputed")
        elif sample.chain["outcome"] == "correct":
            kinds.add("solved")
        else:
            kinds.add("other")
    assert kinds == {"disputed", "solved", "other"}
    assert collect(report_dataset, version=1, n_samples=0).samples == []


def test_capped_step_index_keeps_null():
    """DuckDB's least() skips NULLs, which would count chains without an error as errors at the cap."""
    rows = duckdb.sql(f"SELECT {_capped('x')} FROM (VALUES (NULL), (3), (99)) AS t(x)").fetchall()
    assert [row[0] for row in rows] == [None, 3, MAX_STEP_INDEX]
