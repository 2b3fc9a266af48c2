"""The derived views' SQL (storage/views.py) run on tiny tables in DuckDB, and which Delta files a version
reads (storage/visibility.py): single-run files of committed runs whole, mixed files row-filtered."""

from __future__ import annotations

import duckdb
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from prm_factory.storage.views import FIRST_ERRORS, label_stats_sql
from prm_factory.storage.visibility import single_run_files, visible_files

STEPS = """
CREATE TABLE steps AS SELECT * FROM (VALUES
    ('c1', 'p1', 's10', 0, 'gsm8k', 'math', 'correct', 'correct', 'positive', true, true, 0.5, false, 'a'),
    ('c1', 'p1', 's11', 1, 'gsm8k', 'math', 'incorrect', NULL, 'negative', false, true, 0.0, true, 'b'),
    ('c2', 'p1', 's20', 0, 'gsm8k', 'math', 'unverifiable', 'incorrect', 'disputed', true, NULL, 1.0, false,
     'c')
) AS t(chain_id, problem_id, step_id, step_index, source, domain, verdict, reference_verdict, consensus,
       hard_label, labels_agree, mc_value, first_error, text)
"""


def connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(STEPS)
    con.execute("CREATE TABLE problems AS SELECT 'p1' AS problem_id, 'gsm8k' AS source, 'math' AS domain")
    con.execute(
        "CREATE TABLE chains AS SELECT * FROM (VALUES ('c1', 'p1', 'r1', 'm', 'incorrect', 2, 1, NULL),"
        " ('c2', 'p1', 'r1', 'm', 'correct', 1, NULL, NULL)) AS t(chain_id, problem_id, run_id, model,"
        " outcome, n_steps, first_error_verifier, first_error_mc)"
    )
    return con


def test_label_stats_counts_every_source_per_step_index():
    con = connection()
    con.execute(label_stats_sql())
    rows = con.execute(
        "SELECT step_index, n_steps, n_verdict_correct, n_reference_incorrect, n_reference_not_run,"
        " n_consensus_disputed, mean_mc_value, agreement_rate FROM label_stats ORDER BY step_index"
    ).fetchall()
    assert rows == [(0, 2, 1, 1, 0, 1, 0.75, 1.0), (1, 1, 0, 0, 1, 0, 0.0, 1.0)]


def test_label_stats_joins_problems_and_reads_a_missing_reference_as_not_run():
    con = connection()
    con.execute(label_stats_sql(steps_carry_problem_columns=False, steps_have_reference=False))
    rows = con.execute(
        "SELECT source, sum(n_reference_not_run), sum(n_steps) FROM label_stats GROUP BY 1"
    ).fetchall()
    assert rows == [("gsm8k", 3, 3)]


def test_first_errors_has_one_row_per_chain_null_without_error():
    con = connection()
    con.execute("ALTER TABLE steps ADD COLUMN verdict_reason VARCHAR DEFAULT 'r'")
    con.execute(FIRST_ERRORS)
    rows = con.execute(
        "SELECT chain_id, first_error_index, first_error_text FROM first_errors ORDER BY 1"
    ).fetchall()
    assert rows == [("c1", 1, "b"), ("c2", None, None)]


def _rows(*run_ids: str) -> pa.Table:
    return pa.table({"run_id": list(run_ids), "x": list(range(len(run_ids)))})


def test_single_run_files_are_taken_whole_mixed_files_need_the_row_filter(tmp_path):
    path = str(tmp_path / "t")
    write_deltalake(path, _rows("r1", "r1"))
    write_deltalake(path, _rows("r2"), mode="append")
    table = DeltaTable(path)
    owners = single_run_files(table)
    assert sorted(owners.values()) == ["r1", "r2"]
    only_r1 = visible_files(table, {"r1"})
    assert len(only_r1.files) == 1 and owners[only_r1.files[0]] == "r1" and not only_r1.needs_row_filter
    assert len(visible_files(table, {"r1", "r2"}).files) == 2
    assert visible_files(table, set()).files == ()

    write_deltalake(path, _rows("r1", "r3"), mode="append")  # one file, two runs
    mixed = visible_files(DeltaTable(path), {"r1"})
    assert len(mixed.files) == 2 and mixed.needs_row_filter
