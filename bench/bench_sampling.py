"""Sampling throughput: the vLLM offline engine (`VLLMSampler`) vs transformers `generate`, in one run.

Same model (the embedded SmolLM2-135M-Instruct unless `--model` is given), same chat-templated prompts,
same n, temperature, top_p and max tokens. Two workloads (issue 5 targets in brackets):

- plain: `--problems` GSM8K train questions, n chains each (vLLM >= 5x transformers);
- rollouts: the step prefixes of the GSM8K gold solutions of `--rollout-problems` questions, k rollouts from
  each prefix, all submitted together, as the rollout driver does; prefixes of one problem share the prompt
  and the earlier steps, which vLLM's prefix cache reuses and `generate` recomputes (vLLM >= 8x).

Tokens/s counts generated tokens only: for transformers each sequence up to and including its first EOS
(the padding a static batch runs on after a sequence ends is its cost, not output); for vLLM what the
engine reports per generation. Each backend gets one small untimed warm-up call first; the vLLM engine's
start (minutes on CPU with torch.compile) is reported apart and not in its tokens/s.

Cores. Both backends get `--threads` cores: transformers `torch.set_num_threads(threads)`, vLLM's worker is
bound to `threads` cores (VLLM_CPU_NUM_OF_RESERVED_CPU = cores - threads; its scheduler uses the rest).
The default is 1: on a shared, oversubscribed machine two OpenMP threads per process spin at every barrier
while the other is descheduled (seen here at load 11: 16 x 32 tokens took 27 s on one thread and did not
finish in 200 s on two), which would measure the neighbours, not the backends. On a quiet machine use
`--threads $(nproc)`. The load average before and after each phase is printed with the results.

transformers runs first, then its model is freed, then the engine starts (one engine per process).

`--engine-settings` measures the CPU engine alone under its documented settings instead (issue 13): one
small workload, each setting in a fresh subprocess (LD_PRELOAD only takes at process start), one engine at a
time (it waits while `pgrep -f EngineCore` finds another), tokens/s and the ratio to the current settings,
then the two fastest settings once more, since a shared machine makes single timings noisy. Each child checks
`/proc/<pid>/maps` of its engine processes (EngineCore, worker) for the preloaded libraries, so a setting
that did not take shows as such. Measured 2026-11-23 (2 cores shared with other agents, 4 x n=4 x 64 tokens,
best of 2 calls): current 182 tok/s; tcmalloc 0.87x, libiomp5 0.95x, both 0.91x, all cores bound 1.10x;
second round current 147 tok/s, all cores bound 0.62x. Nothing is clearly faster, so the run keeps vLLM's
own settings (libgomp preloaded by vLLM, one OpenMP thread, one core left to its scheduler).

    python bench/bench_sampling.py                         # defaults finish in a few minutes on 2 cores
    python bench/bench_sampling.py --problems 16 --n 8 --max-tokens 256 --json out.json
    python bench/bench_sampling.py --engine-settings       # current vs tcmalloc / libiomp5 / thread binding
    python bench/bench_sampling.py --seeding --rounds 2    # chunked prefill + engine seed vs request seeds

`--seeding` (issue 25) runs the same child processes for two CPU engines: `today`, chunked prefill on (vLLM's
default) with only the engine seeded, against `request-seeds`, chunked prefill off so that each request
carries its own seed (`sampling.vllm_sampler.seeding_plan`, the default now). `--rounds N` alternates the
settings N times and prints each round's ratio and their median (the load of a shared machine drifts).
Figures: docs/engine.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.sampling.cpu_host import descendants  # noqa: E402
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt  # noqa: E402
from prm_factory.sampling.protocol import GenerationParams  # noqa: E402
from prm_factory.schemas.gsm8k import gsm8k_solution_steps, load_gsm8k  # noqa: E402

PLAIN_TARGET = 5.0
ROLLOUT_TARGET = 8.0
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k" / "train.jsonl"


@dataclass(frozen=True)
class Workload:
    name: str
    prompts: list[str]
    params: GenerationParams
    description: str


@dataclass(frozen=True)
class Timing:
    backend: str
    workload: str
    sequences: int
    tokens: int
    seconds: float
    load_before: float
    load_after: float

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def load_avg() -> float:
    return os.getloadavg()[0]


def render(tokenizer, question: str) -> str:
    messages = [
        {"role": "system", "content": MATH_SYSTEM_PROMPT},
        {"role": "user", "content": math_user_prompt(question)},
    ]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def build_workloads(tokenizer, args: argparse.Namespace) -> list[Workload]:
    """The plain and the rollout workload; rollout prompts are built like `RolloutItem.rollout_prompt`."""
    needed = max(args.problems, args.rollout_offset + args.rollout_problems)
    problems = load_gsm8k(args.data, limit=needed).problems
    plain_prompts = [render(tokenizer, p.text) for p in problems[: args.problems]]
    rollout_prompts = []
    for problem in problems[args.rollout_offset : args.rollout_offset + args.rollout_problems]:
        steps = gsm8k_solution_steps(problem.reference_solution or "")
        prompt = render(tokenizer, problem.text)
        # every prefix but the full solution (its value is the outcome), as the rollout driver probes
        rollout_prompts += [prompt + "\n".join(steps[: i + 1]) + "\n" for i in range(len(steps) - 1)]
    plain = GenerationParams(n=args.n, temperature=0.7, top_p=args.top_p, max_tokens=args.max_tokens)
    rollout = GenerationParams(
        n=args.k, temperature=0.7, top_p=args.top_p, max_tokens=args.rollout_max_tokens
    )
    return [
        Workload(
            "plain",
            plain_prompts,
            plain,
            f"{len(plain_prompts)} GSM8K questions x n={args.n}, max_tokens={args.max_tokens}",
        ),
        Workload(
            "rollouts",
            rollout_prompts,
            rollout,
            f"{len(rollout_prompts)} step prefixes of {args.rollout_problems} GSM8K gold solutions "
            f"x k={args.k}, max_tokens={args.rollout_max_tokens}",
        ),
    ]


# ---------------------------------------------------------------------------------------------------------
# transformers


def _generated_tokens(sequences, prompt_len: int, eos_ids: set[int]) -> int:
    """Tokens each sequence generated up to and including its first EOS, summed."""
    total = 0
    for row in sequences[:, prompt_len:].tolist():
        count = len(row)
        for i, token in enumerate(row):
            if token in eos_ids:
                count = i + 1
                break
        total += count
    return total


def hf_generate_tokens(model, tokenizer, prompts: Sequence[str], params: GenerationParams, batch: int) -> int:
    import torch

    eos = model.generation_config.eos_token_id
    eos_ids = set(eos if isinstance(eos, list) else [eos])
    total = 0
    for start in range(0, len(prompts), batch):
        chunk = list(prompts[start : start + batch])
        # the chat template already holds the special tokens; do not add a second BOS
        encoded = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            out = model.generate(
                **encoded,
                do_sample=True,
                temperature=params.temperature,
                top_p=params.top_p,
                max_new_tokens=params.max_tokens,
                num_return_sequences=params.n,
                pad_token_id=tokenizer.pad_token_id,
            )
        total += _generated_tokens(out, encoded["input_ids"].shape[1], eos_ids)
    return total


def time_workloads(
    backend: str, workloads: list[Workload], generate: Callable[[Workload], int]
) -> list[Timing]:
    """Time `generate` (returns generated tokens) on each workload, with the load average around it."""
    timings = []
    for workload in workloads:
        before = load_avg()
        started = time.perf_counter()
        tokens = generate(workload)
        seconds = time.perf_counter() - started
        sequences = len(workload.prompts) * workload.params.n
        timings.append(Timing(backend, workload.name, sequences, tokens, seconds, before, load_avg()))
        print(f"  {backend} {workload.name}: {tokens} tokens in {seconds:.1f} s", flush=True)
    return timings


def bench_transformers(checkpoint: str, workloads: list[Workload], args: argparse.Namespace) -> list[Timing]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, padding_side="left")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=getattr(torch, args.hf_dtype)).eval()
    hf_generate_tokens(model, tokenizer, workloads[0].prompts[:1], GenerationParams(n=1, max_tokens=4), 1)
    return time_workloads(
        "transformers",
        workloads,
        lambda w: hf_generate_tokens(model, tokenizer, w.prompts, w.params, args.hf_batch),
    )


# ---------------------------------------------------------------------------------------------------------
# vLLM


def bench_vllm(
    checkpoint: str, workloads: list[Workload], args: argparse.Namespace
) -> tuple[list[Timing], float]:
    os.environ["VLLM_CPU_NUM_OF_RESERVED_CPU"] = str(max((os.cpu_count() or 1) - args.threads, 0))
    from prm_factory.sampling.vllm_sampler import EngineSettings, VLLMSampler

    started = time.perf_counter()
    sampler = VLLMSampler(
        EngineSettings(
            checkpoint=checkpoint,
            model_id=Path(checkpoint).name,
            seed=0,
            enforce_eager=args.enforce_eager,
            enable_prefix_caching=True,
        )
    )
    start_seconds = time.perf_counter() - started
    print(f"  vLLM engine started in {start_seconds:.0f} s", flush=True)
    sampler.generate(workloads[0].prompts[:1], GenerationParams(n=1, max_tokens=4))
    timings = time_workloads(
        "vllm",
        workloads,
        lambda w: sum(g.n_tokens for gens in sampler.generate(w.prompts, w.params) for g in gens),
    )
    return timings, start_seconds


# ---------------------------------------------------------------------------------------------------------
# the CPU engine's settings (--engine-settings)

START_PHASES = {
    "weights": re.compile(r"Loading weights took ([0-9.]+) s"),
    "model_load": re.compile(r"Model loading took [0-9.]+ GiB memory and ([0-9.]+) s"),
    "compile": re.compile(r"torch\.compile took ([0-9.]+) s in total"),
    "init_engine": re.compile(r"init engine \(profile, create kv cache, warmup model\) took ([0-9.]+) s"),
}
"""Where an engine start goes, as vLLM logs it (INFO lines; `init_engine` includes compile and warm-up)."""


@dataclass(frozen=True)
class EngineCandidate:
    """One way to start the CPU engine: dtype, thread binding, eager or compiled, preloaded libraries."""

    dtype: str
    threads: str = "vllm"  # sampling.cpu_host.choose_thread_env: vLLM's own binding, or all cores
    enforce_eager: bool = False
    preload: str = ""  # LD_PRELOAD of the engine's processes
    engine_args: str = "{}"  # JSON: model.engine_args of the engine
    env: str = "{}"  # JSON: extra environment of the engine's processes

    def describe(self) -> str:
        libs = ",".join(Path(p).name for p in self.preload.split(":") if p)
        return (
            f"dtype={self.dtype} threads={self.threads} {'eager' if self.enforce_eager else 'compiled'}"
            + (f" LD_PRELOAD={libs}" if libs else "")
            + (f" engine_args={self.engine_args}" if self.engine_args != "{}" else "")
            + (f" env={self.env}" if self.env != "{}" else "")
        )


def engine_candidates() -> dict[str, EngineCandidate]:
    """Setting name -> candidate. `today` is the config before `dtype = "auto"` (bfloat16, vLLM's own
    binding), `default` the config's dtype and threads compiled, `default+eager` the same eager (what a run
    starts with on a CPU without native bf16 since `enforce_eager = "auto"`); the rest vary one thing."""
    from prm_factory.config.run_config import ModelConfig
    from prm_factory.config.runtime import intel_openmp_library, tcmalloc_library

    defaults = ModelConfig()
    candidates = {
        "today": EngineCandidate("bfloat16", threads="vllm"),
        "default": EngineCandidate(defaults.dtype, threads=defaults.cpu_threads),
        "float32+all-cores": EngineCandidate("float32", threads="all"),
        "float32+eager": EngineCandidate("float32", enforce_eager=True),
        "default+eager": EngineCandidate(defaults.dtype, threads=defaults.cpu_threads, enforce_eager=True),
        # against float32+all-cores (`--baseline`): the start without vLLM's AOT compile cache (Dynamo traces
        # again, Inductor's cache gives the graphs), and the KV cache before the default became 2 GiB (a value
        # set in the environment wins over the config)
        "float32+all-cores+no-aot": EngineCandidate(
            "float32", threads="all", env=json.dumps({"VLLM_USE_AOT_COMPILE": "0"})
        ),
        "float32+all-cores+kv-1gib": EngineCandidate(
            "float32", threads="all", env=json.dumps({"VLLM_CPU_KVCACHE_SPACE": "1"})
        ),
    }
    tcmalloc, iomp = tcmalloc_library(), intel_openmp_library()
    if tcmalloc:
        candidates["float32+tcmalloc"] = EngineCandidate("float32", preload=tcmalloc)
    if tcmalloc and iomp:
        candidates["float32+tcmalloc+iomp"] = EngineCandidate("float32", preload=f"{tcmalloc}:{iomp}")
    return candidates


def seeding_candidates() -> dict[str, EngineCandidate]:
    """`--seeding` (issue 25): the CPU engine as it was (chunked prefill on, vLLM's default, so only the
    engine is seeded) against per-request seeds, which need chunked prefill off
    (`sampling.vllm_sampler.seeding_plan`); both with today's dtype and threads."""
    from prm_factory.config.run_config import ModelConfig
    from prm_factory.sampling.cpu_host import choose_thread_env, detect_host

    defaults = ModelConfig()
    host = detect_host()
    # `auto` threads read the load at each start: resolve it once so both engines bind alike
    env, _ = choose_thread_env(defaults.cpu_threads, host.cpus, os.environ, host.load)
    base = EngineCandidate(defaults.dtype, threads="all" if env else "vllm")
    return {
        "today": replace(base, engine_args=json.dumps({"enable_chunked_prefill": True})),
        "request-seeds": base,
    }


