"""The vLLM offline engine behind the Sampler protocol: the same code on the CPU build and on GPUs."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sampling.protocol import Generation, GenerationParams


@dataclass(frozen=True)
class EngineSettings:
    checkpoint: str
    model_id: str
    seed: int = 0
    max_model_len: int = 2048
    dtype: str = "bfloat16"
    enforce_eager: bool = False
    enable_prefix_caching: bool = True
    cpu_kv_cache_gib: int = 1
    gpu_memory_utilization: float = 0.85
    # "vllm": this process's offline engine; "openai": a fleet of OpenAI-compatible servers (vllm serve)
    backend: str = "vllm"
    base_urls: tuple[str, ...] = ()
    served_model_name: str | None = None


def _on_cpu() -> bool:
    try:
        import torch

        return not torch.cuda.is_available()
    except ImportError:
        return True


class VLLMSampler:
    """One offline `vllm.LLM` per process. Seeds the engine, not the requests: the CPU build crashes on
    per-request seeds once prompts are prefilled in chunks, so the engine seed is what a run records."""

    def __init__(self, settings: EngineSettings) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(settings.cpu_kv_cache_gib))
        from vllm import LLM

        self.settings = settings
        self.model_id = settings.model_id
        self.seed = settings.seed
        kwargs: dict = {}
        if not _on_cpu():
            kwargs["gpu_memory_utilization"] = settings.gpu_memory_utilization
        self._llm = LLM(
            model=settings.checkpoint,
            seed=settings.seed,
            max_model_len=settings.max_model_len,
            dtype=settings.dtype,
            enforce_eager=settings.enforce_eager,
            enable_prefix_caching=settings.enable_prefix_caching,
            disable_log_stats=False,  # keeps the Prometheus counters that prefix_cache_stats reads
            **kwargs,
        )
        self._tokenizer = self._llm.get_tokenizer()
        self._lock = threading.Lock()  # the offline engine is not re-entrant across task threads
        self.engine_seconds = 0.0

    def render_chat(self, system: str | None, user: str) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        return self._tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        from vllm import SamplingParams

        if not prompts:
            return []
        sampling = SamplingParams(
            n=params.n,
            temperature=params.temperature,
            top_p=params.top_p,
            max_tokens=params.max_tokens,
            stop=list(params.stop) or None,
        )
        with self._lock:
            started = time.perf_counter()
            outputs = self._llm.generate(list(prompts), sampling, use_tqdm=False)
            self.engine_seconds += time.perf_counter() - started
        return [
            [
                Generation(
                    o.text,
                    len(o.token_ids),
                    o.finish_reason or "",
                    o.stop_reason if isinstance(o.stop_reason, str) else None,
                )
                for o in request.outputs
            ]
            for request in outputs
        ]

    def prefix_cache_totals(self) -> tuple[int, int]:
        """(queried tokens, hit tokens) of the engine's prefix cache since start; diff two readings to get
        the hit rate of one stage (rollouts share their chain's prefix, so this is the reuse they got).
        The counters are named without `_total` in vLLM's in-process snapshot."""
        queries = hits = 0
        for metric in self._llm.get_metrics():
            if metric.name in ("vllm:prefix_cache_queries", "vllm:prefix_cache_queries_total"):
                queries += int(getattr(metric, "value", 0))
            elif metric.name in ("vllm:prefix_cache_hits", "vllm:prefix_cache_hits_total"):
                hits += int(getattr(metric, "value", 0))
        return queries, hits

    def close(self) -> None:
        """Stop the engine's worker processes now, rather than at interpreter exit (when logging is gone)."""
        engine = getattr(self._llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()


_ENGINES: dict[EngineSettings, VLLMSampler] = {}
_ENGINES_LOCK = threading.Lock()


def get_sampler(settings: EngineSettings) -> VLLMSampler:
    """The process's engine for these settings, started on first use (starting one takes a minute or two)."""
    with _ENGINES_LOCK:
        if settings not in _ENGINES:
            if _ENGINES:
                raise RuntimeError(
                    "one vLLM engine per process: already running " + str(next(iter(_ENGINES)))
                )
            if not Path(settings.checkpoint).exists():
                raise FileNotFoundError(f"model checkpoint not found: {settings.checkpoint}")
            _ENGINES[settings] = VLLMSampler(settings)
        return _ENGINES[settings]


def is_running(settings: EngineSettings) -> bool:
    """Whether this process already holds the engine for these settings: a caller that finds one running
    (a test session's shared engine) did not start it and must not drop it."""
    with _ENGINES_LOCK:
        return settings in _ENGINES


def drop_sampler(settings: EngineSettings) -> None:
    """Forget a (possibly dead) engine so the next `get_sampler` starts a fresh one."""
    with _ENGINES_LOCK:
        engine = _ENGINES.pop(settings, None)
    if engine is not None:
        engine.close()
