"""SIGKILL mid-run, start again, compare with an uninterrupted run: the same rows, and finished stages
are not redone. The killed and the resumed run are the real CLI as subprocesses, kept to one tiny comparison:
one problem, two chains, two rollouts on one step prefix; the uninterrupted run goes on beside them in this
process, on the session's offline engine (separate roots and caches), and every run talks to the session's
Prefect server instead of starting a temporary one of its own.

Each run draws on an offline engine of its own process (the CLI runs start one each): the resumed run's rows
can be compared with the uninterrupted run's at temperature 0.7 because each of a chunk's engine calls is one
fixed batch (sampling/reproducibility.py). A server would not do: it batches concurrent runs' requests by
arrival, so with shape-dependent rounding (this suite's engines have it, tests/conftest.py; AVX-512 CPUs have
it for real) the two runs' draws differed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from prm_factory.flows.resume import CACHE_DIR

pytestmark = [pytest.mark.engine, pytest.mark.slow]

TINY = """
name = "resume-e2e"
[problems]
path = "{problems}"
limit = 1
[sampling]
n = 2
max_tokens = 96
temperature = 0.7
[rollouts]
k = 2
max_steps = 1
max_tokens = 64
temperature = 0.7
[dataset]
root = "{root}"
"""


def cli_command(config: Path) -> list[str]:
    return [str(Path(sys.executable).with_name("prm-factory")), "run", "--config", str(config)]


def env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "COLUMNS": "200", "PREFECT_API_URL": str(PREFECT_API_URL.value())}


def write_config(tmp_path: Path, name: str, problems: Path) -> Path:
    """The run's config: the default model, so a run in this process shares the session's offline engine."""
    path = tmp_path / f"{name}.toml"
    path.write_text(TINY.format(problems=problems, root=tmp_path / name))
    return path


def run_to_end(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return finish(start(config, cwd))


def start(config: Path, cwd: Path) -> subprocess.Popen[str]:
    """The CLI run in the background, its output in files beside the config (a pipe nobody reads while
    the test waits on another run could fill and stall it)."""
    with config.with_suffix(".out").open("w") as out, config.with_suffix(".err").open("w") as err:
        return subprocess.Popen(cli_command(config), stdout=out, stderr=err, text=True, cwd=cwd, env=env())


def finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    """Wait for a run from `start` (killing it past the limit) and read back what it printed."""
    try:
        process.wait(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
    config = Path(process.args[-1])
    out, err = (config.with_suffix(suffix).read_text() for suffix in (".out", ".err"))
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def run_and_kill_after(config: Path, root: Path, stage: str, cwd: Path) -> None:
    """Start a run in its own process group and SIGKILL the whole group once `stage` is cached."""
    process = subprocess.Popen(
        cli_command(config),
        cwd=cwd,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # whatever the run started (verifier workers) dies with it
    )
    deadline = time.monotonic() + 600
    try:
        while not list((root / CACHE_DIR).glob(f"{stage}-*")):
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, f"stage {stage} never finished"
            time.sleep(0.05)  # the run's later stages take seconds on the server: the kill must land first
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


def dataset_keys(root: Path) -> dict[str, list[str]]:
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    ds = Dataset(str(root))
    sqls = {
        "problems": "SELECT problem_id AS k FROM problems",
        "chains": "SELECT chain_id AS k FROM chains",
        "steps": "SELECT step_id AS k FROM steps",
        "rejections": "SELECT file || ':' || line || ':' || field AS k FROM rejections",
    }
    return {kind: sorted(query(ds, sql)["k"].to_pylist()) for kind, sql in sqls.items()}


def test_a_run_killed_mid_run_and_started_again_ends_like_an_uninterrupted_run(
    tmp_path: Path, problems_file: Path, prefect_server: None, engine
) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.generation_run import run_generation
    from prm_factory.storage.dataset import Dataset

    killed_cfg = write_config(tmp_path, "killed", problems_file)
    beside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uninterrupted")
    uninterrupted = beside.submit(run_generation, load_config(write_config(tmp_path, "clean", problems_file)))
    try:
        run_and_kill_after(killed_cfg, tmp_path / "killed", "sample", tmp_path)
        killed = Dataset(str(tmp_path / "killed"))
        assert not killed.exists() or dataset_keys(tmp_path / "killed")["chains"] == []

        resumed = run_to_end(killed_cfg, tmp_path)
        assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
        output = resumed.stdout + resumed.stderr
        assert "stage=sample event=done" in output and "cached=true" in output
        assert "sample (cached)" in output  # the CLI's progress line
        clean = uninterrupted.result(timeout=900)
    finally:
        beside.shutdown(wait=True)
    assert clean.status == "succeeded", clean.error
    assert clean.cached_stages == []
    assert clean.engine["reproducibility"]["mode"] == "fixed-batch"

    resumed_keys, clean_keys = dataset_keys(tmp_path / "killed"), dataset_keys(tmp_path / "clean")
    assert len(resumed_keys["chains"]) == 2 and resumed_keys["steps"]
    assert resumed_keys == clean_keys
