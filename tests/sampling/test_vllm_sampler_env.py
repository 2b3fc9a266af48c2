"""sampling.vllm_sampler: the environment an engine needs is held for its life only (issue 45). After
`close()` (or a start that fails) the caller's process has its own variables back, so a vLLM engine the
caller starts later gets none of the factory's settings or patches. A stand-in `vllm.LLM` keeps this off
the engine."""

from __future__ import annotations

import os
import sys
import types

import pytest

from prm_factory.sampling import vllm_sampler
from prm_factory.sampling.vllm_plugins import ENGINE_MARKER_ENV

WATCHED = (ENGINE_MARKER_ENV, "HF_HUB_OFFLINE", "VLLM_USE_AOT_COMPILE", "VLLM_CPU_KVCACHE_SPACE")


class FakeLLM:
    fail = False

    def __init__(self, **kwargs) -> None:
        if FakeLLM.fail:
            raise RuntimeError("no engine today")

    def get_tokenizer(self):
        return None


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(vllm_sampler, "clean_before_engine_start", lambda: None)
    for key in WATCHED:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "7")  # the caller's own value survives
    FakeLLM.fail = False
    return module


def test_close_gives_the_caller_its_environment_back(fake_vllm) -> None:
    before = {key: os.environ.get(key) for key in WATCHED}
    sampler = vllm_sampler.VLLMSampler(vllm_sampler.EngineSettings("ckpt", "m", engine_process="inline"))
    assert os.environ[ENGINE_MARKER_ENV] == "1" and os.environ["HF_HUB_OFFLINE"] == "1"  # while it lives
    assert os.environ["VLLM_CPU_KVCACHE_SPACE"] == "7"
    sampler.close()
    assert {key: os.environ.get(key) for key in WATCHED} == before
    assert not vllm_sampler._ENV_SET_HERE & set(WATCHED)


def test_an_engine_that_fails_to_start_leaves_nothing_behind(fake_vllm) -> None:
    FakeLLM.fail = True
    before = {key: os.environ.get(key) for key in WATCHED}
    with pytest.raises(RuntimeError, match="no engine today"):
        vllm_sampler.VLLMSampler(vllm_sampler.EngineSettings("ckpt", "m", engine_process="inline"))
    assert {key: os.environ.get(key) for key in WATCHED} == before
