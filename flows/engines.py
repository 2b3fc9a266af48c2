"""Which engine a run's policy and its judge run on, from the config (`EngineSettings`)."""

from __future__ import annotations

import json
import threading

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.sources.judge import judge_settings
from prm_factory.sampling.model_prep import resolve_model
from prm_factory.sampling.vllm_sampler import EngineSettings

__all__ = ["engine_settings", "import_engine_in_background", "judge_settings"]


def engine_settings(config: RunConfig) -> EngineSettings:
    checkpoint, model_id = resolve_model(config.model.path)
    m = config.model
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=m.seed,
        max_model_len=m.max_model_len,
        dtype=m.dtype,
        cpu_threads=m.cpu_threads,
        enforce_eager=m.enforce_eager,
        engine_process=m.engine_process,
        tensor_parallel_size=m.tensor_parallel_size,
        pipeline_parallel_size=m.pipeline_parallel_size,
        data_parallel_size=m.data_parallel_size,
        quantization=m.quantization,
        max_num_seqs=m.max_num_seqs,
        max_num_batched_tokens=m.max_num_batched_tokens,
        engine_args=tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in m.engine_args.items())),
        enable_prefix_caching=m.enable_prefix_caching,
        cpu_kv_cache_gib=m.cpu_kv_cache_gib,
        gpu_memory_utilization=m.gpu_memory_utilization,
        backend=m.backend,
        base_urls=tuple(m.base_urls),
        served_model_name=m.served_model_name,
        request_seeds=m.request_seeds,
        batch_invariant=m.batch_invariant,
    )


def import_engine_in_background(config: RunConfig) -> threading.Thread | None:
    """Import vLLM on a thread while Prefect's temporary server starts (a process of its own, about 11 s on
    2 cores), so the engine start that follows skips its import (about 14 s there). Only for the offline
    backend; a run that then finds every stage cached has spent one core for that long. An import that
    fails here is left to the engine start, which reports it."""
    if config.model.backend != "vllm":
        return None
    thread = threading.Thread(target=_import_vllm, name="prm-vllm-import", daemon=True)
    thread.start()
    return thread


def _import_vllm() -> None:
    try:
        from vllm import LLM  # noqa: F401  (vllm's package import is lazy; LLM is the heavy part)
    except Exception:  # the engine start imports it again and reports the error
        return
