"""Deployments for scheduled runs, cron validation, and the `serve` command's one-line errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from prm_factory.config.run_config import ConfigError, load_config
from prm_factory.flows.serve import (
    ServedConfig,
    build_deployments,
    deployment_name,
    require_api_server,
    validate_cron,
)


def write_config(path: Path, name: str, problems: Path, **extra: str) -> Path:
    lines = [f'name = "{name}"', "[problems]", f'path = "{problems}"', "limit = 3"]
    lines += [f"{key} = {value}" for key, value in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("bad", ["61 * * * *", "every hour", "* * *"])
def test_a_bad_cron_string_is_one_clear_error(bad: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"bad cron schedule '{bad}': Invalid cron string")):
        validate_cron(bad)


def test_each_config_becomes_a_deployment_with_the_schedule_and_its_parameters(
    tmp_path: Path, gsm8k_file: Path
) -> None:
    a = write_config(tmp_path / "hourly.toml", "gsm8k", gsm8k_file)
    b = write_config(tmp_path / "code.toml", "gsm8k", gsm8k_file)
    served = [ServedConfig(p, load_config(p)) for p in (a, b)]
    deployments = build_deployments(served, "15 */2 * * *", timezone="UTC")

    assert [d.name for d in deployments] == ["gsm8k-hourly", "gsm8k-code"]
    for deployment, item in zip(deployments, served, strict=True):
        assert [s.schedule.cron for s in deployment.schedules] == ["15 */2 * * *"]
        assert deployment.schedules[0].schedule.timezone == "UTC"
        assert deployment.parameters == {"config": item.config.model_dump(mode="json")}
        assert deployment.concurrency_limit == 1 and "prm-factory" in deployment.tags
        assert deployment.entrypoint.endswith("generation_run.py:generation_run")
    assert deployments[0].parameters["config"]["problems"]["limit"] == 3


def test_two_configs_with_one_deployment_name_are_refused(tmp_path: Path, gsm8k_file: Path) -> None:
    path = write_config(tmp_path / "same.toml", "x", gsm8k_file)
    item = ServedConfig(path, load_config(path))
    assert deployment_name(item) == "x-same"
    with pytest.raises(ConfigError, match="same deployment name: x-same"):
        build_deployments([item, item], "0 * * * *")


def test_serving_without_an_api_server_says_how_to_start_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(updates={PREFECT_API_URL: None}):
        with pytest.raises(ConfigError, match="prefect server start"):
            require_api_server()


def cli_at_once(*calls: tuple[str, ...], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Each call as its own `prm-factory` process, all started together (each spends most of its time
    importing Prefect; one after another they took 3x as long), results in the order given."""
    exe = str(Path(sys.executable).with_name("prm-factory"))
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("PREFECT_API_URL", None)
    started = [
        subprocess.Popen(
            [exe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
        )
        for args in calls
    ]
    results = []
    try:
        for args, process in zip(calls, started, strict=True):
            stdout, stderr = process.communicate(timeout=300)
            results.append(subprocess.CompletedProcess([exe, *args], process.returncode, stdout, stderr))
    finally:
        for process in started:
            process.kill()  # a no-op once it exited; stops the others when a wait failed
    return results


def test_serve_reports_every_config_error_on_one_line_each_and_exits_non_zero(
    tmp_path: Path, gsm8k_file: Path
) -> None:
    good = write_config(tmp_path / "good.toml", "good", gsm8k_file)
    no_problems = write_config(tmp_path / "nofile.toml", "nofile", tmp_path / "missing.jsonl")
    bad_model = tmp_path / "badmodel.toml"
    bad_model.write_text(f'[problems]\npath = "{gsm8k_file}"\n[model]\npath = "{tmp_path / "no-model"}"\n')
    result, dry, no_server = cli_at_once(
        ("serve", str(good), str(no_problems), str(bad_model), "--cron", "61 * * * *"),
        ("serve", str(good), "--cron", "*/30 * * * *", "--dry-run"),
        ("serve", str(good)),
        cwd=tmp_path,
    )
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: bad cron schedule '61 * * * *': Invalid cron string: \"61 * * * *\"",
        f"error: {no_problems}: problem file not found: {tmp_path / 'missing.jsonl'} "
        "(set problems.path or --problems)",
        f"error: {bad_model}: model.path not found: {tmp_path / 'no-model'} "
        "(a local Hugging Face checkpoint directory)",
    ]

    assert dry.returncode == 0, dry.stderr
    assert f"deployment good-good: {good} on '*/30 * * * *'" in dry.stdout

    assert no_server.returncode == 2 and "prefect server start" in no_server.stderr


def test_engine_tasks_carry_the_tag_the_concurrency_limit_is_set_on() -> None:
    from prm_factory.flows.tasks import ENGINE_TAG, rollouts_task, sample_task, start_engine_task

    assert ENGINE_TAG == "prm-engine"
    assert all(ENGINE_TAG in t.tags for t in (start_engine_task, sample_task, rollouts_task))