def cpu_top_p_candidates() -> dict[str, EngineCandidate]:
    """`--cpu-top-p`: vLLM's CPU sampler as it ships (top-p by a full sort of every row over the
    vocabulary at each step) against prm-factory's vLLM plugin (`sampling.cpu_top_p`: the same nucleus
    from each row's largest logits); both with the run's dtype and threads, workloads at `--top-p`."""
    from prm_factory.sampling.vllm_plugins import CPU_TOP_P_ENV

    base = seeding_candidates()["request-seeds"]
    return {
        "today": replace(base, env=json.dumps({CPU_TOP_P_ENV: "sort"})),
        "candidates": replace(base, env=json.dumps({CPU_TOP_P_ENV: "candidates"})),
    }


def shm_spin_candidates() -> dict[str, EngineCandidate]:
    """`--shm-spin`: vLLM's shared-memory queue readers as they ship (spinning 1 s after each read, so the
    EngineCore spins through each forward pass of its worker) against readers that sleep on their zmq
    notification at once (`sampling.vllm_plugins.SHM_BUSY_LOOP_ENV=0`); the run's dtype, threads, top-p."""
    from prm_factory.sampling.vllm_plugins import SHM_BUSY_LOOP_ENV

    base = seeding_candidates()["request-seeds"]
    return {
        "today": base,
        "no-spin": replace(base, env=json.dumps({SHM_BUSY_LOOP_ENV: "0"})),
        "no-spin+omp-passive": replace(
            base, env=json.dumps({SHM_BUSY_LOOP_ENV: "0", "OMP_WAIT_POLICY": "PASSIVE"})
        ),
    }


