"""`rewrite_rows` (relabel's commit: one streamed overwrite) leaves a table exactly as `merge_rows` would."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import prm_factory.storage.delta_io as delta_io
from prm_factory.storage import rewrite
from prm_factory.storage.rewrite import rewrite_rows
from prm_factory.storage.write_rules import WriteRules
from tests.storage.conftest import INCOMING, KEYED_SCHEMA, KEYS, STORED, keyed_contents, keyed_rows


def _stored(tmp_path, name: str) -> str:
    uri = str(tmp_path / name)
    delta_io.open_or_create(uri, KEYED_SCHEMA, None)
    delta_io.merge_rows(uri, keyed_rows(STORED), KEYS, WriteRules(), storage_options=None)
    return uri


RULES = WriteRules(claim_from_uncommitted=("done",), replace_when_changed="step_id")


@pytest.mark.parametrize("pass_rows", [250_000, 2, 1], ids=["one pass", "three passes", "six passes"])
@pytest.mark.parametrize("update_matched", [False, True])
def test_it_leaves_the_table_as_a_merge_would(tmp_path, update_matched, pass_rows, monkeypatch):
    """In one pass or in several (a larger run matches its keys a pass at a time: the same rows)."""
    monkeypatch.setattr(rewrite, "PASS_ROWS", pass_rows)
    merged, rewritten = _stored(tmp_path, "merged"), _stored(tmp_path, "rewritten")
    rules = replace(RULES, update_matched=update_matched)
    delta_io.merge_rows(merged, keyed_rows(INCOMING), KEYS, rules, storage_options=None)
    batches = [keyed_rows(INCOMING[:2]), keyed_rows([]), keyed_rows(INCOMING[2:])]  # a run's rows, 3 batches
    version = rewrite_rows(rewritten, batches, KEYS, tmp_path, rules, storage_options=None)
    assert version == 2 and keyed_contents(rewritten) == keyed_contents(merged)
    assert [r["step_id"] for r in keyed_contents(rewritten, version=1)] == ["a0", "a1", "b0", "c0"]  # kept
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rewrite")]  # scratch removed


def test_nothing_to_change_writes_nothing(tmp_path):
    uri = _stored(tmp_path, "t")
    same = [row for row in STORED if row[3] == "done"]
    assert rewrite_rows(uri, [keyed_rows(same)], KEYS, tmp_path, WriteRules(), storage_options=None) is None
    assert rewrite_rows(uri, [], KEYS, tmp_path, WriteRules(), storage_options=None) is None
    assert DeltaTable(uri).version() == 1


def test_a_column_a_newer_release_adds_is_kept_and_null_on_stored_rows(tmp_path):
    uri = _stored(tmp_path, "t")
    rows = keyed_rows([("a", 1, "a1-new", "new")]).append_column("p_correct", pa.array([0.25]))
    rewrite_rows(uri, [rows], KEYS, tmp_path, RULES, storage_options=None)
    by_key = {(r["chain_id"], r["step_index"]): r["p_correct"] for r in keyed_contents(uri)}
    assert by_key == {("a", 0): None, ("a", 1): 0.25, ("b", 0): None, ("c", 0): None}


@pytest.mark.parametrize("pass_rows", [250_000, 1])
def test_the_new_version_names_only_whole_files_that_carry_their_row_counts(tmp_path, pass_rows, monkeypatch):
    """DuckDB writes the files inside its memory limit; the commit's add actions give each file's row count
    (readers count rows and skip files by the log's stats), and nothing of the write is left beside them; a
    pass that has no rows names no file."""
    monkeypatch.setattr(rewrite, "PASS_ROWS", pass_rows)
    uri = _stored(tmp_path, "t")
    rows = keyed_rows(INCOMING)
    version = rewrite_rows(
        uri, [rows], KEYS, tmp_path, RULES, storage_options=None, custom_metadata={"run": "r9"}
    )
    table = DeltaTable(uri)
    adds = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    assert sum(adds["num_records"]) == len(keyed_contents(uri)) > 0
    assert all(n is not None and n > 0 for n in adds["num_records"])  # no empty file named
    assert table.history(1)[0]["run"] == "r9" and version == table.version()
    on_disk = {p.name for p in (tmp_path / "t").iterdir() if p.name != "_delta_log"}
    assert set(adds["path"]) <= on_disk and not [n for n in on_disk if n.startswith(".")]
