"""DuckDB over one dataset version.

Local tables are read by DuckDB's own Parquet reader over the exact file list of the version (from the
Delta log, never a folder glob): it is about 3x faster than scanning Arrow datasets, and it reads the
`string_view`-tagged files that deltalake 1.6's MERGE writes, where pyarrow 26 cannot evaluate a string
filter against their statistics (`equal(string, string_view)` has no kernel). Tables on object stores are
scanned as Arrow datasets whose string columns are typed `string_view` (the combination DuckDB filters
correctly), so no DuckDB extension is ever downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from prm_factory.schemas.step_labels import (
    CORE_SOURCES,
    first_error_column,
    label_arrow_fields,
    stored_sources,
)
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import StorageError
from prm_factory.storage.layout import PROBLEM_COLUMNS_ON_STEPS
from prm_factory.storage.snapshot import TableSnapshot, arrow_dataset, snapshot
from prm_factory.storage.views import DERIVED_VIEWS, label_stats_sql, step_labels_sql

BASE_VIEWS: tuple[str, ...] = ("problems", "chains", "steps", "runs", "rejections")
"""The tables; the derived views are `label_stats`, `first_errors` and `step_labels` (storage/views.py)."""

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


def connect(
    dataset: Dataset, version: int | None = None, sources: Sequence[str] = ()
) -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with the base and derived views of one dataset version (None = latest).

    `sources` are label sources whose columns the `steps` view (and whose first errors the `chains` view)
    shows even where the table has none yet (NULL: that source never wrote to this dataset), e.g. every
    registered source (labels.registry).
    """
    state = snapshot(dataset, version)
    steps = state.tables["steps"]
    stored = set(steps.schema.names)
    # columns the steps view adds as NULLs: the problem columns of a table from before storage added them,
    # label columns added after the table was made (`verdict_kind`, `judge_evidence`, ...), and those of
    # sources that never wrote here
    missing: dict[str, str] = {name: "VARCHAR" for name in PROBLEM_COLUMNS_ON_STEPS if name not in stored}
    legacy_steps = bool(missing)
    label_sources = list(dict.fromkeys([*CORE_SOURCES, *stored_sources(stored), *sources]))
    for field in label_arrow_fields(label_sources):  # a table older than a column, or a source never here
        if field.name not in stored:
            missing[field.name] = _duckdb_type(field.type)
    chain_columns = set(state.tables["chains"].schema.names)
    chains_lack = [first_error_column(s) for s in label_sources if first_error_column(s) not in chain_columns]
    runs_lack = [name for name in LATER_RUN_COLUMNS if name not in state.tables["runs"].schema.names]
    connection = duckdb.connect(":memory:")
    for name in BASE_VIEWS:
        table = state.tables[name]
        view = "_steps_base" if name == "steps" and missing else name
        view = "_chains_base" if name == "chains" and chains_lack else view
        view = "_runs_base" if name == "runs" and runs_lack else view
        if table.local:
            connection.execute(native_view_sql(connection, view, table))
        else:  # arrow_dataset applies the run filter; string_view typing keeps DuckDB's pushdown working
            connection.register(view, arrow_dataset(dataset, table, strings_as_views=True))
    if missing:
        nulls = ", ".join(f"CAST(NULL AS {kind}) AS {_identifier(name)}" for name, kind in missing.items())
        connection.execute(f"CREATE VIEW steps AS SELECT *, {nulls} FROM _steps_base")
    if chains_lack:  # a label source's first error: no chain of this dataset has one
        nulls = ", ".join(f"CAST(NULL AS BIGINT) AS {_identifier(name)}" for name in chains_lack)
        connection.execute(f"CREATE VIEW chains AS SELECT *, {nulls} FROM _chains_base")
    if runs_lack:
        nulls = ", ".join(f"CAST(NULL AS {LATER_RUN_COLUMNS[name]}) AS {name}" for name in runs_lack)
        connection.execute(f"CREATE VIEW runs AS SELECT *, {nulls} FROM _runs_base")
    views = dict(DERIVED_VIEWS)
    views["label_stats"] = label_stats_sql(
        not legacy_steps and steps.has_everywhere(*PROBLEM_COLUMNS_ON_STEPS),
        "reference_verdict" in stored,
    )
    views["step_labels"] = step_labels_sql(label_sources)
    for sql in views.values():
        connection.execute(sql)
    return connection


def query(dataset: Dataset, sql: str, version: int | None = None, sources: Sequence[str] = ()) -> pa.Table:
    """Run one SQL statement over a dataset version and return its result as an Arrow table (`sources`:
    label sources whose columns the views show even where this dataset has none, see `connect`)."""
    connection = connect(dataset, version, sources)
    try:
        relation = connection.sql(sql)
        if relation is None:  # a statement with no result set (SET, CREATE VIEW, ...)
            return pa.table({})
        return relation.to_arrow_table()
    except duckdb.Error as error:
        raise QueryError(str(error).strip().splitlines()[0]) from error
    finally:
        connection.close()
