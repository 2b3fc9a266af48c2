"""A run's rows on disk before its commit: one Parquet file per record kind per finished chunk.

A streaming run writes each chunk's problems, chains and steps here as the chunk finishes and drops them
from memory; `Dataset.commit_staged` later turns all staged chunks into one transaction per table, so
readers see the run only when its runs row lands, as with an in-memory commit. Nothing under `_staging/`
is a Delta table, so dataset readers never see it (the underscore keeps it out of the record kinds).

A chunk is staged under `<root>/_staging/<chunk key>/<kind>.parquet`, where the key is a content hash of
everything that decides the chunk's rows (problems, model, sampling, verifier, rollouts, labelers), so a
run stopped after some chunks and started again with the same config reuses the staged chunks instead of
recomputing them. A chunk directory appears by one rename after all its files are written: a directory
that exists is complete. Rows carry the run id of the run that staged them; `read_staged` gives them the
committing run's id.

Local dataset roots only (the stage caches under `_cache/` are local too).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

STAGING_DIR = "_staging"
COMMIT_BATCH_ROWS = 20_000
"""Rows of one kind merged per Delta transaction when staged chunks are committed (`staged_batches`)."""
RUN_ID_COLUMN = "run_id"


def staging_root(dataset_root: str | Path) -> Path:
    return Path(dataset_root) / STAGING_DIR


def chunk_dir(dataset_root: str | Path, chunk_key: str) -> Path:
    """Where the chunk with content key `chunk_key` is (or will be) staged."""
    return staging_root(dataset_root) / chunk_key


def is_staged(directory: Path) -> bool:
    """Whether a complete chunk is staged there (directories appear whole, see `stage_chunk`)."""
    return directory.is_dir()


def stage_chunk(
    directory: Path, tables: Mapping[str, pa.Table], notes: Mapping[str, str] | None = None
) -> None:
    """Write one chunk's tables (kind -> rows) as `<directory>/<kind>.parquet`, all or nothing.

    `notes` (file name -> text) go beside them: what the caller needs back when it reuses the chunk.

    The files go to a sibling directory first and appear under `directory` by one rename, so a run killed
    while staging leaves no half chunk. A chunk already staged there (same content key) is kept.
    """
    if is_staged(directory):
        return
    partial = directory.with_name(f".{directory.name}.partial-{uuid.uuid4().hex[:8]}")
    partial.mkdir(parents=True)
    try:
        for kind, table in tables.items():
            pq.write_table(table, partial / f"{kind}.parquet")
        for name, text in (notes or {}).items():
            (partial / name).write_text(text)
        os.rename(partial, directory)
    except OSError:
        if not is_staged(directory):  # a concurrent run staging the same chunk won the rename: fine
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def read_note(directory: Path, name: str) -> str:
    """A note `stage_chunk` wrote beside the chunk's rows."""
    return (directory / name).read_text()


def read_staged(directories: Sequence[Path], kind: str, run_id: str | None = None) -> pa.Table | None:
    """All staged rows of `kind` across `directories`, in chunk order; None when no chunk has that kind.

    With `run_id`, a table whose rows carry a run id gets it (a reused chunk was staged by an earlier run).
    """
    files = [str(d / f"{kind}.parquet") for d in directories if (d / f"{kind}.parquet").is_file()]
    if not files:
        return None
    table = pads.dataset(files, format="parquet").to_table()
    if run_id is not None and RUN_ID_COLUMN in table.column_names:
        position = table.column_names.index(RUN_ID_COLUMN)
        field = table.schema.field(position)
        table = table.set_column(position, field, pa.repeat(pa.scalar(run_id, field.type), table.num_rows))
    return table


def staged_batches(directories: Sequence[Path], kind: str, max_rows: int) -> Iterator[list[Path]]:
    """The staged chunks in order, grouped so that each group holds at most `max_rows` rows of `kind` (a
    chunk larger than that is a group of its own): the commit merges one group at a time, so its memory is
    bounded by a group, not by the run. Row counts come from the Parquet footers, nothing else is read.

    >>> list(staged_batches([], "steps", 10))
    []
    """
    group: list[Path] = []
    rows = 0
    for directory in directories:
        file = Path(directory) / f"{kind}.parquet"
        n = pq.ParquetFile(file).metadata.num_rows if file.is_file() else 0
        if group and rows + n > max_rows:
            yield group
            group, rows = [], 0
        group.append(Path(directory))
        rows += n
    if group:
        yield group


def drop_staged(directories: Sequence[Path]) -> None:
    """Remove committed chunks (a missing one was removed already, e.g. by a concurrent identical run)."""
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)
