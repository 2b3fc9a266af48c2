"""What a run promises about drawing the same tokens again, per backend and device, with the reason.

Per-request seeds fix a request's random stream, not its logits: on kernels whose rounding follows the
batch's shape (bf16/AMX and AVX-512 GEMMs on CPUs, split-K GEMMs on GPUs) a request's tokens change with what
shares its forward passes. So the promise is made by construction, where it can be kept:

- `batch-invariant`: vLLM's batch-invariant kernels are on (`VLLM_BATCH_INVARIANT=1`, CUDA devices of compute
  capability 8.0 or more): a request draws the same tokens whatever shares its batch.
- `fixed-batch`: the offline engine with per-request seeds. A chunk's requests reach the engine as one batch,
  in one canonical order, with an empty prefix cache (`vllm_sampler.submit_as_one_batch`), and chunks are cut
  by a stable key (flows/resume.py) that shards take whole; so a single run, a shard, a resumed chunk and a
  rerun submit byte-identical batches, and draw the same tokens wherever the `numerics` recorded here match
  and the kernels are deterministic for a fixed batch.
- `none`: OpenAI-compatible servers (they batch requests from every client by arrival time) and engines that
  seed only at start (each draw depends on every call before it). Nothing is promised.

>>> decide(backend="openai", seed_mode="request", batch_invariant=False).mode
'none'
>>> decide(backend="vllm", seed_mode="request", batch_invariant=False).mode
'fixed-batch'
>>> decide(backend="vllm", seed_mode="request", batch_invariant=True).mode
'batch-invariant'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BATCH_INVARIANT_ENV = "VLLM_BATCH_INVARIANT"
MIN_CAPABILITY = (8, 0)
"""vLLM 0.32's batch-invariant kernels: CUDA (Ampere, Hopper, Blackwell) and ROCm, not the CPU build."""

MODES = ("batch-invariant", "fixed-batch", "none")


@dataclass(frozen=True)
class Reproducibility:
    """The promise (`mode`), why, and the settings two runs must share for it to hold (`numerics`)."""

    mode: str
    reason: str
    numerics: Mapping[str, Any] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return {"mode": self.mode, "reason": self.reason, "numerics": dict(sorted(self.numerics.items()))}


def decide(
    *, backend: str, seed_mode: str, batch_invariant: bool, numerics: Mapping[str, Any] | None = None
) -> Reproducibility:
    """The promise a run can make (see the module docstring)."""
    numerics = dict(numerics or {})
    if backend != "vllm":
        return Reproducibility(
            "none",
            "OpenAI-compatible servers batch the requests of every client by arrival time, so a request's "
            "tokens depend on what shares its batch; per-request seeds fix only its random stream",
        )
    if seed_mode != "request":
        return Reproducibility(
            "none",
            "the engine is seeded once at start (chunked prefill on the CPU build), so each draw depends on "
            "every engine call before it",
            numerics,
        )
    if batch_invariant:
        return Reproducibility(
            "batch-invariant",
            f"vLLM's batch-invariant kernels ({BATCH_INVARIANT_ENV}=1): a request's tokens do not depend on "
            "what shares its batch",
            numerics,
        )
    return Reproducibility(
        "fixed-batch",
        "each chunk reaches the engine as one batch in one canonical order with an empty prefix cache, and "
        "shards take whole chunks: a rerun, a resumed chunk or a shard draws the same tokens where these "
        "numerics match; a request alone or in another batch may not (kernels round by the batch's shape)",
        numerics,
    )


def batch_invariant_choice(
    requested: str, *, capability: tuple[int, int] | None, environ: Mapping[str, str] = os.environ
) -> tuple[bool, str]:
    """(turn vLLM's batch-invariant mode on, why). `capability` is the CUDA device's (None: a CPU engine).

    >>> batch_invariant_choice("auto", capability=(9, 0), environ={})
    (True, 'auto: CUDA compute capability 9.0 >= 8.0')
    >>> batch_invariant_choice("auto", capability=None, environ={})[0]
    False
    >>> batch_invariant_choice("off", capability=(9, 0), environ={})
    (False, 'set in the config')
    """
    supported = capability is not None and capability >= MIN_CAPABILITY
    given = environ.get(BATCH_INVARIANT_ENV)
    if given is not None:
        on = given.strip() not in ("", "0")
        if on and not supported:
            return (
                False,
                f"{BATCH_INVARIANT_ENV}={given} set by the user, but vLLM has no batch-invariant kernels "
                "here",
            )
        return on, f"{BATCH_INVARIANT_ENV}={given} set by the user"
    if requested == "off":
        return False, "set in the config"
    if requested == "on":
        if not supported:
            where = "a CPU" if capability is None else f"compute capability {capability[0]}.{capability[1]}"
            raise ValueError(
                f"model.batch_invariant = 'on' needs a CUDA device of compute capability "
                f"{MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]} or more (vLLM's batch-invariant kernels); this "
                f"engine runs on {where}"
            )
        return True, "set in the config"
    if requested != "auto":
        raise ValueError(f"batch_invariant must be 'auto', 'on' or 'off', got {requested!r}")
    if capability is None:
        return False, "auto: vLLM has no batch-invariant kernels for the CPU"
    if not supported:
        return False, f"auto: CUDA compute capability {capability[0]}.{capability[1]} < 8.0"
    return True, f"auto: CUDA compute capability {capability[0]}.{capability[1]} >= 8.0"


def cuda_capability() -> tuple[int, int] | None:
    """The first CUDA device's compute capability, or None where torch sees none."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability(0)
        return int(major), int(minor)
    except (ImportError, RuntimeError):
        return None
