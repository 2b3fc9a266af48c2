"""The stdin/stdout runner without Docker: a scripted runner stands in for the sandbox, so each run outcome
maps to its per-test status (verifiers/code/stdio_runner.py); tests/verifiers/code/test_code_stdio.py runs
the same paths on the real sandbox."""

from __future__ import annotations

from exec_results import exec_result

from prm_factory.schemas.code_spec import StdioCase, StdioTests
from prm_factory.verifiers.code.stdio_runner import STDIN, judge_output, run_stdio_tests

CASE = StdioCase("t0", "1 2\n", ("3",))
TESTS = StdioTests((CASE,), compare="tokens", time_limit_s=2.0, memory_mb=64)


def test_a_clean_run_is_compared_on_the_host():
    assert judge_output(CASE, exec_result("3\n"), TESTS).status == "passed"
    wrong = judge_output(CASE, exec_result("4\n"), TESTS)
    assert wrong.status == "failed" and wrong.reason == "wrong answer"


def test_run_outcomes_map_to_statuses():
    def status(**flags: object) -> str:
        return judge_output(CASE, exec_result("3\n", **flags), TESTS).status

    assert status(timed_out=True) == "timeout"
    assert status(oom=True) == "memory"
    assert status(exit_code=1, stderr="Traceback\nMemoryError") == "memory"  # its address-space cap
    assert status(exit_code=1, stderr="Traceback\nZeroDivisionError") == "failed"
    assert status(output_truncated=True) == "failed"
    assert status(exit_code=None, reason="no supervisor report") == "error"  # undecided, never negative
    assert status(misbehaved=True, reason="1 process(es) outlived the job") == "failed"


class Scripted:
    """Answers each job by its stdin file; records the options every job was given."""

    size = 2

    def __init__(self) -> None:
        self.options: list[object] = []

    def run(self, files, argv, options):
        self.options.append(options)
        a, b = map(int, files[STDIN].split())
        return exec_result(f"{a + b}\n") if a >= 0 else exec_result(timed_out=True, exit_code=None, signal=9)


def test_every_case_is_one_job_with_its_limits():
    tests = StdioTests((CASE, StdioCase("t1", "-1 2\n", ("1",))), time_limit_s=2.0, memory_mb=64)
    runner = Scripted()
    report = run_stdio_tests("print(sum(map(int, input().split())))", tests, runner)
    assert [r.status for r in report.results] == ["passed", "timeout"]
    assert report.timed_out and not report.oom
    assert all(o.stdin == STDIN and o.wall_seconds == 2.0 and o.memory_mb == 64 for o in runner.options)
