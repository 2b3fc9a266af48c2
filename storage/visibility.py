"""Which files of a run-scoped table a dataset version can see, decided per file where possible.

A dataset version shows only rows of runs committed at that version. Filtering every row on `run_id` costs
a string comparison per row; but a merge writes each run's new rows into files of their own, and the Delta
log keeps each file's min and max `run_id`. So a file whose min equals its max belongs to one run and is
taken whole or skipped whole; only files mixing runs (after compaction) or without statistics need the row
filter.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import pyarrow as pa
from deltalake import DeltaTable


@dataclass(frozen=True)
class Visibility:
    """Relative paths of the files to read, and whether their rows still need the run filter."""

    files: tuple[str, ...]
    needs_row_filter: bool


def single_run_files(table: DeltaTable) -> dict[str, str | None]:
    """Relative file path -> its only run id, or None when the file mixes runs or has no statistics."""
    actions = pa.table(table.get_add_actions(flatten=True))
    paths = actions["path"].to_pylist()
    if "min.run_id" not in actions.column_names or "max.run_id" not in actions.column_names:
        return dict.fromkeys(paths)
    lows, highs = actions["min.run_id"].to_pylist(), actions["max.run_id"].to_pylist()
    return {
        path: low if low is not None and low == high else None
        for path, low, high in zip(paths, lows, highs, strict=True)
    }


def visible_files(table: DeltaTable, committed_run_ids: Collection[str]) -> Visibility:
    """The files a version reads: single-run files of committed runs, plus every mixed file (row-filtered)."""
    committed = set(committed_run_ids)
    files, mixed = [], False
    for path, only_run in sorted(single_run_files(table).items()):
        if only_run is None:
            files.append(path)
            mixed = True
        elif only_run in committed:
            files.append(path)
    return Visibility(tuple(files), mixed)
