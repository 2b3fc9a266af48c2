"""Engine settings chosen from the host CPU, for vLLM's CPU build.

Why: the same default config ran 3x slower on an AVX2 machine than on the AVX-512 ones it was tuned on.
`bfloat16` needs the CPU's bf16 instructions (avx512_bf16 or AMX); without them oneDNN refuses the layers
("Failed to create oneDNN linear") and torch emulates bf16 matmuls in slow scalar code, so `dtype = "auto"`
picks float32 there. Threads: vLLM's auto binding reserves one core per worker for its scheduler process,
which on a 2-core machine leaves one core computing; `threads = "all"` binds the worker's OpenMP threads to
every core the process may use instead. What was chosen, and why, goes into the run's `runs` row.

The functions are pure (flags, cores and the environment come in as arguments) so the choices are tested
without the CPU they describe; `detect_host()` reads this machine.

>>> choose_dtype("auto", frozenset({"avx2"}), on_cpu=True)
('float32', 'auto: this CPU has no bf16 instructions (avx512_bf16 / amx_bf16), so bfloat16 would be emulated')
>>> choose_dtype("auto", frozenset({"avx512f", "avx512_bf16"}), on_cpu=True)[0]
'bfloat16'
>>> choose_dtype("bfloat16", frozenset({"avx2"}), on_cpu=True)[0]
'bfloat16'
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BF16_FLAGS = ("avx512_bf16", "amx_bf16")
"""CPU flags (as /proc/cpuinfo spells them) of native bf16 arithmetic, which vLLM's oneDNN kernels use."""

SIMD_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8")
"""The flags a run records, to tell which kind of machine a timing came from."""

THREAD_ENV = ("VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_NUM_OF_RESERVED_CPU", "OMP_NUM_THREADS")
"""Variables of vLLM's CPU build that place its compute threads; one set by the user wins over our choice."""

COMPILE_CACHE_ENV = {"VLLM_USE_AOT_COMPILE": "1", "TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING": "0"}
"""vLLM's AOT compile cache, which vllm-cpu 0.32 could not load on its own (every start compiled again,
143-166 s of a 186-229 s start here); `sampling.vllm_plugins` makes it load. A warm start then loads the
compiled model instead of tracing it with Dynamo again and looking the graphs up in Inductor's cache:
`init engine` took 12.5 s against 37.7 s on a 2-core AVX2 machine. Set explicitly, since vLLM's own default
depends on the torch version. The aliasing setting is torch's default outside CI, pinned because its default
follows whether `CI` is set and the cache key holds it: an engine warmed under `CI=true` was compiled again
for 2 minutes by a run without it."""


@dataclass(frozen=True)
class HostCpu:
    """What the engine choice needs to know about the machine."""

    flags: frozenset[str]
    cpus: tuple[int, ...]  # the cores this process may run on (sched_getaffinity)
    model_name: str = ""
    load: float = 0.0  # busy cores (threads = "auto"): the 1-minute load average, or now where lower


@dataclass(frozen=True)
class CpuEngineChoice:
    """dtype and process environment for the engine, each with the reason it was chosen."""

    dtype: str
    dtype_reason: str
    env: Mapping[str, str] = field(default_factory=dict)
    threads_reason: str = ""
    host: HostCpu | None = None
    eager: bool = False
    eager_reason: str = ""

    @property
    def binds_every_core(self) -> bool:
        """Whether the engine's OpenMP threads get every usable core and none is reserved: the "all" of
        `choose_thread_env`, which `auto` picks on an idle host (not vLLM's binding, nor one the user set)."""
        return "VLLM_CPU_OMP_THREADS_BIND" in self.env and self.env.get("VLLM_CPU_NUM_OF_RESERVED_CPU") == "0"

    def as_record(self) -> dict[str, object]:
        """The JSON-able form the runs table and the summary keep."""
        host = self.host
        return {
            "dtype": self.dtype,
            "dtype_reason": self.dtype_reason,
            "env": dict(sorted(self.env.items())),
            "threads_reason": self.threads_reason,
            "enforce_eager": self.eager,
            "eager_reason": self.eager_reason,
            "cpu_model": host.model_name if host else "",
            "cpu_flags": sorted(f for f in SIMD_FLAGS if host and f in host.flags),
            "cpus": list(host.cpus) if host else [],
        }


def on_cpu() -> bool:
    """Whether engines here run on the CPU (no CUDA device torch can see, or no torch at all)."""
    try:
        import torch

        return not torch.cuda.is_available()
    except ImportError:
        return True


