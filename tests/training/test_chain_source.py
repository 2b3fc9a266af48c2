"""A dataset version's training rows in partitions of problems: together exactly the rows of the version."""

from __future__ import annotations

import pytest

from prm_factory.training.chain_source import (
    READ_THREADS,
    DatasetRows,
    InMemoryRows,
    as_source,
    partition_condition,
)
from prm_factory.training.rows import RowsError, rows_from_dataset


def _partitions(source: DatasetRows) -> list[list]:
    return [source.read(k) for k in range(source.partitions)]


def _sorted(rows) -> list:
    return sorted(rows, key=lambda row: row.chain_id)


@pytest.mark.parametrize(
    ("label", "options"),
    [
        ("verifier", {}),
        ("mc", {"soft": True}),
        ("consensus", {"agreement_only": True}),
    ],
)
def test_partitions_together_are_the_rows_of_the_version(committed_dataset, label, options) -> None:
    data = committed_dataset(12)
    whole = rows_from_dataset(data, None, label, **options)
    source = DatasetRows(data, None, label, partition_steps=15, **options)
    assert source.n_steps == 12 * 2 * 3 and source.partitions == 5  # 72 steps, 15 a partition
    pieces = _partitions(source)
    assert sum(len(piece) for piece in pieces) == len(whole)
    assert _sorted(row for piece in pieces for row in piece) == _sorted(whole)  # the rows, labels and all
    assert max(len(piece) for piece in pieces) < len(whole)
    # a problem lies in one partition: the split by problem and the selection per chain stay whole
    homes = {}
    for k, piece in enumerate(pieces):
        for row in piece:
            assert homes.setdefault(row.problem_id, k) == k
    assert all(piece == sorted(piece, key=lambda r: r.chain_id) for piece in pieces)  # chain id order
    assert (source.reads, source.max_rows_read) == (5, max(len(piece) for piece in pieces))


def test_since_version_is_applied_within_each_partition(committed_dataset, run_factory) -> None:
    data = committed_dataset(6)
    first = data.resolve_version(None)
    data.commit_run(*run_factory("b", n_problems=6, problem_offset=6).args())
    whole = rows_from_dataset(data, None, "verifier", since_version=first)
    assert {row.prompt for row in whole} == {f"What is {p} + {p}?" for p in range(6, 12)}
    source = DatasetRows(data, None, "verifier", since_version=first, partition_steps=10)
    assert source.partitions > 1
    assert _sorted(row for piece in _partitions(source) for row in piece) == _sorted(whole)
    # a second pass on the same connection: a read leaves no views or registered tables behind
    assert _sorted(row for piece in _partitions(source) for row in piece) == _sorted(whole)
    assert source.connections == 1


def test_every_read_shares_one_connection_over_the_version(committed_dataset) -> None:
    """One DuckDB database for all reads: a connection per read started and stopped its worker threads
    each time, and the malloc arenas of new threads grew the trainer's memory with the number of reads
    (training/chain_source.py's docstring)."""
    import duckdb

    data = committed_dataset(12)
    source = DatasetRows(data, None, "verifier", partition_steps=15)
    first = _partitions(source)
    assert _partitions(source) == first and source.reads == 2 * source.partitions == 10
    assert source.connections == 1
    opened = source.connection()
    source.close()
    with pytest.raises(duckdb.ConnectionException):
        opened.execute("SELECT 1")
    assert _partitions(source) == first and source.connections == 2  # reopened on the next read
    with source:
        pass
    assert source._connection is None


def test_a_pickled_source_opens_its_own_connection(committed_dataset) -> None:
    import pickle

    data = committed_dataset(12)
    source = DatasetRows(data, None, "verifier", partition_steps=15)
    copy = pickle.loads(pickle.dumps(source))  # a spawned DataLoader worker's copy
    assert copy.connections == 0 and _partitions(copy) == _partitions(source)
    assert copy.connections == 1 and copy.connection() is not source.connection()


def test_reads_run_on_a_fixed_number_of_duckdb_threads(committed_dataset) -> None:
    """Not one a core: each thread keeps a file's scan in flight, so the trainer's memory would follow the
    host (training/chain_source.py READ_THREADS), in this process and in a worker's copy alike."""
    import pickle

    data = committed_dataset(12)
    source = DatasetRows(data, None, "verifier", partition_steps=15)
    copy = pickle.loads(pickle.dumps(source))
    for rows in (source, copy):
        threads = rows.connection().execute("SELECT current_setting('threads')").fetchall()[0][0]
        assert threads == READ_THREADS == 1


def test_a_small_version_is_one_partition_read_without_a_filter(committed_dataset) -> None:
    data = committed_dataset(2)
    source = DatasetRows(data, None, "verifier")
    assert source.partitions == 1 and source.read(0) == rows_from_dataset(data, None, "verifier")


def test_what_cannot_be_read_fails_before_reading(committed_dataset) -> None:
    data = committed_dataset(2)
    with pytest.raises(RowsError, match="--label mc"):
        DatasetRows(data, None, "verifier", soft=True)
    with pytest.raises(RowsError, match="unknown label source"):
        DatasetRows(data, None, "debate")
    with pytest.raises(ValueError, match="positive"):
        DatasetRows(data, None, "verifier", partition_steps=0)
    with pytest.raises(ValueError, match="outside"):
        partition_condition(3, 3)


def test_rows_in_memory_are_one_partition() -> None:
    from prm_factory.training.rows import TrainRow

    rows = [TrainRow("c", "p", "What?", ("a",), (True,))]
    source = as_source(rows)
    assert isinstance(source, InMemoryRows) and source.partitions == 1 and source.read(0) == rows
    assert as_source(source) is source
    with pytest.raises(ValueError):
        source.read(1)
