"""One sampler per process, by backend: the offline vLLM engine, or a fleet of OpenAI-compatible servers.

The flow asks for `get_sampler(settings)` and never needs to know which: both implement the Sampler
protocol and `prefix_cache_totals()`. A failed sampler is dropped so a task's retry gets a fresh one.
"""

from __future__ import annotations

import threading

from prm_factory.sampling import vllm_sampler
from prm_factory.sampling.vllm_sampler import EngineSettings

_SERVER_SAMPLERS: dict[EngineSettings, object] = {}
_LOCK = threading.Lock()


def get_sampler(settings: EngineSettings):  # -> VLLMSampler | OpenAICompatibleSampler
    if settings.backend == "vllm":
        return vllm_sampler.get_sampler(settings)
    if settings.backend != "openai":
        raise ValueError(f"unknown sampler backend {settings.backend!r} (vllm | openai)")
    if not settings.base_urls:
        raise ValueError("model.backend = 'openai' needs model.base_urls (e.g. ['http://10.0.0.5:8000'])")
    from prm_factory.sampling.openai_sampler import OpenAICompatibleSampler

    with _LOCK:
        if settings not in _SERVER_SAMPLERS:
            _SERVER_SAMPLERS[settings] = OpenAICompatibleSampler(
                list(settings.base_urls),
                settings.served_model_name or settings.model_id,
                settings.checkpoint,
                seed=settings.seed,
                model_id=settings.model_id,
                request_seeds=settings.request_seeds,
            )
        return _SERVER_SAMPLERS[settings]


def is_running(settings: EngineSettings) -> bool:
    """Whether this process already holds a sampler for these settings (then its owner drops it)."""
    if settings.backend == "vllm":
        return vllm_sampler.is_running(settings)
    with _LOCK:
        return settings in _SERVER_SAMPLERS


def drop_sampler(settings: EngineSettings) -> None:
    if settings.backend == "vllm":
        vllm_sampler.drop_sampler(settings)
        return
    with _LOCK:
        sampler = _SERVER_SAMPLERS.pop(settings, None)
    if sampler is not None:
        sampler.close()  # type: ignore[attr-defined]
