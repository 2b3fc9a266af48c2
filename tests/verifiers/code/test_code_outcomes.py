"""Fail-closed outcomes without Docker: a judge, sandbox or limit failure is never `incorrect` (issue 11)."""

from __future__ import annotations

import json

from exec_results import exec_result

from prm_factory.schemas.code_spec import CodeTests, StdioCase, StdioTests
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.code.harness import encode
from prm_factory.verifiers.code.sandbox import ExecResult
from prm_factory.verifiers.code.verifier import CodeVerifier
from prm_factory.verifiers.protocol import outcome_value

PROGRAM = "```python\ndef f(x):\n    return 2 * x\n```"
TESTS = CodeTests.from_asserts(["assert f(1) == 2", "assert abs(f(2) - 4) < 1e-9"], "f")


_result = exec_result


class Scripted:
    """Answers each sandbox job by its mode (or by stdin input) with `respond(job, files) -> ExecResult`."""

    size = 1

    def __init__(self, respond):
        self.respond = respond

    def run(self, files, argv, options=None):
        job = json.loads(files["job.json"]) if "job.json" in files else None
        return self.respond(job, files)


def _record(nonce: str, **fields: object) -> str:
    return json.dumps({"nonce": nonce, **fields})


def _values(job, doubled=True):
    lines = []
    for case in job["cases"]:
        x = 1 if case["id"] == 0 else 2
        lines.append(
            _record(
                job["nonce"], kind="value", case=case["id"], index=0, value=encode(2 * x if doubled else x)
            )
        )
    return "\n".join(lines)


def _problem(tests) -> Problem:
    return Problem("p", "tests", "code", "f", tests=tests.to_json())


def _grade(respond, tests=TESTS, program=PROGRAM):
    return CodeVerifier(runner=Scripted(respond)).grade(_problem(tests), program)


def test_a_judge_that_gives_no_verdict_leaves_the_test_undecided():
    def respond(job, files):
        if job["mode"] == "calls":
            return _result(_values(job))
        return _result("", exit_code=None, misbehaved=True, reason="no supervisor report")  # the judge died

    verdict = _grade(respond)
    assert verdict.label == "error" and outcome_value(verdict.label) is None
    assert [t["status"] for t in verdict.evidence["tests"]] == ["passed", "error"]


def test_a_judge_that_runs_out_of_time_is_a_timeout():
    def respond(job, files):
        if job["mode"] == "calls":
            return _result(_values(job))
        return _result("", exit_code=None, timed_out=True, reason="wall-clock limit")

    assert _grade(respond).label == "timeout"


def test_a_wall_clock_timeout_on_a_loaded_machine_is_a_timeout_not_a_failure():
    def respond(job, files):
        return _result("", exit_code=None, signal=9, timed_out=True, reason="wall-clock limit")

    verdict = _grade(respond)
    assert verdict.label == "timeout"
    assert {t["status"] for t in verdict.evidence["tests"]} == {"timeout"}


def test_a_memory_kill_is_an_error_status_memory():
    def respond(job, files):
        return _result("", exit_code=None, signal=9, oom=True, reason="out of memory")

    verdict = _grade(respond)
    assert verdict.label == "error"
    assert {t["status"] for t in verdict.evidence["tests"]} == {"memory"}


def test_a_test_that_ran_and_failed_beside_a_timeout_is_incorrect():
    def respond(job, files):
        if job["mode"] == "calls":
            first = _record(job["nonce"], kind="value", case=0, index=0, value=encode(3))  # wrong
            return _result(first, exit_code=None, signal=9, timed_out=True, reason="wall-clock limit")
        raise AssertionError("the judge has nothing to decide")

    verdict = _grade(respond)
    assert verdict.label == "incorrect"
    assert [t["status"] for t in verdict.evidence["tests"]] == ["failed", "timeout"]


def test_a_lost_sandbox_report_is_an_error_not_a_failure():
    def respond(job, files):
        return _result(
            "", exit_code=None, misbehaved=True, reason="no supervisor report (the job killed ...)"
        )

    assert _grade(respond).label == "error"


def test_a_program_that_exits_before_its_tests_fails_them():
    def respond(job, files):
        return _result("", exit_code=0)  # exited cleanly, no record

    verdict = _grade(respond)
    assert verdict.label == "incorrect"
    assert {t["status"] for t in verdict.evidence["tests"]} == {"failed"}


