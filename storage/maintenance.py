"""Compaction and retention: fewer, larger files for readers, and old files deleted after a grace period.

`compact` rewrites each data table's small files (one or more per run) into larger ones, then vacuums files
that no table version newer than the retention period needs. Readers of the current dataset version are
not disturbed: dataset versions read data tables past compaction and vacuum commits (they change files, not
rows; see `Dataset._past_maintenance`). Versions committed longer ago than the retention period may stop
being readable, except tagged ones, whose files are kept. The tiny `runs` table is left alone, so that
every commit on it stays a dataset version.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import CommitConflictError
from prm_factory.storage.layout import DATA_KINDS
from prm_factory.storage.versions import tags

DEFAULT_RETENTION_HOURS = 168.0
"""Delta's own default: a week during which older versions stay readable for time travel."""

MAX_ATTEMPTS = 8


@dataclass(frozen=True)
class CompactionReport:
    """What `compact` did to one table."""

    kind: str
    files_before: int
    files_after: int
    files_deleted: int  # by vacuum


def _tagged_table_versions(dataset: Dataset) -> dict[str, list[int]]:
    """Per data table, the table versions that tagged dataset versions read (their files survive vacuum)."""
    keep: dict[str, set[int]] = {kind: set() for kind in DATA_KINDS}
    for version in set(tags(dataset).values()):
        _, recorded, _ = dataset.table_versions(version)
        for kind, table_version in recorded.items():
            if table_version is not None:
                keep[kind].add(table_version)
    return {kind: sorted(versions) for kind, versions in keep.items()}


def _optimize(uri: str, storage_options: dict[str, str] | None, target_size: int | None) -> None:
    """Compact with retries: a run committing at the same moment makes the optimize commit conflict."""
    for attempt in range(MAX_ATTEMPTS):
        try:
            DeltaTable(uri, storage_options=storage_options).optimize.compact(target_size=target_size)
            return
        except CommitFailedError as error:
            if attempt == MAX_ATTEMPTS - 1:
                raise CommitConflictError(f"could not compact {uri}: {error}") from error
            time.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))


def compact(
    dataset: Dataset,
    retention_hours: float | None = DEFAULT_RETENTION_HOURS,
    target_size: int | None = None,
) -> list[CompactionReport]:
    """Compact every data table, then (unless `retention_hours` is None) vacuum files older than that."""
    dataset.resolve_version(None)  # a clear error when there is no dataset
    keep = _tagged_table_versions(dataset)
    reports = []
    for kind in DATA_KINDS:
        uri = dataset.uri(kind)
        if not DeltaTable.is_deltatable(uri, storage_options=dataset.storage_options):
            continue
        before = len(DeltaTable(uri, storage_options=dataset.storage_options).file_uris())
        _optimize(uri, dataset.storage_options, target_size)
        table = DeltaTable(uri, storage_options=dataset.storage_options)
        deleted: list[str] = []
        if retention_hours is not None:
            deleted = table.vacuum(
                retention_hours=int(retention_hours),
                dry_run=False,
                enforce_retention_duration=False,  # the caller chose the period explicitly
                keep_versions=keep[kind] or None,
            )
        after = len(DeltaTable(uri, storage_options=dataset.storage_options).file_uris())
        reports.append(CompactionReport(kind, before, after, len(deleted)))
    return reports
