"""Stop dockerd in the middle of a code run and bring it back: the run succeeds with the same verdicts.

Both runs verify the same chains: the interrupted run finds the first run's samples in its stage cache
(the keys are content hashes, independent of the dataset root), so chain outcomes and step verdicts,
which depend only on the chains and the tests, must match exactly. MC values come from fresh rollouts
and are not compared. The engine stops as soon as the run's first sandbox container exists (sandbox
containers stop on SIGKILL, so dockerd is down within a second or two), and the sandbox's own log proves
that jobs lost their containers.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from pathlib import Path

import docker
import pytest

from prm_factory.flows.resume import CACHE_DIR

pytestmark = [pytest.mark.engine, pytest.mark.docker, pytest.mark.slow]

# The first run draws few rollouts; the engine wait outlasts any dockerd restart.
FIRST_RUN = {"sandbox.engine_wait_seconds": 120, "rollouts.k": 1, "rollouts.max_steps": 1}
# The interrupted run draws more rollouts (each graded in the sandbox), so its sandbox work is still going
# on when dockerd stops; rollouts do not change outcomes or verdicts, so labels still match.
LONG_ROLLOUTS = {"rollouts.k": 4, "rollouts.max_steps": 4}


def _labels(summary) -> tuple[list, list]:
    """Chain outcomes and step verdicts in the dataset version the run committed."""
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    dataset = Dataset(summary.dataset_root)
    chains = query(dataset, "SELECT chain_id, outcome, outcome_reason FROM chains", version=summary.version)
    steps = query(
        dataset, "SELECT chain_id, step_index, verdict, verdict_reason FROM steps", version=summary.version
    )
    return sorted(map(tuple, map(dict.values, chains.to_pylist()))), sorted(
        map(tuple, map(dict.values, steps.to_pylist()))
    )


def _restart_when_sandbox_starts(dockerd, stopped: threading.Event, errors: list[BaseException]) -> None:
    """Wait for the run's first sandbox container, then stop dockerd and start it again."""
    from prm_factory.verifiers.code.sandbox import LABEL

    try:
        client = docker.from_env()
        deadline = time.monotonic() + 600
        while not client.containers.list(filters={"label": LABEL}):
            if time.monotonic() > deadline:
                raise TimeoutError("the run never started a sandbox container")
            time.sleep(0.1)
        client.close()
        dockerd.stop()
        stopped.set()
        dockerd.start()
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)


def test_code_run_survives_a_dockerd_restart(engine, dockerd, code_config, tmp_path: Path, caplog) -> None:
    from prm_factory.flows.generation_run import generation_run

    first = generation_run(code_config(tmp_path / "first", **FIRST_RUN))
    assert first.status == "succeeded", first.error

    second_root = tmp_path / "second"
    (second_root / CACHE_DIR).mkdir(parents=True)
    samples = list((tmp_path / "first" / CACHE_DIR).glob("sample-*"))
    assert len(samples) == 1
    shutil.copy(samples[0], second_root / CACHE_DIR / samples[0].name)

    stopped = threading.Event()
    errors: list[BaseException] = []
    restarter = threading.Thread(target=_restart_when_sandbox_starts, args=(dockerd, stopped, errors))
    restarter.start()
    with caplog.at_level(logging.WARNING, logger="prm_factory.verifiers.code.sandbox"):
        second = generation_run(code_config(second_root, **(FIRST_RUN | LONG_ROLLOUTS)))
    restarter.join(timeout=300)

    assert not errors, errors
    assert stopped.is_set()
    assert second.status == "succeeded", second.error
    assert second.cached_stages == ["sample"]
    messages = [r.getMessage() for r in caplog.records]
    lost = [m for m in messages if "lost its container" in m or "unusable" in m]
    assert lost, "dockerd stopped without any sandbox job noticing: the restart missed the run"
    assert _labels(second) == _labels(first)