def _engine_core_pids() -> list[int]:
    found = subprocess.run(["pgrep", "-f", "EngineCore"], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found if int(pid) != os.getpid()]


def _wait_for_free_engine_slot(poll_s: float = 5.0) -> None:
    """Only one vLLM engine at a time on this machine: wait while another one runs."""
    announced = False
    while _engine_core_pids():
        if not announced:
            print("  waiting for another EngineCore to finish ...", flush=True)
            announced = True
        time.sleep(poll_s)


def _engine_maps() -> dict[str, bool]:
    """Which libraries of interest the engine processes under this one (EngineCore, worker) have mapped."""
    names = ("libtcmalloc", "libiomp5", "libgomp")
    loaded = dict.fromkeys(names, False)
    for pid in descendants(os.getpid()):
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        for name in names:
            loaded[name] = loaded[name] or name in maps
    return loaded


def engine_child(checkpoint: str, args: argparse.Namespace) -> dict:
    """One engine start under this process's environment, then both workloads; a JSON-able dict."""
    from transformers import AutoTokenizer

    from prm_factory.sampling.vllm_sampler import EngineSettings, VLLMSampler

    workloads = build_workloads(AutoTokenizer.from_pretrained(checkpoint), args)
    started = time.perf_counter()
    sampler = VLLMSampler(
        EngineSettings(
            checkpoint=checkpoint,
            model_id=Path(checkpoint).name,
            seed=0,
            dtype=args.engine_dtype,
            cpu_threads=args.engine_threads,
            enforce_eager=args.enforce_eager,
            engine_args=tuple(
                sorted((k, json.dumps(v)) for k, v in json.loads(args.engine_args_json).items())
            ),
        )
    )
    start_seconds = time.perf_counter() - started
    loaded = _engine_maps()
    sampler.generate(workloads[0].prompts[:1], GenerationParams(n=1, max_tokens=4))
    results: dict[str, dict] = {}
    for workload in workloads:
        best = None
        for _ in range(args.engine_reps):
            before = load_avg()
            started = time.perf_counter()
            tokens = sum(
                g.n_tokens for gens in sampler.generate(workload.prompts, workload.params) for g in gens
            )
            seconds = time.perf_counter() - started
            if best is None or tokens / seconds > best["tokens_per_s"]:
                best = {
                    "tokens": tokens,
                    "seconds": seconds,
                    "tokens_per_s": tokens / seconds,
                    "load_before": before,
                    "load_after": load_avg(),
                }
        results[workload.name] = best or {}
    sampler.close()
    return {
        "start_seconds": start_seconds,
        "loaded": loaded,
        "seed_mode": sampler.seed_mode,
        "workloads": results,
    }


