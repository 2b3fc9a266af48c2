"""Run a stdin/stdout program against its tests: one sandbox job per test, compared on the host.

Each test's input is a file of the job, opened as the program's stdin (large inputs never pass through
a pipe or a command line); its expected outputs stay here. The job gets the test's own time limit, and
its memory limit as an address-space cap inside the container (whose cgroup limit still applies).

Per-test status: `passed`, `failed` (it ran and printed a wrong answer, exited non-zero, flooded its
output or left a process behind), `timeout`, `memory` (the cgroup killed it, or python ran out of
address space), `error` (no report from the sandbox).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from prm_factory.schemas.code_spec import StdioCase, StdioTests
from prm_factory.verifiers.code.compare import any_output_matches
from prm_factory.verifiers.code.sandbox import ExecResult, JobOptions
from prm_factory.verifiers.code.tests_runner import Runner, TestReport, TestResult, TestStatus, test_result

PROGRAM = "main.py"
STDIN = "input.txt"
ARGV = ["python3", PROGRAM]
MIN_OUTPUT_CAP = 1 << 20


def run_stdio_tests(
    program: str, tests: StdioTests, pool: Runner, *, workers: int | None = None
) -> TestReport:
    """Every test of `tests` against `program`, `workers` at a time (default: the pool's size)."""
    workers = workers or int(getattr(pool, "size", 1))

    def one(case: StdioCase) -> tuple[TestResult, ExecResult]:
        longest = max((len(o.encode("utf-8")) for o in case.outputs), default=0)
        options = JobOptions(
            stdin=STDIN,
            wall_seconds=tests.time_limit_s,
            memory_mb=tests.memory_mb,
            output_cap_bytes=max(MIN_OUTPUT_CAP, 4 * longest + 65536),
        )
        execution = pool.run({PROGRAM: program, STDIN: case.input}, ARGV, options)
        return judge_output(case, execution, tests), execution

    with ThreadPoolExecutor(max_workers=max(1, workers)) as executor:
        done = list(executor.map(one, tests.cases))
    runs = [execution for _, execution in done]
    results = tuple(result for result, _ in done)
    reasons = [r.reason for r in runs if r.reason]
    errors = [r.stderr for r in runs if r.exit_code not in (0, None) and r.stderr]
    return TestReport(
        results=results,
        program_error=None,
        timed_out=any(r.status == "timeout" for r in results),
        oom=any(r.status == "memory" for r in results),
        misbehaved=any(r.misbehaved for r in runs),
        exec_reason="; ".join(dict.fromkeys(reasons)),
        seconds=sum(r.duration_s for r in runs),
        stderr_tail=(errors[0] if errors else "")[-2000:],
    )


def judge_output(case: StdioCase, execution: ExecResult, tests: StdioTests) -> TestResult:
    """One test's status from its run; the comparison happens only for a clean, complete run."""
    source = case.input if len(case.input) <= 200 else case.input[:197] + "..."
    actual = execution.stdout if len(execution.stdout) <= 300 else execution.stdout[:297] + "..."
    status, reason = _run_status(execution, tests)
    if status == "passed":
        if any_output_matches(execution.stdout, case.outputs, tests.compare, tests.float_tolerance):
            return test_result(case.name, "passed", "passed", source, actual)
        status, reason = "failed", "wrong answer"
    return test_result(case.name, status, reason, source, actual)


def _run_status(execution: ExecResult, tests: StdioTests) -> tuple[TestStatus, str]:
    if execution.timed_out:
        return "timeout", f"no answer within {tests.time_limit_s:g} s"
    if execution.oom or (tests.memory_mb and _python_out_of_memory(execution)):
        return "memory", "memory limit"
    if execution.output_truncated:
        return "failed", "output over its cap"
    if execution.exit_code is None and execution.signal is None:
        return "error", f"no report from the sandbox ({execution.reason})"
    if execution.misbehaved:
        return "failed", f"broke the sandbox's rules ({execution.reason})"
    if execution.exit_code != 0:
        tail = execution.stderr.strip().splitlines()[-1:] or [""]
        return (
            "failed",
            f"runtime error (exit {execution.exit_code}, signal {execution.signal}): {tail[0][:300]}",
        )
    return "passed", ""


def _python_out_of_memory(execution: ExecResult) -> bool:
    """The program died of a MemoryError (its address-space cap), not of a bug."""
    last = execution.stderr.strip().splitlines()[-1:] or [""]
    return execution.exit_code not in (0, None) and last[0].startswith("MemoryError")
