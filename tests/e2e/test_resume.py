"""SIGKILL mid-run, start again, compare with an uninterrupted run: the same rows, and finished stages
are not redone. Kept to one tiny comparison: one problem, two chains, two rollouts on one step prefix.

The killed run is the real CLI in a process of its own, SIGKILLed with everything it started once its
sample stage is cached. The run started again is the same CLI command in this process (its Typer app, on
the session's offline engine): what a restart meets is only what the killed process left on disk, so a
second process, which would pay a second engine start (a minute or more on 2 cores), tests nothing more.
The uninterrupted run goes on in this process too, on the same engine (separate roots and caches), beside
the killed run's engine start; every run talks to the session's Prefect server.

Each run draws on an offline engine (the killed run on its own, the others on the session's): the resumed
run's rows can be compared with the uninterrupted run's at temperature 0.7 because each of a chunk's engine
calls is one fixed batch, whatever engine and process submit it (sampling/reproducibility.py). A server
would not do: it batches concurrent runs' requests by arrival, so with shape-dependent rounding (this
suite's engines have it, tests/conftest.py; AVX-512 CPUs have it for real) the two runs' draws differed.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
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
            time.sleep(0.05)  # the run's later stages take seconds: the kill must land first
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


@pytest.fixture()
def cli_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`prm-factory run` in this process leaves it as it found it: the command quiets the `prefect` and
    `vllm` loggers once its run is over (for the interpreter's exit, in the console script) and sets
    `TQDM_DISABLE`; later tests on this worker read those loggers' lines."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TQDM_DISABLE", os.environ.get("TQDM_DISABLE", "1"))
    levels = {name: logging.getLogger(name).level for name in ("prefect", "vllm")}
    try:
        yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


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
    tmp_path: Path,
    problems_file: Path,
    prefect_server: None,
    engine,
    cli_here: None,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from typer.testing import CliRunner

    from prm_factory.cli import app
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.generation_run import generation_run
    from prm_factory.storage.dataset import Dataset

    killed_cfg = write_config(tmp_path, "killed", problems_file)
    beside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uninterrupted")
    # the flow's return value, kept in memory (`run_generation` reads it back from the final state, which a
    # Prefect server on SQLite under load once answered without its data)
    uninterrupted = beside.submit(generation_run, load_config(write_config(tmp_path, "clean", problems_file)))
    try:
        run_and_kill_after(killed_cfg, tmp_path / "killed", "sample", tmp_path)
        # done before the CLI starts here: the command points this process's descriptors at its run log
        clean = uninterrupted.result(timeout=900)
    finally:
        beside.shutdown(wait=True)
    killed = Dataset(str(tmp_path / "killed"))
    assert not killed.exists() or dataset_keys(tmp_path / "killed")["chains"] == []

    capfd.readouterr()
    caplog.clear()  # the uninterrupted run's lines
    with caplog.at_level(logging.INFO, logger="prefect"):
        resumed = CliRunner().invoke(app, ["run", "--config", str(killed_cfg)], catch_exceptions=False)
    progress = capfd.readouterr().out  # the progress lines go to the descriptor the command found
    assert resumed.exit_code == 0, resumed.output[-3000:] + progress[-3000:]
    # the run's stage events, as its log has them (a run in this process logs where pytest's capture is)
    (sample_done,) = [m for m in caplog.messages if "stage=sample event=done" in m]
    assert "cached=true" in sample_done
    assert "sample (cached)" in progress  # the CLI's progress line
    assert clean.status == "succeeded", clean.error
    assert clean.cached_stages == []
    assert clean.engine["reproducibility"]["mode"] == "fixed-batch"

    resumed_keys, clean_keys = dataset_keys(tmp_path / "killed"), dataset_keys(tmp_path / "clean")
    assert len(resumed_keys["chains"]) == 2 and resumed_keys["steps"]
    assert resumed_keys == clean_keys