def start_phases(log_text: str) -> dict[str, float]:
    """Seconds of each START_PHASES entry found in one engine's log (absent phases are left out)."""
    found = {}
    for name, pattern in START_PHASES.items():
        match = pattern.search(log_text)
        if match:
            found[name] = float(match.group(1))
    return found


def _run_setting(
    name: str, candidate: EngineCandidate, checkpoint: str, args: argparse.Namespace, log: Path
) -> dict:
    child_env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)}
    if candidate.preload:
        child_env["LD_PRELOAD"] = candidate.preload
    child_env["VLLM_LOGGING_LEVEL"] = "INFO"  # the start phases are INFO lines
    child_env.update(json.loads(candidate.env))
    with (
        tempfile.NamedTemporaryFile(suffix=".json") as out,
        tempfile.NamedTemporaryFile(suffix=".log") as own,
    ):
        command = [
            sys.executable,
            __file__,
            "--engine-child",
            out.name,
            "--model",
            checkpoint,
            "--data",
            str(args.data),
            "--problems",
            str(args.problems),
            "--n",
            str(args.n),
            "--max-tokens",
            str(args.max_tokens),
            "--rollout-problems",
            str(args.rollout_problems),
            "--rollout-offset",
            str(args.rollout_offset),
            "--k",
            str(args.k),
            "--rollout-max-tokens",
            str(args.rollout_max_tokens),
            "--engine-reps",
            str(args.engine_reps),
            "--top-p",
            str(args.top_p),
            "--engine-dtype",
            candidate.dtype,
            "--engine-threads",
            candidate.threads,
            "--engine-args-json",
            candidate.engine_args,
            *(["--enforce-eager"] if candidate.enforce_eager else []),
        ]
        _wait_for_free_engine_slot()
        done = subprocess.run(command, env=child_env, stdout=own, stderr=subprocess.STDOUT)
        engine_log = Path(own.name).read_text(errors="replace")
        with log.open("a") as sink:
            sink.write(f"\n===== {name}: {candidate.describe()}\n{engine_log}")
        text = Path(out.name).read_text()
    if done.returncode != 0 or not text:
        return {"name": name, "setting": candidate.describe(), "error": f"exit {done.returncode}, see {log}"}
    result = json.loads(text)
    return {"name": name, "setting": candidate.describe(), "phases": start_phases(engine_log), **result}


