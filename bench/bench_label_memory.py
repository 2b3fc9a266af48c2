"""`label` and `relabel` by input size: peak RSS of the whole process tree and seconds per step, streamed in
chunks against the same command with the whole input as one chunk (what `label` did before issue 48).

Input: ProcessBench-shaped chains at GSM8K level (a few arithmetic steps each, some with a slip), made here
deterministically, labelled by the verifier only (`labels.sources = []`), as in the issue's measurement.
Each size runs the real console script into a fresh dataset root: `prm-factory label`, then `prm-factory
relabel --source reference` (one engine-free source run over every chain of the version, a new version
written), with the tree's resident memory sampled every 0.2 s (bench/bench_streaming.py's sampler).

Printed per size and mode: wall seconds, ms per step, peak tree RSS; then, for the streamed mode, each
size's peak RSS against the smallest size's (issue 48 target: within 1.2x from 10,000 to 100,000 and
1,000,000 steps) and the streamed / one-chunk throughput ratio (target: not below 1 at 8,000 chains).

    python bench/bench_label_memory.py          # 10,000, 40,000 and 100,000 steps; 40,000 also as one chunk
    python bench/bench_label_memory.py --steps 10000 100000 1000000 --baseline-steps 40000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.bench_streaming import measure  # noqa: E402

STEPS_PER_CHAIN = 5
ONE_CHUNK = 10**9  # `resume.chunk_chains` large enough that the whole input is one chunk: the old shape


@dataclass(frozen=True)
class Measurement:
    command: str
    mode: str  # streamed | one-chunk
    chains: int
    steps: int
    status: int
    wall_seconds: float
    ms_per_step: float
    peak_tree_rss_mib: float


def chains_file(path: Path, chains: int, seed: int = 0) -> None:
    """`chains` ProcessBench-shaped rows: a sum of a few numbers worked one addition per step, about one
    chain in five with a slip in one step (then `label` names the first wrong step)."""
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(chains):
            numbers = [rng.randint(2, 999) for _ in range(STEPS_PER_CHAIN + 1)]
            wrong = rng.randrange(STEPS_PER_CHAIN) if rng.random() < 0.2 else -1
            total, steps = numbers[0], []
            for index, n in enumerate(numbers[1:]):
                result = total + n + (1 if index == wrong else 0)
                steps.append(f"Adding {n} to {total} gives {total} + {n} = {result}.")
                total = result
            row = {
                "id": f"bench-{i}",
                "problem": f"What is {' + '.join(map(str, numbers))}?",
                "steps": steps,
                "answer": str(sum(numbers)),
                "label": wrong,
            }
            out.write(json.dumps(row) + "\n")


def run_size(workdir: Path, steps: int, mode: str, relabel: bool) -> list[Measurement]:
    chains = max(1, steps // STEPS_PER_CHAIN)
    data = workdir / f"chains-{chains}.jsonl"
    if not data.is_file():
        chains_file(data, chains)
    root = workdir / f"ds-{mode}-{chains}"
    shutil.rmtree(root, ignore_errors=True)
    exe = str(REPO / ".venv" / "bin" / "prm-factory")
    chunk = f"[resume]\nchunk_chains = {ONE_CHUNK}\n" if mode == "one-chunk" else ""
    label_config, relabel_config = workdir / f"label-{mode}.toml", workdir / f"relabel-{mode}.toml"
    label_config.write_text(f"[labels]\nsources = []\n{chunk}")
    relabel_config.write_text(f'[labels]\nsources = ["reference"]\n{chunk}')
    commands = [("label", [exe, "label", str(data), "--dataset", str(root), "--config", str(label_config)])]
    if relabel:  # the reference source again on every chain: one source rerun, a new version written
        commands.append(
            (
                "relabel",
                [
                    exe,
                    "relabel",
                    "--dataset",
                    str(root),
                    "--source",
                    "reference",
                    "--config",
                    str(relabel_config),
                ],
            )
        )
    out = []
    for name, command in commands:
        status, wall, peak = measure(command, workdir / f"{name}-{mode}-{chains}.log")
        m = Measurement(
            name, mode, chains, chains * STEPS_PER_CHAIN, status, round(wall, 1),
            round(1000 * wall / (chains * STEPS_PER_CHAIN), 2), round(peak, 1),
        )  # fmt: skip
        print(
            f"{m.command:>7} {m.mode:>9} {m.chains:>8} chains {m.steps:>8} steps: exit {m.status}, "
            f"wall {m.wall_seconds:8.1f} s, {m.ms_per_step:6.2f} ms/step, "
            f"peak tree RSS {m.peak_tree_rss_mib:8.1f} MiB",
            flush=True,
        )
        out.append(m)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, nargs="+", default=[10_000, 40_000, 100_000])
    parser.add_argument(
        "--baseline-steps", type=int, nargs="*", default=[40_000],
        help="sizes also run as one chunk (the pre-streaming shape) for the throughput and memory ratio",
    )  # fmt: skip
    parser.add_argument("--no-relabel", action="store_true")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="prm-bench-label-"))
    workdir.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(f"cpus {os.cpu_count()}, load {load:.1f} at start; logs and datasets in {workdir}")
    results: list[Measurement] = []
    for steps in args.steps:
        results += run_size(workdir, steps, "streamed", not args.no_relabel)
    for steps in args.baseline_steps:
        results += run_size(workdir, steps, "one-chunk", not args.no_relabel)
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    for command in ("label", "relabel"):
        streamed = [m for m in results if m.command == command and m.mode == "streamed"]
        if len(streamed) >= 2:
            first = streamed[0]
            for m in streamed[1:]:
                print(
                    f"{command}: peak RSS at {m.steps} steps / at {first.steps}: "
                    f"{m.peak_tree_rss_mib / first.peak_tree_rss_mib:.2f} (target <= 1.2)"
                )
        for base in (m for m in results if m.command == command and m.mode == "one-chunk"):
            same = [m for m in streamed if m.steps == base.steps]
            if same:
                print(
                    f"{command} at {base.steps} steps: throughput streamed / one chunk "
                    f"{base.ms_per_step / same[0].ms_per_step:.2f} (target >= 1), "
                    "peak RSS streamed / one chunk "
                    f"{same[0].peak_tree_rss_mib / base.peak_tree_rss_mib:.2f}"
                )
    if args.json:
        args.json.write_text(json.dumps([asdict(m) for m in results], indent=2))
    if any(m.status != 0 for m in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
