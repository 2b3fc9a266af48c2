"""Each epoch's training examples streamed from a row source, one partition of rows at a time.

The trainer holds one partition of rows (training/chain_source.py: about `partition_steps` steps) and the
tokens of a batch, never the version; what it keeps over a run grows only with the held-out steps (9 bytes
each, training.step_metrics.StepTally) and the rows the alignment check skipped.

* **Census.** One pass before training reads every partition, lays its rows out with the alignment check
  (training.layout.prepare) and counts, per partition, the rows, the training and held-out rows and steps,
  the skipped rows, and a digest of its examples. The counts fix the epoch's length (the learning-rate
  schedule, the progress bar, the batches of each process) and let a resume skip whole partitions unread;
  the digests make the checkpoint fingerprint. With several processes each counts every N-th partition and
  the counts are gathered, so the pass takes 1/N of the time.
* **Order.** Epoch e visits the partitions in a permutation seeded by (seed, e), and each partition's
  training rows in a permutation seeded by (seed, e, partition): a pure function of (seed, epoch) and the
  version. The partition is the shuffle buffer; since partitions are cut by a hash of the problem id, each
  is a random sample of problems, so a batch draws from a random sample of the version. With one
  partition (a small version, or rows given in memory) the order is the permutation the in-memory trainer
  used, so such a run in one process trains on the very same batches as before.
* **Position.** The epoch is a sequence of global positions; global batch b (positions b*B .. b*B+B-1,
  B = batch size) goes to process b % N, as accelerate deals batches. A checkpoint records the batches
  each process has done (d), so a resume starts at position d*N*B, skips the partitions wholly before it by
  their census counts without reading them, and drops the rest of the way inside the next one. With N > 1
  the epoch is filled up to whole rounds of N batches with rows from its beginning, so every process gets
  the same number of full batches.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from torch.utils.data import IterableDataset

from prm_factory.training.chain_source import RowSource
from prm_factory.training.layout import Example, Skipped, example_of, prepare
from prm_factory.training.rows import TrainRow, is_held_out
from prm_factory.training.step_metrics import StepTally


class TrainingError(RuntimeError):
    """Training cannot start or resume as asked (no rows, an empty split, a checkpoint of other data)."""


@dataclass(frozen=True)
class ExampleSpec:
    """How a row becomes an example and on which side of the split it falls."""

    tokenizer: Any
    separator: str
    max_length: int | None
    held_out: float

    def example(self, row: TrainRow) -> Example:
        """The row laid out (it passed the alignment check in the census)."""
        return example_of(row, self.tokenizer, self.separator, self.max_length)

    def is_held_out(self, row: TrainRow) -> bool:
        return is_held_out(row.problem_id, self.held_out)


@dataclass(frozen=True)
class PartitionCount:
    """What the census found in one partition."""

    partition: int
    rows: int
    train: int
    train_steps: int
    held_out: int
    held_out_steps: int
    without_values: int  # rows without MC values (soft training refuses them)
    digest: str  # of the partition's examples, in order (examples_digest)
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class Census:
    """Every partition's counts, in partition order."""

    partitions: tuple[PartitionCount, ...]

    def total(self, name: str) -> int:
        return sum(getattr(count, name) for count in self.partitions)

    @property
    def train(self) -> int:
        return self.total("train")

    @property
    def held_out(self) -> int:
        return self.total("held_out")

    @property
    def skipped(self) -> list[Skipped]:
        return [problem for count in self.partitions for problem in count.skipped]

    @cached_property
    def skipped_ids(self) -> frozenset[str]:
        return frozenset(problem.chain_id for problem in self.skipped)

    @property
    def digests(self) -> list[str]:
        return [count.digest for count in self.partitions]