def _setting_line(row: dict, baseline: dict | None) -> str:
    if "error" in row:
        return f"  {row['name']:22} failed: {row['error']}"
    cells = []
    for workload, timing in row["workloads"].items():
        base = (baseline or {}).get("workloads", {}).get(workload, {}).get("tokens_per_s")
        ratio = timing["tokens_per_s"] / base if base else float("nan")
        cells.append(f"{workload} {timing['tokens_per_s']:>6.1f} tok/s {ratio:>5.2f}x")
    phases = " ".join(f"{k} {v:.0f}" for k, v in row.get("phases", {}).items())
    libs = ",".join(k for k, v in row["loaded"].items() if v) or "-"
    libs += f"  seeds: {row.get('seed_mode', '?')}"
    load = max((t["load_after"] for t in row["workloads"].values()), default=0.0)
    return (
        f"  {row['name']:22} {' | '.join(cells)}  start {row['start_seconds']:>4.0f} s ({phases})  "
        f"load<={load:.1f}  maps: {libs}"
    )


def _print_round_ratios(rows: list[dict], baseline: str = "today") -> None:
    """Each setting's tokens/s over the baseline's of the same round, and the median over rounds."""
    import statistics

    for name in dict.fromkeys(r["name"] for r in rows if r["name"] != baseline):
        for workload in ("plain", "rollouts"):
            ratios = []
            for row in rows:
                base = next((b for b in rows if b["name"] == baseline and b["round"] == row["round"]), None)
                if row["name"] != name or base is None or "error" in row or "error" in base:
                    continue
                ratios.append(
                    row["workloads"][workload]["tokens_per_s"] / base["workloads"][workload]["tokens_per_s"]
                )
            if ratios:
                cells = " ".join(f"{r:.2f}x" for r in ratios)
                print(f"  {name} / {baseline}, {workload}: {cells} (median {statistics.median(ratios):.2f}x)")


