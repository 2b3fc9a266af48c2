"""`WriteRules.replaces`: the one predicate a merge (DataFusion) and the relabel rewrite (DuckDB) both apply;
that each writer leaves the same table is tests/storage/test_delta_io_insert.py and test_rewrite.py."""

from __future__ import annotations

import duckdb
import pytest

from prm_factory.storage.write_rules import WriteRules, sql_string


def _quoted(column: str) -> str:
    return f'"{column}"'


@pytest.mark.parametrize(
    ("rules", "could_replace"),
    [
        (WriteRules(), False),
        (WriteRules(update_matched=True), True),
        (WriteRules(claim_from_uncommitted=()), True),
        (WriteRules(replace_when_changed="labeler"), True),
    ],
)
def test_could_replace_says_whether_any_rule_is_set(rules: WriteRules, could_replace: bool) -> None:
    assert rules.could_replace is could_replace


def test_no_rule_replaces_nothing_and_an_upsert_everything() -> None:
    assert WriteRules().replaces("t", "s", {"run_id"}) == "FALSE"
    assert WriteRules(update_matched=True, replace_when_changed="x").replaces("t", "s", {"x"}) == "TRUE"


def test_a_column_the_stored_table_lacks_is_no_rule() -> None:
    assert WriteRules(replace_when_changed="labeler").replaces("t", "s", {"run_id"}) == "FALSE"


def test_the_predicate_decides_each_pair_as_the_rules_say_in_duckdb() -> None:
    """Each rule on a pair of rows where only it holds, read by a SQL engine, not by string comparison."""
    rules = WriteRules(claim_from_uncommitted=("done", "it's"), replace_when_changed="labeler")
    predicate = rules.replaces("t", "s", {"run_id", "labeler"}, quote=_quoted)
    pairs = [  # (stored run, stored labeler, written run, written labeler, replaced?)
        ("done", "v1", "new", "v1", False),  # committed owner, same labels
        ("it's", "v1", "new", "v1", False),  # committed owner, a quote in its id
        ("killed", "v1", "new", "v1", True),  # an owner that never committed: claimed
        ("new", "v1", "new", "v1", False),  # the writing run's own row
        ("done", "v1", "new", "v2", True),  # new labels of the same step
        ("done", None, "new", "v2", True),  # a null is a change too
    ]
    con = duckdb.connect()
    side = "(SELECT ? AS run_id, ? AS labeler)"
    for stored_run, stored_labeler, run, labeler, replaced in pairs:
        sql = f"SELECT {predicate} FROM {side} t, {side} s"
        row = con.execute(sql, [stored_run, stored_labeler, run, labeler]).fetchone()
        assert row == (replaced,), (stored_run, stored_labeler, run, labeler)


def test_sql_string_doubles_quotes() -> None:
    assert sql_string("it's") == "'it''s'"
