"""A run that replaces most of a table's rows (`relabel`) writes the table once, streamed, not merge by merge.

A Delta merge holds the table it merges into in memory (about 0.6 GB for a million step rows, measured with
deltalake 1.6) and rewrites every file holding a matched row; a relabel's rows are spread over every file by
their hash keys, so merging it batch by batch rewrote the whole table once per batch and held it each time.
Here the run's rows go into a scratch DuckDB database (spilling to disk past a fixed memory limit), DuckDB
streams the kept target rows beside the run's rows, and one Delta overwrite writes them: one pass over the
table, memory bounded by DuckDB's limit and the writer's row groups, whatever the table's size.

The rows written are exactly what `delta_io.merge_rows` would leave: a key the table lacks takes the run's
row; a key it holds keeps the stored row unless a merge rule would replace it (`update_matched`, a row owned
by a run that never committed, a changed `replace_when_changed` column); a key the run repeats keeps its
first row. Older dataset versions read older table versions, whose files the overwrite leaves in place.
Only a writer holding the dataset's commit lock (storage/commit_lock.py) may use it: a concurrent insert
between the read and the overwrite would be lost.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake

from prm_factory.storage.delta_io import align_to_table
from prm_factory.storage.write_rules import WriteRules, sql_string

MEMORY_LIMIT = "128MB"
BATCH_ROWS = 16_384  # rows per batch read back and per Parquet row group written (the writer holds one)
TARGET_FILE_BYTES = 16 * 2**20  # the writer holds a file until it is this large
ORDINAL = "__prm_ordinal"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _on(left: str, right: str, keys: Sequence[str]) -> str:
    return " AND ".join(f"{left}.{_quoted(k)} = {right}.{_quoted(k)}" for k in keys)


def rewrite_rows(
    uri: str,
    batches: Iterable[pa.Table],
    keys: Sequence[str],
    scratch: Path,
    rules: WriteRules,
    *,
    storage_options: dict[str, str] | None,
    custom_metadata: Mapping[str, str] | None = None,
) -> int | None:
    """Write `batches` into the table at `uri` under `rules` (what `merge_rows` would leave), as one
    streamed overwrite.

    Returns the new table version, or None when no row would change (no commit is made then).
    """
    table = DeltaTable(uri, storage_options=storage_options)
    target_schema = pa.schema(table.schema().to_arrow())
    directory = scratch / f".rewrite-{uuid.uuid4().hex[:8]}"
    directory.mkdir(parents=True)
    try:
        # in memory, spilling to `directory` past the limit: a file database holds a whole row group of the
        # wide step rows while writing it (122,880 rows), more than the limit at a million steps
        con = duckdb.connect()
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'").fetchall()
        con.execute(f"SET temp_directory = {sql_string(str(directory / 'spill'))}").fetchall()
        con.execute("SET preserve_insertion_order = false").fetchall()  # lets joins and scans spill
        con.execute("SET threads = 1").fetchall()
        schema, loaded = _load_source(con, batches, target_schema, keys)
        if not loaded:
            return None
        takes = rules.replaces("t", "s", target_schema.names, quote=_quoted)
        # DuckDB reads the table's files itself, inside its memory limit (an Arrow dataset's scan is not)
        files = ", ".join(sql_string(uri) for uri in table.file_uris())
        if files:
            con.execute(f"CREATE VIEW target AS SELECT * FROM read_parquet([{files}], union_by_name = true)")
        else:
            con.register("empty_target", target_schema.empty_table())
            con.execute("CREATE VIEW target AS SELECT * FROM empty_target")
        con.fetchall()
        # plain joins, which spill past the memory limit (correlated EXISTS ... OR ... did not)
        key_list = ", ".join(f"s.{_quoted(k)}" for k in keys)
        con.execute(
            f"CREATE TABLE matched AS SELECT {key_list}, coalesce(({takes}), FALSE) AS takes "
            f"FROM source s JOIN target t ON {_on('t', 's', keys)}"
        ).fetchall()
        [(taken, held, given)] = con.execute(
            "SELECT (SELECT count(*) FROM matched WHERE takes), (SELECT count(*) FROM matched), "
            "(SELECT count(*) FROM source)"
        ).fetchall()
        if taken == 0 and held == given:  # every row of the run is stored and none replaces its row
            return None
        columns = ", ".join(
            f"t.{_quoted(f.name)}" if f.name in target_schema.names else f"NULL AS {_quoted(f.name)}"
            for f in schema
        )
        source_columns = ", ".join(f"s.{_quoted(f.name)}" for f in schema)
        kept = (
            f"SELECT {columns} FROM target t ANTI JOIN (SELECT * FROM matched WHERE takes) m "
            f"ON {_on('t', 'm', keys)}"
        )
        new = (
            f"SELECT {source_columns} FROM source s ANTI JOIN (SELECT * FROM matched WHERE NOT takes) m "
            f"ON {_on('s', 'm', keys)}"
        )
        reader = con.sql(f"{kept} UNION ALL {new}").to_arrow_reader(batch_size=BATCH_ROWS)
        write_deltalake(
            uri,
            pa.RecordBatchReader.from_batches(schema, _cast(reader, schema)),
            mode="overwrite",
            schema_mode="merge" if schema != target_schema else None,
            storage_options=storage_options,
            target_file_size=TARGET_FILE_BYTES,
            writer_properties=WriterProperties(max_row_group_size=BATCH_ROWS),
            commit_properties=CommitProperties(custom_metadata=dict(custom_metadata or {})),
        )
        con.close()
        return DeltaTable(uri, storage_options=storage_options).version()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _load_source(
    con: duckdb.DuckDBPyConnection, batches: Iterable[pa.Table], target_schema: pa.Schema, keys: Sequence[str]
) -> tuple[pa.Schema, bool]:
    """The run's rows into table `source`, shaped like the table, the first row of each key (the ordinal is
    the row's place in the run); returns the schema written (the table's, plus columns a newer release adds)
    and whether there was any row."""
    schema, offset = target_schema, 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        aligned, _ = align_to_table(batch, schema)
        schema = aligned.schema
        aligned = aligned.append_column(ORDINAL, pa.array(range(offset, offset + batch.num_rows), pa.int64()))
        con.register("batch", aligned)
        if offset == 0:
            con.execute("CREATE TABLE incoming AS SELECT * FROM batch").fetchall()
        else:
            con.execute("INSERT INTO incoming BY NAME SELECT * FROM batch").fetchall()
        con.unregister("batch")
        offset += batch.num_rows
    if offset == 0:
        return schema, False
    by_key = ", ".join(map(_quoted, keys))
    first = f"SELECT min({ORDINAL}) FROM incoming GROUP BY {by_key}"
    con.execute(
        f"CREATE TABLE source AS SELECT * EXCLUDE ({ORDINAL}) FROM incoming WHERE {ORDINAL} IN ({first})"
    ).fetchall()
    con.execute("DROP TABLE incoming").fetchall()
    return schema, True


def _cast(reader: pa.RecordBatchReader, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """DuckDB's batches in the table's own types (its strings and timestamps may come back as others)."""
    for batch in reader:
        yield pa.RecordBatch.from_arrays(
            [batch.column(i).cast(field.type) for i, field in enumerate(schema)], schema=schema
        )