def parse_cpuinfo(text: str) -> tuple[frozenset[str], str]:
    """(flags, model name) of the first processor in a /proc/cpuinfo text; empty when it has none."""
    flags: frozenset[str] = frozenset()
    model = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "flags" and not flags:
            flags = frozenset(value.split())
        elif key == "model name" and not model:
            model = value.strip()
        if flags and model:
            break
    return flags, model


def detect_host(cpuinfo: Path = Path("/proc/cpuinfo")) -> HostCpu:
    """This machine's CPU flags and usable cores (no flags off Linux: the choice then stays conservative)."""
    try:
        flags, model = parse_cpuinfo(cpuinfo.read_text(errors="replace"))
    except OSError:
        flags, model = frozenset(), ""
    try:
        cpus = tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = tuple(range(os.cpu_count() or 1))
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    if load > len(cpus) - 1:
        # the one-minute load average lags: right after a burst (setup's engine warm-up) it still reads busy
        # on a machine that is idle now, so a busy host is one whose load is high over the minute AND now
        # (this process and its children left out: a run's own start is not other work); sampled only
        # here, the one case where it can change `auto`'s choice (choose_thread_env)
        now = busy_cores(exclude_tree=os.getpid())
        load = load if now is None else min(load, now)
    return HostCpu(flags, cpus, model, load)


