"""A step's labels and their columns (schemas/step_labels.py): every source round-trips through its columns,
the first two keep the columns every dataset has, a new source takes `NAME_*` columns."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from prm_factory.schemas.records import Chain, Step, arrow_schema, from_table, to_table
from prm_factory.schemas.step_labels import (
    CORE_SOURCES,
    StepLabel,
    columns_of,
    decode_labels,
    encode_labels,
    mc_label,
    split_labeler,
    stored_sources,
)

MC_EVIDENCE = {
    "value_source": "rollouts",
    "n_rollouts": 4,
    "n_correct": 3,
    "n_judged": 4,
    "tokens": 90,
    "seconds": 0.5,
}


def labels() -> tuple[StepLabel, ...]:
    return (
        StepLabel(
            "verifier",
            "incorrect",
            None,
            "2 + 2 = 5 is false",
            '{"claims": 1}',
            "math-sympy@2.5.0+ab",
            "closed_arithmetic",
        ),
        mc_label(True, 0.75, MC_EVIDENCE, "mc@toy"),
        StepLabel("reference", "correct", None, "on the reference", "{}", "reference-align@1.7.0+cd"),
        StepLabel("prm", "incorrect", 0.12, "P(right) 0.12 < 0.4", '{"threshold": 0.4}', "prm@ckpt+ef"),
    )


def test_every_source_round_trips_through_its_columns() -> None:
    sources = [*CORE_SOURCES, "prm"]
    row = {**encode_labels(labels(), sources), "model": "toy"}
    assert decode_labels(row, sources) == labels()


def test_the_first_sources_keep_the_columns_every_dataset_has() -> None:
    row = encode_labels(labels()[:2], CORE_SOURCES[:2])
    assert row["verdict"] == "incorrect" and row["verdict_reason"] == "2 + 2 = 5 is false"
    assert (row["verifier"], row["verifier_version"], row["verifier_code"]) == ("math-sympy", "2.5.0", "ab")
    assert (row["hard_label"], row["mc_value"], row["soft_label"]) == (True, 0.75, 0.75)
    assert (row["n_rollouts"], row["n_rollouts_correct"], row["rollout_tokens"]) == (4, 3, 90)
    generic = encode_labels(labels()[3:], ["prm"])
    assert generic == {
        "prm_verdict": "incorrect",
        "prm_value": 0.12,
        "prm_reason": "P(right) 0.12 < 0.4",
        "prm_evidence": '{"threshold": 0.4}',
        "prm_labeler": "prm@ckpt+ef",
        "prm_kind": None,
    }


def test_a_source_that_did_not_run_stores_nulls_and_reads_back_as_absent() -> None:
    row = {**encode_labels(labels()[:2], CORE_SOURCES), "model": "toy"}
    assert row["reference_verdict"] is None and row["judge_labeler"] is None
    assert [label.source for label in decode_labels(row, CORE_SOURCES)] == ["verifier", "mc"]
    # MC's columns hold defaults when it did not label the step (they are not nullable in old tables)
    empty = encode_labels((), ["mc"])
    assert empty["value_source"] == "none" and empty["n_rollouts"] == 0 and empty["hard_label"] is None


def test_labels_of_a_source_without_columns_here_are_refused() -> None:
    with pytest.raises(ValueError, match="no columns"):
        encode_labels(labels(), CORE_SOURCES)


def test_a_table_of_steps_grows_the_columns_of_the_sources_it_carries() -> None:
    step = Step("s", "c", "p", "r", 0, "2 + 2 = 5", 0, 9, "negative", False, True, "toy", "h", labels())
    table = to_table(Step, [step])
    assert {"prm_verdict", "prm_value", "judge_verdict", "verdict", "hard_label"} <= set(table.column_names)
    assert stored_sources(table.column_names) == [*CORE_SOURCES, "prm"]
    [back] = from_table(Step, table)
    assert back == step and back.label("prm").value == 0.12 and back.label("judge") is None
    assert arrow_schema(Step).field("verdict").nullable is False  # as in every table before the plug-ins


def test_chains_keep_each_sources_first_error_in_its_own_column() -> None:
    chain = Chain(
        "c", "p", "r", "m", "{}", 0, 0, "", "", 1, "stop", None, "incorrect", "", "{}", 3,
        first_errors={"verifier": 1, "judge": -1, "prm": 2},
    )  # fmt: skip
    table = to_table(Chain, [chain])
    assert table["first_error_prm"].to_pylist() == [2] and table["first_error_mc"].to_pylist() == [None]
    assert from_table(Chain, table) == [chain]


def test_mc_evidence_and_reason_come_back_from_the_rollout_columns() -> None:
    label = decode_labels({**encode_labels(labels()[1:2], ["mc"]), "model": "toy"}, ["mc"])[0]
    assert json.loads(label.evidence) == MC_EVIDENCE
    assert label.reason == "3 of 4 judged rollouts reached the answer" and label.labeler == "mc@toy"


def test_labelers_split_into_name_version_and_code() -> None:
    assert split_labeler("math-sympy@2.5.0+3fa2") == ("math-sympy", "2.5.0", "3fa2")
    assert split_labeler("a@b@1.0+local+99") == ("a@b", "1.0+local", "99")
    assert split_labeler("bare") == ("bare", "", "")


def test_a_label_outside_the_three_verdicts_or_the_unit_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown verdict"):
        StepLabel("x", "wrong")
    with pytest.raises(ValueError, match="outside"):
        StepLabel("x", "correct", 1.5)


def test_the_long_view_reads_each_field_of_each_source() -> None:
    sql = columns_of("mc").sql()
    assert "hard_label" in sql["verdict"] and sql["value"] == "mc_value"
    assert columns_of("prm").sql()["kind"] == "prm_kind"
    assert pa.types.is_boolean(columns_of("mc").arrow_fields()[0].type)


def test_mcs_kind_is_where_its_value_came_from_in_a_label_and_in_sql_alike():
    """The consensus reads MC's kind from the label (its table has cells per kind); `stats` reads it from the
    step_labels view: both take it from the stored `value_source`."""
    import duckdb

    from prm_factory.schemas.step_labels import McColumns

    origins = ["rollouts", "inferred", "outcome", "none"]
    kinds = [mc_label(True, 1.0, {"value_source": o}, "mc@m").kind for o in origins]
    assert kinds == ["rollouts", "inferred", "outcome", None]
    values = ", ".join(f"('{o}')" for o in origins)
    sql = f"SELECT {McColumns().sql()['kind']} FROM (VALUES {values}) AS t(value_source)"
    assert [row[0] for row in duckdb.sql(sql).fetchall()] == kinds
