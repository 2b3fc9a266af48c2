"""Warm sandbox pool vs one fresh container per job, on the same jobs, in one run.

Prints executions per second and p50/p95 dispatch latency (call to result, as the caller sees it) for
both, and their ratio; `--with-exec` adds the pool with `docker exec` dispatch as a third row. Both
sides run the same hardened container config and the same in-container supervisor with the same
concurrency, so the difference is container reuse (and, for the pool, no Docker API call per job).
The baseline is create + start + one exec + remove per job.

`--path` picks the workload: `exec` (default) one small program per job; `proxy` a whole grading of a
function problem whose test code loops (it runs unchanged in the judge with candidate proxied: three
sandbox jobs per grading: judge, invoke, judge); `stdin` a whole grading of a stdin/stdout problem with
four tests (four sandbox jobs, input as a file, output compared on the host). For the two grading paths
a "job" in the table is one grading, and a grading that is not `correct` counts as a failure.

    python bench/bench_sandbox_pool.py --jobs 200 --concurrency 2
    python bench/bench_sandbox_pool.py --path proxy --jobs 40
    python bench/bench_sandbox_pool.py --path stdin --jobs 40

Target on a 2-core machine: pool >= 8x the baseline's throughput on every path, pool p50 < 100 ms.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.schemas.code_spec import CodeTests, StdioCase, StdioTests  # noqa: E402
from prm_factory.verifiers.code.grading import run_tests  # noqa: E402
from prm_factory.verifiers.code.image import ensure_image  # noqa: E402
from prm_factory.verifiers.code.sandbox import (  # noqa: E402
    NO_OPTIONS,
    ExecResult,
    JobOptions,
    SandboxLimits,
    SandboxPool,
    docker_client,
    run_once,
)
from prm_factory.verifiers.code.stdio_runner import run_stdio_tests  # noqa: E402

ARGV = ["python3", "main.py"]
PROXY_TESTS = CodeTests.from_check_function(
    "def check(candidate):\n    assert True, 'This prints if this assert fails'\n"
    "    for nums, want in [([1, 2, 3], 14), ([], 0), ([-4], 16), ([10, 0, -1], 101)]:\n"
    "        assert candidate(nums) == want\n",
    "sum_of_squares",
)
STDIN_TESTS = StdioTests(
    tuple(
        StdioCase(f"t{i}", given, (want,))
        for i, (given, want) in enumerate(
            [("1 2 3\n", "14\n"), ("\n", "0\n"), ("-4\n", "16\n"), ("10 0 -1\n", "101\n")]
        )
    ),
    time_limit_s=10.0,
)


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


class Sandbox:
    """A `Runner` over one run function (the warm pool's, or one fresh container per job)."""

    size = 1  # grading concurrency comes from the bench's own threads

    def __init__(self, run: Callable[..., ExecResult]) -> None:
        self._run = run

    def run(self, files: dict[str, str], argv: list[str], options: JobOptions = NO_OPTIONS) -> ExecResult:
        return self._run(files, argv, options)


def grading_job(path: str, n: int) -> Callable[[Sandbox], bool]:
    """One grading of a distinct, correct program (it differs in a comment); True when graded correct."""
    body = f"def sum_of_squares(nums):\n    # variant {n}\n    return sum(x * x for x in nums)\n"
    if path == "proxy":
        return lambda sandbox: run_tests(body, PROXY_TESTS, sandbox).passed
    program = body + "import sys\nprint(sum_of_squares([int(t) for t in sys.stdin.read().split()]))\n"
    return lambda sandbox: run_stdio_tests(program, STDIN_TESTS, sandbox, workers=1).passed


def measure_gradings(
    name: str, sandbox: Sandbox, gradings: list[Callable[[Sandbox], bool]], concurrency: int
) -> Measurement:
    def one(grade: Callable[[Sandbox], bool]) -> tuple[float, bool]:
        started = time.perf_counter()
        ok = grade(sandbox)
        return time.perf_counter() - started, ok

    return _timed(name, one, gradings, concurrency)


def measure(
    name: str,
    run: Callable[[dict[str, str], list[str]], ExecResult],
    jobs: list[tuple[dict[str, str], str]],
    concurrency: int,
) -> Measurement:
    def one(job: tuple[dict[str, str], str]) -> tuple[float, bool]:
        started = time.perf_counter()
        result = run(job[0], ARGV)
        return time.perf_counter() - started, result.stdout == job[1] and result.ok

    return _timed(name, one, jobs, concurrency)


def _timed(
    name: str, one: Callable[[Any], tuple[float, bool]], jobs: list[Any], concurrency: int
) -> Measurement:
    latencies: list[float] = []
    failures = 0

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
    parser.add_argument("--path", choices=("exec", "proxy", "stdin"), default="exec", help="the workload")
    args = parser.parse_args()

    image = ensure_image()
    limits = SandboxLimits(wall_seconds=10)
    client = docker_client()
    if args.path != "exec":
        bench_grading_path(args.path, image, limits, client, args.jobs, args.concurrency, args.json)
        return
    jobs = make_jobs(args.jobs)

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


def bench_grading_path(
    path: str, image: str, limits: SandboxLimits, client: Any, count: int, concurrency: int, as_json: bool
) -> None:
    gradings = [grading_job(path, n) for n in range(count)]
    with SandboxPool(image, size=concurrency, limits=limits) as pool:
        warm_sandbox = Sandbox(pool.run)
        for grade in gradings[:2]:  # warm the containers, not counted
            grade(warm_sandbox)
        warm = measure_gradings(f"warm pool, {path} gradings", warm_sandbox, gradings, concurrency)
    fresh_sandbox = Sandbox(
        lambda files, argv, options: run_once(image, files, argv, limits, client, options)
    )
    cold = measure_gradings(f"fresh container per job, {path}", fresh_sandbox, gradings, concurrency)
    ratio = warm.per_second / cold.per_second
    if as_json:
        print(
            json.dumps(
                {
                    "path": path,
                    "results": {m.name: asdict(m) for m in (warm, cold)},
                    "throughput_ratio": round(ratio, 2),
                }
            )
        )
        return
    print(f"{'':34} {'gradings':>8} {'seconds':>8} {'per s':>8} {'p50 ms':>8} {'p95 ms':>8} {'failed':>6}")
    for m in (warm, cold):
        print(
            f"{m.name:34} {m.jobs:8d} {m.seconds:8.2f} {m.per_second:8.2f} {m.p50_ms:8.1f} "
            f"{m.p95_ms:8.1f} {m.failures:6d}"
        )
    print(f"throughput ratio (warm / fresh), {path} path: {ratio:.1f}x   target >= 8x")


if __name__ == "__main__":
    main()
