"""The dataset CLI commands, through Typer's runner on a fresh app."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from prm_factory.commands.dataset import register
from prm_factory.storage.dataset import Dataset


@pytest.fixture
def app(command_app) -> typer.Typer:
    return command_app(register)


@pytest.fixture
def dataset_root(tmp_path, run_factory) -> str:
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    dataset.commit_run(*run_factory("b", problem_offset=5).args())
    return dataset.root


def run(app, *args: str):
    return CliRunner().invoke(app, list(args))


def test_query_prints_a_table(app, dataset_root):
    result = run(app, "query", "SELECT count(*) AS n_steps FROM steps", "--dataset", dataset_root)
    assert result.exit_code == 0, result.output
    assert "n_steps" in result.output and "24" in result.output


def test_query_old_version_as_json_and_csv(app, dataset_root, tmp_path):
    result = run(
        app,
        "query",
        "SELECT count(*) AS n FROM steps",
        "--dataset",
        dataset_root,
        "--version",
        "1",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 12}]
    result = run(
        app,
        "query",
        "SELECT step_index FROM steps ORDER BY 1 LIMIT 2",
        "--dataset",
        dataset_root,
        "--format",
        "csv",
    )
    assert result.stdout.splitlines() == ['"step_index"', "0", "0"]


def test_query_to_parquet_file(app, dataset_root, tmp_path):
    out = tmp_path / "out.parquet"
    result = run(
        app,
        "query",
        "SELECT * FROM chains",
        "--dataset",
        dataset_root,
        "--format",
        "parquet",
        "--output",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).num_rows == 8


def test_default_dataset_comes_from_config(app, dataset_root, monkeypatch):
    monkeypatch.setenv("PRM_FACTORY_DATASET", dataset_root)
    result = run(app, "query", "SELECT count(*) AS n FROM runs", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 2}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["SELECT 1", "--dataset", "{missing}"], "no dataset at"),
        (["SELECT * FROM nosuchtable", "--dataset", "{root}"], "nosuchtable"),
        (["SELECT 1", "--dataset", "{root}", "--version", "9"], "version 9 does not exist"),
        (["SELECT 1", "--dataset", "{root}", "--version", "nine"], "neither a version number nor a tag"),
    ],
)
def test_errors_are_one_line_and_nonzero(app, dataset_root, tmp_path, args, message):
    args = [a.format(root=dataset_root, missing=tmp_path / "missing") for a in args]
    result = run(app, "query", *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_export_command_writes_trl_jsonl(app, dataset_root, tmp_path):
    out = tmp_path / "trl.jsonl"
    result = run(
        app, "export", "trl", "--output", str(out), "--dataset", dataset_root, "--since-version", "1"
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and all(len(r["completions"]) == len(r["labels"]) for r in rows)
    result = run(app, "export", "trl", "--output", str(out), "--dataset", dataset_root, "--label", "soft")
    assert result.exit_code == 1 and "--threshold" in result.stderr


def test_compact_command(app, dataset_root):
    result = run(app, "compact", "--dataset", dataset_root, "--retention-hours", "0")
    assert result.exit_code == 0, result.output
    assert "steps" in result.output
    result = run(
        app, "query", "SELECT count(*) AS n FROM steps", "--dataset", dataset_root, "--format", "json"
    )
    assert json.loads(result.stdout) == [{"n": 24}]
