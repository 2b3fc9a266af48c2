"""Failure behaviour at the edge: a config with an error costs one clear line and a non-zero exit before
anything starts, and a run that fails inside the flow records why in the runs table and exits non-zero."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str, cwd: Path, api_url: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own; a run flows against `api_url`, else on a temporary server."""
    exe = Path(sys.executable).with_name("prm-factory")
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("PREFECT_API_URL", None)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing_problem_file",
         "error: problem file not found: {tmp}/missing.jsonl (set problems.path or --problems)"),
        ("unknown_model_path",
         "error: model.path not found: {tmp}/no-such-model (a local Hugging Face checkpoint directory)"),
        ("model_without_config",
         "error: model.path {tmp}/empty-model is not a Hugging Face checkpoint (no config.json)"),
        ("bad_value", "error: {tmp}/run.toml: field sampling.n: Input should be greater than or equal to 1"),
        ("unknown_field", "error: {tmp}/run.toml: field rollouts.kk: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_a_config_with_an_error_gives_one_clear_line_and_a_non_zero_exit(
    case: str, expected: str, tmp_path: Path, problems_file: Path
) -> None:
    (tmp_path / "empty-model").mkdir()
    sections = {
        "missing_problem_file": f'[problems]\npath = "{tmp_path / "missing.jsonl"}"\n',
        "unknown_model_path": f'[model]\npath = "{tmp_path / "no-such-model"}"\n',
        "model_without_config": f'[model]\npath = "{tmp_path / "empty-model"}"\n',
        "bad_value": "[sampling]\nn = 0\n",
        "unknown_field": "[rollouts]\nkk = 3\n",
    }
    body = sections[case]
    if "[problems]" not in body:
        body += f'[problems]\npath = "{problems_file}"\n'
    (tmp_path / "run.toml").write_text(body + f'[dataset]\nroot = "{tmp_path / "ds"}"\n')
    result = cli("run", "--config", str(tmp_path / "run.toml"), cwd=tmp_path)
    assert result.returncode == 2
    assert error_lines(result) == [expected.format(tmp=tmp_path)]
    assert not (tmp_path / "ds").exists(), "nothing may start (or write) for a config with an error"


def test_serve_with_a_bad_cron_gives_one_clear_line(tmp_path: Path, problems_file: Path) -> None:
    (tmp_path / "run.toml").write_text(f'[problems]\npath = "{problems_file}"\n')
    result = cli("serve", str(tmp_path / "run.toml"), "--cron", "0 25 * * *", cwd=tmp_path)
    assert result.returncode == 2
    assert error_lines(result) == [
        "error: bad cron schedule '0 25 * * *': Invalid cron string: \"0 25 * * *\""
    ]


def test_a_run_that_fails_in_the_flow_records_why_and_exits_non_zero(
    tmp_path: Path, problems_file: Path, prefect_server: None
) -> None:
    """A checkpoint that passes the preflight (it has a config.json) but has no weights: the flow fails
    in its model stage, after loading problems, which is enough to exercise the failure record. The run
    flows against the session's Prefect server: a temporary server of its own was 50-80 s of this test's
    65-90 s on a loaded 2-core machine, and the failure record does not depend on which server it is."""
    from prefect.settings import PREFECT_API_URL

    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    model = tmp_path / "broken-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    config = tmp_path / "run.toml"
    config.write_text(
        f'[problems]\npath = "{problems_file}"\nlimit = 2\n[model]\npath = "{model}"\n'
        f'[dataset]\nroot = "{tmp_path / "ds"}"\n'
    )
    result = cli("run", "--config", str(config), cwd=tmp_path, api_url=str(PREFECT_API_URL.value()))
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    output = result.stdout + result.stderr
    assert "stage=model event=failed" in output, output[-3000:]

    runs = query(
        Dataset(str(tmp_path / "ds")), "SELECT status, error, n_chains, n_rejected FROM runs"
    ).to_pylist()
    assert len(runs) == 1 and runs[0]["status"] == "failed" and runs[0]["n_chains"] == 0
    assert runs[0]["error"] and runs[0]["error"] in output  # the same reason in the table and on screen
    assert runs[0]["n_rejected"] == 3  # the bad input rows it met are kept with the failed run
