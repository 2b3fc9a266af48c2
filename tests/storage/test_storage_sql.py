"""DuckDB views over dataset versions."""

from __future__ import annotations

import pytest

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import QueryError, connect, query


@pytest.fixture
def two_versions(tmp_path, run_factory) -> Dataset:
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    dataset.commit_run(*run_factory("b", problem_offset=5, source="math").args())
    return dataset


def test_query_over_a_given_version(two_versions):
    sql = "SELECT count(*) AS n FROM steps"
    assert query(two_versions, sql, version=1).to_pylist() == [{"n": 12}]
    assert query(two_versions, sql).to_pylist() == [{"n": 24}]
    assert query(two_versions, "SELECT count(*) AS n FROM runs", version=1).to_pylist() == [{"n": 1}]


def test_every_base_view_answers(two_versions):
    connection = connect(two_versions, 2)
    counts = {
        name: connection.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        for name in ("problems", "chains", "steps", "runs", "rejections")
    }
    assert counts == {"problems": 4, "chains": 8, "steps": 24, "runs": 2, "rejections": 2}


def test_label_stats_counts_and_rates(two_versions):
    rows = query(
        two_versions, "SELECT * FROM label_stats WHERE source = 'gsm8k' ORDER BY step_index"
    ).to_pylist()
    assert [r["step_index"] for r in rows] == [0, 1, 2]
    assert all(r["n_steps"] == 4 for r in rows)
    # step 0 is right in every chain; from step 1 on, the odd chains are wrong
    assert rows[0]["n_verdict_correct"] == 4 and rows[0]["n_verdict_incorrect"] == 0
    assert rows[1]["n_verdict_incorrect"] == 2 and rows[1]["n_hard_negative"] == 2
    assert rows[0]["mean_mc_value"] == pytest.approx(0.75)
    # the last step of chain 0 has no MC value: it is left out of the mean and of the agreement
    assert rows[2]["n_hard_unlabeled"] == 2 and rows[2]["n_compared"] == 2
    assert rows[2]["agreement_rate"] == pytest.approx(1.0)
    assert rows[2]["mean_mc_value"] == pytest.approx(0.0)


def test_first_errors_one_row_per_chain(two_versions):
    rows = query(
        two_versions, "SELECT * FROM first_errors WHERE source = 'gsm8k' ORDER BY chain_id"
    ).to_pylist()
    assert len(rows) == 4
    assert sorted(r["first_error_index"] for r in rows if r["first_error_index"] is not None) == [1, 1]
    assert sum(r["first_error_index"] is None for r in rows) == 2
    flagged = next(r for r in rows if r["first_error_index"] is not None)
    assert flagged["first_error_verdict"] == "incorrect" and flagged["outcome"] == "incorrect"


def test_bad_sql_is_one_clear_error(two_versions):
    with pytest.raises(QueryError, match="nosuchtable|no_such"):
        query(two_versions, "SELECT * FROM nosuchtable")


STRING_FILTERS = [
    ("SELECT count(*) AS n FROM problems WHERE problem_id >= '0'", 4),
    ("SELECT count(*) AS n FROM steps WHERE verdict = 'incorrect'", 8),
    ("SELECT count(*) AS n FROM chains WHERE run_id IN (SELECT run_id FROM runs)", 8),
    ("SELECT count(*) AS n FROM runs WHERE status = 'succeeded'", 2),
]


@pytest.mark.parametrize("reader", ["native", "arrow"])
def test_string_filters_work_on_merge_written_files(two_versions, monkeypatch, reader):
    """deltalake's MERGE writes string_view-tagged Parquet; filters on strings must still work both ways."""
    if reader == "arrow":  # the object-store path: Arrow datasets scanned by DuckDB
        from prm_factory.storage.snapshot import TableSnapshot

        monkeypatch.setattr(TableSnapshot, "local", property(lambda self: False))
    for sql, expected in STRING_FILTERS:
        assert query(two_versions, sql).to_pylist() == [{"n": expected}], sql
    assert query(two_versions, "SELECT count(*) AS n FROM steps", version=1).to_pylist() == [{"n": 12}]


def test_arrow_tables_filter_run_ids_safely(two_versions):
    import pyarrow.compute as pc

    steps = two_versions.tables(1)["steps"]
    assert steps.count_rows() == 12
    assert steps.to_table(filter=pc.field("step_index") == 0).num_rows == 4


def test_label_stats_on_steps_written_before_the_problem_columns(tmp_path, run_factory, monkeypatch):
    from prm_factory.storage import dataset as dataset_module
    from prm_factory.storage import layout as layout_module

    dataset = Dataset(str(tmp_path / "ds"))
    with monkeypatch.context() as old_release:  # a dataset written before steps carried source and domain
        old_release.setattr(layout_module, "PROBLEM_COLUMNS_ON_STEPS", ())
        old_release.setattr(dataset_module, "PROBLEM_COLUMNS_ON_STEPS", ())
        dataset.commit_run(*run_factory("a", source="gsm8k").args())
    assert "source" not in dataset.tables()["steps"].schema.names
    sql = "SELECT source, sum(n_steps) AS n FROM label_stats GROUP BY ALL ORDER BY source"
    assert query(dataset, sql).to_pylist() == [{"source": "gsm8k", "n": 12}]
    dataset.commit_run(*run_factory("b", source="math", problem_offset=5).args())  # adds the columns
    assert query(dataset, sql).to_pylist() == [{"source": "gsm8k", "n": 12}, {"source": "math", "n": 12}]
    assert query(dataset, sql, version=1).to_pylist() == [{"source": "gsm8k", "n": 12}]