def _cpu_times(stat: Path) -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat's first line, or None where it cannot be read."""
    try:
        fields = [int(v) for v in stat.read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _process_table(proc: Path) -> dict[int, tuple[int, int]] | None:
    """pid -> (parent pid, user + system jiffies) for every live process in `proc`; None off Linux."""
    try:
        entries = list(proc.glob("[0-9]*/stat"))
    except OSError:
        return None
    table: dict[int, tuple[int, int]] = {}
    for stat in entries:
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # the name may hold spaces and brackets
            table[int(stat.parent.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
        except (OSError, ValueError, IndexError):
            continue  # a process that exited while being read
    return table


def _subtree(root: int, table: Mapping[int, tuple[int, int]]) -> list[int]:
    """`root`'s descendants in `table`, from a children map built once."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def descendants(root: int, proc: Path = Path("/proc")) -> list[int]:
    """Every live process below `root` (a vLLM EngineCore and its worker); empty off Linux."""
    return _subtree(root, _process_table(proc) or {})


def tree_jiffies(root: int, proc: Path = Path("/proc")) -> int | None:
    """CPU jiffies (user + system) that process `root` and its live descendants have used; None off Linux."""
    table = _process_table(proc)
    if table is None or root not in table:
        return None
    return sum(table[pid][1] for pid in [root, *_subtree(root, table)])


def busy_cores(
    window_s: float = 0.3, stat: Path = Path("/proc/stat"), *, exclude_tree: int | None = None
) -> float | None:
    """Cores busy right now, from two /proc/stat readings `window_s` apart; None off Linux.

    `exclude_tree` (a pid) leaves out what that process and its children used meanwhile: a run asks about
    other work, and its own start (Prefect's server, the vLLM import) had made an idle host read busy.
    """
    first, own_first = _cpu_times(stat), _own(exclude_tree)
    time.sleep(window_s)
    second, own_second = _cpu_times(stat), _own(exclude_tree)
    if first is None or second is None or second[1] <= first[1]:
        return None
    busy = second[0] - first[0]
    if own_first is not None and own_second is not None:
        busy = max(0, busy - max(0, own_second - own_first))  # a child that exited meanwhile: not counted
    share = busy / (second[1] - first[1])
    return round(share * (os.cpu_count() or 1), 2)


def _own(root: int | None) -> int | None:
    return None if root is None else tree_jiffies(root)


def choose_dtype(requested: str, flags: frozenset[str], *, on_cpu: bool) -> tuple[str, str]:
    """(dtype for vLLM, why). An explicit dtype always wins; `auto` on a GPU is left to vLLM (the
    checkpoint's dtype), on a CPU it is bfloat16 only where the CPU computes bf16 natively."""
    if requested != "auto":
        return requested, "set in the config"
    if not on_cpu:
        return "auto", "auto: vLLM takes the checkpoint's dtype on the GPU"
    native = [f for f in BF16_FLAGS if f in flags]
    if native:
        return "bfloat16", f"auto: this CPU has native bf16 ({', '.join(native)})"
    return "float32", (
        "auto: this CPU has no bf16 instructions (avx512_bf16 / amx_bf16), so bfloat16 would be emulated"
    )


def choose_eager(requested: bool | str, dtype: str, *, on_cpu: bool) -> tuple[bool, str]:
    """(run the model eagerly, why). An explicit true or false always wins. `auto` is eager on a CPU that
    computes in float32 (no native bf16): on a 2-core AVX2 machine (2026-11-30, idle,
    `bench_sampling --engine-settings --only default+eager`, two rounds) eager generated as fast as the
    compiled model (plain 1.01x, rollouts 0.97x / 1.12x) and started 28-32 s against 41-53 s, with nothing
    for `setup.sh` to compile. README command 1 there, run for run, generated within about 10 % either way
    (the same 20,639 rollout tokens) and always started sooner eager; compiled with a cold cache, the start
    took 167 s. Compiled everywhere else: on a GPU (CUDA graphs) and on bf16 CPUs (eager not measured).

    >>> choose_eager("auto", "float32", on_cpu=True)[0], choose_eager("auto", "bfloat16", on_cpu=True)[0]
    (True, False)
    """
    if isinstance(requested, bool):
        return requested, "set in the config"
    if requested != "auto":
        raise ValueError(f"enforce_eager must be true, false or 'auto', got {requested!r}")
    if not on_cpu:
        return False, "auto: compiled on the GPU (CUDA graphs)"
    if dtype == "float32":
        return True, "auto: float32 on this CPU, where eager generated about as fast and starts sooner"
    return False, f"auto: compiled for {dtype} on this CPU"


def choose_thread_env(
    threads: str, cpus: Sequence[int], environ: Mapping[str, str], load: float = 0.0
) -> tuple[dict, str]:
    """(variables for the engine's processes, why).

    `threads = "vllm"` keeps vLLM's own binding (one core per worker reserved for its scheduler).
    `threads = "all"` binds the worker's OpenMP threads to every usable core and reserves none: on a machine
    of few cores the scheduler process mostly waits on the worker, so the reserved core would sit idle.
    `threads = "auto"` is "all" on a machine that is otherwise idle (1-minute load average at most one core
    busy) and "vllm" on a busy one: measured on 2 cores, all cores gave 1.7x vLLM's binding when idle and a
    third of it beside other work (OpenMP threads wait at every barrier for a descheduled sibling).
    Any of THREAD_ENV already set by the user is left as it is and nothing is added.

    >>> choose_thread_env("auto", (0, 1), {}, load=0.3)[0]["VLLM_CPU_OMP_THREADS_BIND"]
    '0-1'
    >>> choose_thread_env("auto", (0, 1), {}, load=5.2)
    ({}, "vLLM's own binding (auto: load average 5.2 > 1 of 2 cores busy)")
    """
    given = sorted(k for k in THREAD_ENV if k in environ)
    if given:
        return {}, f"set by the user: {', '.join(given)}"
    if threads == "auto" and len(cpus) >= 2:
        if load > len(cpus) - 1:
            return (
                {},
                f"vLLM's own binding (auto: load average {load:.1f} > {len(cpus) - 1} of "
                f"{len(cpus)} cores busy)",
            )
        env, reason = choose_thread_env("all", cpus, environ)
        return env, f"{reason} (auto: load average {load:.1f})"
    if threads == "vllm" or len(cpus) < 2:
        return {}, "vLLM's own binding" + (" (one usable core)" if len(cpus) < 2 else "")
    if threads not in ("all", "auto"):
        raise ValueError(f"threads must be 'auto', 'all' or 'vllm', got {threads!r}")
    return {
        "VLLM_CPU_OMP_THREADS_BIND": _cpu_list(cpus),
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    }, f"all {len(cpus)} usable cores bound to the worker's OpenMP threads, none reserved"


def _cpu_list(cpus: Sequence[int]) -> str:
    """'0-3,6' for [0, 1, 2, 3, 6]: the form VLLM_CPU_OMP_THREADS_BIND reads."""
    parts: list[str] = []
    ordered = sorted(set(cpus))
    start = prev = ordered[0]
    for cpu in ordered[1:] + [None]:  # type: ignore[list-item]
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return ",".join(parts)


def choose_cpu_engine(
    requested_dtype: str,
    threads: str,
    host: HostCpu,
    environ: Mapping[str, str],
    *,
    on_cpu: bool,
    eager: bool | str = False,
) -> CpuEngineChoice:
    """Every host-dependent engine setting in one record; off the CPU only the dtype and eager rules apply."""
    dtype, dtype_reason = choose_dtype(requested_dtype, host.flags, on_cpu=on_cpu)
    run_eager, eager_reason = choose_eager(eager, dtype, on_cpu=on_cpu)
    if not on_cpu:
        return CpuEngineChoice(
            dtype, dtype_reason, {}, "GPU: no CPU thread binding", host, run_eager, eager_reason
        )
    env, threads_reason = choose_thread_env(threads, host.cpus, environ, host.load)
    env |= {k: v for k, v in COMPILE_CACHE_ENV.items() if k not in environ}
    return CpuEngineChoice(dtype, dtype_reason, env, threads_reason, host, run_eager, eager_reason)
