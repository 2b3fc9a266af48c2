"""Epochs streamed from partitions: a seeded order, the split by problem, resume at a batch, processes."""

from __future__ import annotations

import pytest

from prm_factory.training.chain_source import DatasetRows, InMemoryRows
from prm_factory.training.rows import TrainRow
from prm_factory.training.stream import (
    EpochExamples,
    ExampleSpec,
    TrainingError,
    batches_per_process,
    epoch_rows,
    held_out_examples,
    partition_order,
    row_order,
    take_census,
)

SEPARATOR = " ки\n"


class Partitioned:
    """A version's partitions (training.chain_source.DatasetRows) read once and served from memory, with the
    reads counted: the stream's logic without a DuckDB query per read."""

    def __init__(self, pieces: list[list[TrainRow]]) -> None:
        self.pieces = pieces
        self.reads = 0

    @property
    def partitions(self) -> int:
        return len(self.pieces)

    def read(self, partition: int) -> list[TrainRow]:
        self.reads += 1
        return list(self.pieces[partition])


@pytest.fixture(scope="module")
def version_pieces(tmp_path_factory) -> list[list[TrainRow]]:
    """A 20-problem version (120 steps) cut into 8 partitions."""
    from tests.storage_fixtures import committed_fixture_dataset

    data = committed_fixture_dataset(tmp_path_factory.mktemp("stream") / "ds", 20)
    source = DatasetRows(data, None, "verifier", partition_steps=15)
    return [source.read(k) for k in range(source.partitions)]


@pytest.fixture
def streamed(version_pieces, smol_tokenizer):
    """The partitions as a row source, its census and the example spec."""
    source = Partitioned(version_pieces)
    spec = ExampleSpec(smol_tokenizer, SEPARATOR, 128, held_out=0.3)
    return source, take_census(source, spec), spec


def _epoch(source, census, spec, *, epoch=0, batch_size=3, rank=0, processes=1, done=0) -> list[str]:
    examples = EpochExamples(
        source,
        census,
        spec,
        seed=5,
        epoch=epoch,
        batch_size=batch_size,
        rank=rank,
        processes=processes,
        batches_done=done,
    )
    return [example.chain_id for example in examples]


def test_orders_are_pure_functions_of_seed_and_epoch() -> None:
    import torch

    assert partition_order(8, 1, 0) == partition_order(8, 1, 0) != partition_order(8, 1, 1)
    assert sorted(partition_order(8, 1, 3)) == list(range(8))
    assert row_order(10, 3, 2, 1) == row_order(10, 3, 2, 1) != row_order(10, 3, 2, 0)
    assert row_order(10, 3, 2, 1) != row_order(10, 3, 2, 2) and row_order(10, 3, 2, 1) != row_order(
        10, 3, 3, 1
    )
    # partition 0: the permutation the in-memory trainer drew, so a one-partition run keeps its batches
    expected = torch.randperm(10, generator=torch.Generator().manual_seed(3 * 100_003 + 2)).tolist()
    assert row_order(10, 3, 2, 0) == expected


def test_an_epoch_streams_each_training_row_once_and_the_split_is_by_problem(streamed) -> None:
    source, census, spec = streamed
    assert source.partitions == 8 and census.train > 0 and census.held_out > 0
    epoch = _epoch(source, census, spec)
    assert len(epoch) == len(set(epoch)) == census.train
    assert epoch == _epoch(source, census, spec)  # the same epoch, the same order
    assert epoch != _epoch(source, census, spec, epoch=1) and set(epoch) == set(
        _epoch(source, census, spec, epoch=1)
    )

    rows = {row.chain_id: row for k in range(source.partitions) for row in source.read(k)}
    held = [e.chain_id for k in range(source.partitions) for e in held_out_examples(source, census, spec, k)]
    assert len(held) == census.held_out and set(held) | set(epoch) == set(rows)
    train_problems = {rows[c].problem_id for c in epoch}
    held_problems = {rows[c].problem_id for c in held}
    assert train_problems and held_problems and not train_problems & held_problems
    # the held-out side is the stable hash of the problem id (training.rows.is_held_out)
    assert all(spec.is_held_out(rows[c]) for c in held) and not any(spec.is_held_out(rows[c]) for c in epoch)


@pytest.mark.parametrize("processes", [1, 2])
def test_a_resume_continues_with_exactly_the_next_batch(streamed, processes) -> None:
    source, census, spec = streamed
    batch = 3
    batches = batches_per_process(census.train, batch, processes)
    for rank in range(processes):
        whole = _epoch(source, census, spec, rank=rank, processes=processes)
        for done in sorted({0, 1, batches // 2, batches - 1, batches}):
            resumed = _epoch(source, census, spec, rank=rank, processes=processes, done=done)
            assert resumed == whole[done * batch :], (rank, done)


def test_a_resume_does_not_read_the_partitions_already_done(streamed) -> None:
    source, census, spec = streamed
    order = partition_order(source.partitions, 5, 0)
    before_last = sum(census.partitions[k].train for k in order[:-1])
    reads = source.reads
    tail = epoch_rows(source, census, spec, seed=5, epoch=0, start=before_last)
    assert len(list(tail)) == census.partitions[order[-1]].train and source.reads == reads + 1


def test_processes_get_equal_full_batches_that_cover_the_epoch(streamed) -> None:
    source, census, spec = streamed
    batch = 4
    alone = _epoch(source, census, spec, batch_size=batch)
    per_rank = [_epoch(source, census, spec, batch_size=batch, rank=r, processes=3) for r in range(3)]
    batches = batches_per_process(census.train, batch, 3)
    assert all(len(shard) == batches * batch for shard in per_rank)
    # global batch b went to process b % 3, in the one-process order; the rest is the epoch's beginning again
    dealt = [shard[i * batch : (i + 1) * batch] for i in range(batches) for shard in per_rank]
    flat = [chain for chunk in dealt for chain in chunk]
    assert flat[: len(alone)] == alone and flat[len(alone) :] == alone[: len(flat) - len(alone)]


def test_the_census_skips_misaligned_rows_by_id_and_gathers_over_processes(smol_tokenizer) -> None:
    rows = [
        TrainRow(f"c{i}", f"p{i}", "What is 1 + 1?", ("1 + 1 = 2.", "So 2."), (True, True)) for i in range(6)
    ]
    rows[2] = TrainRow("bad", "p2", "What is 1 + 1?", (f"1 + 1{SEPARATOR}= 2",), (True,))
    source = InMemoryRows(rows)
    spec = ExampleSpec(smol_tokenizer, SEPARATOR, 128, held_out=0.0)
    census = take_census(source, spec)
    assert [s.chain_id for s in census.skipped] == ["bad"] and census.train == 5
    assert "bad" not in _epoch(source, census, spec)

    # two processes each count their partitions and gather: the same census as one process's
    assert take_census(source, spec, 1, 2, gather=lambda mine: [*take_census(source, spec).partitions, *mine])
    with pytest.raises(TrainingError, match="not all"):
        take_census(source, spec, 1, 2)  # no gather: process 1 alone counts no partition


def test_rows_that_change_under_the_trainer_are_refused(smol_tokenizer) -> None:
    rows = [TrainRow(f"c{i}", f"p{i}", "What?", ("Yes.",), (True,)) for i in range(4)]
    spec = ExampleSpec(smol_tokenizer, SEPARATOR, 128, held_out=0.0)
    census = take_census(InMemoryRows(rows), spec)
    with pytest.raises(TrainingError, match="changed under the trainer"):
        _epoch(InMemoryRows(rows[:3]), census, spec)
