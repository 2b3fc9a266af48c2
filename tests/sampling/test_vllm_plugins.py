"""sampling.vllm_plugins: the shared-memory queue busy loop, set only when asked (the top-p shortcut's
tests are in test_cpu_top_p.py)."""

from __future__ import annotations

import pytest

from sampling.vllm_plugins import CPU_TOP_P_ENV, SHM_BUSY_LOOP_ENV, register, shm_busy_loop_s


def test_the_busy_loop_setting_is_read_from_the_environment_and_a_bad_value_is_named() -> None:
    assert shm_busy_loop_s({}) is None and shm_busy_loop_s({SHM_BUSY_LOOP_ENV: " "}) is None
    assert shm_busy_loop_s({SHM_BUSY_LOOP_ENV: "0.25"}) == 0.25
    for bad in ("-1", "soon", "nan"):
        with pytest.raises(ValueError, match=SHM_BUSY_LOOP_ENV):
            shm_busy_loop_s({SHM_BUSY_LOOP_ENV: bad})


def test_readers_sleep_at_once_when_asked_and_spin_as_vllm_ships_otherwise(monkeypatch) -> None:
    from unittest.mock import MagicMock

    from vllm.distributed.device_communicators import shm_broadcast

    condition = shm_broadcast.SpinCondition
    monkeypatch.setattr(condition, "__init__", condition.__init__)  # restored after the test
    monkeypatch.setenv(CPU_TOP_P_ENV, "sort")  # this test installs only the busy loop
    stand_in_zmq_context = MagicMock()  # sockets are vLLM's business; only the reader's setting is pinned

    def reader(**kwargs: float) -> float:
        return condition(True, stand_in_zmq_context, "ipc://unused", **kwargs).busy_loop_s

    monkeypatch.delenv(SHM_BUSY_LOOP_ENV, raising=False)
    register()
    assert reader() == 1  # vLLM's own default
    monkeypatch.setenv(SHM_BUSY_LOOP_ENV, "0")
    register()
    register()  # vLLM may load plugins more than once
    assert reader() == 0
    assert reader(busy_loop_s=2.0) == 2.0  # an explicit value still wins
