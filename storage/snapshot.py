"""The exact files, schema and run filter of every table at one dataset version, as plain data.

SQL views, the torch feed and the Arrow datasets of `Dataset.tables` all read a version through this one
description, so they agree on which rows a version holds (see storage/dataset.py for the version design
and storage/visibility.py for the per-file run filter).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from deltalake import DeltaTable

if TYPE_CHECKING:  # the dataset reads its versions through this module: no import back at run time
    from prm_factory.storage.dataset import Dataset
from prm_factory.storage.layout import DATA_KINDS, RUN_SCOPED_KINDS, table_schema
from prm_factory.storage.visibility import visible_files


@dataclass(frozen=True)
class TableSnapshot:
    """One table as a version sees it."""

    kind: str
    table_version: int | None  # None: the table does not exist yet (reads as empty)
    schema: pa.Schema  # the Delta table's schema at that version (files may lack later columns)
    files: tuple[str, ...]  # absolute paths or URIs of the Parquet files to read
    row_filter_runs: tuple[str, ...] | None  # keep only rows of these runs; None: every row is visible
    columns_in_every_file: frozenset[str] = frozenset()  # by the log's statistics; a later column is not

    def has_everywhere(self, *names: str) -> bool:
        """Every file has these columns (an empty table trivially does), so no fallback is needed."""
        return not self.files or set(names) <= self.columns_in_every_file

    @property
    def local(self) -> bool:
        """All files are on the local file system (DuckDB can read them natively, without extensions)."""
        return all("://" not in path or path.startswith("file://") for path in self.files)


@dataclass(frozen=True)
class DatasetSnapshot:
    version: int
    run_ids: tuple[str, ...]
    tables: dict[str, TableSnapshot]


def _absolute(table: DeltaTable, relative_paths: set[str]) -> tuple[str, ...]:
    """The absolute file URIs deltalake gives for the chosen relative paths, in a stable order.

    Matched by file name: storage/ never partitions its tables, so every data file sits in the table root.
    """
    names = {path.rsplit("/", 1)[-1] for path in relative_paths}
    return tuple(sorted(uri for uri in table.file_uris() if uri.rsplit("/", 1)[-1] in names))


def _complete_columns(table: DeltaTable, files: tuple[str, ...]) -> frozenset[str]:
    """Columns with statistics in every chosen file: files written before a column was added have none."""
    actions = pa.table(table.get_add_actions(flatten=True))
    names = {path.rsplit("/", 1)[-1] for path in files}
    chosen = [i for i, path in enumerate(actions["path"].to_pylist()) if path.rsplit("/", 1)[-1] in names]
    complete = set()
    for column in actions.column_names:
        if column.startswith("null_count."):
            counts = actions[column].to_pylist()
            if all(counts[i] is not None for i in chosen):
                complete.add(column.removeprefix("null_count."))
    return frozenset(complete)


def snapshot(dataset: Dataset, version: int | None = None) -> DatasetSnapshot:
    """Resolve a dataset version into the files and filters of each of its tables."""
    resolved, recorded, run_ids = dataset.table_versions(version)
    tables: dict[str, TableSnapshot] = {}
    for kind in (*DATA_KINDS, "runs"):
        uri = dataset.uri(kind)
        if kind != "runs" and not DeltaTable.is_deltatable(uri, storage_options=dataset.storage_options):
            tables[kind] = TableSnapshot(kind, None, table_schema(kind), (), None)
            continue
        table_version = resolved if kind == "runs" else recorded[kind] or 0
        table = DeltaTable(uri, version=table_version, storage_options=dataset.storage_options)
        schema = pa.schema(table.schema().to_arrow())
        row_filter: tuple[str, ...] | None = None
        if kind in RUN_SCOPED_KINDS:
            visibility = visible_files(table, run_ids)
            files = _absolute(table, set(visibility.files))
            row_filter = tuple(run_ids) if visibility.needs_row_filter else None
        else:
            files = tuple(sorted(table.file_uris()))
        tables[kind] = TableSnapshot(
            kind, table_version, schema, files, row_filter, _complete_columns(table, files)
        )
    return DatasetSnapshot(resolved, tuple(run_ids), tables)


def arrow_dataset(dataset: Dataset, table: TableSnapshot, strings_as_views: bool = False) -> pads.Dataset:
    """The snapshot's files as an Arrow dataset with the table's schema (missing columns read as nulls).

    Fragments come from deltalake's own dataset (its file system works for object stores too) but are rebuilt
    without the guarantees deltalake derives from file statistics: for a column added later, files written
    before it get `col >= null AND col <= null`, and pyarrow then drops them under a filter like `col IS NULL`
    (tests/storage/test_storage_evolution.py). The run filter compares a cast of `run_id`, so pyarrow does not
    test it against the statistics of deltalake's string_view-tagged MERGE files, which it cannot do.
    Filtering other string columns through pyarrow hits that limit: filter in SQL or after reading.
    `strings_as_views` types string columns as string_view, the combination DuckDB's pushdown handles.
    """
    if table.table_version is None or not table.files:
        return pads.dataset([], schema=table.schema)
    delta = DeltaTable(
        dataset.uri(table.kind), version=table.table_version, storage_options=dataset.storage_options
    )
    delta_dataset = delta.to_pyarrow_dataset()
    names = {path.rsplit("/", 1)[-1] for path in table.files}
    file_format = delta_dataset.format
    fragments = [
        file_format.make_fragment(fragment.path, fragment.filesystem)
        for fragment in delta_dataset.get_fragments()
        if fragment.path.rsplit("/", 1)[-1] in names
    ]
    schema = table.schema
    if strings_as_views:
        schema = pa.schema(
            [f.with_type(pa.string_view()) if pa.types.is_string(f.type) else f for f in schema]
        )
    result = pads.FileSystemDataset(fragments, schema, file_format, delta_dataset.filesystem)
    if table.row_filter_runs is not None:
        committed = pa.array(table.row_filter_runs, pa.string())
        result = result.filter(pc.field("run_id").cast(pa.string()).isin(committed))
    return result
