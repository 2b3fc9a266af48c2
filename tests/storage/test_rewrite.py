"""`rewrite_rows` (relabel's commit: one streamed overwrite) leaves a table exactly as `merge_rows` would."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import prm_factory.storage.delta_io as delta_io
from prm_factory.storage.rewrite import rewrite_rows

SCHEMA = pa.schema(
    [("chain_id", pa.string()), ("step_index", pa.int64()), ("step_id", pa.string()), ("run_id", pa.string())]
)
KEYS = ("chain_id", "step_index")
STORED = [("a", 0, "a0", "done"), ("a", 1, "a1", "done"), ("b", 0, "b0", "killed"), ("c", 0, "c0", "done")]
INCOMING = [
    ("a", 0, "a0", "new"),  # same labels: kept as stored
    ("a", 1, "a1-relabelled", "new"),  # another labeler: replaced
    ("b", 0, "b0", "new"),  # owned by a run that never committed: claimed
    ("c", 1, "c1", "new"),  # same chain, a step the table lacks: added
    ("d", 0, "d0", "new"),  # a chain the table lacks: added
    ("d", 0, "d0-twice", "new"),  # a repeated key: the first row wins
]


def _rows(spec, schema: pa.Schema = SCHEMA) -> pa.Table:
    names = ("chain_id", "step_index", "step_id", "run_id")
    return pa.Table.from_pylist([dict(zip(names, row, strict=True)) for row in spec], schema=SCHEMA)


def _contents(uri: str, version: int | None = None) -> list[dict]:
    rows = DeltaTable(uri, version=version).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: (r["chain_id"], r["step_index"]))


def _stored(tmp_path, name: str) -> str:
    uri = str(tmp_path / name)
    delta_io.open_or_create(uri, SCHEMA, None)
    delta_io.merge_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
    return uri


RULES = {"claim_from_uncommitted": ["done"], "replace_when_changed": "step_id"}


@pytest.mark.parametrize("update_matched", [False, True])
def test_it_leaves_the_table_as_a_merge_would(tmp_path, update_matched):
    merged, rewritten = _stored(tmp_path, "merged"), _stored(tmp_path, "rewritten")
    delta_io.merge_rows(
        merged, _rows(INCOMING), KEYS, update_matched=update_matched, storage_options=None, **RULES
    )
    batches = [_rows(INCOMING[:2]), _rows([]), _rows(INCOMING[2:])]  # a run's rows in several batches
    version = rewrite_rows(
        rewritten, batches, KEYS, tmp_path, update_matched=update_matched, storage_options=None, **RULES
    )
    assert version == 2 and _contents(rewritten) == _contents(merged)
    assert [r["step_id"] for r in _contents(rewritten, version=1)] == ["a0", "a1", "b0", "c0"]  # kept
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rewrite")]  # scratch removed


def test_nothing_to_change_writes_nothing(tmp_path):
    uri = _stored(tmp_path, "t")
    same = [row for row in STORED if row[3] == "done"]
    assert (
        rewrite_rows(uri, [_rows(same)], KEYS, tmp_path, update_matched=False, storage_options=None) is None
    )
    assert rewrite_rows(uri, [], KEYS, tmp_path, update_matched=False, storage_options=None) is None
    assert DeltaTable(uri).version() == 1


def test_a_column_a_newer_release_adds_is_kept_and_null_on_stored_rows(tmp_path):
    uri = _stored(tmp_path, "t")
    rows = _rows([("a", 1, "a1-new", "new")]).append_column("p_correct", pa.array([0.25]))
    rewrite_rows(uri, [rows], KEYS, tmp_path, update_matched=False, storage_options=None, **RULES)
    by_key = {(r["chain_id"], r["step_index"]): r["p_correct"] for r in _contents(uri)}
    assert by_key == {("a", 0): None, ("a", 1): 0.25, ("b", 0): None, ("c", 0): None}
