"""The engine start's retry policy: a config or checkpoint error fails at once, a transient one is retried."""

from __future__ import annotations

import pytest
from prefect.states import Failed

import prm_factory.flows.tasks as tasks
from prm_factory.sampling.model_prep import ModelPrepError
from prm_factory.sampling.vllm_sampler import EngineSettings


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError("model checkpoint not found: /nowhere"),
        ModelPrepError("no weight files (*.safetensors, *.bin) in /broken"),
        ValueError("Model architectures ['NoSuch'] are not supported"),
        ModuleNotFoundError("No module named 'vllm'"),
    ],
)
def test_a_config_or_checkpoint_error_is_not_retried(error: Exception) -> None:
    assert tasks.retry_transient(tasks.start_engine_task, None, Failed(data=error)) is False


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("Engine core initialization failed. See root cause above."),
        TimeoutError("engine did not answer"),
        ConnectionError("engine process gone"),
        MemoryError(),
    ],
)
def test_a_transient_error_is_retried(error: Exception) -> None:
    assert tasks.retry_transient(tasks.start_engine_task, None, Failed(data=error)) is True


@pytest.mark.parametrize(("error", "tries"), [(FileNotFoundError("gone"), 1), (RuntimeError("crashed"), 3)])
def test_the_start_engine_task_tries_once_on_a_missing_checkpoint_and_three_times_on_a_crash(
    error: Exception,
    tries: int,
    prefect_server: None,
    no_retry_delays: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through Prefect's task engine (retries=2): the condition is what decides, not only its unit test."""
    from prefect import flow

    calls: list[EngineSettings] = []

    def failing_start(settings: EngineSettings) -> None:
        calls.append(settings)
        raise error

    monkeypatch.setattr(tasks, "get_sampler", failing_start)

    @flow
    def start() -> str:
        return tasks.start_engine_task(EngineSettings(checkpoint="/nowhere", model_id="m"))

    with pytest.raises(type(error)):
        start()
    assert len(calls) == tries
