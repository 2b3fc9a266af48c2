"""A dataset version's records read as a stream: what `relabel` labels again, a chunk of whole problems at a
time, and what a summary reads back of one run's rows.

`stored_chunks` never holds a version's tables: it cuts the problem ids into ranges of at least a chunk's
chains from the chains' count per problem (one key column read), then DuckDB copies the version's
problems, chains and steps (the files its Delta log lists, rows of uncommitted runs left out:
storage.dataset.Dataset.tables) into a scratch database (one memory limit, spilling to the dataset's
`_staging/` beyond it), the rows of each group of ranges in a table of their own, and reads each range's
rows back sorted, one query per table, joining them side by side. Memory is bounded by the chunk and
DuckDB's limit, not by the version (sorting the whole version's wide step rows at once did not fit the
limit at a million steps). Content-hash ids scatter a range's rows over every block of a table, so a
range read from one table of the whole version read all of it, every chunk: at a million steps 0.93 s a
chunk of 512 chains, 365 s for the version; in 16 groups, each copied by a scan of its own, 0.12 s a chunk
after 32 s of copying, about 80 s, and a reading process of 532 MiB instead of 568. The scratch database is
removed when the walk ends.
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
import pyarrow.dataset as pads

from prm_factory.labels.relabel import StoredChain
from prm_factory.schemas.records import RECORD_TYPES, Chain, Problem, Step, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.staging import staging_root

SORT_MEMORY = "64MB"
"""DuckDB's memory limit while it holds a version's rows; beyond it they spill to disk. Whatever fits under
it stays resident for the whole walk, so it is the walk's growth with the version's size: at 128 MB a
100,000-step relabel walked at 845 MiB (process tree) against 802 at 64 MB, no slower (issue 48)."""
BATCH_ROWS = 2048
SCAN_BATCH_ROWS = 4096
"""Rows per batch of the copy's Arrow scan, which DuckDB's limit does not cover (16,384 held +60 MB more
while copying at 100,000 steps)."""
RANGE_CHAINS = 512
"""Chains per range read back where the caller names no chunk size (`stored_chains`)."""
RANGES_PER_GROUP = 8
"""At least this many ranges share one scratch table (a group), and at most MAX_GROUPS tables are made: a
range's query reads its group's table instead of the whole version. Each group costs one scan of the
version's files (`_copy_grouped`) and a partly filled block of each column; MAX_GROUPS bounds both (at a
million steps 16 groups: 0.12 s a chunk, against 0.93 s for one table)."""
MAX_GROUPS = 16

ORDERS = {
    "problems": "problem_id",
    "chains": "problem_id, chain_id",
    "steps": "problem_id, chain_id, step_index",
}


def committed_rows(root: str, version: int, run_id: str, kind: str) -> list[Any]:
    """The records of `kind` that run `run_id` committed, as of `version` (a summary's and a test's view: it
    holds them all in memory, which the run itself never does)."""
    table = Dataset(root).tables(version)[kind].to_table()
    table = table.filter(pc.equal(table["run_id"], run_id))
    return from_table(RECORD_TYPES[kind], table)


def stored_chunks(
    root: str, version: int, size: int, orphans: list[str] | None = None
) -> Iterator[list[StoredChain]]:
    """Every chain of `version` with its problem and its steps (in step order), by problem then chain id, at
    least `size` chains a chunk, never splitting a problem's chains (module docstring). A chain whose
    problem is not in the version is skipped and its id appended to `orphans`."""
    tables = Dataset(root).tables(version)
    scratch = staging_root(root) / f".sort-{uuid.uuid4().hex[:8]}"
    scratch.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect()
    try:
        connection.execute(f"SET memory_limit = '{SORT_MEMORY}'")
        connection.execute(f"SET temp_directory = '{scratch / 'spill'}'")
        connection.execute("SET threads = 1")
        # in memory, spilling to `scratch` past the limit: a file database's checkpoint (compressing the wide
        # step rows) held far more than the limit while it ran (972 against 756 MB at a million steps)
        connection.execute("ATTACH ':memory:' AS rows")
        problem_ids = tables["chains"].scanner(columns=["problem_id"], batch_size=SCAN_BATCH_ROWS)
        connection.register("chain_problems", problem_ids.to_reader())
        ranges = list(_problem_ranges(connection, size))
        connection.unregister("chain_problems")
        per_group = max(RANGES_PER_GROUP, -(-len(ranges) // MAX_GROUPS))
        groups = [ranges[i : i + per_group] for i in range(0, len(ranges), per_group)]
        bounds = [(group[0][0], group[-1][1]) for group in groups]
        for kind in ORDERS:
            _copy_grouped(connection, kind, tables[kind], bounds)
        for index, group in enumerate(groups):
            for low, high in group:
                part = list(_walk(*_range(connection, index, low, high), orphans))
                if part:
                    yield part
    finally:
        connection.close()
        shutil.rmtree(scratch, ignore_errors=True)


def stored_chains(root: str, version: int, orphans: list[str] | None = None) -> Iterator[StoredChain]:
    """`stored_chunks`' chains one at a time."""
    for part in stored_chunks(root, version, RANGE_CHAINS, orphans):
        yield from part