def test_proxy_case_statuses_come_from_the_judge():
    tests = CodeTests.from_check_function(
        "def check(candidate):\n    for x in [1]:\n        assert candidate(x) == 2\n", "f"
    )

    def judge_says(status):
        def respond(job, files):
            if job["mode"] == "proxy":
                return _result(_record(job["nonce"], kind="verdict", status=status, detail="why", calls=1))
            raise AssertionError("no invoke needed")

        return respond

    assert _grade(judge_says("passed"), tests).label == "correct"
    assert _grade(judge_says("failed"), tests).label == "incorrect"
    assert _grade(judge_says("timeout"), tests).label == "timeout"
    assert _grade(judge_says("memory"), tests).label == "error"
    assert _grade(judge_says("bogus"), tests).label == "error"


def test_a_proxy_pass_without_any_candidate_call_is_not_a_pass():
    tests = CodeTests.from_check_function(
        "def check(candidate):\n    for x in [1]:\n        assert candidate(x) == 2\n", "f"
    )

    def respond(job, files):
        return _result(_record(job["nonce"], kind="verdict", status="passed", detail="", calls=0))

    assert _grade(respond, tests).label == "error"


def test_a_proxy_judge_that_dies_is_an_error():
    tests = CodeTests.from_check_function(
        "def check(candidate):\n    for x in [1]:\n        assert candidate(x) == 2\n", "f"
    )

    def respond(job, files):
        return _result("", exit_code=None, misbehaved=True, reason="no supervisor report")

    verdict = _grade(respond, tests)
    assert verdict.label == "error" and verdict.evidence["tests"][0]["status"] == "error"


STDIO = StdioTests((StdioCase("a", "1\n", ("2\n",)), StdioCase("b", "2\n", ("4\n",))), time_limit_s=1.0)
STDIO_PROGRAM = "```python\nprint(2 * int(input()))\n```"


def _stdio(answers: dict[str, ExecResult]):
    def respond(job, files):
        return answers[files["input.txt"]]

    return _grade(respond, STDIO, STDIO_PROGRAM)


def test_stdio_statuses_and_outcomes():
    ok = _result("2\n")
    assert _stdio({"1\n": ok, "2\n": _result("4\n")}).label == "correct"
    assert _stdio({"1\n": ok, "2\n": _result("5\n")}).label == "incorrect"
    timeout = _result("", exit_code=None, signal=9, timed_out=True, reason="wall-clock limit")
    assert _stdio({"1\n": ok, "2\n": timeout}).label == "timeout"
    lost = _result("", exit_code=None, misbehaved=True, reason="no supervisor report")
    verdict = _stdio({"1\n": ok, "2\n": lost})
    assert verdict.label == "error" and verdict.evidence["tests"][1]["status"] == "error"
    crash = _result("4\n", exit_code=1, stderr="Traceback ...\nValueError: x")
    verdict = _stdio({"1\n": ok, "2\n": crash})
    assert verdict.label == "incorrect" and "ValueError" in verdict.evidence["tests"][1]["reason"]
    stray = _result("4\n", misbehaved=True, reason="1 process(es) outlived the job")
    assert _stdio({"1\n": ok, "2\n": stray}).label == "incorrect"


def _proxy_rounds(invoke_result: ExecResult):
    """A judge that needs one call, then fails the test if its answer is an error (as harness.py does)."""

    def respond(job, files):
        if job["mode"] == "invoke":
            return invoke_result
        answer = job["answers"].get("k")
        if answer is None:
            call = {"key": "k", "args": encode((1,)), "kwargs": encode({})}
            return _result(_record(job["nonce"], kind="need", calls=[call]))
        if "stopped" in answer:
            return _result(
                _record(job["nonce"], kind="verdict", status=answer["stopped"], detail="", calls=1)
            )
        status = "failed" if "error" in answer else "passed"
        return _result(_record(job["nonce"], kind="verdict", status=status, detail=str(answer), calls=1))

    return respond


def test_proxy_call_answers_follow_how_the_invoke_job_ended():
    tests = CodeTests.from_check_function(
        "def check(candidate):\n    for x in [1]:\n        assert candidate(x) == 2\n", "f"
    )
    killed = _result("", exit_code=None, signal=9)  # the program killed itself mid-call: its own doing
    assert _grade(_proxy_rounds(killed), tests).label == "incorrect"
    exited = _result("", exit_code=0)  # os._exit(0) mid-call
    assert _grade(_proxy_rounds(exited), tests).label == "incorrect"
    lost = _result("", exit_code=None, misbehaved=True, reason="no supervisor report")
    assert _grade(_proxy_rounds(lost), tests).label == "error"
    slow = _result("", exit_code=None, signal=9, timed_out=True, reason="wall-clock limit")
    assert _grade(_proxy_rounds(slow), tests).label == "timeout"
    oom = _result("", exit_code=None, signal=9, oom=True, reason="out of memory")
    assert _grade(_proxy_rounds(oom), tests).label == "error"
