"""A dataset version's records read as a stream: what `relabel` labels again, a chunk of whole problems at a
time, and what a summary reads back of one run's rows.

`stored_chains` never holds a version's tables: DuckDB scans the version's Arrow datasets (the files its
Delta log lists, rows of uncommitted runs left out: storage.dataset.Dataset.tables) and writes problems,
chains and steps sorted by problem and chain id into a scratch database under the dataset's `_staging/`
(out of core: one memory limit, spilling beyond it); the three sorted tables are then read back in that
order, side by side, so memory is bounded by the chunk and DuckDB's limit, not by the version. The
scratch database is removed when the walk ends.
"""

from __future__ import annotations

import itertools
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from prm_factory.labels.relabel import StoredChain
from prm_factory.schemas.records import RECORD_TYPES, Chain, Problem, Step, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.staging import staging_root

SORT_MEMORY = "128MB"
"""DuckDB's memory limit while sorting a version's rows; beyond it the sort spills to disk."""
BATCH_ROWS = 2048


def committed_rows(root: str, version: int, run_id: str, kind: str) -> list[Any]:
    """The records of `kind` that run `run_id` committed, as of `version` (a summary's and a test's view: it
    holds them all in memory, which the run itself never does)."""
    table = Dataset(root).tables(version)[kind].to_table()
    table = table.filter(pc.equal(table["run_id"], run_id))
    return from_table(RECORD_TYPES[kind], table)


def _records(
    cursor: duckdb.DuckDBPyConnection, table: str, record_type: type, key: Callable[[Any], tuple]
) -> Iterator[Any]:
    """The rows of a scratch table in the order they were written (DuckDB keeps insertion order); a row out
    of `key` order raises, since the walk would otherwise miss rows without a word."""
    reader = cursor.sql(f"SELECT * FROM {table}").to_arrow_reader(BATCH_ROWS)  # streamed, not materialised
    last: tuple | None = None
    for batch in reader:
        for record in from_table(record_type, pa.Table.from_batches([batch])):
            here = key(record)
            if last is not None and here < last:
                raise RuntimeError(f"{table}: rows out of order at {here} (after {last})")
            last = here
            yield record


SCAN_BATCH_ROWS = 16_384

ORDERS = {
    "problems": "problem_id",
    "chains": "problem_id, chain_id",
    "steps": "problem_id, chain_id, step_index",
}


def stored_chains(root: str, version: int, orphans: list[str] | None = None) -> Iterator[StoredChain]:
    """Every chain of `version` with its problem and its steps (in step order), by problem then chain id.

    A chain whose problem is not in the version is skipped and its id appended to `orphans`."""
    tables = Dataset(root).tables(version)
    scratch = staging_root(root) / f".sort-{uuid.uuid4().hex[:8]}"
    scratch.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(scratch / "sorted.duckdb"))
    try:
        connection.execute(f"SET memory_limit = '{SORT_MEMORY}'")
        connection.execute(f"SET temp_directory = '{scratch / 'spill'}'")
        connection.execute("SET threads = 1")
        connection.execute("SET preserve_insertion_order = true")
        for kind, order in ORDERS.items():
            # a reader with one batch read ahead: DuckDB's memory limit does not cover an Arrow scan's buffers
            rows = tables[kind].scanner(batch_size=SCAN_BATCH_ROWS, batch_readahead=1, fragment_readahead=1)
            connection.register("version_rows", rows.to_reader())
            connection.execute(f"CREATE TABLE sorted_{kind} AS SELECT * FROM version_rows ORDER BY {order}")
            connection.unregister("version_rows")
        problems = _records(connection.cursor(), "sorted_problems", Problem, lambda p: (p.problem_id,))
        chains = _records(connection.cursor(), "sorted_chains", Chain, lambda c: (c.problem_id, c.chain_id))
        steps = itertools.groupby(
            _records(
                connection.cursor(), "sorted_steps", Step, lambda s: (s.problem_id, s.chain_id, s.step_index)
            ),
            key=lambda s: (s.problem_id, s.chain_id),
        )
        yield from _walk(problems, chains, steps, orphans)
    finally:
        connection.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _walk(
    problems: Iterator[Problem],
    chains: Iterator[Chain],
    steps: Iterator[tuple[tuple[str, str], Iterator[Step]]],
    orphans: list[str] | None,
) -> Iterator[StoredChain]:
    """Join three streams sorted alike: each chain with its problem and its steps."""
    pending_steps = next(steps, None)
    problem = next(problems, None)
    for chain in chains:
        while problem is not None and problem.problem_id < chain.problem_id:
            problem = next(problems, None)
        if problem is None or problem.problem_id != chain.problem_id:
            if orphans is not None:
                orphans.append(chain.chain_id)
            continue
        here = (chain.problem_id, chain.chain_id)
        while pending_steps is not None and pending_steps[0] < here:  # steps of no chain: not relabelled
            pending_steps = next(steps, None)
        own: Sequence[Step] = ()
        if pending_steps is not None and pending_steps[0] == here:
            own = list(pending_steps[1])
            pending_steps = next(steps, None)
        yield StoredChain(problem, chain, own)


def stored_chunks(
    root: str, version: int, size: int, orphans: list[str] | None = None
) -> Iterator[list[StoredChain]]:
    """`stored_chains` a chunk at a time: at least `size` chains, never splitting a problem's chains."""
    part: list[StoredChain] = []
    for item in stored_chains(root, version, orphans):
        if len(part) >= size and part[-1].problem.problem_id != item.problem.problem_id:
            yield part
            part = []
        part.append(item)
    if part:
        yield part
