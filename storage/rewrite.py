"""A run that replaces most of a table's rows (`relabel`) writes the table once, streamed, not merge by merge.

A Delta merge holds the table it merges into in memory (about 0.6 GB for a million step rows, measured with
deltalake 1.6) and rewrites every file holding a matched row; a relabel's rows are spread over every file by
their hash keys, so merging it batch by batch rewrote the whole table once per batch and held it each time.
Here the run's rows go to scratch Parquet files a batch at a time, a DuckDB database (spilling to disk past
a fixed memory limit) joins them with the table's files by key and writes the kept target rows beside the
run's rows as the new version's Parquet files itself (`COPY ... TO`), and one Delta commit names them as an
overwrite: memory bounded by DuckDB's limit, whatever the table's size. (Streaming DuckDB's rows through
Arrow into deltalake's writer instead held about 100 MiB more at a million steps.) The keys are matched a
pass at a time (`PASS_ROWS`), so a join holds one pass's keys.

The rows written are exactly what `delta_io.merge_rows` would leave: a key the table lacks takes the run's
row; a key it holds keeps the stored row unless a rule replaces it (storage/write_rules.py); a key the run
repeats keeps its first row. Older dataset versions read older table versions, whose files the overwrite
leaves in place.
Only a writer holding the dataset's commit lock (storage/commit_lock.py) may use it: a concurrent insert
between the read and the overwrite would be lost.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import CommitProperties, DeltaTable
from deltalake.transaction import AddAction

from prm_factory.storage.commit_lock import local_root
from prm_factory.storage.delta_io import align_to_table
from prm_factory.storage.write_rules import WriteRules, sql_string

MEMORY_LIMIT = "128MB"
"""DuckDB's limit for the join; past it, it spills. 64 MB ran out of memory in the anti join at a million
steps (2026-11-29): 128 MB is the smallest limit measured to hold there."""
BATCH_ROWS = 8192  # rows per batch read back and per Parquet row group written (the writer holds one)
TARGET_FILE_BYTES = 8 * 2**20
"""The writer holds a file in memory until it is this large. The rewrite is the commit's spike: at 100,000
steps 16,384-row batches into 16 MB files rose +130 MiB over the walk for a second, these sizes +45 (issue
48)."""
ORDINAL = "__prm_ordinal"
PASS_ROWS = 250_000
"""The run's rows matched against the table per pass: the key joins hold a hash table of their pass's keys
(the relabel process rose about 130 MiB over its walk while one pass matched a million step keys,
2026-11-30), so a larger run takes more passes over the scratch files and the table's key columns instead
of more memory."""


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
    table_root = local_root(uri)
    if table_root is None:
        raise ValueError(f"a rewrite writes a local table's folder; {uri} is in an object store")
    table = DeltaTable(uri, storage_options=storage_options)
    target_schema = pa.schema(table.schema().to_arrow())
    directory = scratch / f".rewrite-{uuid.uuid4().hex[:8]}"
    directory.mkdir(parents=True)
    try:
        schema, spilled, rows = _spill_source(batches, target_schema, directory / "source")
        if not spilled:
            return None
        # in memory, spilling to `directory` past the limit: a file database holds a whole row group of the
        # wide step rows while writing it (122,880 rows), more than the limit at a million steps
        con = duckdb.connect()
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'").fetchall()
        con.execute(f"SET temp_directory = {sql_string(str(directory / 'spill'))}").fetchall()
        con.execute("SET preserve_insertion_order = false").fetchall()  # lets joins and scans spill
        con.execute("SET threads = 1").fetchall()
        paths = ", ".join(sql_string(str(path)) for path in spilled)
        con.execute(f"CREATE VIEW incoming AS SELECT * FROM read_parquet([{paths}], union_by_name = true)")
        # DuckDB reads the table's files itself, inside its memory limit (an Arrow dataset's scan is not)
        files = ", ".join(sql_string(uri) for uri in table.file_uris())
        if files:
            con.execute(f"CREATE VIEW target AS SELECT * FROM read_parquet([{files}], union_by_name = true)")
        else:
            con.register("empty_target", target_schema.empty_table())
            con.execute("CREATE VIEW target AS SELECT * FROM empty_target")
        con.fetchall()
        takes = rules.replaces("t", "s", target_schema.names, quote=_quoted)
        passes = -(-rows // PASS_ROWS)
        taken = held = given = 0
        for index in range(passes):
            t, h, g = _match(con, keys, takes, _in_pass(keys, passes, index))
            taken, held, given = taken + t, held + h, given + g
        if taken == 0 and held == given:  # every row of the run is stored and none replaces its row
            return None
        columns = ", ".join(_quoted(f.name) for f in schema)
        added = []
        for index in reversed(range(passes)):  # the last pass's tables are still there
            in_pass = _in_pass(keys, passes, index)
            if index != passes - 1:
                _match(con, keys, takes, in_pass)
            # BY NAME: a column only the run's rows have (added by a newer release) is NULL on the kept rows
            kept = (
                f"SELECT t.* FROM (SELECT * FROM target t WHERE {in_pass}) t "
                f"ANTI JOIN (SELECT * FROM matched WHERE takes) m ON {_on('t', 'm', keys)}"
            )
            new = (
                f"SELECT s.* FROM source s ANTI JOIN (SELECT * FROM matched WHERE NOT takes) m "
                f"ON {_on('s', 'm', keys)}"
            )
            selected = f"SELECT {columns} FROM ({kept} UNION ALL BY NAME {new})"
            added += _copy_into_table(con, selected, table_root, f"{directory.name}-{index}")
        table.create_write_transaction(
            added,
            mode="overwrite",
            schema=schema,
            commit_properties=CommitProperties(custom_metadata=dict(custom_metadata or {})),
        )
        con.close()
        return DeltaTable(uri, storage_options=storage_options).version()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _spill_source(
    batches: Iterable[pa.Table], target_schema: pa.Schema, directory: Path
) -> tuple[pa.Schema, list[Path], int]:
    """The run's rows as Parquet files under `directory`, a batch a file, shaped like the table, each row with
    its place in the run (ORDINAL); returns the schema written (the table's, plus columns a newer release
    adds), the files and their rows. DuckDB reads them back inside its memory limit: rows inserted into a
    DuckDB table were held far past it (about 1 GB while a million wide step rows went in, 128 MB limit)."""
    directory.mkdir(parents=True)
    schema, offset, files = target_schema, 0, []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        aligned, _ = align_to_table(batch, schema)
        schema = aligned.schema
        aligned = aligned.append_column(ORDINAL, pa.array(range(offset, offset + batch.num_rows), pa.int64()))
        files.append(directory / f"{len(files):06d}.parquet")
        pq.write_table(aligned, files[-1], row_group_size=BATCH_ROWS)
        offset += batch.num_rows
        del aligned
        pa.default_memory_pool().release_unused()  # the allocator keeps freed pages otherwise
    return schema, files, offset


def _in_pass(keys: Sequence[str], passes: int, index: int) -> str:
    """SQL true for the rows of pass `index` (of `passes`), over the run's rows or the table's: by a hash of
    the first key's text (a chain's steps stay together; the text, so that two integer widths of one key fall
    in the same pass)."""
    if passes == 1:
        return "TRUE"
    return f"hash(CAST({_quoted(keys[0])} AS VARCHAR)) % {passes} = {index}"


def _match(
    con: duckdb.DuckDBPyConnection, keys: Sequence[str], takes: str, in_pass: str
) -> tuple[int, int, int]:
    """The run's rows of one pass (`in_pass`) against the table's: table `firsts` (the first row of each
    key: the ordinal is the row's place in the run; only ordinals are held), view `source` (those rows), and
    table `matched` (the keys both hold, and whether the run's row replaces the stored one). Returns the
    pass's (rows replacing a stored one, keys both hold, run rows). A pass's joins hold its keys only."""
    by_key = ", ".join(map(_quoted, keys))
    con.execute("DROP TABLE IF EXISTS matched").fetchall()
    con.execute("DROP TABLE IF EXISTS firsts").fetchall()
    con.execute(
        f"CREATE TABLE firsts AS SELECT min({ORDINAL}) AS o FROM incoming WHERE {in_pass} GROUP BY {by_key}"
    ).fetchall()
    con.execute(
        f"CREATE OR REPLACE VIEW source AS SELECT * EXCLUDE ({ORDINAL}) FROM incoming i "
        f"SEMI JOIN firsts f ON i.{ORDINAL} = f.o"
    ).fetchall()
    # plain joins, which spill past the memory limit (correlated EXISTS ... OR ... did not)
    key_list = ", ".join(f"s.{_quoted(k)}" for k in keys)
    con.execute(
        f"CREATE TABLE matched AS SELECT {key_list}, coalesce(({takes}), FALSE) AS takes "
        f"FROM source s JOIN (SELECT * FROM target WHERE {in_pass}) t ON {_on('t', 's', keys)}"
    ).fetchall()
    [(taken, held, given)] = con.execute(
        "SELECT (SELECT count(*) FROM matched WHERE takes), (SELECT count(*) FROM matched), "
        "(SELECT count(*) FROM firsts)"
    ).fetchall()
    return taken, held, given


def _copy_into_table(
    con: duckdb.DuckDBPyConnection, rows: str, table_root: Path, name: str
) -> list[AddAction]:
    """DuckDB writes the result of `rows` as Parquet files into the table's folder, inside its memory limit
    (a row group at a time), and returns the Delta add actions that name them: the files of the new version.

    Written first under a hidden folder of the table root (Delta ignores it), then moved to the root under
    Delta's own file names, so a crash leaves no file a table version names half written."""
    staging = table_root / f"{name}-files"
    try:
        written = con.execute(
            f"COPY ({rows}) TO {sql_string(str(staging))} (FORMAT parquet, COMPRESSION snappy, "
            f"ROW_GROUP_SIZE {BATCH_ROWS}, FILE_SIZE_BYTES {TARGET_FILE_BYTES}, RETURN_STATS)"
        ).fetchall()
        added = []
        for path, count, size, _footer, columns, *_ in written:
            if count == 0:  # a pass whose keys the run and the table lack alike writes an empty file
                continue
            file = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
            os.replace(path, table_root / file)
            nulls = {column.strip('"'): int(stats["null_count"]) for column, stats in columns.items()}
            stats = json.dumps({"numRecords": count, "nullCount": nulls})
            modified = int((table_root / file).stat().st_mtime * 1000)
            added.append(AddAction(file, size, {}, modified, True, stats))
        return added
    finally:
        shutil.rmtree(staging, ignore_errors=True)
