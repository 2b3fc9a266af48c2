"""DuckDB over one dataset version.

Local tables are read by DuckDB's own Parquet reader over the exact file list of the version (from the
Delta log, never a folder glob): it is about 3x faster than scanning Arrow datasets, and it reads the
`string_view`-tagged files that deltalake 1.6's MERGE writes, where pyarrow 26 cannot evaluate a string
filter against their statistics (`equal(string, string_view)` has no kernel). Tables on object stores are
scanned as Arrow datasets whose string columns are typed `string_view` (the combination DuckDB filters
correctly), so no DuckDB extension is ever downloaded.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import StorageError
from prm_factory.storage.layout import PROBLEM_COLUMNS_ON_STEPS
from prm_factory.storage.snapshot import TableSnapshot, arrow_dataset, snapshot
from prm_factory.storage.views import DERIVED_VIEWS, label_stats_sql

BASE_VIEWS: tuple[str, ...] = ("problems", "chains", "steps", "runs", "rejections")

LATER_RUN_COLUMNS: dict[str, str] = {
    "parent_run_id": "VARCHAR",
    "shard_index": "BIGINT",
    "shard_count": "BIGINT",
    "reproducibility": "VARCHAR",
}
"""Runs columns added after the first release (sharded runs, flows/shards.py; the reproducibility promise,
sampling/reproducibility.py): a runs table from before them reads them as NULL, so SQL over any version may
name them."""

DUCKDB_TYPES: dict[pa.DataType, str] = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.string_view(): "VARCHAR",
    pa.int64(): "BIGINT",
    pa.int32(): "INTEGER",
    pa.int16(): "SMALLINT",
    pa.int8(): "TINYINT",
    pa.float64(): "DOUBLE",
    pa.float32(): "FLOAT",
    pa.bool_(): "BOOLEAN",
    pa.date32(): "DATE",
}


class QueryError(StorageError):
    """DuckDB refused the SQL (syntax error, unknown column, ...)."""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duckdb_type(arrow_type: pa.DataType) -> str:
    if arrow_type in DUCKDB_TYPES:
        return DUCKDB_TYPES[arrow_type]
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMPTZ" if arrow_type.tz else "TIMESTAMP"
    raise StorageError(f"no DuckDB type for column type {arrow_type}")


def native_view_sql(connection: duckdb.DuckDBPyConnection, name: str, table: TableSnapshot) -> str:
    """CREATE VIEW over the snapshot's Parquet files with the table's columns (NULL where files lack one)."""
    if table.files and table.has_everywhere(*table.schema.names):  # the log says no file lacks a column
        source = f"read_parquet([{', '.join(map(_literal, table.files))}])"
        present = set(table.schema.names)
    elif table.files:  # some file predates a column: read by name, learn which columns exist at all
        source = f"read_parquet([{', '.join(map(_literal, table.files))}], union_by_name = true)"
        present = {row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    else:
        source, present = "(SELECT 1) AS empty_table", set()
    columns = [
        _identifier(field.name)
        if field.name in present
        else f"CAST(NULL AS {_duckdb_type(field.type)}) AS {_identifier(field.name)}"
        for field in table.schema
    ]
    where = []
    if not table.files:
        where.append("false")
    if table.row_filter_runs is not None:
        runs = ", ".join(map(_literal, table.row_filter_runs)) or "NULL"
        where.append(f"run_id IN ({runs})")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    return f"CREATE VIEW {_identifier(name)} AS SELECT {', '.join(columns)} FROM {source}{clause}"


def connect(dataset: Dataset, version: int | None = None) -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with the base and derived views of one dataset version (None = latest)."""
    state = snapshot(dataset, version)
    steps = state.tables["steps"]
    # a steps table from before storage added the problem columns gets them as NULLs (label_stats then joins)
    legacy_steps = not set(PROBLEM_COLUMNS_ON_STEPS) <= set(steps.schema.names)
    runs_lack = [name for name in LATER_RUN_COLUMNS if name not in state.tables["runs"].schema.names]
    connection = duckdb.connect(":memory:")
    for name in BASE_VIEWS:
        table = state.tables[name]
        view = "_steps_base" if name == "steps" and legacy_steps else name
        view = "_runs_base" if name == "runs" and runs_lack else view
        if table.local:
            connection.execute(native_view_sql(connection, view, table))
        else:  # arrow_dataset applies the run filter; string_view typing keeps DuckDB's pushdown working
            connection.register(view, arrow_dataset(dataset, table, strings_as_views=True))
    if legacy_steps:
        missing = ", ".join(
            f"CAST(NULL AS VARCHAR) AS {name}"
            for name in PROBLEM_COLUMNS_ON_STEPS
            if name not in steps.schema.names
        )
        connection.execute(f"CREATE VIEW steps AS SELECT *, {missing} FROM _steps_base")
    if runs_lack:
        nulls = ", ".join(f"CAST(NULL AS {LATER_RUN_COLUMNS[name]}) AS {name}" for name in runs_lack)
        connection.execute(f"CREATE VIEW runs AS SELECT *, {nulls} FROM _runs_base")
    views = dict(DERIVED_VIEWS)
    views["label_stats"] = label_stats_sql(
        not legacy_steps and steps.has_everywhere(*PROBLEM_COLUMNS_ON_STEPS),
        "reference_verdict" in steps.schema.names,
    )
    for sql in views.values():
        connection.execute(sql)
    return connection


def query(dataset: Dataset, sql: str, version: int | None = None) -> pa.Table:
    """Run one SQL statement over a dataset version and return its result as an Arrow table."""
    connection = connect(dataset, version)
    try:
        relation = connection.sql(sql)
        if relation is None:  # a statement with no result set (SET, CREATE VIEW, ...)
            return pa.table({})
        return relation.to_arrow_table()
    except duckdb.Error as error:
        raise QueryError(str(error).strip().splitlines()[0]) from error
    finally:
        connection.close()
