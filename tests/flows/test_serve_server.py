"""Against a real `prefect server start`: the deployments `serve` registers carry the cron schedule and
the config, the engine/sandbox tag limits exist, a triggered run executes under `prm-factory serve`, and
a cron schedule fires on its own (server with its scheduler service on)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from prm_factory.config.run_config import RunConfig, load_config
from prm_factory.flows.serve import ServedConfig, build_deployments, ensure_tag_limits

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def prefect_server_process(
    tmp_path: Path, *, services: bool, env: dict[str, str] | None = None
) -> Iterator[str]:
    """`prefect server start` on a free port with its own home; yields the API URL."""
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect-home"), **(env or {})}
    env.pop("PREFECT_API_URL", None)
    prefect = str(Path(sys.executable).with_name("prefect"))
    command = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(
        command + ([] if services else ["--no-services"]),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, "prefect server start exited"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass  # not listening yet
            assert time.monotonic() < deadline, "prefect server did not start in 180 s"
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real API server for this module's tests (a start takes about 25 s on a loaded 2-core machine),
    with its background services and a scheduler that looks every 5 s, so a cron schedule fires on time.
    Each test registers deployments of its own names; the tag limits every test sets are the same."""
    fast_scheduler = {"PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "5"}
    with prefect_server_process(tmp_path_factory.mktemp("server"), services=True, env=fast_scheduler) as url:
        yield url


@dataclass
class Serving:
    """A running `prm-factory serve` subprocess and its log."""

    process: subprocess.Popen
    log: Path

    def assert_alive(self) -> None:
        assert self.process.poll() is None, self.tail()

    def tail(self) -> str:
        return self.log.read_text()[-3000:]


@contextmanager
def serving(
    config: Path, cron: str, api_url: str, tmp_path: Path, **env: str
) -> Iterator[tuple[Serving, Any]]:
    """`prm-factory serve CONFIG --cron CRON` against `api_url`, with a sync Prefect client on that server;
    the serve process group is stopped on exit."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    exe = str(Path(sys.executable).with_name("prm-factory"))
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [exe, "serve", str(config), "--cron", cron],
            env={**os.environ, "PREFECT_API_URL": api_url, "COLUMNS": "200", **env},
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            with (
                temporary_settings(updates={PREFECT_API_URL: api_url}),
                get_client(sync_client=True) as client,
            ):
                yield Serving(process, log_path), client
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def test_deployments_registered_on_a_real_server_keep_schedule_parameters_and_limits(
    real_server: str, tmp_path: Path, gsm8k_file: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    config_file = tmp_path / "hourly.toml"
    config_file.write_text(f'name = "gsm8k"\n[problems]\npath = "{gsm8k_file}"\nskip_labeled = true\n')
    served = ServedConfig(config_file, load_config(config_file))
    with temporary_settings(updates={PREFECT_API_URL: real_server}):
        (deployment,) = build_deployments([served], "0 * * * *")
        deployment_id = deployment.apply()
        limits = ensure_tag_limits(engine_slots=1, sandbox_slots=2)
        with get_client(sync_client=True) as client:
            stored = client.read_deployment(deployment_id)
            engine_limit = client.read_concurrency_limit_by_tag("prm-engine")
    assert stored.name == "gsm8k-hourly"
    assert [s.schedule.cron for s in stored.schedules] == ["0 * * * *"]
    assert stored.parameters["config"]["problems"]["skip_labeled"] is True
    assert RunConfig.model_validate(stored.parameters["config"]) == served.config
    assert limits == {"prm-engine": 1, "prm-sandbox": 2} and engine_limit.concurrency_limit == 1


def test_a_served_config_runs_when_triggered_and_a_failed_run_is_failed_in_prefect(
    real_server: str, tmp_path: Path, gsm8k_file: Path
) -> None:
    """`prm-factory serve` end to end without an engine: the run fails in its model stage (a checkpoint
    with no weights), records itself in the runs table, and its Prefect flow run is Failed."""
    import json

    from prefect.exceptions import ObjectNotFound

    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    model = tmp_path / "no-weights"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    config = tmp_path / "served.toml"
    config.write_text(
        f'name = "served"\n[problems]\npath = "{gsm8k_file}"\nlimit = 1\n[model]\npath = "{model}"\n'
        f'[dataset]\nroot = "{tmp_path / "ds"}"\n'
    )
    with serving(config, "0 0 1 1 *", real_server, tmp_path) as (served, client):
        deadline = time.monotonic() + 180
        while True:
            served.assert_alive()
            try:
                deployment = client.read_deployment_by_name("prm-generation-run/served-served")
                break
            except ObjectNotFound as err:  # until serve has registered it
                assert time.monotonic() < deadline, f"deployment never registered: {err}"
                time.sleep(0.5)
        flow_run = client.create_flow_run_from_deployment(deployment.id)
        deadline = time.monotonic() + 300
        while not (state := client.read_flow_run(flow_run.id).state) or not state.is_final():
            assert time.monotonic() < deadline, served.tail()
            time.sleep(0.5)
    assert state.is_failed(), state
    assert "failed in stage model" in (state.message or "")
    runs = query(Dataset(str(tmp_path / "ds")), "SELECT status, error FROM runs").to_pylist()
    assert len(runs) == 1 and runs[0]["status"] == "failed" and "no weight files" in runs[0]["error"]


def test_a_cron_schedule_fires_a_run_that_serve_executes(real_server: str, tmp_path: Path) -> None:
    """`prm-factory serve --cron "* * * * *"` against a server whose scheduler runs: the scheduler creates
    a flow run on its own (auto_scheduled) for the next minute, and the served runner executes it to
    Completed. The problem file holds only a bad row, so the run needs no engine: it loads, rejects the
    row (recorded in the dataset) and commits a succeeded run.

    The scheduler's run is moved to start now instead of at the next minute boundary (0-60 s away, 30 s on
    average, which this test spent waiting): the same run, created by the cron schedule, taken and run by
    the served runner; only its start time is not waited for."""
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.states import Scheduled

    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    problems = tmp_path / "bad.jsonl"
    problems.write_text('{"question": "a row with no answer field"}\n')
    config = tmp_path / "every-minute.toml"
    config.write_text(
        f'name = "cron"\n[problems]\npath = "{problems}"\nlimit = 1\n[dataset]\nroot = "{tmp_path / "ds"}"\n'
    )
    with serving(config, "* * * * *", real_server, tmp_path, PREFECT_RUNNER_POLL_FREQUENCY="2") as (
        served,
        client,
    ):
        only_ours = DeploymentFilter(name=DeploymentFilterName(any_=["cron-every-minute"]))
        deadline = time.monotonic() + 240  # serve's start + scheduler loop + run (+ a minute if not moved)
        run = None
        while run is None or run.state is None or not run.state.is_final():
            served.assert_alive()
            assert time.monotonic() < deadline, served.tail()
            time.sleep(1)
            if run is not None:
                run = client.read_flow_run(run.id)
                continue
            runs = client.read_flow_runs(deployment_filter=only_ours)
            if not runs:
                continue
            run = min(runs, key=lambda r: r.expected_start_time or r.created)  # the first the schedule made
            due = run.state.state_details.scheduled_time if run.state and run.state.is_scheduled() else None
            if due is not None and due > datetime.now(UTC) + timedelta(seconds=15):
                # past the runner's 10 s prefetch, so no runner has taken it yet: it may move
                client.set_flow_run_state(run.id, Scheduled(scheduled_time=datetime.now(UTC)), force=True)
                print(f"the cron run moved {(due - datetime.now(UTC)).total_seconds():.0f} s earlier")
    assert run.auto_scheduled, "the run was not created by the cron schedule"
    assert run.state is not None and run.state.is_completed(), run.state
    ds = Dataset(str(tmp_path / "ds"))
    runs_table = query(ds, "SELECT status, n_problems, n_rejected FROM runs").to_pylist()
    assert runs_table[0] == {"status": "succeeded", "n_problems": 0, "n_rejected": 1}
    assert query(ds, "SELECT field FROM rejections").to_pylist()[0]["field"] == "answer"
