"""Against a real `prefect server start`: the deployments `serve` registers carry the cron schedule and
the config, and the engine/sandbox tag limits exist. (Serving itself blocks; scheduling is Prefect's.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from flows.serve import ServedConfig, build_deployments, ensure_tag_limits
from prm_factory.config import RunConfig, load_config

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def real_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect-home")}
    env.pop("PREFECT_API_URL", None)
    prefect = str(Path(sys.executable).with_name("prefect"))
    server = subprocess.Popen(
        [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-services"],
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
            time.sleep(1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=60)


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
    import signal

    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from storage.dataset import Dataset
    from storage.sql import query

    model = tmp_path / "no-weights"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    config = tmp_path / "served.toml"
    config.write_text(
        f'name = "served"\n[problems]\npath = "{gsm8k_file}"\nlimit = 1\n[model]\npath = "{model}"\n'
        f'[dataset]\nroot = "{tmp_path / "ds"}"\n'
    )
    env = {**os.environ, "PREFECT_API_URL": real_server, "COLUMNS": "200"}
    exe = str(Path(sys.executable).with_name("prm-factory"))
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [exe, "serve", str(config), "--cron", "0 0 1 1 *"],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        with (
            temporary_settings(updates={PREFECT_API_URL: real_server}),
            get_client(sync_client=True) as client,
        ):
            deadline = time.monotonic() + 180
            while True:
                assert server.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
                try:
                    deployment = client.read_deployment_by_name("prm-generation-run/served-served")
                    break
                except ObjectNotFound as err:  # until serve has registered it
                    assert time.monotonic() < deadline, f"deployment never registered: {err}"
                    time.sleep(2)
            flow_run = client.create_flow_run_from_deployment(deployment.id)
            deadline = time.monotonic() + 300
            while not (state := client.read_flow_run(flow_run.id).state) or not state.is_final():
                assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-3000:]
                time.sleep(3)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        log.close()
    assert state.is_failed(), state
    assert "failed in stage model" in (state.message or "")
    runs = query(Dataset(str(tmp_path / "ds")), "SELECT status, error FROM runs").to_pylist()
    assert len(runs) == 1 and runs[0]["status"] == "failed" and "no weight files" in runs[0]["error"]
