"""MathVerifier implements the Verifier protocol over problems."""

from __future__ import annotations

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig
from prm_factory.verifiers.protocol import Verifier

PROBLEM = Problem(
    "p1", "gsm8k", "math", "Natalia sold 48 clips in April and half as many in May.", reference_answer="72"
)


def test_protocol_and_provenance() -> None:
    verifier: Verifier = MathVerifier()
    assert verifier.name == "math-sympy"
    assert verifier.version


def test_grade_uses_the_reference_answer() -> None:
    verifier = MathVerifier(MathVerifierConfig(last_number_fallback=False))
    assert verifier.grade(PROBLEM, "48/2 = 24, 48 + 24 = 72. The answer is 72.").label == "correct"
    assert verifier.grade(PROBLEM, "#### 70").label == "incorrect"
    assert verifier.grade(PROBLEM, "so 72 in all").label == "unparsed"  # no fallback configured
    no_reference = Problem("p2", "x", "math", "?")
    assert verifier.grade(no_reference, "The answer is 3").label == "unparsed"


def test_check_steps_one_verdict_per_step() -> None:
    verdicts = MathVerifier().check_steps(PROBLEM, ["48/2 = 24 clips", "48 + 24 = 70 clips", "#### 70"])
    assert [v.label for v in verdicts] == ["correct", "incorrect", "unverifiable"]
    assert verdicts[1].evidence["expected"] == "72"
