"""Keyed, retrying writes to one Delta table.

Every write the factory makes is a merge on the table's content-hash key, so a rerun after a crash adds
nothing twice and loses nothing, and two writers racing on the same table both land: a merge that loses the
optimistic-concurrency race is simply tried again against the new table state (merges are idempotent, so a
retry can never double a row).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import tenacity
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from prm_factory.storage.errors import CommitConflictError
from prm_factory.storage.write_rules import WriteRules

MAX_ATTEMPTS = 12


def open_or_create(uri: str, schema: pa.Schema, storage_options: dict[str, str] | None) -> DeltaTable:
    """Open the table at `uri`, creating it empty (version 0) first if it does not exist.

    Two writers may both find the table missing. deltalake 1.6 does not fail the loser's create: it commits
    a second CREATE TABLE at the next version (same schema, no files touched), so racing first commits can
    leave a non-run version on a table; readers skip such versions (see `Dataset.versions`).
    """
    if DeltaTable.is_deltatable(uri, storage_options=storage_options):
        return DeltaTable(uri, storage_options=storage_options)
    try:
        return DeltaTable.create(uri, schema=schema, mode="error", storage_options=storage_options)
    except (DeltaError, CommitFailedError):
        if DeltaTable.is_deltatable(uri, storage_options=storage_options):
            return DeltaTable(uri, storage_options=storage_options)
        raise


def dedupe_on_keys(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Keep the first row of each key; a merge source with a repeated key would insert it twice."""
    if table.num_rows <= 1:
        return table
    indexed = table.select(list(keys)).append_column("__row", pa.array(range(table.num_rows), pa.int64()))
    first = indexed.group_by(list(keys), use_threads=False).aggregate([("__row", "min")])
    if first.num_rows == table.num_rows:
        return table
    rows = first["__row_min"]
    return table.take(rows.take(pc.sort_indices(rows)))  # the first rows themselves, in input order


def align_to_table(source: pa.Table, target: pa.Schema) -> tuple[pa.Table, bool]:
    """Shape `source` for a merge into a table with schema `target`.

    Columns the table has and the source lacks (a field dropped in a later release) become nulls; columns the
    source adds (a field added in a later release) are kept and reported, so the caller evolves the table
    schema in the same commit and older versions stay readable. Returns (aligned source, schema grows).
    """
    columns: list[pa.Array | pa.ChunkedArray] = []
    fields: list[pa.Field] = []
    for field in target:
        if field.name in source.column_names:
            columns.append(source[field.name].cast(field.type))
        else:
            columns.append(pa.nulls(source.num_rows, field.type))
        # Delta checks nullability strictly; the table's declaration is the contract for old and new rows.
        fields.append(field)
    extra = [name for name in source.column_names if name not in target.names]
    for name in extra:
        columns.append(source[name])
        fields.append(source.schema.field(name).with_nullable(True))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields)), bool(extra)


def _predicate(keys: Sequence[str]) -> str:
    return " AND ".join(f"target.`{k}` = source.`{k}`" for k in keys)


def merge_rows(
    uri: str,
    rows: pa.Table,
    keys: Sequence[str],
    rules: WriteRules,
    *,
    storage_options: dict[str, str] | None,
    custom_metadata: Mapping[str, str] | None = None,
) -> int | None:
    """Insert rows whose key is absent; a present key's stored row is replaced where `rules` say so
    (storage/write_rules.py).

    Retries on commit conflicts with jittered backoff, re-reading the table each time. Returns the table
    version this write committed, or None when nothing changed (no commit is made then).
    """
    if rows.num_rows == 0:
        return None
    rows = dedupe_on_keys(rows, keys)

    def merge_once() -> int | None:
        try:
            table = DeltaTable(uri, storage_options=storage_options)
        except TableNotFoundError as error:
            raise CommitConflictError(f"table {uri} vanished while writing: {error}") from error
        target_schema = pa.schema(table.schema().to_arrow())
        source, grows = align_to_table(rows, target_schema)
        merger = table.merge(
            source,
            _predicate(keys),
            source_alias="source",
            target_alias="target",
            merge_schema=grows,
            commit_properties=CommitProperties(custom_metadata=dict(custom_metadata or {})),
        )
        replaces = rules.replaces("target", "source", target_schema.names)
        if replaces == "TRUE":
            merger = merger.when_matched_update_all()
        elif replaces != "FALSE":
            merger = merger.when_matched_update_all(predicate=replaces)
        metrics = merger.when_not_matched_insert_all().execute()
        changed = metrics["num_target_rows_inserted"] + metrics["num_target_rows_updated"]
        return table.version() if changed else None

    return _retrying(uri, merge_once)


