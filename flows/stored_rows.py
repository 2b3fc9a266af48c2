"""A dataset version's records read as a stream: what `relabel` labels again, a chunk of whole problems at a
time, and what a summary reads back of one run's rows.

`stored_chunks` never holds a version's tables: DuckDB scans the version's Arrow datasets (the files its Delta
log lists, rows of uncommitted runs left out: storage.dataset.Dataset.tables), sorts problems, chains and
steps by problem and chain id out of core (its memory limit spills to a scratch folder under the dataset's
`_staging/`), and the three sorted streams are walked side by side, so memory is bounded by the chunk and
DuckDB's limit, not by the version.
"""

from __future__ import annotations

import itertools
import shutil
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from prm_factory.labels.relabel import StoredChain
from prm_factory.schemas.records import RECORD_TYPES, Chain, Problem, Step, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.staging import staging_root

SORT_MEMORY = "256MB"
"""DuckDB's memory limit while sorting a version's rows; beyond it the sort spills to disk."""
BATCH_ROWS = 2048


def committed_rows(root: str, version: int, run_id: str, kind: str) -> list[Any]:
    """The records of `kind` that run `run_id` committed, as of `version` (a summary's and a test's view: it
    holds them all in memory, which the run itself never does)."""
    table = Dataset(root).tables(version)[kind].to_table()
    table = table.filter(pc.equal(table["run_id"], run_id))
    return from_table(RECORD_TYPES[kind], table)


def _records(connection: duckdb.DuckDBPyConnection, sql: str, record_type: type) -> Iterator[Any]:
    reader = connection.execute(sql).to_arrow_reader(BATCH_ROWS)
    for batch in reader:
        yield from from_table(record_type, pa.Table.from_batches([batch]))


def _sorted(dataset: Any, order: str, record_type: type, scratch: Path) -> Iterator[Any]:
    """The records of one Arrow dataset in `order`, sorted by DuckDB within its memory limit."""
    connection = duckdb.connect(":memory:")
    try:
        connection.execute(f"SET memory_limit = '{SORT_MEMORY}'")
        connection.execute(f"SET temp_directory = '{scratch}'")
        connection.execute("SET threads = 1")
        connection.register("rows", dataset)
        yield from _records(connection, f"SELECT * FROM rows ORDER BY {order}", record_type)
    finally:
        connection.close()


def stored_chains(root: str, version: int, orphans: list[str] | None = None) -> Iterator[StoredChain]:
    """Every chain of `version` with its problem and its steps (in step order), by problem then chain id.

    A chain whose problem is not in the version is skipped and its id appended to `orphans`."""
    tables = Dataset(root).tables(version)
    scratch = staging_root(root) / f".sort-{uuid.uuid4().hex[:8]}"
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        problems = _sorted(tables["problems"], "problem_id", Problem, scratch)
        chains = _sorted(tables["chains"], "problem_id, chain_id", Chain, scratch)
        steps = itertools.groupby(
            _sorted(tables["steps"], "problem_id, chain_id, step_index", Step, scratch),
            key=lambda s: (s.problem_id, s.chain_id),
        )
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
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


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
