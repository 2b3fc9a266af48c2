"""Training rows in bounded pieces: a dataset version cut into partitions of problems, read one at a time.

The chain-level sibling of training/feed.py. The feed streams a table's row groups, which suits flat step
features; the trainer needs whole chains chosen by the exports' rule (exports.formats.select_steps: the
longest usable prefix of each chain, `--agreement-only`, `--since-version`, the problem's text joined in),
and a chain's steps are not bound to one row group (a relabel's MERGE rewrites files). So the version is cut
by problem instead: partition k of K holds the problems whose `md5_number(problem_id) % K == k`, and reading
it runs training.rows.rows_from_dataset, the selection itself, with that condition (`problem_filter`).
Every rule of the selection looks at one chain at a time and a chain has one problem, so the K pieces
together are exactly the rows `rows_from_dataset` returns for the whole version.

K is the version's step rows over `partition_steps` (rounded up), so a partition holds about that many steps
whatever the dataset's size: the trainer's memory follows `partition_steps`, not the version. Each read
scans the version's files once more (only the columns the rows and the rules need: training.rows.ROW_COLUMNS,
on one DuckDB thread: READ_THREADS), so a pass costs K scans; a problem is never split, so one problem with
more steps than `partition_steps` makes its partition that large. md5, not DuckDB's `hash`, so the cut is
the same on every machine and DuckDB release.

The reads share one DuckDB connection over the version, opened with the source and kept until `close`.
A connection per read (storage.sql.connect, then close) starts and stops an in-memory database's worker
threads each time, and glibc gives new threads new malloc arenas (up to 8 per core), each keeping a few MiB
of the read's memory: the trainer grew about 3.5 MiB a read, 1.35x from 10 k to 1 M steps
(bench/bench_train_memory.py). One connection keeps one set of threads and arenas, so memory stays flat
whatever the number of partitions. A process that did not open it (a forked DataLoader worker, an unpickled
copy) opens its own.

>>> partition_condition(2, 8)
'md5_number(problem_id) % 8 = 2'
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any, Protocol

from prm_factory.training.rows import TrainRow, export_kind, rows_from_dataset

PARTITION_STEPS = 16_384
"""Step rows per partition, about: what the trainer holds at once (with the tokens of one batch)."""


READ_THREADS = 1
"""DuckDB threads of the reads. Each thread keeps the Parquet file it scans in flight, so with a thread per
core the trainer's memory would follow the host's cores and, up to that many, the version's files; a read
is mostly Python (its rows made into TrainRows), so one thread costs little time (measured:
docs/training.md)."""


class RowSource(Protocol):
    """Training rows, in partitions the trainer reads one at a time (each a list in a fixed order)."""

    @property
    def partitions(self) -> int: ...

    def read(self, partition: int) -> list[TrainRow]: ...


def partition_condition(partition: int, partitions: int) -> str:
    """SQL over `problem_id` that keeps the problems of one partition."""
    if not 0 <= partition < partitions:
        raise ValueError(f"partition {partition} is outside 0..{partitions - 1}")
    return f"md5_number(problem_id) % {partitions} = {partition}"


def count_steps(connection: Any) -> int:
    """The step rows of the version a connection is over (storage.sql.connect: committed runs only), read from
    Parquet metadata where it can be; the connection is left open."""
    # fetchall: a result left unfinished would refuse the next query on a shared connection
    return int(connection.execute("SELECT count(*) FROM steps").fetchall()[0][0])


class DatasetRows:
    """A dataset version's training rows (training.rows.rows_from_dataset), read one partition at a time.

    `max_rows_read` is the most rows one `read` returned, `reads` the number of reads: what the tests use to
    show that the trainer never asks for the whole version at once. `connections` counts the DuckDB
    connections this process opened for it (one, however many reads: module docstring); `close` (or a
    `with` block) closes the open one, and a read after it opens another.
    """

    def __init__(
        self,
        dataset: Any,
        version: int | None,
        label: str,
        *,
        soft: bool = False,
        agreement_only: bool = False,
        since_version: int | None = None,
        partition_steps: int = PARTITION_STEPS,
    ) -> None:
        from prm_factory.exports.formats import label_sources_of

        kind = export_kind(label, soft)  # an unknown source or --soft without mc fails here, before reading
        if partition_steps < 1:
            raise ValueError(f"partition_steps must be positive, not {partition_steps}")
        self.dataset = dataset
        self.version = dataset.resolve_version(version)
        self.label = label
        self.soft = soft
        self.agreement_only = agreement_only
        self.since_version = since_version
        self.partition_steps = partition_steps
        self._sources = label_sources_of(kind)  # the label columns the selection's views must show
        self._connection: Any | None = None
        self._connection_pid: int | None = None
        self.connections = 0
        self.n_steps = count_steps(self.connection())
        self._partitions = max(1, math.ceil(self.n_steps / partition_steps))
        self.max_rows_read = 0
        self.reads = 0

    @property
    def partitions(self) -> int:
        return self._partitions

    def connection(self) -> Any:
        """The DuckDB connection over the version every read runs on (storage.sql.connect), opened on first
        use in this process."""
        from prm_factory.storage.sql import connect

        if self._connection is None or self._connection_pid != os.getpid():
            # an inherited connection (fork) is left alone: its database and threads are the parent's
            self._connection = connect(self.dataset, self.version, self._sources)
            self._connection.execute(f"SET threads = {READ_THREADS}")
            self._connection_pid = os.getpid()
            self.connections += 1
        return self._connection

    def close(self) -> None:
        """Close this process's connection (a later read opens a new one)."""
        if self._connection is not None and self._connection_pid == os.getpid():
            self._connection.close()
        self._connection, self._connection_pid = None, None

    def __enter__(self) -> DatasetRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a spawned DataLoader worker) without the connection: the copy opens its own."""
        return {**self.__dict__, "_connection": None, "_connection_pid": None, "connections": 0}

    def read(self, partition: int) -> list[TrainRow]:
        """The rows of one partition, in chain id order (the order rows_from_dataset gives)."""
        condition = partition_condition(partition, self._partitions)
        rows = rows_from_dataset(
            self.dataset,
            self.version,
            self.label,
            soft=self.soft,
            agreement_only=self.agreement_only,
            since_version=self.since_version,
            problem_filter=None if self._partitions == 1 else condition,
            connection=self.connection(),
        )
        self.reads += 1
        self.max_rows_read = max(self.max_rows_read, len(rows))
        return rows


class InMemoryRows:
    """Rows already in memory (an `export trl` file, a list a script built): one partition, as given."""

    def __init__(self, rows: Sequence[TrainRow]) -> None:
        self.rows = list(rows)

    @property
    def partitions(self) -> int:
        return 1

    def read(self, partition: int) -> list[TrainRow]:
        if partition != 0:
            raise ValueError(f"in-memory rows are one partition, not partition {partition}")
        return self.rows


def as_source(rows: Sequence[TrainRow] | RowSource) -> RowSource:
    """A row source for the trainer: a source as it is, a sequence of rows as one in-memory partition."""
    if isinstance(rows, Sequence):
        return InMemoryRows(rows)
    return rows
