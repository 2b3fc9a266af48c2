"""`insert_rows` (the locked commit's write) leaves a table exactly as `merge_rows` would, while appending
the rows whose keys are absent instead of merging them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import prm_factory.storage.delta_io as delta_io

SCHEMA = pa.schema(
    [("chain_id", pa.string()), ("step_index", pa.int64()), ("step_id", pa.string()), ("run_id", pa.string())]
)
KEYS = ("chain_id", "step_index")


def _rows(spec: list[tuple[str, int, str, str]]) -> pa.Table:
    return pa.Table.from_pylist(
        [{"chain_id": c, "step_index": i, "step_id": s, "run_id": r} for c, i, s, r in spec], schema=SCHEMA
    )


STORED = [("a", 0, "a0", "done"), ("a", 1, "a1", "done"), ("b", 0, "b0", "killed"), ("c", 0, "c0", "done")]
INCOMING = [
    ("a", 0, "a0", "new"),  # same labels: kept as stored
    ("a", 1, "a1-relabelled", "new"),  # another labeler: replaced
    ("b", 0, "b0", "new"),  # owned by a run that never committed: claimed
    ("c", 1, "c1", "new"),  # same chain, a step the table lacks: appended
    ("d", 0, "d0", "new"),  # a chain the table lacks: appended
    ("d", 0, "d0-twice", "new"),  # a repeated key: the first row wins
]


def _contents(uri: str) -> list[dict]:
    return sorted(
        DeltaTable(uri).to_pyarrow_table().to_pylist(), key=lambda r: (r["chain_id"], r["step_index"])
    )


@pytest.mark.parametrize("update_matched", [False, True])
def test_it_leaves_the_table_as_a_merge_would(tmp_path, update_matched):
    tables = {}
    for name, write in (("merged", delta_io.merge_rows), ("inserted", delta_io.insert_rows)):
        uri = str(tmp_path / name)
        delta_io.open_or_create(uri, SCHEMA, None)
        delta_io.merge_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
        write(
            uri,
            _rows(INCOMING),
            KEYS,
            update_matched=update_matched,
            storage_options=None,
            claim_from_uncommitted=["done"],
            replace_when_changed="step_id",
        )
        tables[name] = _contents(uri)
    assert tables["inserted"] == tables["merged"]
    assert {(r["chain_id"], r["step_index"]): r["step_id"] for r in tables["inserted"]} == {
        ("a", 0): "a0",
        ("a", 1): "a1-relabelled",
        ("b", 0): "b0",
        ("c", 0): "c0",
        ("c", 1): "c1",
        ("d", 0): "d0",
    }


def test_absent_keys_are_appended_and_present_ones_merged(tmp_path):
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, SCHEMA, None)
    delta_io.insert_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
    delta_io.insert_rows(
        uri, _rows(INCOMING), KEYS, update_matched=False, storage_options=None, replace_when_changed="step_id"
    )
    operations = [entry["operation"] for entry in reversed(DeltaTable(uri).history())]
    assert operations == ["CREATE TABLE", "WRITE", "WRITE", "MERGE"]


def test_present_rows_no_rule_can_change_need_no_merge(tmp_path):
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, SCHEMA, None)
    delta_io.insert_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
    again = delta_io.insert_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
    assert again is None and DeltaTable(uri).version() == 1


def test_present_mask_matches_whole_keys_not_their_first_column(tmp_path):
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, SCHEMA, None)
    delta_io.insert_rows(uri, _rows(STORED), KEYS, update_matched=False, storage_options=None)
    probe = _rows([("a", 1, "x", "r"), ("a", 2, "x", "r"), ("c", 0, "x", "r"), ("z", 0, "x", "r")])
    mask = delta_io.present_mask(DeltaTable(uri), probe, KEYS)
    assert mask.to_pylist() == [True, False, True, False]