def bench_engine_settings(checkpoint: str, args: argparse.Namespace) -> dict:
    """Every candidate once, in a fresh process each, ratios against `today` of the same run."""
    from prm_factory.sampling.cpu_host import SIMD_FLAGS, detect_host

    log = Path(args.engine_log or tempfile.mkstemp(prefix="bench-engine-settings-", suffix=".log")[1])
    if args.cpu_top_p:
        candidates = cpu_top_p_candidates()
    elif args.shm_spin:
        candidates = shm_spin_candidates()
    else:
        candidates = seeding_candidates() if args.seeding else engine_candidates()
    if args.only:
        candidates = {k: v for k, v in candidates.items() if k in {args.baseline, *args.only.split(",")}}
    host = detect_host()
    flags = [f for f in SIMD_FLAGS if f in host.flags]
    print(f"CPU: {host.model_name}; cores {list(host.cpus)}; flags {' '.join(flags) or '(none of interest)'}")
    print(f"engine output in {log}", flush=True)
    print(
        f"workloads: {args.problems} GSM8K questions x n={args.n} x {args.max_tokens} tokens; rollouts from "
        f"the gold-solution prefixes of {args.rollout_problems} questions x k={args.k} x "
        f"{args.rollout_max_tokens} tokens; best of {args.engine_reps}",
        flush=True,
    )
    rows: list[dict] = []
    for round_ in range(args.rounds):  # alternate the settings: a shared machine's load drifts
        for name, candidate in candidates.items():
            print(f"  {name}: {candidate.describe()} ...", flush=True)
            row = {**_run_setting(name, candidate, checkpoint, args, log), "round": round_}
            rows.append(row)
            baseline = next(
                (r for r in rows if r["name"] == args.baseline and r["round"] == round_ and "error" not in r),
                None,
            )
            print(_setting_line(row, baseline), flush=True)
    _print_round_ratios(rows, args.baseline)
    return {
        "cpu_model": host.model_name,
        "cpu_flags": flags,
        "cpus": list(host.cpus),
        "args": vars(args),
        "rows": rows,
    }


# ---------------------------------------------------------------------------------------------------------


