"""`insert_rows` (the locked commit's write) leaves a table exactly as `merge_rows` would, while appending
the rows whose keys are absent instead of merging them."""

from __future__ import annotations

import pytest
from deltalake import DeltaTable

import prm_factory.storage.delta_io as delta_io
from prm_factory.storage.write_rules import WriteRules
from tests.storage.conftest import INCOMING, KEYED_SCHEMA, KEYS, STORED, keyed_contents, keyed_rows


@pytest.mark.parametrize("update_matched", [False, True])
def test_it_leaves_the_table_as_a_merge_would(tmp_path, update_matched):
    tables = {}
    for name, write in (("merged", delta_io.merge_rows), ("inserted", delta_io.insert_rows)):
        uri = str(tmp_path / name)
        delta_io.open_or_create(uri, KEYED_SCHEMA, None)
        delta_io.merge_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
        write(
            uri,
            keyed_rows(INCOMING),
            KEYS,
            WriteRules(update_matched, ("done",), "step_id"),
            storage_options=None,
        )
        tables[name] = keyed_contents(uri)
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
    delta_io.open_or_create(uri, KEYED_SCHEMA, None)
    delta_io.insert_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
    delta_io.insert_rows(
        uri, keyed_rows(INCOMING), KEYS, WriteRules(replace_when_changed="step_id"), storage_options=None
    )
    operations = [entry["operation"] for entry in reversed(DeltaTable(uri).history())]
    assert operations == ["CREATE TABLE", "WRITE", "WRITE", "MERGE"]


def test_present_rows_no_rule_can_change_need_no_merge(tmp_path):
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, KEYED_SCHEMA, None)
    delta_io.insert_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
    again = delta_io.insert_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
    assert again is None and DeltaTable(uri).version() == 1


def test_present_mask_matches_whole_keys_not_their_first_column(tmp_path):
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, KEYED_SCHEMA, None)
    delta_io.insert_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
    probe = keyed_rows([("a", 1, "x", "r"), ("a", 2, "x", "r"), ("c", 0, "x", "r"), ("z", 0, "x", "r")])
    mask = delta_io.present_mask(DeltaTable(uri), probe, KEYS)
    assert mask.to_pylist() == [True, False, True, False]
