"""Where each table lives under a dataset root, which columns key it, and the columns storage adds.

Kept apart from the Delta code so readers (SQL, exports, the torch feed) and the writer agree on one
description of the dataset without importing each other.
"""

from __future__ import annotations

import pyarrow as pa

from prm_factory.schemas.records import RECORD_TYPES, arrow_schema

DATA_KINDS: tuple[str, ...] = ("problems", "chains", "steps", "rejections")
"""Record kinds written before the `runs` row; `runs` is written last and marks the commit."""

ALL_KINDS: tuple[str, ...] = (*DATA_KINDS, "runs")

KEYS: dict[str, tuple[str, ...]] = {
    "problems": ("problem_id",),
    "chains": ("chain_id",),
    "steps": ("chain_id", "step_index"),
    "rejections": ("run_id", "file", "line", "field"),
    "runs": ("run_id",),
}
"""Content-hash keys: an insert-if-absent merge on these makes a rerun add nothing twice."""

REPLACE_WHEN_CHANGED: dict[str, str] = {"steps": "step_id", "chains": "label_config_hash"}
"""Labels follow the labeler. A step row's `step_id` (and a chain row's `label_config_hash`) hashes the label
config and the labelers' identities; a row written for the same chain (step) with another one replaces the
stored row in the new table version. Older dataset versions read older table versions and keep their labels;
a rerun with the same labelers changes nothing."""

RUN_SCOPED_KINDS: frozenset[str] = frozenset({"chains", "steps", "rejections"})
"""Kinds whose rows carry `run_id`: a dataset version shows only rows of runs committed at that version,
so rows left by a killed or still-running writer stay invisible until their `runs` row lands."""

TABLE_VERSIONS_COLUMN = "table_versions"
"""Storage-owned column of the runs table: JSON {kind: Delta version of that table} seen at commit time."""

TAGS_DIR = "_tags"
"""Delta table of named tags (tag -> dataset version); the underscore keeps it out of the record kinds."""

RUN_ID_METADATA_KEY = "prm_factory.run_id"
"""Commit-info key that marks a Delta commit as written by `commit_run` for that run."""


def table_uri(root: str, kind: str) -> str:
    """URI of one kind's Delta table; works for local paths and object-store URIs alike."""
    return f"{str(root).rstrip('/')}/{kind}"


def table_schema(kind: str) -> pa.Schema:
    """Schema a new table of this kind is created with (record schema plus storage-owned columns)."""
    schema = arrow_schema(RECORD_TYPES[kind])
    if kind == "runs":
        schema = schema.append(pa.field(TABLE_VERSIONS_COLUMN, pa.string(), nullable=True))
    if kind == "steps":
        for name in PROBLEM_COLUMNS_ON_STEPS:
            if name not in schema.names:
                schema = schema.append(pa.field(name, pa.string(), nullable=True))
    return schema


PROBLEM_COLUMNS_ON_STEPS: tuple[str, ...] = ("source", "domain")
"""Storage-owned copies of the problem's source and domain on each step row. Per-source statistics over
millions of steps then need no join with problems (a string-keyed hash join was most of label_stats' time
over 10 M rows); the problem row stays the source of truth."""


NON_DATA_OPERATIONS: frozenset[str] = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END"})
"""Delta operations that leave a table's rows unchanged: a reader may move past them to the newer files."""
