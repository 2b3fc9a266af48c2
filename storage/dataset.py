"""A versioned dataset: one Delta table per record kind under one root, one dataset version per run.

Design of dataset versions
--------------------------
`commit_run` writes the data tables first (problems, chains, steps, rejections: insert-if-absent merges on
their content-hash keys) and the `runs` row last. The dataset version is the `runs` table's Delta version
after that last write, so "version N exists" means "a run finished committing at N", and a writer killed at
any point before it leaves no new version. A streaming run stages its rows chunk by chunk
(storage/staging.py) and `commit_staged` commits them the same way, one transaction per table.

The runs row carries a storage-owned column `table_versions`: JSON {kind: Delta version of that table}, read
just before the runs row is written, so it covers this run's own writes. Reading dataset version N:

* `runs` is the runs table at Delta version N;
* every other table is read at the *largest* version recorded by any runs row visible at N (the max makes
  versions monotone even when two writers interleave and the later-committing one read older versions);
* chains, steps and rejections are filtered to the run ids present in `runs` at N, which hides rows left
  by a killed run or by a concurrent run that has not written its runs row yet. Problems carry no run id
  and are shown as of that table version (a concurrent run's input problems may appear before its runs row).

Labels follow the labeler: step rows are keyed by (chain_id, step_index), and a row whose `step_id` (which
hashes the label config and the labelers' identities) differs from the stored one replaces it; chain rows
likewise on `label_config_hash` (layout.REPLACE_WHEN_CHANGED). So a rerun after a verifier fix gives the new
version the new labels, while older versions read older table versions and keep theirs.

Chain and step keys are content hashes that need not include the run id (another config can produce the
same chain), so a row keeps the run id of the first *committed* run that wrote it: a writer whose key
matches a row owned by a run that never committed takes the row over (see `merge_rows`). Only a narrow race
remains: a run that takes a row from a concurrent in-flight run and then dies before committing hides that
row until some run writing it commits again.

A run committed again with the same run id (a rerun of the same config) adds no duplicate rows and
overwrites its runs row, making one new version with the same content. Each runs commit also carries the
run id in its Delta commit info (`prm_factory.run_id`), which is how `versions()` maps versions to runs
even after a rerun replaced an older row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError

from prm_factory.schemas.records import Chain, Problem, Rejection, RunInfo, Step, to_table
from prm_factory.storage.commit_lock import commit_lock, local_root
from prm_factory.storage.delta_io import insert_rows, merge_rows, open_or_create
from prm_factory.storage.errors import NoDatasetError, UnknownVersionError
from prm_factory.storage.layout import (
    ALL_KINDS,
    DATA_KINDS,
    KEYS,
    NON_DATA_OPERATIONS,
    PROBLEM_COLUMNS_ON_STEPS,
    REPLACE_WHEN_CHANGED,
    RUN_ID_METADATA_KEY,
    RUN_SCOPED_KINDS,
    TABLE_VERSIONS_COLUMN,
    table_schema,
    table_uri,
)
from prm_factory.storage.rewrite import rewrite_rows
from prm_factory.storage.snapshot import arrow_dataset, snapshot
from prm_factory.storage.staging import (
    COMMIT_BATCH_ROWS,
    drop_staged,
    read_staged,
    staged_batches,
    staging_root,
)
from prm_factory.storage.write_rules import WriteRules

REWRITTEN_KINDS = frozenset({"chains", "steps"})
"""What a relabel replaces: written by one streamed rewrite per table (`commit_staged(replaces=True)`)."""


@dataclass(frozen=True)
class VersionInfo:
    """One dataset version as `versions()` lists it."""

    version: int
    run_id: str | None  # None for version 0, the empty dataset the tables were created with
    committed_at: datetime
    operation: str


def _staged_tables(chunks: Sequence[Path], kind: str, run_id: str) -> Iterator[pa.Table]:
    """The staged rows of `kind`, `COMMIT_BATCH_ROWS` at a time, read only when the commit reaches them."""
    for group in staged_batches(chunks, kind, COMMIT_BATCH_ROWS):
        table = read_staged(group, kind, run_id)
        if table is not None:
            yield table


def _records_table(record_type: type, records: Sequence[Any]) -> pa.Table:
    """Arrow table of records, typed by the records' own class.

    Using the class of the records (not the one this module imports) lets a later release add a field to a
    record: the merge then adds the column to the Delta table (schema evolution) and old versions keep
    reading with the columns they had.
    """
    concrete = type(records[0]) if records else record_type
    return to_table(concrete, list(records))


class Dataset:
    """A dataset root holding one Delta table per record kind (`root/problems`, `root/steps`, ...).

    >>> ds = Dataset("/tmp/prm-data")                                                  # doctest: +SKIP
    >>> version = ds.commit_run(run, problems, chains, steps, rejections)              # doctest: +SKIP
    >>> ds.tables(version)["steps"].to_table().num_rows                                # doctest: +SKIP
    """

    def __init__(self, root: str, storage_options: dict[str, str] | None = None) -> None:
        self.root = str(root)
        self.storage_options = storage_options

    def uri(self, kind: str) -> str:
        return table_uri(self.root, kind)

    # ------------------------------------------------------------------ writing

    def commit_run(
        self,
        run: RunInfo,
        problems: Sequence[Problem],
        chains: Sequence[Chain],
        steps: Sequence[Step],
        rejections: Sequence[Rejection],
    ) -> int:
        """Write one run's records idempotently, the runs row last, and return the new dataset version."""
        by_kind = self.chunk_tables(problems, chains, steps)
        by_kind["rejections"] = _records_table(Rejection, rejections)
        return self._commit_tables(run, by_kind)

    def chunk_tables(
        self, problems: Sequence[Problem], chains: Sequence[Chain], steps: Sequence[Step]
    ) -> dict[str, pa.Table]:
        """Arrow tables of one chunk's records as they are stored (steps with their problem's columns)."""
        by_kind = {
            "problems": _records_table(Problem, problems),
            "chains": _records_table(Chain, chains),
            "steps": _records_table(Step, steps),
        }
        by_kind["steps"] = self._with_problem_columns(by_kind["steps"], by_kind["problems"])
        return by_kind

    def commit_staged(
        self, run: RunInfo, chunks: Sequence[Path], rejections: Sequence[Rejection], replaces: bool = False
    ) -> int:
        """Commit the chunks a streaming run staged (storage/staging.py) as one run, like `commit_run`.

        Each table's staged rows are written `COMMIT_BATCH_ROWS` at a time (`staged_batches`), so the
        commit's memory is bounded like the run's; readers still see the run only when its runs row lands,
        last, and a commit killed half-way leaves rows of an uncommitted run that the rerun claims. Staged
        rows take the run's id. The chunks are removed once the runs row is written (a failed commit keeps
        them for the rerun). `replaces`: the run gives most stored chains new labels (`relabel`), so its
        chains and steps are written by one streamed rewrite of each table (storage/rewrite.py) instead of
        merges that each hold and rewrite the whole table.
        """
        by_kind: dict[str, Iterable[pa.Table]] = {"rejections": [_records_table(Rejection, rejections)]}
        for kind in ("problems", "chains", "steps"):
            by_kind[kind] = _staged_tables(chunks, kind, run.run_id)
        version = self._commit_tables(run, by_kind, REWRITTEN_KINDS if replaces else frozenset())
        drop_staged(chunks)
        return version

    def _commit_tables(
        self,
        run: RunInfo,
        by_kind: Mapping[str, pa.Table | Iterable[pa.Table]],
        rewritten: frozenset[str] = frozenset(),
    ) -> int:
        """Write each data table's rows (insert-if-absent on content keys; a table or batches of one), then
        the runs row. A local root is written under its commit lock, appending the rows whose keys are absent
        (memory bounded by a batch) and rewriting the `rewritten` kinds in one pass; an object store merges
        every batch (storage/commit_lock.py)."""
        with commit_lock(self.root) as locked:
            write = insert_rows if locked else merge_rows
            return self._commit_tables_as(run, by_kind, write, rewritten if locked else frozenset())

    def _commit_tables_as(
        self,
        run: RunInfo,
        by_kind: Mapping[str, pa.Table | Iterable[pa.Table]],
        write: Callable[..., int | None],
        rewritten: frozenset[str],
    ) -> int:
        metadata = {RUN_ID_METADATA_KEY: run.run_id}
        for kind in ALL_KINDS:
            open_or_create(self.uri(kind), table_schema(kind), self.storage_options)
        committed_runs = self._committed_run_ids()
        for kind in DATA_KINDS:
            rows = by_kind[kind]
            batches = [rows] if isinstance(rows, pa.Table) else rows
            rules = WriteRules(
                claim_from_uncommitted=tuple(committed_runs) if kind in RUN_SCOPED_KINDS else None,
                replace_when_changed=REPLACE_WHEN_CHANGED.get(kind),
            )
            where = {"storage_options": self.storage_options, "custom_metadata": metadata}
            local = local_root(self.root)
            if kind in rewritten and local is not None:
                rewrite_rows(self.uri(kind), batches, KEYS[kind], staging_root(local), rules, **where)
                continue
            for batch in batches:
                write(self.uri(kind), batch, KEYS[kind], rules, **where)
                # give the batch's buffers back: mimalloc keeps freed pages, which a long commit piles up
                pa.default_memory_pool().release_unused()
        # Read after our own writes, so the recorded versions always include them.
        versions = {
            kind: DeltaTable(self.uri(kind), storage_options=self.storage_options).version()
            for kind in DATA_KINDS
        }
        run_row = _records_table(RunInfo, [run])
        run_row = run_row.append_column(TABLE_VERSIONS_COLUMN, pa.array([json.dumps(versions)], pa.string()))
        committed = merge_rows(
            self.uri("runs"),
            run_row,
            KEYS["runs"],
            WriteRules(update_matched=True),
            storage_options=self.storage_options,
            custom_metadata={**metadata, "prm_factory.table_versions": json.dumps(versions)},
        )
        if committed is None:  # an upsert always changes the row; no commit would be a Delta bug
            raise RuntimeError(f"runs row for {run.run_id} was not committed")
        return committed

    def _committed_run_ids(self) -> list[str]:
        return self._runs_table().to_pyarrow_table(columns=["run_id"])["run_id"].to_pylist()

    def _with_problem_columns(self, steps: pa.Table, problems: pa.Table) -> pa.Table:
        """Add each step's problem source and domain (storage-owned, see layout.PROBLEM_COLUMNS_ON_STEPS).

        Problems of this run come from `problems`; a step of a problem only an earlier run wrote is looked up
        in the problems table; a problem found nowhere leaves the columns null.
        """
        missing = [name for name in PROBLEM_COLUMNS_ON_STEPS if name not in steps.column_names]
        if not missing or steps.num_rows == 0:
            return steps
        known = problems.select(["problem_id", *PROBLEM_COLUMNS_ON_STEPS])
        unknown = pc.unique(
            pc.filter(steps["problem_id"], pc.invert(pc.is_in(steps["problem_id"], known["problem_id"])))
        )
        uri = self.uri("problems")
        if len(unknown) and DeltaTable.is_deltatable(uri, storage_options=self.storage_options):
            stored = DeltaTable(uri, storage_options=self.storage_options).to_pyarrow_table(
                columns=known.column_names
            )
            # filtered after reading: a pushed-down string filter fails on MERGE-written files (snapshot.py)
            stored = stored.filter(
                pc.is_in(stored["problem_id"].cast(pa.string()), unknown.cast(pa.string()))
            )
            known = pa.concat_tables([known, stored.cast(known.schema)])
        positions = pc.index_in(steps["problem_id"], known["problem_id"])
        for name in missing:
            steps = steps.append_column(name, pc.take(known[name], positions))
        return steps

    # ------------------------------------------------------------------ reading

    def _runs_table(self, version: int | None = None) -> DeltaTable:
        try:
            return DeltaTable(self.uri("runs"), version=version, storage_options=self.storage_options)
        except TableNotFoundError as error:
            raise NoDatasetError(f"no dataset at {self.root} (no runs table)") from error

    def exists(self) -> bool:
        return DeltaTable.is_deltatable(self.uri("runs"), storage_options=self.storage_options)

    def latest_version(self) -> int | None:
        """The newest dataset version, or None when nothing was ever committed at this root."""
        if not self.exists():
            return None
        return self._runs_table().version()

    def resolve_version(self, version: int | str | None) -> int:
        """Check `version` names a dataset version (None = latest; a number, also as text) and return it as
        a number. Tags are read by `storage.versions.resolve`, which the API and the CLI call first."""
        if isinstance(version, str):
            if not version.strip().lstrip("-").isdigit():
                raise UnknownVersionError(f"{version!r} is no version number (a tag is resolved by its name)")
            version = int(version.strip())
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise UnknownVersionError(f"a version is a number or a tag, got {version!r}")
        latest = self.latest_version()
        if latest is None:
            raise NoDatasetError(f"no dataset at {self.root} (no runs table)")
        if version is None:
            return latest
        if not 0 <= version <= latest:
            raise UnknownVersionError(f"version {version} does not exist at {self.root} (latest is {latest})")
        return version

    def table_versions(self, version: int | None = None) -> tuple[int, dict[str, int | None], list[str]]:
        """(dataset version, Delta version of each data table, committed run ids) for a dataset version."""
        resolved = self.resolve_version(version)
        runs = self._runs_table(resolved).to_pyarrow_table(columns=["run_id", TABLE_VERSIONS_COLUMN])
        recorded: dict[str, int | None] = dict.fromkeys(DATA_KINDS)
        for cell in runs[TABLE_VERSIONS_COLUMN].to_pylist():
            for kind, table_version in json.loads(cell or "{}").items():
                if kind in recorded and (recorded[kind] is None or table_version > recorded[kind]):
                    recorded[kind] = table_version
        effective = {kind: self._past_maintenance(kind, v) for kind, v in recorded.items()}
        return resolved, effective, runs["run_id"].to_pylist()

    def _past_maintenance(self, kind: str, table_version: int | None) -> int | None:
        """Move a recorded table version forward over compaction and vacuum commits that followed it.

        Those commits change files, not rows, so the content is the same; reading the newer version uses the
        compacted files and keeps the current dataset readable after `compact` vacuums the replaced ones.
        """
        if table_version is None:
            return None
        table = DeltaTable(self.uri(kind), storage_options=self.storage_options)
        latest = table.version()
        if latest <= table_version:
            return table_version
        later = sorted(table.history(limit=latest - table_version), key=lambda entry: int(entry["version"]))
        for entry in later:
            if entry.get("operation") not in NON_DATA_OPERATIONS:
                break
            table_version = int(entry["version"])
        return table_version

    def tables(self, version: int | None = None) -> dict[str, pads.Dataset]:
        """Arrow datasets of every kind at a dataset version (None = latest), read through the Delta log.

        Rows of runs not committed at the version are excluded. Filter string columns after reading (or use
        storage.sql): deltalake 1.6's MERGE writes files whose string columns pyarrow 26 cannot compare with
        a string literal through their statistics (see storage/snapshot.py).
        """
        state = snapshot(self, version)
        return {kind: arrow_dataset(self, table) for kind, table in state.tables.items()}

    def versions(self) -> list[VersionInfo]:
        """Every dataset version, oldest first, with the run that committed it (from the Delta commit log)."""
        history = self._runs_table().history()
        infos = [
            VersionInfo(
                version=int(entry["version"]),
                run_id=entry.get(RUN_ID_METADATA_KEY),
                committed_at=datetime.fromtimestamp(int(entry["timestamp"]) / 1000, tz=UTC),
                operation=str(entry.get("operation", "")),
            )
            for entry in history
            # version 0 (the empty dataset) and run commits; anything else on the runs table is not a version
            if int(entry["version"]) == 0 or RUN_ID_METADATA_KEY in entry
        ]
        return sorted(infos, key=lambda info: info.version)
