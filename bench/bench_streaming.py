"""Streaming runs: wall seconds per problem and peak RSS of the whole process tree, by run size.

A run that keeps every chain and step until one write at the end grows its memory with its size; a
streaming run stages each chunk's rows and keeps at most a chunk in memory. This bench runs the real
`prm-factory run` (a subprocess, exactly what users and schedules start) on synthetic problems with
binary-search rollouts and tiny budgets, at several sizes, each into a fresh dataset root, and samples the
resident memory of the CLI process and all its descendants (the vLLM engine core, Prefect's server) every
0.2 s. It prints per size: wall seconds, seconds per problem, peak tree RSS; then the ratios of the largest
size against the middle one (issue 13 target: both within 1.2x between 64 and 256 problems).

The engine start (a fixed cost of a minute or so) is part of every run's wall time, so seconds per problem
falls with size; the ratio that matters is between the two larger sizes.

    python bench/bench_streaming.py                          # 4, 64, 256 problems
    python bench/bench_streaming.py --sizes 4 32 128 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.2

# Tiny budgets: the bench measures how cost grows with the number of problems, not label quality.
SETTINGS = {
    "problems.source": "synthetic",
    "problems.synthetic.count": 5000,
    "sampling.n": 2,
    "sampling.max_tokens": 64,
    "rollouts.strategy": "binary_search",
    "rollouts.k": 2,
    "rollouts.max_tokens": 48,
    "rollouts.max_steps": 4,
    "resume.chunk_problems": 16,
}


@dataclass(frozen=True)
class Measurement:
    problems: int
    status: int
    wall_seconds: float
    seconds_per_problem: float
    peak_tree_rss_mib: float


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of `process` and every descendant (vanished processes count 0)."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def measure(command: list[str], log: Path) -> tuple[int, float, float]:
    """Run `command` from the repository root, output to `log`; its exit status, wall seconds and the peak
    RSS (MiB) of its process tree, sampled every POLL_SECONDS (bench/bench_label_memory.py uses it too)."""
    peak = 0
    started = time.perf_counter()
    with log.open("w") as out:
        child = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        watched = psutil.Process(child.pid)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                try:
                    peak = max(peak, tree_rss(watched))
                except psutil.NoSuchProcess:
                    return
                done.wait(POLL_SECONDS)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        status = child.wait()
        done.set()
        sampler.join()
    return status, time.perf_counter() - started, peak / 2**20


def run_once(problems: int, root: Path, log: Path) -> Measurement:
    """One `prm-factory run` of `problems` problems into `root`, sampled for peak tree RSS."""
    sets = {**SETTINGS, "problems.limit": problems, "dataset.root": str(root)}
    command = [str(REPO / ".venv" / "bin" / "prm-factory"), "run", "--config", "configs/synthetic.toml"]
    for key, value in sets.items():
        command += ["--set", f"{key}={value}"]
    status, wall, peak = measure(command, log)
    return Measurement(problems, status, round(wall, 1), round(wall / problems, 2), round(peak, 1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 64, 256])
    parser.add_argument("--workdir", type=Path, help="dataset roots and logs (default: a temp dir)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="prm-bench-streaming-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"settings: {json.dumps(SETTINGS, sort_keys=True)}; cpus {os.cpu_count()}; logs in {workdir}")
    results = []
    for size in args.sizes:
        root = workdir / f"ds-{size}"
        shutil.rmtree(root, ignore_errors=True)
        m = run_once(size, root, workdir / f"run-{size}.log")
        results.append(m)
        print(
            f"{m.problems:>5} problems: exit {m.status}, wall {m.wall_seconds:8.1f} s, "
            f"{m.seconds_per_problem:6.2f} s/problem, peak tree RSS {m.peak_tree_rss_mib:8.1f} MiB",
            flush=True,
        )
    if len(results) >= 2:
        middle, largest = results[-2], results[-1]
        time_ratio = largest.seconds_per_problem / middle.seconds_per_problem
        rss_ratio = largest.peak_tree_rss_mib / middle.peak_tree_rss_mib
        print(
            f"{largest.problems}/{middle.problems}: s/problem ratio {time_ratio:.2f}, "
            f"peak RSS ratio {rss_ratio:.2f} (target <= 1.2 each)"
        )
    if args.json:
        args.json.write_text(json.dumps([asdict(m) for m in results], indent=2))
    if any(m.status != 0 for m in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
