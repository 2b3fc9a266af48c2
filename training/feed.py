"""A torch `IterableDataset` that streams steps or chains of a dataset version in Arrow batches.

Why it looks like this:

* `deltalake` crashes inside forked processes, which is what DataLoader workers are by default. So the
  Delta log is read once, in the process that builds the feed, into a `FeedPlan`: plain file paths, row
  groups, the table schema and the committed run ids. Workers only read Parquet with pyarrow, so the feed
  works with fork and spawn alike. (Following new versions does read the log again, inside the workers:
  use `multiprocessing_context="spawn"` or `num_workers=0` for `follow=True`.)
* The unit of work is one Parquet row group. Units are dealt round-robin over `world_size * num_workers`
  shards (distributed rank first, then DataLoader worker), so every row is read by exactly one shard.
* Files are read with the table's schema, so a column added by a later release reads as nulls in old
  files, and rows of runs not committed at the version are filtered out as everywhere else in storage/.

>>> feed = StepFeed("prm-datasets/default", kind="steps", columns=["text", "hard_label"])   # doctest: +SKIP
>>> loader = DataLoader(feed, batch_size=None, num_workers=2)                              # doctest: +SKIP
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import torch
from torch.utils.data import IterableDataset, get_worker_info

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.layout import RUN_SCOPED_KINDS
from prm_factory.storage.snapshot import snapshot

if TYPE_CHECKING:
    from prm_factory.training.chain_source import RowSource
    from prm_factory.training.rows import TrainRow

FeedKind = Literal["steps", "chains", "problems"]
OutputFormat = Literal["torch", "arrow"]


@dataclass(frozen=True)
class FeedPlan:
    """Everything a worker needs to read one version, with no Delta objects in it (safe to pickle)."""

    version: int
    kind: str
    schema: pa.Schema
    units: tuple[tuple[str, int], ...]  # (parquet file URI, row group index), in a stable order
    run_ids: tuple[str, ...] | None  # committed run ids to keep; None: every row of these files is visible
    committed: tuple[str, ...] = ()  # runs committed at this version (what `follow` compares against)


def make_plan(dataset: Dataset, kind: str, version: int | None = None) -> FeedPlan:
    """Read the Delta log of one version into a plan of row groups (runs in the building process)."""
    state = snapshot(dataset, version)
    table = state.tables[kind]
    units: list[tuple[str, int]] = []
    for uri in table.files:
        filesystem, path = pafs.FileSystem.from_uri(uri)
        with filesystem.open_input_file(path) as source:
            units.extend((uri, group) for group in range(pq.ParquetFile(source).metadata.num_row_groups))
    return FeedPlan(
        version=state.version,
        kind=kind,
        schema=table.schema,
        units=tuple(units),
        run_ids=table.row_filter_runs,
        committed=state.run_ids,
    )


def shard_units(units: Sequence[Any], shard: int, n_shards: int, seed: int | None = None) -> list[Any]:
    """The units of one shard: a (seeded) permutation dealt round-robin, so shards never overlap."""
    order = list(units)
    if seed is not None:
        random.Random(seed).shuffle(order)
    return order[shard::n_shards]


def _to_torch(batch: pa.RecordBatch) -> dict[str, Any]:
    """Numeric columns as tensors (float nulls -> NaN, int and bool nulls -> -1), text as Python lists."""
    out: dict[str, Any] = {}
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        kind = column.type
        if pa.types.is_floating(kind):
            out[name] = torch.from_numpy(column.fill_null(float("nan")).to_numpy(zero_copy_only=False).copy())
        elif pa.types.is_integer(kind):
            out[name] = torch.from_numpy(column.fill_null(-1).to_numpy(zero_copy_only=False).astype("int64"))
        elif pa.types.is_boolean(kind):
            as_int = pc.if_else(column.is_null(), -1, pc.cast(column.fill_null(False), pa.int8()))
            out[name] = torch.from_numpy(as_int.to_numpy(zero_copy_only=False).astype("int8"))
        else:
            out[name] = column.to_pylist()
    return out


class StepFeed(IterableDataset):
    """Stream one kind's rows of a dataset version as batches, sharded over ranks and workers.

    Args:
        root: dataset root (or a `Dataset`).
        kind: "steps", "chains" or "problems".
        version: dataset version (None = latest when the feed is built; fixed from then on).
        columns: columns to read (None = all).
        batch_size: rows per yielded batch (the last batch of a row group may be smaller).
        output: "torch" (dict of tensors and lists) or "arrow" (a `pyarrow.RecordBatch`).
        rank, world_size: distributed position; by default taken from `torch.distributed` when initialised.
        shuffle_seed: shuffle row groups with this seed (plus the epoch set by `set_epoch`).
        follow: after the version is streamed, wait for newer versions and stream the rows of runs they
            commit ("fresh labels"); `poll_seconds` between looks, `max_versions` to stop after some.
    """

    def __init__(
        self,
        root: str | Dataset,
        kind: FeedKind = "steps",
        version: int | None = None,
        columns: Sequence[str] | None = None,
        batch_size: int = 8192,
        output: OutputFormat = "torch",
        rank: int | None = None,
        world_size: int | None = None,
        shuffle_seed: int | None = None,
        follow: bool = False,
        poll_seconds: float = 10.0,
        max_versions: int | None = None,
    ) -> None:
        super().__init__()
        if follow and kind not in RUN_SCOPED_KINDS:
            raise ValueError(f"follow=True needs a kind whose rows carry run_id, not {kind!r}")
        dataset = root if isinstance(root, Dataset) else Dataset(str(root))
        self.root = dataset.root
        self.storage_options = dataset.storage_options
        self.plan = make_plan(dataset, kind, version)
        self.columns = list(columns) if columns is not None else None
        self.batch_size = batch_size
        self.output = output
        self.rank, self.world_size = _distributed_position(rank, world_size)
        self.shuffle_seed = shuffle_seed
        self.epoch = 0
        self.follow = follow
        self.poll_seconds = poll_seconds
        self.max_versions = max_versions

    def set_epoch(self, epoch: int) -> None:
        """Change the shuffle order between epochs (same on every shard, so shards still never overlap)."""
        self.epoch = epoch

    def _shard(self) -> tuple[int, int]:
        info = get_worker_info()
        workers, worker = (1, 0) if info is None else (info.num_workers, info.id)
        return self.rank * workers + worker, self.world_size * workers

    def _read(self, plan: FeedPlan, only_runs: Sequence[str] | None = None) -> Iterator[pa.RecordBatch]:
        shard, n_shards = self._shard()
        seed = None if self.shuffle_seed is None else self.shuffle_seed + self.epoch
        keep = only_runs if only_runs is not None else plan.run_ids
        # the cast keeps pyarrow from testing the filter on string_view statistics (storage/snapshot.py)
        row_filter = (
            None if keep is None else pc.field("run_id").cast(pa.string()).isin(pa.array(keep, pa.string()))
        )
        parquet = pads.ParquetFileFormat()
        for uri, group in shard_units(plan.units, shard, n_shards, seed):
            filesystem, path = pafs.FileSystem.from_uri(uri)
            fragment = parquet.make_fragment(path, filesystem, row_groups=[group])
            yield from fragment.to_batches(
                schema=plan.schema,
                columns=self.columns,
                filter=row_filter,
                batch_size=self.batch_size,
                use_threads=False,
            )

    def _batches(self) -> Iterator[pa.RecordBatch]:
        yield from self._read(self.plan)
        if not self.follow:
            return
        dataset = Dataset(self.root, self.storage_options)
        seen_version, seen_runs = self.plan.version, set(self.plan.committed)
        followed = 0
        while self.max_versions is None or followed < self.max_versions:
            latest = dataset.latest_version()
            if latest is None or latest <= seen_version:
                time.sleep(self.poll_seconds)
                continue
            plan = make_plan(dataset, self.plan.kind, latest)
            new_runs = sorted(set(plan.committed) - seen_runs)
            yield from self._read(plan, only_runs=new_runs)
            seen_version, seen_runs = latest, set(plan.committed)
            followed += 1

    def __iter__(self) -> Iterator[Any]:
        for batch in self._batches():
            if batch.num_rows == 0:
                continue
            yield batch if self.output == "arrow" else _to_torch(batch)


def _distributed_position(rank: int | None, world_size: int | None) -> tuple[int, int]:
    """(rank, world size): explicit values win, then torch.distributed, then a single process."""
    if rank is not None and world_size is not None:
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside world size {world_size}")
        return rank, world_size
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


class RowDataset(IterableDataset):
    """A row source as a torch `IterableDataset` of `TrainRow`s (prompt, steps, labels, values), one partition
    in memory at a time; DataLoader workers take partitions round robin, so none reads another's. Start
    workers with `multiprocessing_context="spawn"`: the rows are read through DuckDB, which a forked
    worker cannot use after its parent did."""

    def __init__(self, source: RowSource) -> None:
        super().__init__()
        self.source = source

    def __iter__(self) -> Iterator[TrainRow]:
        worker = get_worker_info()
        index, count = (0, 1) if worker is None else (worker.id, worker.num_workers)
        for partition in range(index, self.source.partitions, count):
            yield from self.source.read(partition)
