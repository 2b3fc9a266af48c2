"""`merge_rows` retries a merge that lost a real commit race, re-reading the table, and gives up with
`CommitConflictError` after `MAX_ATTEMPTS` lost races; other errors are not retried."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.table import TableMerger

import prm_factory.storage.delta_io as delta_io
from prm_factory.storage.errors import CommitConflictError
from prm_factory.storage.write_rules import WriteRules

SCHEMA = pa.schema([("k", pa.string()), ("run_id", pa.string()), ("v", pa.int64())])


def _rows(keys: list[str], value: int = 0) -> pa.Table:
    return pa.table({"k": keys, "run_id": ["r"] * len(keys), "v": [value] * len(keys)}, schema=SCHEMA)


@pytest.fixture
def table_uri(tmp_path) -> str:
    uri = str(tmp_path / "t")
    delta_io.open_or_create(uri, SCHEMA, None)
    return uri


def _race_before_execute(monkeypatch, uri: str, races: int) -> list[int]:
    """Make the first `races` merge commits lose to a concurrent append; returns the per-try call log."""
    real_execute = TableMerger.execute
    calls: list[int] = []

    def execute(merger: TableMerger) -> dict:
        calls.append(len(calls))
        if len(calls) <= races:
            write_deltalake(uri, _rows([f"rival{len(calls)}"]), mode="append")
        return real_execute(merger)

    monkeypatch.setattr(TableMerger, "execute", execute)
    return calls


def test_a_merge_that_loses_races_is_retried_against_the_new_table(monkeypatch, table_uri):
    calls = _race_before_execute(monkeypatch, table_uri, races=3)
    version = delta_io.merge_rows(table_uri, _rows(["a", "b"]), ["k"], WriteRules(), storage_options=None)
    assert len(calls) == 4
    table = DeltaTable(table_uri)
    assert version == table.version()
    assert sorted(table.to_pyarrow_table()["k"].to_pylist()) == ["a", "b", "rival1", "rival2", "rival3"]


def test_it_gives_up_with_a_conflict_error_after_max_attempts(monkeypatch, table_uri):
    monkeypatch.setattr(delta_io, "MAX_ATTEMPTS", 3)
    calls = _race_before_execute(monkeypatch, table_uri, races=99)
    with pytest.raises(CommitConflictError, match="after 3 conflicting tries: .*concurrent"):
        delta_io.merge_rows(table_uri, _rows(["a"]), ["k"], WriteRules(), storage_options=None)
    assert len(calls) == 3
    assert "a" not in DeltaTable(table_uri).to_pyarrow_table()["k"].to_pylist()


def test_a_vanished_table_is_not_retried(tmp_path):
    with pytest.raises(CommitConflictError, match="vanished"):
        delta_io.merge_rows(
            str(tmp_path / "missing"), _rows(["a"]), ["k"], WriteRules(), storage_options=None
        )


def test_replace_when_changed_still_overwrites_a_changed_row_after_a_lost_race(monkeypatch, table_uri):
    delta_io.merge_rows(table_uri, _rows(["a"], value=1), ["k"], WriteRules(), storage_options=None)
    calls = _race_before_execute(monkeypatch, table_uri, races=1)
    delta_io.merge_rows(
        table_uri,
        _rows(["a"], value=2).set_column(1, "run_id", pa.array(["s"])),
        ["k"],
        WriteRules(replace_when_changed="run_id"),
        storage_options=None,
    )
    assert len(calls) == 2
    rows = {r["k"]: r["v"] for r in DeltaTable(table_uri).to_pyarrow_table().to_pylist()}
    assert rows == {"a": 2, "rival1": 0}
