"""Which engine a run's policy and its judge run on, from the config (`EngineSettings`)."""

from __future__ import annotations

import json

from config.run_config import RunConfig
from sampling.model_prep import resolve_model
from sampling.vllm_sampler import EngineSettings


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
    )


def judge_settings(config: RunConfig, settings: EngineSettings) -> EngineSettings:
    """Where the judge runs: the run's own engine, or the OpenAI-compatible servers of `[judge]`."""
    j = config.judge
    if not j.base_urls:
        return settings
    checkpoint, model_id = (
        resolve_model(j.model_path) if j.model_path else (settings.checkpoint, settings.model_id)
    )
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=settings.seed,
        backend="openai",
        base_urls=tuple(j.base_urls),
        served_model_name=j.served_model_name,
    )
