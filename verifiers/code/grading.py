"""Grade a program on a problem's tests: split cases in one job, the dataset's test code through the proxy.

Kept apart from `tests_runner` (the split-case job and the records it reads) and `proxy` (the judge rounds),
which both build on `tests_runner`: this module is the one place that combines them.
"""

from __future__ import annotations

from prm_factory.verifiers.code.proxy import run_proxy_cases
from prm_factory.verifiers.code.sandbox import ExecResult
from prm_factory.verifiers.code.tests_runner import CodeTests, Runner, TestReport, TestResult, run_split_cases


def run_tests(program: str, tests: CodeTests, pool: Runner) -> TestReport:
    """Run `tests` against `program` in the sandbox; pass/fail is decided here, never by exit code."""
    results: dict[int, TestResult] = {}
    split = [i for i, c in enumerate(tests.cases) if not c.proxy]
    proxied = [i for i, c in enumerate(tests.cases) if c.proxy]
    runs: list[ExecResult] = []
    program_error: str | None = None
    if split:
        execution, program_error, seconds = run_split_cases(program, tests, split, pool, results)
        runs.append(execution)
    else:
        seconds = 0.0
    if proxied:
        outcome = run_proxy_cases(
            tests.prelude + ("\n" if tests.prelude else "") + program, tests, proxied, pool
        )
        results.update(outcome.results)
        runs.extend(outcome.runs)
        seconds += outcome.seconds
        program_error = program_error or outcome.program_error
    ordered = tuple(results[i] for i in range(len(tests.cases)))
    proxy_results = [results[i] for i in proxied]
    # A proxy batch stopped by a limit is retried call by call, so only a test left `timeout` / `memory`
    # marks the run; a rule broken in any batch (a process left behind, output over its cap) does.
    timed_out = any(r.timed_out for r in runs[: len(split) and 1]) or any(
        r.status == "timeout" for r in proxy_results
    )
    oom = any(r.oom for r in runs[: len(split) and 1]) or any(r.status == "memory" for r in proxy_results)
    misbehaved = any(r.misbehaved for r in runs[: len(split) and 1]) or any(
        r.misbehaved and r.exit_code is not None and not (r.timed_out or r.oom)
        for r in runs[len(split) and 1 :]
    )
    reasons = [r.reason for r in runs if r.reason]
    return TestReport(
        results=ordered,
        program_error=program_error,
        timed_out=timed_out,
        oom=oom,
        misbehaved=misbehaved,
        exec_reason="; ".join(dict.fromkeys(reasons)),
        seconds=seconds,
        stderr_tail=(runs[0].stderr[-2000:] if runs else ""),
    )
