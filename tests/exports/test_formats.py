"""Trainer exports: shapes, label rules, filters, and files on disk."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from prm_factory.exports.formats import (
    PLACEHOLDER,
    ExportError,
    ExportOptions,
    export_table,
    select_steps,
    write_export,
)
from prm_factory.storage.dataset import Dataset


@pytest.fixture
def dataset(tmp_path, run_factory) -> Dataset:
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*run_factory("a", n_problems=1).args())
    data.commit_run(*run_factory("b", n_problems=1, problem_offset=5, source="math").args())
    return data


def _by_chain_order(table):
    """Chain 0 of a problem is the correct one (its last step has no MC value), chain 1 errs at step 1."""
    return sorted(table.to_pylist(), key=lambda row: len(row[next(iter(row))]))


def test_trl_hard_labels_take_the_labelled_prefix(dataset):
    rows = export_table(dataset, "trl", 1, ExportOptions(label="hard")).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[True, False, False], [True, True]]
    assert all(len(row["completions"]) == len(row["labels"]) for row in rows)
    assert {row["prompt"] for row in rows} == {"What is 0 + 0?"}


def test_trl_stop_at_first_error_and_verifier_labels(dataset):
    rows = export_table(dataset, "trl", 1, ExportOptions(label="hard", stop_at_first_error=True)).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[True, False], [True, True]]
    rows = export_table(dataset, "trl", 1, ExportOptions(label="verifier")).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[True, False, False], [True, True, True]]


def test_soft_labels_need_an_explicit_threshold_for_booleans(dataset):
    with pytest.raises(ExportError, match="--threshold"):
        export_table(dataset, "trl", 1, ExportOptions(label="soft"))
    rows = export_table(dataset, "trl", 1, ExportOptions(label="soft", threshold=0.8)).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[False, False], [False, False, False]]
    rows = export_table(dataset, "trl", 1, ExportOptions(label="soft", threshold=0.5)).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[True, False, False], [True, True]]
    with pytest.raises(ExportError, match="soft labels only"):
        export_table(dataset, "trl", 1, ExportOptions(label="hard", threshold=0.5))


def test_openrlhf_placeholders_match_labels(dataset):
    rows = export_table(dataset, "openrlhf", 1, ExportOptions(label="hard")).to_pylist()
    for row in rows:
        assert row["input"].count(PLACEHOLDER) == len(row["value"])
        assert set(row["value"]) <= {"+", "-"}
    floats = export_table(dataset, "openrlhf", 1, ExportOptions(label="soft")).to_pylist()
    assert sorted(row["value"] for row in floats) == [[0.75, 0.0, 0.0], [0.75, 0.75]]


def test_math_shepherd_layout(dataset):
    rows = export_table(dataset, "math-shepherd", 1, ExportOptions(label="hard")).to_pylist()
    for row in rows:
        input_lines, label_lines = row["input"].splitlines(), row["label"].splitlines()
        assert input_lines[0] == label_lines[0] == "What is 0 + 0?"
        assert all(line.endswith(f" {PLACEHOLDER}") for line in input_lines[1:])
        assert [line[:-2] for line in input_lines[1:]] == [line[:-1] for line in label_lines[1:]]
        assert all(line[-1] in "+-" for line in label_lines[1:])
        assert row["task"] == "gsm8k"
    assert sorted(sum(line.endswith(" -") for line in row["label"].splitlines()) for row in rows) == [0, 2]


def test_filters_source_since_version_and_agreement(dataset, run_factory):
    everything = export_table(dataset, "trl", None, ExportOptions())
    assert everything.num_rows == 4
    only_math = export_table(dataset, "trl", None, ExportOptions(sources=("math",)))
    assert set(only_math["source"].to_pylist()) == {"math"} and only_math.num_rows == 2
    assert export_table(dataset, "trl", None, ExportOptions(domains=("code",))).num_rows == 0
    fresh = export_table(dataset, "trl", None, ExportOptions(since_version=1))
    assert set(fresh["source"].to_pylist()) == {"math"}
    agreeing = export_table(dataset, "steps", None, ExportOptions(agreement_only=True))
    assert all(agreeing["labels_agree"].to_pylist())
    assert agreeing.num_rows == 10  # the two last steps without MC value have no agreement to check


@pytest.mark.parametrize("prefix", [True, False])
def test_a_selection_of_some_columns_is_those_columns_of_the_whole_one(dataset, prefix):
    """The trainer asks for the columns its rows are made of, so DuckDB reads only those of the files;
    the steps and their order must be those of the whole selection (the rules read other columns)."""
    options = ExportOptions(label="hard", since_version=0, agreement_only=prefix)
    whole = select_steps(dataset, None, options, prefix=prefix)
    columns = ("chain_id", "problem_text", "text", "label", "positive")
    some = select_steps(dataset, None, options, prefix=prefix, columns=columns)
    assert some.column_names == list(columns)
    assert some.num_rows > 0 and some.to_pylist() == whole.select(list(columns)).to_pylist()
    assert "labels_agree" in whole.column_names and "labels_agree" not in some.column_names


def test_steps_export_and_files(dataset, tmp_path):
    steps = export_table(dataset, "steps", None, ExportOptions(label="consensus"))
    assert steps.num_rows == 12 and {"source", "domain", "label", "positive", "mc_value"} <= set(
        steps.column_names
    )
    write_export(steps, tmp_path / "out" / "steps.parquet")
    assert pq.read_table(tmp_path / "out" / "steps.parquet").num_rows == 12
    trl = export_table(dataset, "trl", None, ExportOptions())
    write_export(trl, tmp_path / "trl.jsonl")
    lines = (tmp_path / "trl.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and isinstance(json.loads(lines[0])["labels"][0], bool)
    with pytest.raises(ExportError, match="file format"):
        write_export(trl, tmp_path / "trl.csv")


def test_reference_labels_are_an_export_source_and_counted_in_label_stats(tmp_path, run_factory):
    """Each label source is chosen by name; steps whose reference source did not run have no label."""
    from prm_factory.storage.sql import query
    from tests.storage_fixtures import with_label

    data = Dataset(str(tmp_path / "ref"))
    run = run_factory("r", n_problems=1)
    run.steps = [
        with_label(s, "reference", verdict="incorrect" if s.step_index == 2 else "correct") for s in run.steps
    ]
    version = data.commit_run(*run.args())
    rows = export_table(data, "trl", version, ExportOptions(label="reference")).to_pylist()
    assert sorted(row["labels"] for row in rows) == [[True, True, False], [True, True, False]]
    stats = query(
        data, "SELECT sum(n_reference_correct) AS c, sum(n_reference_incorrect) AS i FROM label_stats"
    ).to_pylist()
    assert stats == [{"c": 4, "i": 2}]


def test_consensus_soft_takes_p_correct(tmp_path, run_factory):
    """`--label consensus --soft`: the consensus's p_correct is the soft label (None: the step unlabelled)."""
    import dataclasses

    records = run_factory("a", n_problems=1)
    values = [0.9, 0.2, None, 0.97, 0.8, 0.6]
    steps = [dataclasses.replace(s, p_correct=p) for s, p in zip(records.steps, values, strict=True)]
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(records.run, records.problems, records.chains, steps, records.rejections)
    rows = export_table(data, "steps", None, ExportOptions(label="consensus", soft=True)).to_pylist()
    assert sorted(row["label"] for row in rows) == sorted(v for v in values if v is not None)
    trl = export_table(
        data, "trl", None, ExportOptions(label="consensus", soft=True, threshold=0.5)
    ).to_pylist()
    assert all(len(row["labels"]) == len(row["completions"]) for row in trl)
    with pytest.raises(ExportError, match="--threshold"):
        export_table(data, "trl", None, ExportOptions(label="consensus", soft=True))
    with pytest.raises(ExportError, match="--label consensus"):
        export_table(data, "steps", None, ExportOptions(label="verifier", soft=True))
