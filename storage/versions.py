"""Naming dataset versions: by number, by tag, or by time; and listing them with their runs.

Tags live in their own small Delta table (`root/_tags`, keyed by tag name), so tagging never creates a
dataset version and the tag history itself is versioned and auditable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.delta_io import merge_rows, open_or_create
from prm_factory.storage.errors import StorageError, UnknownVersionError
from prm_factory.storage.layout import DATA_KINDS, TAGS_DIR, table_uri
from prm_factory.storage.write_rules import WriteRules

TAG_SCHEMA = pa.schema(
    [
        pa.field("tag", pa.string(), nullable=False),
        pa.field("version", pa.int64(), nullable=False),
        pa.field("tagged_at", pa.string(), nullable=False),
        pa.field("note", pa.string(), nullable=True),
    ]
)
TAG_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,99}$")
"""A tag starts with a letter, so it can never be mistaken for a version number."""


class TagError(StorageError):
    """A tag name that is malformed, or already on another version without --force."""


@dataclass(frozen=True)
class VersionSummary:
    """One row of `prm-factory versions`."""

    version: int
    committed_at: datetime
    run_id: str | None
    status: str | None
    config_hash: str | None
    model: str | None
    row_counts: dict[str, int]  # rows visible in each table at this version
    tags: tuple[str, ...]
    parent_run_id: str | None = None  # the logical run of a shard (flows/shards.py); None when unsharded
    shard: str | None = None  # "I/N"

    @property
    def logical_run(self) -> str | None:
        """The run this version belongs to as a user sees it: the parent of a shard, else the run itself."""
        return self.parent_run_id or self.run_id


def parse_time(text: str) -> datetime:
    """ISO 8601 date or time; a time without zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as error:
        raise UnknownVersionError(f"--as-of {text!r} is not an ISO 8601 date or time") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def tags(dataset: Dataset) -> dict[str, int]:
    """Every tag and the version it names."""
    uri = table_uri(dataset.root, TAGS_DIR)
    if not DeltaTable.is_deltatable(uri, storage_options=dataset.storage_options):
        return {}
    table = DeltaTable(uri, storage_options=dataset.storage_options).to_pyarrow_table()
    return dict(zip(table["tag"].to_pylist(), table["version"].to_pylist(), strict=True))


def set_tag(
    dataset: Dataset, name: str, version: int | None = None, note: str = "", force: bool = False
) -> int:
    """Put tag `name` on a version (latest by default); moving an existing tag needs `force`."""
    if not TAG_NAME.match(name):
        raise TagError(f"tag {name!r} must start with a letter and use only letters, digits, '.', '_', '-'")
    resolved = dataset.resolve_version(version)
    existing = tags(dataset).get(name)
    if existing is not None and existing != resolved and not force:
        raise TagError(f"tag {name!r} is already on version {existing}; use --force to move it")
    uri = table_uri(dataset.root, TAGS_DIR)
    open_or_create(uri, TAG_SCHEMA, dataset.storage_options)
    row = pa.table(
        {"tag": [name], "version": [resolved], "tagged_at": [datetime.now(UTC).isoformat()], "note": [note]},
        schema=TAG_SCHEMA,
    )
    merge_rows(uri, row, ("tag",), WriteRules(update_matched=True), storage_options=dataset.storage_options)
    return resolved


def resolve(dataset: Dataset, version: str | int | None = None, as_of: str | datetime | None = None) -> int:
    """A dataset version from a number, a tag, or a time (the last version committed at or before it).

    >>> resolve(ds, "release-1")          # doctest: +SKIP
    3
    >>> resolve(ds, as_of="2026-11-22")   # doctest: +SKIP
    2
    """
    if version is not None and as_of is not None:
        raise UnknownVersionError("give --version or --as-of, not both")
    if as_of is not None:
        moment = parse_time(as_of) if isinstance(as_of, str) else as_of
        candidates = [info.version for info in dataset.versions() if info.committed_at <= moment]
        if not candidates:
            raise UnknownVersionError(f"no dataset version was committed at or before {moment.isoformat()}")
        return max(candidates)
    if version is None or isinstance(version, int):
        return dataset.resolve_version(version)
    text = version.strip()
    if re.fullmatch(r"-?\d+", text):
        return dataset.resolve_version(int(text))
    named = tags(dataset)
    if text not in named:
        known = ", ".join(sorted(named)) or "none"
        raise UnknownVersionError(f"{text!r} is neither a version number nor a tag (tags: {known})")
    return dataset.resolve_version(named[text])


