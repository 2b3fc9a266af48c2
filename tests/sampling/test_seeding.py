"""Seeding of the vLLM engine: per-request seeds wherever the engine takes them, chunked prefill off on the
CPU build so that it does, an explicit engine argument winning (the engine then seeded, and the record
saying why). The draws' batch invariance on the real CPU engine is pinned in tests/e2e/test_shards.py."""

from __future__ import annotations

import json
import os
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import replace

import pytest

from prm_factory.sampling.cpu_host import CpuEngineChoice
from prm_factory.sampling.vllm_sampler import (
    MULTIPROCESSING_ENV,
    EngineSettings,
    VLLMSampler,
    engine_record,
    process_plan,
    request_seed,
    seeding_plan,
)


def settings(**engine_args: object) -> EngineSettings:
    return EngineSettings(
        checkpoint="c",
        model_id="m",
        engine_args=tuple(sorted((k, json.dumps(v)) for k, v in engine_args.items())),
    )


def test_the_cpu_build_seeds_each_request_with_chunked_prefill_off() -> None:
    plan = seeding_plan(settings(), cpu=True)
    assert (plan.mode, plan.kwargs) == ("request", {"enable_chunked_prefill": False})
    assert "chunked prefill off" in plan.reason


def test_chunked_prefill_turned_on_by_the_user_wins_and_falls_back_to_the_engine_seed() -> None:
    plan = seeding_plan(settings(enable_chunked_prefill=True), cpu=True)
    assert (plan.mode, plan.kwargs) == ("engine", {})
    assert "chunked prefill on" in plan.reason


def test_chunked_prefill_already_off_adds_nothing() -> None:
    plan = seeding_plan(settings(enable_chunked_prefill=False), cpu=True)
    assert (plan.mode, plan.kwargs) == ("request", {})


@pytest.mark.parametrize("engine_args", [{}, {"enable_chunked_prefill": True}])
def test_a_gpu_build_seeds_each_request_and_leaves_chunked_prefill_to_vllm(engine_args) -> None:
    plan = seeding_plan(settings(**engine_args), cpu=False)
    assert (plan.mode, plan.kwargs) == ("request", {})


def test_the_run_record_names_the_seed_mode_its_reason_and_the_argument_added(monkeypatch) -> None:
    monkeypatch.setattr("prm_factory.sampling.vllm_sampler.on_cpu", lambda: True)
    record = engine_record(settings(max_num_seqs=8))
    assert record["seed_mode"] == "request" and "chunked prefill" in record["seed_reason"]
    assert record["engine_args"] == {"max_num_seqs": 8, "enable_chunked_prefill": False}
    fallback = engine_record(settings(enable_chunked_prefill=True))
    assert fallback["seed_mode"] == "engine" and fallback["engine_args"] == {"enable_chunked_prefill": True}
    json.dumps(record)


def test_request_seeds_follow_the_run_seed_and_the_prompt_only() -> None:
    assert request_seed(0, "p") == request_seed(0, "p")
    assert request_seed(0, "p") != request_seed(0, "q")
    assert request_seed(0, "p") != request_seed(1, "p")
    assert 0 <= request_seed(7, "p") < 2**31


class FakeLLM:
    """Stands in for `vllm.LLM`: keeps the keyword arguments and the variables it started under."""

    started: list[tuple[dict, dict, str]] = []

    def __init__(self, **kwargs: object) -> None:
        FakeLLM.started.append((kwargs, dict(os.environ), threading.current_thread().name))

    def get_tokenizer(self) -> None:
        return None


