"""CodeVerifier on the real sandbox: outcomes, per-step verdicts, thread use."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from prm_factory.verifiers.code.program import segment_chain
from prm_factory.verifiers.code.verifier import CodeVerifier, program_of_completion

pytestmark = pytest.mark.docker

# These tests judge verdicts, not limits: the module's pool (conftest) gets a 10 s wall clock instead of
# 2 s, which a right program reached under a loaded suite (`timeout` for the tolerance test). Idle, no test
# waits on it.
POOL_LIMITS = {"wall_seconds": 10.0}


def _fenced(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\nThat should work."


def test_reference_solutions_are_graded_correct(verifier, code_problems):
    for name, problem in code_problems.items():
        verdict = verifier.grade(problem, _fenced(problem.reference_solution or ""))
        assert verdict.label == "correct", (name, verdict.reason, verdict.evidence)
        assert verdict.evidence["n_passed"] == verdict.evidence["n_tests"] > 0


def test_wrong_solution_is_incorrect_with_per_test_results(verifier, code_problems):
    verdict = verifier.grade(
        code_problems["sum_of_squares"], _fenced("def sum_of_squares(nums):\n    return sum(nums)")
    )
    assert verdict.label == "incorrect"
    tests = verdict.evidence["tests"]
    assert [t["passed"] for t in tests] == [False, True, False, False]
    assert tests[0]["actual"] == "6" and tests[0]["source"].startswith("assert candidate([1, 2, 3])")


def test_tolerance_predicates_go_to_the_judge(verifier, code_problems):
    mean = code_problems["mean"]
    right = verifier.grade(mean, _fenced("def mean(values):\n    return sum(values) / len(values)"))
    assert right.label == "correct", right.evidence
    off = verifier.grade(mean, _fenced("def mean(values):\n    return sum(values) / len(values) + 1e-3"))
    assert off.label == "incorrect" and off.evidence["n_passed"] == 0


def test_no_code_is_unparsed_and_bare_code_is_accepted(verifier, code_problems):
    problem = code_problems["max_of_three"]
    assert verifier.grade(problem, "The answer is to use max().").label == "unparsed"
    assert verifier.grade(problem, "def max_of_three(a, b, c):\n    return max(a, b, c)\n").label == "correct"
    assert program_of_completion("just words", "f") is None


def test_syntax_error_is_incorrect(verifier, code_problems):
    verdict = verifier.grade(
        code_problems["max_of_three"], _fenced("def max_of_three(a, b, c)\n    return a")
    )
    assert verdict.label == "incorrect" and "compile" in verdict.reason


def test_step_verdicts_follow_the_documented_rule(verifier, code_problems):
    steps = [
        "We need the sum of squares.",
        "```python\ndef square(x):\n    return x * x\n```",
        "```python\ndef sum_of_squares(nums):\n    return sum(square(n) for n in nums) + 1\n```",
        "Oops, off by one; fix it.",
        "```python\ndef sum_of_squares(nums):\n    return sum(square(n) for n in nums)\n```",
        "```python\nprint(sum_of_squares([1, 2]]\n```",
    ]
    labels = [v.label for v in verifier.check_steps(code_problems["sum_of_squares"], steps)]
    assert labels == ["unverifiable", "unverifiable", "incorrect", "unverifiable", "correct", "incorrect"]


def test_code_written_later_makes_a_name_error_unverifiable(verifier, code_problems):
    steps = [
        "```python\ndef sum_of_squares(nums):\n    return sum(square(n) for n in nums)\n```",
        "```python\ndef square(x):\n    return x * x\n```",
    ]
    labels = [v.label for v in verifier.check_steps(code_problems["sum_of_squares"], steps)]
    assert labels == ["unverifiable", "correct"]


def test_statement_segments_of_one_block_are_checked_in_order(verifier, code_problems):
    chain = (
        "Plan.\n\n```python\nimport math\n\n"
        "def sum_of_squares(nums):\n    return sum(n * n for n in nums)\n\n"
        "RESULT = sum_of_squares([1])\n```"
    )
    steps = [s.text for s in segment_chain(chain, "statement")]
    labels = [v.label for v in verifier.check_steps(code_problems["sum_of_squares"], steps)]
    assert labels == ["unverifiable", "unverifiable", "correct", "correct"]


def test_usable_from_several_threads(sandbox_image, code_problems):
    from prm_factory.verifiers.code.sandbox import SandboxLimits, SandboxPool

    problem = code_problems["count_vowels"]
    completions = [
        _fenced("def count_vowels(text):\n    return sum(c in 'aeiouAEIOU' for c in text)"),
        _fenced("def count_vowels(text):\n    return 0"),
    ] * 3
    # four threads share two containers: under a loaded suite a job ran past the module pool's 2 s wall
    # limit (`timeout`), which is not what this test is about
    limits = SandboxLimits(memory_mb=128, pids=32, wall_seconds=10.0)
    with SandboxPool(sandbox_image, size=2, limits=limits) as pool:
        verifier = CodeVerifier(runner=pool)
        with ThreadPoolExecutor(max_workers=4) as executor:
            labels = list(executor.map(lambda c: verifier.grade(problem, c).label, completions))
    assert labels == ["correct", "incorrect"] * 3


def test_verifier_owns_its_pool_when_given_none(sandbox_image, code_problems):
    from prm_factory.verifiers.code.sandbox import SandboxLimits
    from prm_factory.verifiers.code.verifier import CodeVerifierConfig

    config = CodeVerifierConfig(pool_size=1, limits=SandboxLimits(wall_seconds=5), image=sandbox_image)
    with CodeVerifier(config) as owned:
        assert owned.name == "code-sandbox" and owned.version
        problem = code_problems["reverse_words"]
        assert owned.grade(problem, _fenced(problem.reference_solution or "")).label == "correct"