def _problem_ranges(connection: duckdb.DuckDBPyConnection, size: int) -> Iterator[tuple[str, str]]:
    """Ranges (first, last problem id) of whole problems holding at least `size` chains each (the last
    range: what is left), from the chains' problem ids (`chain_problems`) counted per problem, streamed in
    problem id order."""
    counts = connection.sql(
        "SELECT problem_id, count(*) AS n FROM chain_problems GROUP BY problem_id ORDER BY problem_id"
    ).to_arrow_reader(BATCH_ROWS)
    low: str | None = None
    high, held = "", 0
    for batch in counts:
        for problem_id, n in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
            low = problem_id if low is None else low
            high, held = problem_id, held + n
            if held >= size:
                yield low, high
                low, held = None, 0
    if low is not None:
        yield low, high


def _copy_grouped(
    connection: duckdb.DuckDBPyConnection, kind: str, rows: pads.Dataset, bounds: list[tuple[str, str]]
) -> None:
    """The version's rows of `kind` into tables `rows.{kind}_{g}`, each group's rows by a scan of its own
    (a row of no group belongs to no chain's problem, and no range reads it). A scan per group held the
    least memory: a copy split afterwards held the version twice (+230 MB at a million steps), a batch
    inserted into every group's table a partly filled block per table and column."""
    for index, (low, high) in enumerate(bounds):
        # one batch read ahead: DuckDB's memory limit does not cover an Arrow scan's buffers. The filter is
        # DuckDB's, on a plain reader: pyarrow cannot compare strings through the statistics of the files a
        # Delta merge wrote (storage.dataset.Dataset.tables)
        scan = rows.scanner(batch_size=SCAN_BATCH_ROWS, batch_readahead=1, fragment_readahead=1)
        connection.register("group_rows", scan.to_reader())
        connection.execute(
            f"CREATE TABLE rows.{kind}_{index} AS SELECT * FROM group_rows WHERE problem_id BETWEEN ? AND ?",
            [low, high],
        )
        connection.unregister("group_rows")


def _range(
    connection: duckdb.DuckDBPyConnection, group: int, low: str, high: str
) -> tuple[Iterator[Problem], Iterator[Chain], Iterator[tuple[tuple[str, str], Iterator[Step]]]]:
    """The problems, chains and steps whose problem id lies in [low, high] (a range of group `group`), each
    sorted for `_walk`."""

    def rows(kind: str, record_type: type, key: Callable[[Any], tuple]) -> Iterator[Any]:
        query = f"SELECT * FROM rows.{kind}_{group} WHERE problem_id BETWEEN ? AND ? ORDER BY {ORDERS[kind]}"
        return _records(connection.cursor().sql(query, params=[low, high]), record_type, key, kind)

    problems = rows("problems", Problem, lambda p: (p.problem_id,))
    chains = rows("chains", Chain, lambda c: (c.problem_id, c.chain_id))
    steps = itertools.groupby(
        rows("steps", Step, lambda s: (s.problem_id, s.chain_id, s.step_index)),
        key=lambda s: (s.problem_id, s.chain_id),
    )
    return problems, chains, steps


def _records(
    result: duckdb.DuckDBPyRelation, record_type: type, key: Callable[[Any], tuple], name: str
) -> Iterator[Any]:
    """An executed query's rows, streamed; a row out of `key` order raises, since the walk would otherwise
    miss rows without a word."""
    last: tuple | None = None
    for batch in result.to_arrow_reader(BATCH_ROWS):
        for record in from_table(record_type, pa.Table.from_batches([batch])):
            here = key(record)
            if last is not None and here < last:
                raise RuntimeError(f"{name}: rows out of order at {here} (after {last})")
            last = here
            yield record


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