@pytest.fixture()
def fake_vllm(monkeypatch) -> Iterator[list[tuple[dict, dict, str]]]:
    """`vllm.LLM` replaced; the variables the sampler sets for its engine are undone afterwards."""
    FakeLLM.started = []
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=FakeLLM))
    monkeypatch.setattr("prm_factory.sampling.vllm_sampler.on_cpu", lambda: True)
    monkeypatch.setattr("prm_factory.sampling.vllm_sampler._ENV_SET_HERE", set())
    saved = dict(os.environ)
    os.environ.pop(MULTIPROCESSING_ENV, None)
    try:
        yield FakeLLM.started
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_sampler_hands_vllm_chunked_prefill_off_and_seeds_each_request(fake_vllm) -> None:
    sampler = VLLMSampler(settings())
    ((kwargs, _, thread),) = fake_vllm
    assert kwargs["enable_chunked_prefill"] is False and kwargs["seed"] == 0
    assert thread == threading.current_thread().name
    assert sampler.seed_mode == "request"
    assert "distributed_executor_backend" not in kwargs  # separate processes unless asked


def test_an_inline_engine_reaches_vllm_as_one_process_and_the_uni_executor(fake_vllm) -> None:
    sampler = VLLMSampler(replace(settings(), engine_process="inline"))
    ((kwargs, environ, thread),) = fake_vllm
    assert kwargs["distributed_executor_backend"] == "uni" and environ[MULTIPROCESSING_ENV] == "0"
    assert sampler.process.mode == "inline"
    # its own thread: the OpenMP binding an inline engine makes stays off the callers' threads
    assert thread.startswith("vllm-engine") and thread != threading.current_thread().name


def test_process_plan_rules() -> None:
    inline = replace(settings(), engine_process="inline")
    assert process_plan(inline, environ={}).env == {MULTIPROCESSING_ENV: "0"}
    assert process_plan(settings(), environ={}).mode == "separate"
    # the user's variable wins either way; inline still needs the one-process executor
    user = process_plan(settings(), environ={MULTIPROCESSING_ENV: "0"})
    assert (user.mode, user.env, user.kwargs) == ("inline", {}, {"distributed_executor_backend": "uni"})
    assert process_plan(inline, environ={MULTIPROCESSING_ENV: "1"}).mode == "separate"
    given = replace(inline, engine_args=(("distributed_executor_backend", '"mp"'),))
    assert process_plan(given, environ={}).kwargs == {}
    with pytest.raises(ValueError, match="one worker"):
        process_plan(replace(inline, tensor_parallel_size=2), environ={})
    with pytest.raises(ValueError, match="engine_process"):
        process_plan(replace(settings(), engine_process="elsewhere"), environ={})


IDLE = {"VLLM_CPU_OMP_THREADS_BIND": "0-1", "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}  # every core bound by us


def test_auto_runs_inline_only_for_an_eager_float32_cpu_engine_with_every_core_bound() -> None:
    idle = CpuEngineChoice("float32", "", IDLE, eager=True)
    plan = process_plan(settings(), environ={}, choice=idle)
    assert (plan.mode, plan.env, plan.kwargs) == (
        "inline",
        {MULTIPROCESSING_ENV: "0"},
        {"distributed_executor_backend": "uni"},
    )
    assert plan.reason.startswith("auto:")
    separate = {
        "a busy host (vLLM's binding)": (settings(), {}, replace(idle, env={}), True),
        "a compiled engine": (settings(), {}, replace(idle, eager=False), True),
        "bfloat16": (settings(), {}, replace(idle, dtype="bfloat16"), True),
        "a GPU": (settings(), {}, idle, False),
        "two workers": (replace(settings(), tensor_parallel_size=2), {}, idle, True),
        "an executor named": (settings(distributed_executor_backend="mp"), {}, idle, True),
        "the user's variable": (settings(), {MULTIPROCESSING_ENV: "1"}, idle, True),
        "no host known": (settings(), {}, None, True),
    }
    for why, (engine, environ, choice, cpu) in separate.items():
        plan = process_plan(engine, environ=environ, choice=choice, cpu=cpu)
        assert (plan.mode, plan.env, plan.kwargs) == ("separate", {}, {}), why
