"""Peak memory of `prm-factory train` as the dataset grows: the streamed trainer against the in-memory one.

SYNTHETIC DATA: N steps (10 k, 100 k and 1 M by default) in chains of 4 steps and problems of 4 chains, with
tiny texts ("What is 17 + 3?", "Step 2: 17 + 2 = 19.") and verifier verdicts wrong from a random step on in
half the chains. The records are committed with the storage layer (`Dataset.commit_run`, as
tests/storage/conftest.py's `make_run` records are), in runs of at most 100 k steps, under a temp dir.

Each trial is its own process (this script with `--trial`), so one trial's memory is not the next one's
floor. It trains a tiny randomly initialised model (a 2-layer Llama, hidden size 64, with the embedded
model's tokenizer: compute is not the point) on the verifier labels for `--steps` optimiser steps of batch 4,
then evaluates the held-out problems (20 %) and writes the checkpoint, as `prm-factory train --max-steps`
does. Reported per trial: the kernel's high-water mark of its resident memory (`VmHWM` of
/proc/self/status, read as the trial ends; not `ru_maxrss`, which after fork and exec keeps the forking
parent's high-water mark, and this script's parent holds the records it committed), and the peak of the
summed RSS of the trial and its children (DataLoader workers; sampled every 50 ms with psutil, when psutil is
installed), with the rows, the held-out steps and the seconds.

- streamed: the trainer as `prm-factory train --dataset` runs it now (training.chain_source.DatasetRows:
  partitions of about 16 k steps, training/stream.py).
- in-memory (the natural baseline): `training/trainer.py` as it was before streaming (BASELINE_COMMIT, read
  with `git show`, so it needs the repository's history), fed `rows_from_dataset`'s list, which is what
  `prm-factory train` did. It is skipped above `--baseline-max-steps` (memory on a shared machine).

The figure to read is the ratio of the peak at the largest size to the peak at the smallest: about 1 when
memory stays flat.

    python bench/bench_train_memory.py                               # 10k, 100k, 1M; baseline up to 100k
    python bench/bench_train_memory.py --sizes 10000 100000 --baseline-max-steps 100000 --json out.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "5be17de4ff1dd1f06df294b5ca7e7b8059ea9981"
"""main just before the trainer streamed: its training/trainer.py is the in-memory trainer."""
STEPS_PER_CHAIN, CHAINS_PER_PROBLEM = 4, 4
RUN_STEPS = 100_000
MODES = ("streamed", "in-memory")


def _records(first_problem: int, n_problems: int, run_id: str, seed: int) -> tuple[list, list, list]:
    """Problems, chains and steps of one run (tiny texts; half the chains wrong from a random step on)."""
    from prm_factory.schemas.ids import content_id
    from prm_factory.schemas.records import Chain, Problem, Step
    from prm_factory.schemas.step_labels import StepLabel, mc_label

    draw = random.Random(seed)
    problems, chains, steps = [], [], []
    for p in range(first_problem, first_problem + n_problems):
        text = f"What is {p} + {STEPS_PER_CHAIN - 1}?"
        problem_id = content_id("bench", text)
        problems.append(Problem(problem_id, "bench", "math", text, reference_answer=str(p + 3)))
        for c in range(CHAINS_PER_PROBLEM):
            chain_id = content_id("chain", problem_id, "bench-model", c)
            first_error = draw.randrange(STEPS_PER_CHAIN) if c % 2 else None
            chains.append(
                Chain(
                    chain_id=chain_id,
                    problem_id=problem_id,
                    run_id=run_id,
                    model="bench-model",
                    sampling="{}",
                    seed=0,
                    sample_index=c,
                    prompt=text,
                    text="",
                    n_tokens=40,
                    finish_reason="stop",
                    final_answer=None,
                    outcome="incorrect" if first_error is not None else "correct",
                    outcome_reason="",
                    outcome_evidence="{}",
                    n_steps=STEPS_PER_CHAIN,
                    first_errors={} if first_error is None else {"verifier": first_error, "mc": first_error},
                )
            )
            for s in range(STEPS_PER_CHAIN):
                wrong = first_error is not None and s >= first_error
                steps.append(
                    Step(
                        step_id=content_id("step", chain_id, s),
                        chain_id=chain_id,
                        problem_id=problem_id,
                        run_id=run_id,
                        step_index=s,
                        text=f"Step {s}: {p} + {s} = {p + s + (1 if wrong else 0)}.",
                        char_start=0,
                        char_end=0,
                        consensus="negative" if wrong else "positive",
                        labels_agree=True,
                        first_error=first_error == s,
                        model="bench-model",
                        labels=(
                            StepLabel("verifier", "incorrect" if wrong else "correct", labeler="sympy@1"),
                            mc_label(
                                not wrong,
                                0.0 if wrong else 1.0,
                                {"value_source": "rollouts", "n_rollouts": 4, "n_correct": 0 if wrong else 4},
                                "mc@bench-model",
                            ),
                        ),
                        label_config_hash="bench",
                    )
                )
    return problems, chains, steps


def build_dataset(root: Path, n_steps: int) -> float:
    """Commit about `n_steps` steps in runs of at most RUN_STEPS; returns the seconds it took."""
    from prm_factory.schemas.ids import content_id
    from prm_factory.schemas.records import RunInfo
    from prm_factory.storage.dataset import Dataset

    started = time.perf_counter()
    dataset = Dataset(str(root))
    per_problem = STEPS_PER_CHAIN * CHAINS_PER_PROBLEM
    total = n_steps // per_problem
    per_run = RUN_STEPS // per_problem
    for index, first in enumerate(range(0, total, per_run)):
        count = min(per_run, total - first)
        run_id = content_id("bench-run", n_steps, index)
        problems, chains, steps = _records(first, count, run_id, seed=index)
        run = RunInfo(
            run_id=run_id,
            started_at="",
            ended_at="",
            status="succeeded",
            error="",
            config="{}",
            config_hash=run_id,
            git_commit="",
            package_versions="{}",
            model="bench-model",
            model_weights_hash="",
            verifier_versions="{}",
            counts="{}",
            stage_seconds="{}",
            n_problems=len(problems),
            n_chains=len(chains),
            n_steps=len(steps),
            n_rejected=0,
            chain_accuracy=0.5,
            rollout_tokens=0,
        )
        dataset.commit_run(run, problems, chains, steps, [])
    return time.perf_counter() - started


def build_model(folder: Path) -> Path:
    """A 2-layer Llama token classifier, hidden size 64, random weights, with the embedded tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForTokenClassification

    from prm_factory.sampling.model_prep import prepare_default_model

    tokenizer = AutoTokenizer.from_pretrained(prepare_default_model())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_labels=2,
        pad_token_id=tokenizer.eos_token_id,
    )
    LlamaForTokenClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def baseline_trainer(folder: Path) -> Any:
    """training/trainer.py at BASELINE_COMMIT, imported as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:training/trainer.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = folder / "baseline_trainer.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_trainer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_trainer"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def trial(mode: str, root: str, model: Path, out: Path, steps: int) -> dict[str, Any]:
    """One training run in this process (`--trial`); what it measured, as a dict."""
    import torch

    from prm_factory.storage.dataset import Dataset

    torch.set_num_threads(1)
    store = Dataset(root)
    settings_fields = dict(
        base_model=model,
        output_dir=out,
        separator=" ки\n",
        max_length=128,
        max_steps=steps,
        batch_size=4,
        learning_rate=1e-3,
        held_out=0.2,
    )
    started = time.perf_counter()
    if mode == "streamed":
        from prm_factory.training.chain_source import DatasetRows
        from prm_factory.training.trainer import Provenance, TrainSettings, train

        rows: Any = DatasetRows(store, None, "verifier")
    else:
        from prm_factory.training.rows import rows_from_dataset

        module = baseline_trainer(out.parent)
        Provenance, TrainSettings, train = module.Provenance, module.TrainSettings, module.train  # noqa: N806
        rows = rows_from_dataset(store, None, "verifier")
    result = train(rows, TrainSettings(**settings_fields), Provenance(root, None, "verifier"))
    seconds = time.perf_counter() - started
    held = result.evaluations[-1][1] if result.evaluations else None
    return {
        "mode": mode,
        "maxrss_mib": high_water_mib(),
        "children_maxrss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "seconds": seconds,
        "train_rows": result.n_train,
        "held_out_rows": result.n_held_out,
        "held_out_steps": held.n_steps if held else 0,
        "global_step": result.global_step,
        "partitions": getattr(rows, "partitions", 1),
    }


def high_water_mib() -> float:
    """This process's peak resident memory since its exec, in MiB: `VmHWM` where /proc has it (Linux), else
    `ru_maxrss` (which on Linux would include the forking parent's peak: module docstring)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    divisor = 2**20 if sys.platform == "darwin" else 1024  # bytes on macOS, kB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / divisor


def _tree_rss(process: Any) -> int:
    """RSS of a process and all its children (psutil), in bytes."""
    import psutil

    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.Error:  # a child that just ended has no memory left to count
            continue
    return total


def run_trial(mode: str, root: Path, model: Path, out: Path, steps: int) -> dict[str, Any]:
    """A trial in a fresh process, its summed tree RSS sampled while it runs."""
    command = [sys.executable, __file__, "--trial", mode, str(root), str(model), str(out), str(steps)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]
    try:
        import psutil

        watched = psutil.Process(child.pid)

        def sample() -> None:
            while child.poll() is None:
                try:
                    peak[0] = max(peak[0], _tree_rss(watched))
                except psutil.Error:
                    return
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    except ImportError:
        sampler = None
    stdout, stderr = child.communicate()
    if sampler is not None:
        sampler.join()
    if child.returncode != 0:
        raise RuntimeError(f"{mode} trial failed ({child.returncode}):\n{stderr[-4000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["tree_peak_mib"] = peak[0] / 2**20 if peak[0] else None
    return result


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                flags = Path("/proc/cpuinfo").read_text()
                simd = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "no AVX2"
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores, {simd}"
    except OSError:
        pass
    return "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--steps", type=int, default=20, help="optimiser steps per trial (batch 4)")
    parser.add_argument(
        "--baseline-max-steps", type=int, default=100_000, help="in-memory trainer up to here"
    )
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--keep", type=Path, default=None, help="build the datasets here and keep them")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--trial", nargs=5, metavar=("MODE", "ROOT", "MODEL", "OUT", "STEPS"))
    args = parser.parse_args()
    if args.trial:
        mode, root, model, out, steps = args.trial
        print(json.dumps(trial(mode, root, Path(model), Path(out), int(steps))))
        return

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = args.keep or Path(tempfile.mkdtemp(prefix="prm-bench-train-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{cpu_name()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; work dir {work}")
    model = build_model(work / "model") if not (work / "model" / "config.json").exists() else work / "model"
    results: list[dict[str, Any]] = []
    try:
        for size in args.sizes:
            root = work / f"ds-{size}"
            if not (root / "runs").exists():
                print(f"{size:>9,} steps: committing ... ", end="", flush=True)
                print(f"{build_dataset(root, size):.1f} s", flush=True)
            for mode in args.modes:
                if mode == "in-memory" and size > args.baseline_max_steps:
                    print(
                        f"{size:>9,} steps: {mode} skipped (--baseline-max-steps {args.baseline_max_steps:,})"
                    )
                    continue
                out = work / f"out-{mode}-{size}"
                shutil.rmtree(out, ignore_errors=True)
                found = {"size": size, **run_trial(mode, root, model, out, args.steps)}
                results.append(found)
                tree = found["tree_peak_mib"]
                print(
                    f"{size:>9,} steps: {mode:<9} peak RSS {found['maxrss_mib']:7.1f} MiB"
                    f" (with children, sampled: {'n/a' if tree is None else f'{tree:.1f}'} MiB);"
                    f" {found['train_rows']:,} train / {found['held_out_rows']:,} held-out chains"
                    f" ({found['held_out_steps']:,} steps), {found['partitions']} partition(s),"
                    f" {found['global_step']} steps, {found['seconds']:.0f} s",
                    flush=True,
                )
        for mode in args.modes:
            peaks = {r["size"]: r["maxrss_mib"] for r in results if r["mode"] == mode}
            if len(peaks) > 1:
                low, high = min(peaks), max(peaks)
                print(
                    f"{mode}: peak RSS at {high:,} / at {low:,} steps = {peaks[high]:.1f} / {peaks[low]:.1f}"
                    f" MiB = {peaks[high] / peaks[low]:.2f}x"
                )
        for size in args.sizes:
            pair = {r["mode"]: r["maxrss_mib"] for r in results if r["size"] == size}
            if len(pair) == 2:
                print(
                    f"{size:,} steps: in-memory / streamed peak RSS = "
                    f"{pair['in-memory'] / pair['streamed']:.2f}x"
                )
    finally:
        if args.json:
            args.json.write_text(json.dumps({"cpu": cpu_name(), "results": results}, indent=2))
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
