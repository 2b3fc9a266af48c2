"""stdin/stdout problems on the real sandbox: input as a file, output compared on the host, test limits."""

from __future__ import annotations

import pytest

from prm_factory.schemas.code_spec import StdioCase, StdioTests
from prm_factory.schemas.records import Problem

pytestmark = pytest.mark.docker

SUM_CASES = (("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("0 0\n", "0\n"))
SUM_PROGRAM = "a, b = map(int, input().split())\nprint(a + b)"


def _problem(cases, **spec) -> Problem:
    tests = StdioTests(
        tuple(
            StdioCase(f"t{i}", x, tuple(y) if isinstance(y, tuple) else (y,))
            for i, (x, y) in enumerate(cases)
        ),
        **spec,
    )
    return Problem("stdio", "tests", "code", "read, compute, print", tests=tests.to_json())


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def test_right_program_passes_and_wrong_one_fails_per_test(verifier):
    problem = _problem(SUM_CASES)
    right = verifier.grade(problem, _fenced(SUM_PROGRAM))
    assert right.label == "correct", right.evidence
    wrong = verifier.grade(problem, _fenced("a, b = map(int, input().split())\nprint(a + b + (b < 0))"))
    assert wrong.label == "incorrect"
    assert [t["status"] for t in wrong.evidence["tests"]] == ["passed", "failed", "passed"]
    assert (
        wrong.evidence["tests"][1]["reason"] == "wrong answer"
        and wrong.evidence["tests"][1]["actual"] == "7\n"
    )


def test_bare_code_without_a_fence_is_a_program(verifier):
    assert verifier.grade(_problem(SUM_CASES), SUM_PROGRAM).label == "correct"
    assert verifier.grade(_problem(SUM_CASES), "Add the two numbers.").label == "unparsed"


def test_a_crash_is_a_failed_test_with_its_error(verifier):
    verdict = verifier.grade(_problem(SUM_CASES), _fenced("print(1 / 0)"))
    assert verdict.label == "incorrect"
    assert "ZeroDivisionError" in verdict.evidence["tests"][0]["reason"]


def test_time_limit_per_test_gives_timeout_not_incorrect(verifier):
    problem = _problem(SUM_CASES, time_limit_s=1.0)
    program = "import time\na, b = map(int, input().split())\nif a == 10:\n    time.sleep(30)\nprint(a + b)"
    verdict = verifier.grade(problem, _fenced(program))
    assert verdict.label == "timeout", verdict.evidence
    assert [t["status"] for t in verdict.evidence["tests"]] == ["passed", "timeout", "passed"]


def test_a_failed_test_beside_a_timeout_makes_the_chain_incorrect(verifier):
    problem = _problem(SUM_CASES, time_limit_s=1.0)
    program = "import time\na, b = map(int, input().split())\nif a == 10:\n    time.sleep(30)\nprint(a - b)"
    verdict = verifier.grade(problem, _fenced(program))
    assert verdict.label == "incorrect"
    assert [t["status"] for t in verdict.evidence["tests"]] == ["failed", "timeout", "passed"]


def test_memory_limit_per_test_gives_memory_status(verifier):
    problem = _problem(SUM_CASES, memory_mb=64)
    program = "a, b = map(int, input().split())\nhog = bytearray(200 << 20) if a == 1 else b''\nprint(a + b)"
    verdict = verifier.grade(problem, _fenced(program))
    assert verdict.label == "error", verdict.evidence
    assert [t["status"] for t in verdict.evidence["tests"]] == ["memory", "passed", "passed"]


def test_large_input_goes_in_as_a_file(verifier):
    numbers = list(range(400_000))  # about 2.6 MB of input
    given = f"{len(numbers)}\n" + " ".join(map(str, numbers)) + "\n"
    problem = _problem([(given, f"{sum(numbers)}\n")])
    program = "import sys\ndata = sys.stdin.buffer.read().split()\nprint(sum(map(int, data[1:])))"
    verdict = verifier.grade(problem, _fenced(program))
    assert verdict.label == "correct", verdict.evidence


def test_comparison_rules_tolerance_and_several_accepted_outputs(verifier):
    floats = _problem([("3\n", "0.333333333\n")], float_tolerance=1e-6)
    assert verifier.grade(floats, _fenced("print(1 / int(input()))")).label == "correct"
    assert verifier.grade(floats, _fenced("print(round(1 / int(input()), 3))")).label == "incorrect"
    any_index = _problem([("5 1 5\n", ("0\n", "2\n"))])  # either index of the maximum is accepted
    program = "v = list(map(int, input().split()))\nprint(len(v) - 1 - v[::-1].index(max(v)))"
    assert verifier.grade(any_index, _fenced(program)).label == "correct"
    lines = _problem([("2\n", "a\nb\n")], compare="lines")
    assert verifier.grade(lines, _fenced("print('a  ')\nprint('b')\nprint()")).label == "correct"
    assert verifier.grade(lines, _fenced("print('a b')")).label == "incorrect"


def test_steps_of_a_stdin_program(verifier):
    problem = _problem(SUM_CASES)
    steps = [
        "Read the two numbers and add them.",
        "```python\ndef solve(a, b):\n    return a + b\n```",
        "```python\na, b = map(int, input().split())\ntotal = solve(a, b)\n```",
        "```python\nprint(total)\n```",
        "```python\nprint(total)\n```",
    ]
    labels = [v.label for v in verifier.check_steps(problem, steps)]
    # prose; definitions only (nothing runs yet); computes but prints later; prints the answer; prints twice
    assert labels == ["unverifiable", "unverifiable", "unverifiable", "correct", "incorrect"]
