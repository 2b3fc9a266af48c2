"""Warm sandbox pool vs one fresh container per job, on the same jobs, in one run.

Prints executions per second and p50/p95 dispatch latency (call to result, as the caller sees it) for
both, and their ratio; `--with-exec` adds the pool with `docker exec` dispatch as a third row. Both
sides run the same hardened container config and the same in-container supervisor with the same
concurrency, so the difference is container reuse (and, for the pool, no Docker API call per job).
The baseline is create + start + one exec + remove per job.

    python bench/bench_sandbox_pool.py --jobs 200 --concurrency 2

Target on a 2-core machine: pool >= 8x the baseline's throughput, pool p50 < 100 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from verifiers.code.image import ensure_image  # noqa: E402
from verifiers.code.sandbox import ExecResult, SandboxLimits, SandboxPool, docker_client, run_once  # noqa: E402

ARGV = ["python3", "main.py"]


@dataclass(frozen=True)
class Measurement:
    name: str
    jobs: int
    seconds: float
    per_second: float
    p50_ms: float
    p95_ms: float
    failures: int


def make_jobs(count: int) -> list[tuple[dict[str, str], str]]:
    """Small, distinct programs with known output (so a wrong result is counted, not hidden)."""
    return [
        ({"main.py": f"print(sum(i * i for i in range({n})))"}, f"{sum(i * i for i in range(n))}\n")
        for n in range(count)
    ]


def measure(
    name: str,
    run: Callable[[dict[str, str], list[str]], ExecResult],
    jobs: list[tuple[dict[str, str], str]],
    concurrency: int,
) -> Measurement:
    latencies: list[float] = []
    failures = 0

    def one(job: tuple[dict[str, str], str]) -> tuple[float, bool]:
        started = time.perf_counter()
        result = run(job[0], ARGV)
        return time.perf_counter() - started, result.stdout == job[1] and result.ok

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as executor:
        for latency, ok in executor.map(one, jobs):
            latencies.append(latency)
            failures += not ok
    seconds = time.perf_counter() - started
    latencies.sort()
    return Measurement(
        name=name,
        jobs=len(jobs),
        seconds=round(seconds, 3),
        per_second=round(len(jobs) / seconds, 2),
        p50_ms=round(1000 * statistics.median(latencies), 1),
        p95_ms=round(1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1),
        failures=failures,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=2, help="client threads; also the pool size")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--with-exec", action="store_true", help="also time the pool with `docker exec` dispatch"
    )
    args = parser.parse_args()

    image = ensure_image()
    limits = SandboxLimits(wall_seconds=10)
    jobs = make_jobs(args.jobs)
    client = docker_client()

    with SandboxPool(image, size=args.concurrency, limits=limits) as pool:
        for files, _ in jobs[:4]:  # warm the page cache and the containers, not counted
            pool.run(files, ARGV)
        warm = measure("warm pool", pool.run, jobs, args.concurrency)
    rows = [warm]
    if args.with_exec:
        with SandboxPool(image, size=args.concurrency, limits=limits, dispatch="exec") as pool:
            for files, _ in jobs[:4]:
                pool.run(files, ARGV)
            rows.append(measure("warm pool, exec dispatch", pool.run, jobs, args.concurrency))
    cold = measure(
        "fresh container per job",
        lambda files, argv: run_once(image, files, argv, limits, client=client),
        jobs,
        args.concurrency,
    )

    ratio = warm.per_second / cold.per_second
    if args.json:
        rows_json = {m.name: asdict(m) for m in (*rows, cold)}
        print(json.dumps({"results": rows_json, "throughput_ratio": round(ratio, 2)}))
        return
    print(f"{'':26} {'jobs':>5} {'seconds':>8} {'exec/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'failed':>6}")
    for m in (*rows, cold):
        print(
            f"{m.name:26} {m.jobs:5d} {m.seconds:8.2f} {m.per_second:8.2f} {m.p50_ms:8.1f} {m.p95_ms:8.1f} "
            f"{m.failures:6d}"
        )
    print(f"throughput ratio (warm / fresh): {ratio:.1f}x   target >= 8x; warm p50 target < 100 ms")


if __name__ == "__main__":
    main()
