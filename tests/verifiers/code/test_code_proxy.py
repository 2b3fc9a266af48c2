"""Proxy cases on the real sandbox: the dataset's test code runs unchanged in the judge, candidate proxied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.schemas.code_problems import load_code_problems
from prm_factory.schemas.code_spec import CodeTests
from prm_factory.schemas.records import Problem

pytestmark = pytest.mark.docker

HUMANEVAL = Path(__file__).resolve().parents[3] / "data" / "humaneval" / "HumanEval.jsonl"


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def _problem(test_code: str, entry_point: str, context: str = "") -> Problem:
    tests = CodeTests.from_check_function(test_code, entry_point, context=context)
    assert all(case.proxy for case in tests.cases)
    return Problem(f"proxy-{entry_point}", "tests", "code", entry_point, tests=tests.to_json())


class Recording:
    """Passes jobs to the pool and keeps each job file, to see what entered which process."""

    def __init__(self, pool: object) -> None:
        self.pool, self.jobs = pool, []
        self.size = getattr(pool, "size", 1)

    def run(self, files, argv, *args, **kwargs):
        if "job.json" in files:
            self.jobs.append(json.loads(files["job.json"]))
        return self.pool.run(files, argv, *args, **kwargs)


@pytest.fixture(scope="module")
def humaneval() -> dict[str, Problem]:
    """HumanEval rows by task number (32 -> HumanEval/32)."""
    problems, rejected = load_code_problems(HUMANEVAL)
    assert rejected == [] and len(problems) == 164
    task_ids = [json.loads(line)["task_id"] for line in HUMANEVAL.read_text(encoding="utf-8").splitlines()]
    return {int(task.split("/")[1]): problem for task, problem in zip(task_ids, problems, strict=True)}


# 32: loops with a seeded rng and the prompt's poly(); 38 and 50: unseeded random strings and the prompt's
# encoder; 53: a loop of random.randint pairs; 162: `assert True` lines
@pytest.mark.parametrize("task", [32, 38, 50, 53, 162])
def test_humaneval_rows_with_loops_and_helpers_pass_their_canonical_solution(verifier, humaneval, task):
    problem = humaneval[task]
    assert CodeTests.from_json(problem.tests or "").n_proxy == 1
    verdict = verifier.grade(problem, _fenced(problem.reference_solution or ""))
    assert verdict.label == "correct", verdict.evidence
    assert verdict.evidence["n_proxy"] == 1 and verdict.evidence["tests"][0]["status"] == "passed"


@pytest.mark.parametrize(
    "task, wrong_body",
    [
        (32, "    return None\n"),
        (32, "    return 0.5\n"),
        (38, "    return s\n"),
        (50, "    return ''.join(chr(((ord(ch) - 5 - ord('a') + 1) % 26) + ord('a')) for ch in s)\n"),
        (53, "    return x + y + 1\n"),
    ],
)
def test_plausible_wrong_programs_fail_with_the_failing_line(verifier, humaneval, task, wrong_body):
    problem = humaneval[task]
    verdict = verifier.grade(problem, _fenced(problem.text + wrong_body))
    assert verdict.label == "incorrect", verdict.evidence
    test = verdict.evidence["tests"][0]
    assert test["status"] == "failed" and test["proxy"] and "line" in test["reason"]


def test_expected_values_never_enter_the_submissions_process(pool, humaneval):
    from prm_factory.verifiers.code.grading import run_tests

    problem = humaneval[53]  # add(x, y): its test code holds literal expected values (add(2, 3) == 5, ...)
    recording = Recording(pool)
    report = run_tests(problem.reference_solution or "", CodeTests.from_json(problem.tests or ""), recording)
    assert report.passed
    invoke = [job for job in recording.jobs if job["mode"] == "invoke"]
    proxy = [job for job in recording.jobs if job["mode"] == "proxy"]
    assert invoke and proxy
    assert all("check(" not in json.dumps(job) and "assert" not in json.dumps(job) for job in invoke)
    assert all("program" not in job for job in proxy)  # the judge never holds the submission


def test_dependent_calls_and_branches_on_values_take_rounds(verifier):
    code = (
        "def check(candidate):\n"
        "    x = candidate(1)\n"
        "    y = candidate(x)\n"
        "    if candidate(y) > 3:\n"
        "        assert candidate(10) == 11\n"
        "    else:\n"
        "        assert False, 'branch'\n"
    )
    problem = _problem(code, "inc")
    right = verifier.grade(problem, _fenced("def inc(n):\n    return n + 1"))
    assert right.label == "correct", right.evidence
    assert "4 candidate calls" in right.evidence["tests"][0]["reason"]
    wrong = verifier.grade(problem, _fenced("def inc(n):\n    return n"))
    assert wrong.label == "incorrect" and "branch" in wrong.evidence["tests"][0]["reason"]


def test_exceptions_the_test_code_expects_are_raised_in_the_judge(verifier):
    code = (
        "def check(candidate):\n"
        "    try:\n"
        "        candidate(-1)\n"
        "    except ValueError:\n"
        "        pass\n"
        "    else:\n"
        "        assert False, 'no ValueError'\n"
        "    assert candidate(4) == 2\n"
    )
    problem = _problem(code, "root")
    program = "def root(n):\n    if n < 0:\n        raise ValueError('negative')\n    return int(n ** 0.5)"
    assert verifier.grade(problem, _fenced(program)).label == "correct"
    silent = verifier.grade(problem, _fenced("def root(n):\n    return int(abs(n) ** 0.5)"))
    assert silent.label == "incorrect" and "no ValueError" in silent.evidence["tests"][0]["reason"]


def test_prompt_helpers_are_in_the_judges_context(verifier):
    code = "def check(candidate):\n    for w in ['ab', 'xyz']:\n        assert candidate(shout(w)) == w\n"
    problem = _problem(code, "whisper", context="def shout(word):\n    return word.upper()")
    assert verifier.grade(problem, _fenced("def whisper(w):\n    return w.lower()")).label == "correct"


def test_a_call_past_the_time_limit_is_a_timeout_not_a_failure(verifier):
    code = "def check(candidate):\n    for n in [1, 2]:\n        assert candidate(n) == n\n"
    problem = _problem(code, "same")
    verdict = verifier.grade(problem, _fenced("import time\ndef same(n):\n    time.sleep(60)\n    return n"))
    assert verdict.label == "timeout", verdict.evidence
    assert verdict.evidence["tests"][0]["status"] == "timeout"


def test_a_batch_that_runs_out_of_time_is_retried_call_by_call(pool):
    from prm_factory.verifiers.code.verifier import CodeVerifier

    # Each call sleeps 0.3 s and the wall limit is 2 s: the batch of ten (3 s of sleep alone) always stops,
    # the rest run in later rounds. A call alone keeps 1.7 s for the interpreter's start, which a loaded
    # machine needs (0.8 s sleeps ran out alone at load 13).
    code = "def check(candidate):\n    for n in range(10):\n        assert candidate(n) == n * n\n"
    problem = _problem(code, "slow_square")
    program = "import time\ndef slow_square(n):\n    time.sleep(0.3)\n    return n * n"
    recording = Recording(pool)
    verdict = CodeVerifier(runner=recording).grade(problem, _fenced(program))
    assert verdict.label == "correct", verdict.evidence
    # one batch could not answer all ten calls in 2 s: more than one invoke job ran
    assert len([job for job in recording.jobs if job["mode"] == "invoke"]) > 1


def test_a_check_that_swallows_every_exception_still_waits_for_real_values(verifier):
    code = (
        "def check(candidate):\n"
        "    try:\n"
        "        value = candidate(3)\n"
        "    except:\n"
        "        value = 9\n"
        "    assert value == 9\n"
    )
    problem = _problem(code, "square")
    assert verifier.grade(problem, _fenced("def square(n):\n    return n * n")).label == "correct"
    assert verifier.grade(problem, _fenced("def square(n):\n    return n + n")).label == "incorrect"


def test_run_proxy_cases_decides_each_case_on_the_pool(pool):
    from prm_factory.verifiers.code.proxy import run_proxy_cases

    tests = CodeTests.from_check_function(
        "def check(candidate):\n    for n in range(3):\n        assert candidate(n) == n + 1\n", "inc"
    )
    indices = [i for i, case in enumerate(tests.cases) if case.proxy]
    right = run_proxy_cases("def inc(n):\n    return n + 1\n", tests, indices, pool)
    assert [right.results[i].status for i in indices] == ["passed"] and right.program_error is None
    wrong = run_proxy_cases("def inc(n):\n    return n\n", tests, indices, pool)
    assert [wrong.results[i].status for i in indices] == ["failed"]