def row_counts(dataset: Dataset, version: int) -> dict[str, int]:
    """Rows visible in each table at a version (uncommitted runs' rows excluded)."""
    return {kind: data.count_rows() for kind, data in dataset.tables(version).items()}


def list_versions(dataset: Dataset, with_counts: bool = True) -> list[VersionSummary]:
    """Every dataset version, oldest first, with the run that committed it and what the dataset held."""
    tag_names: dict[int, list[str]] = {}
    for name, tagged in tags(dataset).items():
        tag_names.setdefault(tagged, []).append(name)
    summaries = []
    for info in dataset.versions():
        run_row: dict | None = None
        if info.run_id is not None:
            runs_data = dataset.tables(info.version)["runs"]
            shard_columns = [name for name in SHARD_COLUMNS if name in runs_data.schema.names]
            runs = runs_data.to_table(columns=["run_id", "status", "config_hash", "model", *shard_columns])
            runs = runs.filter(
                pc.equal(runs["run_id"].cast(pa.string()), info.run_id)
            )  # after reading: see snapshot.py
            run_row = runs.to_pylist()[0] if runs.num_rows else None
        counts = row_counts(dataset, info.version) if with_counts else {}
        summaries.append(
            VersionSummary(
                version=info.version,
                committed_at=info.committed_at,
                run_id=info.run_id,
                status=run_row["status"] if run_row else None,
                config_hash=run_row["config_hash"] if run_row else None,
                model=run_row["model"] if run_row else None,
                row_counts=counts,
                tags=tuple(sorted(tag_names.get(info.version, []))),
                parent_run_id=run_row.get("parent_run_id") if run_row else None,
                shard=_shard_text(run_row),
            )
        )
    return summaries


SHARD_COLUMNS = ("parent_run_id", "shard_index", "shard_count")
"""Runs columns of a sharded run; a runs table from before they existed has none of them."""


def _shard_text(run_row: dict | None) -> str | None:
    """ "I/N" of a shard's runs row; None for an unsharded run or a table without the columns.

    >>> _shard_text({"shard_index": 1, "shard_count": 2}), _shard_text({"run_id": "r"})
    ('1/2', None)
    """
    if not run_row or run_row.get("shard_count") is None:
        return None
    return f"{run_row['shard_index']}/{run_row['shard_count']}"


def summaries_table(summaries: list[VersionSummary], short: bool = False) -> pa.Table:
    """The version list as an Arrow table; `short` trims hashes and times to fit a terminal table."""

    def trim(value: str | None) -> str | None:
        return value[:12] if short and value else value

    time_format = "%Y-%m-%d %H:%M:%S" if short else "%Y-%m-%dT%H:%M:%S%z"
    return pa.table(
        {
            "version": [s.version for s in summaries],
            "committed_at": [s.committed_at.strftime(time_format) for s in summaries],
            "run_id": [trim(s.run_id) for s in summaries],
            # shards of one logical run share it; an unsharded run is its own logical run
            "logical_run": [trim(s.logical_run) for s in summaries],
            "shard": [s.shard for s in summaries],
            "status": [s.status for s in summaries],
            "config_hash": [trim(s.config_hash) for s in summaries],
            "model": [s.model for s in summaries],
            **{kind: [s.row_counts.get(kind) for s in summaries] for kind in ("runs", *DATA_KINDS)},
            "tags": [",".join(s.tags) for s in summaries],
        }
    )