def examples_digest(examples: Sequence[Example]) -> str:
    """sha256 of the examples' ids, tokens, label positions' targets and values, in order."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(
            json.dumps([example.chain_id, example.input_ids, example.labels, example.values]).encode()
        )
    return digest.hexdigest()


def count_partition(source: RowSource, partition: int, spec: ExampleSpec) -> PartitionCount:
    rows = source.read(partition)
    examples, skipped = prepare(rows, spec.tokenizer, spec.separator, spec.max_length)
    held_ids = {row.chain_id for row in rows if spec.is_held_out(row)}
    held = [e for e in examples if e.chain_id in held_ids]
    train = [e for e in examples if e.chain_id not in held_ids]
    return PartitionCount(
        partition=partition,
        rows=len(rows),
        train=len(train),
        train_steps=sum(len(e.positions) for e in train),
        held_out=len(held),
        held_out_steps=sum(len(e.positions) for e in held),
        without_values=sum(row.values is None for row in rows),
        digest=examples_digest(examples),
        skipped=tuple(skipped),
    )


def take_census(
    source: RowSource,
    spec: ExampleSpec,
    rank: int = 0,
    processes: int = 1,
    gather: Callable[[list[PartitionCount]], list[PartitionCount]] | None = None,
) -> Census:
    """Count every partition; with several processes each counts every N-th and `gather` (accelerate's
    gather_object) hands every process all of them."""
    mine = [count_partition(source, k, spec) for k in range(rank, source.partitions, processes)]
    everyone = gather(mine) if gather is not None else mine
    counts = tuple(sorted(everyone, key=lambda count: count.partition))
    if [count.partition for count in counts] != list(range(source.partitions)):
        raise TrainingError(f"the census covers partitions {[c.partition for c in counts]}, not all")
    return Census(counts)


def partition_order(partitions: int, seed: int, epoch: int) -> list[int]:
    """The order epoch `epoch` visits the partitions in (a seeded permutation)."""
    order = list(range(partitions))
    random.Random(f"prm-factory partitions {seed} {epoch}").shuffle(order)
    return order


def row_order(n: int, seed: int, epoch: int, partition: int) -> list[int]:
    """The order of a partition's training rows in an epoch; for partition 0 the permutation the in-memory
    trainer drew for the whole epoch (torch.randperm seeded by seed * 100_003 + epoch), for the others a
    seed hashed from all three (torch's CPU generator keeps 32 bits of a seed: no arithmetic on it)."""
    import torch

    if partition == 0:
        value = seed * 100_003 + epoch
    else:
        value = int(
            hashlib.sha256(f"prm-factory rows {seed} {epoch} {partition}".encode()).hexdigest()[:8], 16
        )
    return torch.randperm(n, generator=torch.Generator().manual_seed(value)).tolist()


def training_rows(rows: Sequence[TrainRow], census: Census, spec: ExampleSpec) -> list[TrainRow]:
    """A partition's rows that train: not held out, not skipped by the alignment check."""
    return [row for row in rows if not spec.is_held_out(row) and row.chain_id not in census.skipped_ids]


def epoch_rows(
    source: RowSource, census: Census, spec: ExampleSpec, seed: int, epoch: int, start: int = 0
) -> Iterator[TrainRow]:
    """The epoch's training rows in order, from global position `start`; one partition held at a time."""
    position = 0
    for partition in partition_order(len(census.partitions), seed, epoch):
        count = census.partitions[partition].train
        if position + count <= start:  # wholly before the start: not read
            position += count
            continue
        rows = training_rows(source.read(partition), census, spec)
        if len(rows) != count:
            raise TrainingError(
                f"partition {partition} now has {len(rows)} training rows where the census counted {count}: "
                "the rows changed under the trainer"
            )
        for index in row_order(count, seed, epoch, partition)[max(0, start - position) :]:
            yield rows[index]
        position += count
        del rows  # released before the next partition is read


def batches_per_process(n_train: int, batch_size: int, processes: int) -> int:
    return math.ceil(math.ceil(n_train / batch_size) / processes)


class EpochExamples(IterableDataset):
    """One process's examples of one epoch, from the batch after `batches_done` (module docstring)."""

    def __init__(
        self,
        source: RowSource,
        census: Census,
        spec: ExampleSpec,
        *,
        seed: int,
        epoch: int,
        batch_size: int,
        rank: int = 0,
        processes: int = 1,
        batches_done: int = 0,
    ) -> None:
        super().__init__()
        self.source, self.census, self.spec = source, census, spec
        self.seed, self.epoch, self.batch_size = seed, epoch, batch_size
        self.rank, self.processes, self.batches_done = rank, processes, batches_done

    @property
    def batches(self) -> int:
        """This process's batches in the whole epoch."""
        return batches_per_process(self.census.train, self.batch_size, self.processes)

    def __iter__(self) -> Iterator[Example]:
        total = self.census.train
        per_round = self.processes * self.batch_size
        end = self.batches * per_round if self.processes > 1 else total
        position = self.batches_done * per_round
        if total == 0 or position >= end:
            return
        rows = epoch_rows(self.source, self.census, self.spec, self.seed, self.epoch, position % total)
        while position < end:
            row = next(rows, None)
            if row is None:  # past the epoch's end (several processes): fill from its beginning
                rows = epoch_rows(self.source, self.census, self.spec, self.seed, self.epoch)
                row = next(rows)
            if (position // self.batch_size) % self.processes == self.rank:
                yield self.spec.example(row)
            position += 1
            row = None  # not kept while the next partition is read


def held_out_examples(source: RowSource, census: Census, spec: ExampleSpec, partition: int) -> list[Example]:
    """One partition's held-out examples (not the rows the alignment check skipped)."""
    rows = source.read(partition)
    return [
        spec.example(row) for row in rows if spec.is_held_out(row) and row.chain_id not in census.skipped_ids
    ]


def held_out_tally(
    model: Any,
    source: RowSource,
    census: Census,
    spec: ExampleSpec,
    head: str,
    pad_id: int,
    batch_size: int,
) -> StepTally:
    """The held-out steps' scores and labels (training.step_metrics.StepTally: its figures and the
    threshold they choose), scored one partition at a time; partitions without held-out rows are not read."""
    from prm_factory.training.model import score_examples

    tally = StepTally()
    for count in census.partitions:
        if not count.held_out:
            continue
        examples = held_out_examples(source, census, spec, count.partition)
        for scores, example in zip(
            score_examples(model, examples, head, pad_id, batch_size), examples, strict=True
        ):
            tally.add(scores, example.labels)
        del examples  # released before the next partition is read
    return tally
