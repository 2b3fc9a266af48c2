"""Wall time of one run as 1 shard and as N shards (each its own process and engine) on the same problems.

Each mode starts `prm-factory run --shard I/N` once per shard, all shards of a mode at the same time, on a
fresh dataset root (no stage cache to reuse), and times the mode from the first start to the last exit;
each shard's own wall time and stage seconds are printed beside it. The modes run one after another, never
together. The CPU's SIMD flags, the usable cores and the load average before and after each mode are
printed, since on a small CPU machine N engines share the same cores (the figure then says what sharding
costs there; on N GPU nodes each shard has its own GPU, see docs/gpu.md).

Sharding without a Prefect server or workers: the shards are plain CLI processes here, which is what a
worker runs for each flow run of `prm-factory run --shards N --pool NAME`.

    python bench/bench_shards.py                                   # 4 problems, 1 and 2 shards
    python bench/bench_shards.py --problems 8 --shards 1 2 --n 2 --k 2 --json shards.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.sampling.cpu_host import SIMD_FLAGS, detect_host  # noqa: E402


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def cli() -> str:
    return str(Path(sys.executable).with_name("prm-factory"))


def run_mode(count: int, args: argparse.Namespace, work: Path) -> dict:
    """Every shard of `count` at once into one fresh dataset; wall times and each shard's stage seconds."""
    root = work / f"shards-{count}"
    sets = {
        "problems.limit": args.problems,
        "sampling.n": args.n,
        "sampling.max_tokens": args.max_tokens,
        "rollouts.k": args.k,
        "rollouts.max_steps": args.max_steps,
        "rollouts.max_tokens": args.rollout_max_tokens,
        "dataset.root": str(root),
    }
    if args.problems_file:
        sets["problems.path"] = str(Path(args.problems_file).resolve())
    base = [cli(), "run", *(item for key, value in sets.items() for item in ("--set", f"{key}={value}"))]
    before = load()
    started = time.perf_counter()
    processes = []
    for index in range(count):
        log = (work / f"shards-{count}-{index}.log").open("w")
        command = ["nice", "-n", str(args.nice), *base, "--shard", f"{index}/{count}"]
        processes.append((index, time.perf_counter(), subprocess.Popen(command, stdout=log, stderr=log)))
    shards = []
    for index, shard_started, process in processes:
        code = process.wait()
        shards.append({"shard": f"{index}/{count}", "exit": code, "wall_s": None})
        shards[-1]["wall_s"] = round(time.perf_counter() - shard_started, 1)  # upper bound: joined in order
    wall = time.perf_counter() - started
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    runs = query(
        Dataset(str(root)),
        "SELECT shard_index, status, n_problems, n_steps, stage_seconds, "
        "date_diff('second', started_at::TIMESTAMPTZ, ended_at::TIMESTAMPTZ) AS run_s FROM runs "
        "ORDER BY shard_index",
    ).to_pylist()
    for row, shard in zip(runs, shards, strict=False):
        stages = json.loads(row["stage_seconds"])
        shard.update(
            status=row["status"],
            problems=row["n_problems"],
            steps=row["n_steps"],
            run_s=row["run_s"],
            engine_start_s=stages.get("engine_start"),
            sample_s=stages.get("sample"),
            rollouts_s=stages.get("rollouts"),
        )
    return {
        "shards": count,
        "wall_s": round(wall, 1),
        "load_before": before,
        "load_after": load(),
        "runs": shards,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--problems", type=int, default=4)
    parser.add_argument("--problems-file", help="problems (default: the config's, the shared GSM8K split)")
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--rollout-max-tokens", type=int, default=64)
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--work-dir", help="where the datasets and logs go (default: a temporary folder)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()

    host = detect_host()
    flags = sorted(f for f in SIMD_FLAGS if f in host.flags)
    print(
        f"CPU: {host.model_name or 'unknown'}; usable cores {len(host.cpus)}; "
        f"flags {' '.join(flags) or 'none'}"
    )
    print(
        f"workload: {args.problems} problems, n={args.n}, max_tokens={args.max_tokens}, k={args.k}, "
        f"max_steps={args.max_steps}, rollout max_tokens={args.rollout_max_tokens}"
    )
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-shards-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for count in args.shards:
        result = run_mode(count, args, work)
        results.append(result)
        print(
            f"{count} shard(s): wall {result['wall_s']}s (load {result['load_before']} -> "
            f"{result['load_after']})"
        )
        for shard in result["runs"]:
            print(
                f"    shard {shard['shard']}: exit {shard['exit']}, {shard.get('status')}, "
                f"{shard.get('problems')} problems, {shard.get('steps')} steps, run {shard.get('run_s')}s "
                f"(engine start {shard.get('engine_start_s')}s, sample {shard.get('sample_s')}s, "
                f"rollouts {shard.get('rollouts_s')}s)"
            )
    if len(results) > 1:
        base = results[0]["wall_s"]
        for result in results[1:]:
            print(
                f"{result['shards']} shards vs {results[0]['shards']}: {base / result['wall_s']:.2f}x speed"
            )
    print(f"datasets and logs: {work}")
    if args.json:
        payload = {
            "cpu": {"model": host.model_name, "cores": len(host.cpus), "flags": flags},
            "results": results,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