def report(workloads: list[Workload], hf: list[Timing], vllm: list[Timing], start_s: float, args) -> dict:
    targets = {"plain": PLAIN_TARGET, "rollouts": ROLLOUT_TARGET}
    rows = []
    print()
    print(f"== sampling throughput on {os.cpu_count()} CPU cores; model {args.model or 'embedded default'}")
    print(
        f"   transformers dtype {args.hf_dtype}, batch {args.hf_batch} prompts; vLLM bf16, "
        f"{'eager' if args.enforce_eager else 'compiled'}, prefix caching on; {args.threads} thread(s) each, "
        f"engine start {start_s:.0f} s (not counted)"
    )
    header = f"{'workload':10} {'seqs':>5} {'hf tok':>7} {'hf tok/s':>9} {'vllm tok':>8} {'vllm tok/s':>10}"
    print(header + f" {'ratio':>6}  target  load (hf / vllm)")
    for workload, h, v in zip(workloads, hf, vllm, strict=True):
        ratio = v.tokens_per_s / h.tokens_per_s if h.tokens_per_s else float("nan")
        target = targets[workload.name]
        verdict = "met" if ratio >= target else "NOT met"
        print(
            f"{workload.name:10} {h.sequences:>5} {h.tokens:>7} {h.tokens_per_s:>9.1f} {v.tokens:>8} "
            f"{v.tokens_per_s:>10.1f} {ratio:>5.1f}x  >={target:.0f}x {verdict}"
            f"  {h.load_before:.1f}->{h.load_after:.1f} / {v.load_before:.1f}->{v.load_after:.1f}"
        )
        print(f"{'':10} {workload.description}")
        rows.append(
            {
                "workload": workload.name,
                "description": workload.description,
                "params": workload.params.to_dict(),
                "transformers": {**asdict(h), "tokens_per_s": h.tokens_per_s},
                "vllm": {**asdict(v), "tokens_per_s": v.tokens_per_s},
                "ratio": ratio,
                "target": target,
                "met": ratio >= target,
            }
        )
    return {"cpu_count": os.cpu_count(), "vllm_start_seconds": start_s, "args": vars(args), "workloads": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="HF checkpoint dir (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="GSM8K jsonl")
    # 8 x n=8 = 64 sequences per call: between the demo run's 16 and the hundreds a real config sends,
    # and short enough to finish in minutes on 2 cores
    parser.add_argument("--problems", type=int, default=8, help="plain workload: questions")
    parser.add_argument("--n", type=int, default=8, help="plain workload: chains per question")
    parser.add_argument("--max-tokens", type=int, default=128, help="plain workload: max new tokens")
    parser.add_argument("--rollout-problems", type=int, default=6, help="rollout workload: gold solutions")
    parser.add_argument("--rollout-offset", type=int, default=100, help="first GSM8K row of rollout workload")
    parser.add_argument("--k", type=int, default=4, help="rollout workload: rollouts per prefix")
    parser.add_argument("--rollout-max-tokens", type=int, default=48, help="rollout workload: max new tokens")
    parser.add_argument("--hf-dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--hf-batch", type=int, default=64, help="prompts per transformers generate call")
    parser.add_argument("--enforce-eager", action="store_true", help="vLLM without torch.compile")
    parser.add_argument("--threads", type=int, default=1, help="cores per backend (see the docstring)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--engine-settings", action="store_true", help="CPU engine settings only (issue 13)")
    parser.add_argument(
        "--seeding",
        action="store_true",
        help="CPU engine: chunked prefill + engine seed vs per-request seeds (issue 25)",
    )
    parser.add_argument(
        "--cpu-top-p",
        action="store_true",
        help="CPU engine: vLLM's sort-based top-p vs the plugin's (issue 23); workloads at --top-p 0.95",
    )
    parser.add_argument(
        "--shm-spin",
        action="store_true",
        help="CPU engine: vLLM's spinning shared-memory queue readers vs sleeping ones (top-p 0.95)",
    )
    parser.add_argument(
        "--top-p", type=float, help="workloads' top_p (default 1.0; 0.95, the run's, with --cpu-top-p)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="--engine-settings/--seeding/--cpu-top-p: repeat, alternating"
    )
    parser.add_argument("--engine-reps", type=int, default=2, help="timed workload calls per engine start")
    parser.add_argument("--engine-log", help="file for the engine's own output (default: a temp file)")
    parser.add_argument("--engine-child", metavar="OUT", help=argparse.SUPPRESS)
    parser.add_argument("--engine-dtype", default="bfloat16", help=argparse.SUPPRESS)
    parser.add_argument("--engine-threads", default="vllm", help=argparse.SUPPRESS)
    parser.add_argument("--engine-args-json", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--only", help="these candidates (comma-separated) and the baseline")
    parser.add_argument("--baseline", default="today", help="the candidate the ratios are taken against")
    args = parser.parse_args(argv)
    if args.top_p is None:
        args.top_p = 0.95 if args.cpu_top_p or args.shm_spin else 1.0

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    if args.model:
        checkpoint = args.model
    else:
        from prm_factory.sampling.model_prep import prepare_default_model

        checkpoint = str(prepare_default_model())
    if args.engine_child:
        Path(args.engine_child).write_text(json.dumps(engine_child(checkpoint, args)))
        return 0
    if args.engine_settings or args.seeding or args.cpu_top_p or args.shm_spin:
        result = bench_engine_settings(checkpoint, args)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2, default=str))
        return 0
    workloads = build_workloads(AutoTokenizer.from_pretrained(checkpoint), args)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    for workload in workloads:
        print(f"  {workload.name}: {workload.description}", flush=True)
    hf = bench_transformers(checkpoint, workloads, args)
    gc.collect()  # the transformers model goes before the vLLM engine starts
    vllm, start_s = bench_vllm(checkpoint, workloads, args)
    result = report(workloads, hf, vllm, start_s, args)
    print(f"load average at end: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