def _retrying(uri: str, write_once: Callable[[], int | None]) -> int | None:
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(CommitFailedError),  # a lost race; any other error is raised
        stop=tenacity.stop_after_attempt(MAX_ATTEMPTS),
        # jitter spreads racing writers apart: cap * U(0.5, 1.5) with cap = min(2 s, 0.02 s * 2^n)
        wait=tenacity.wait_exponential(multiplier=0.01, max=1.0)
        + tenacity.wait_random_exponential(multiplier=0.02, max=2.0),
    )
    try:
        return retrying(write_once)
    except tenacity.RetryError as gave_up:
        cause = gave_up.last_attempt.exception()
        message = f"gave up writing {uri} after {MAX_ATTEMPTS} conflicting tries: {cause}"
        raise CommitConflictError(message) from cause


def _composite(table: pa.Table, keys: Sequence[str]) -> pa.ChunkedArray:
    """One string per row for a key of several columns (step keys are chain id and step index)."""
    if len(keys) == 1:
        return table[keys[0]].cast(pa.string())
    return pc.binary_join_element_wise(*(table[k].cast(pa.string()) for k in keys), "\x1f")


def present_mask(table: DeltaTable, rows: pa.Table, keys: Sequence[str]) -> pa.ChunkedArray:
    """Which of `rows` have a key the table already holds.

    Reads only the key columns, one record batch at a time, keeping the target rows whose first key column
    is among the batch's: memory is bounded by `rows`, not by the table (a merge holds the table). One batch
    and one file read ahead: pyarrow's default readahead (16 batches of 4 files) holds a growing share of a
    growing table's keys on every commit batch.
    """
    wanted = pc.unique(rows[keys[0]])
    found = []
    scan = table.to_pyarrow_dataset().scanner(columns=list(keys), batch_readahead=1, fragment_readahead=1)
    for batch in scan.to_batches():
        hit = pc.is_in(batch.column(keys[0]), value_set=wanted)
        if pc.any(hit).as_py():
            found.append(pa.Table.from_batches([batch]).filter(hit))
    if not found:
        return pa.chunked_array([pa.array([False] * rows.num_rows, pa.bool_())])
    held = _composite(pa.concat_tables(found), keys).combine_chunks()
    return pc.is_in(_composite(rows, keys), value_set=held)


def insert_rows(
    uri: str,
    rows: pa.Table,
    keys: Sequence[str],
    rules: WriteRules,
    *,
    storage_options: dict[str, str] | None,
    custom_metadata: Mapping[str, str] | None = None,
) -> int | None:
    """`merge_rows` for a writer holding the dataset's commit lock (storage/commit_lock.py).

    Rows whose key the table lacks are appended: that reads the key columns only, so a run that adds new
    rows commits in memory bounded by its batch, however large the table (a merge reads every row). Rows
    whose key is present go through `merge_rows` with the same rules; when no rule can replace a present row
    they are left alone without a merge. Without the lock another writer could insert a key between the
    check and the append, doubling it.
    """
    if rows.num_rows == 0:
        return None
    rows = dedupe_on_keys(rows, keys)
    try:
        table = DeltaTable(uri, storage_options=storage_options)
    except TableNotFoundError as error:
        raise CommitConflictError(f"table {uri} vanished while writing: {error}") from error
    present = present_mask(table, rows, keys)
    absent = rows.filter(pc.invert(present))
    version = None
    if absent.num_rows:
        source, grows = align_to_table(absent, pa.schema(table.schema().to_arrow()))

        def append_once() -> int:
            write_deltalake(
                uri,
                source,
                mode="append",
                schema_mode="merge" if grows else None,
                storage_options=storage_options,
                commit_properties=CommitProperties(custom_metadata=dict(custom_metadata or {})),
            )
            return DeltaTable(uri, storage_options=storage_options).version()

        version = _retrying(uri, append_once)
    matched = rows.filter(present)
    if matched.num_rows and rules.could_replace:
        merged = merge_rows(
            uri, matched, keys, rules, storage_options=storage_options, custom_metadata=custom_metadata
        )
        version = merged if merged is not None else version
    return version
