"""Dataset tables printed through a pipe (not a terminal) come out whole: no header cut to 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prm_factory.storage.dataset import Dataset


@pytest.fixture
def dataset_root(tmp_path, run_factory) -> str:
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    dataset.commit_run(*run_factory("b", problem_offset=5).args())
    return dataset.root


def piped(*args: str) -> str:
    """`prm-factory ARGS` with stdout a pipe and no COLUMNS hint, as in `prm-factory versions | less`."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    exe = Path(sys.executable).with_name("prm-factory")
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def header_cells(output: str, first: str) -> list[str]:
    """The cells of the table's header line (the line starting with column `first`)."""
    line = next(line for line in output.splitlines() if line.split()[:1] == [first])
    return line.split()


def test_versions_through_a_pipe_prints_every_header_whole(dataset_root: str) -> None:
    output = piped("versions", "--dataset", dataset_root)
    headers = header_cells(output, "version")
    for name in ("version", "committed_at", "run_id", "status", "config_hash", "model", "rejections", "tags"):
        assert name in headers, f"{name} cut or missing in {headers}"
    assert "…" not in output  # no cell ellipsized either
    assert max(len(line) for line in output.splitlines()) > 80  # wider than the default, not wrapped


def test_query_through_a_pipe_prints_every_column_whole(dataset_root: str) -> None:
    columns = (
        "run_id", "status", "config_hash", "model", "model_weights_hash", "n_problems", "n_chains", "n_steps",
        "n_rejected", "chain_accuracy", "rollout_tokens", "started_at",
    )  # fmt: skip
    output = piped("query", "--dataset", dataset_root, f"SELECT {', '.join(columns)} FROM runs")
    headers = header_cells(output, "run_id")
    for name in columns:
        assert name in headers, f"{name} cut or missing in {headers}"
    assert "…" not in output
