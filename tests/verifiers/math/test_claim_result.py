"""How claim results (verifiers/math/claim_result.py) decide a step: one false claim makes it incorrect, all
judged and held makes it correct, an unjudged claim leaves it unverifiable, definitions do not vote; and the
plain-text walk yields one result per claim with the value it expected."""

from __future__ import annotations

from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.claims import step_verdict, walk_steps

HELD = ClaimResult("3 * 4 = 12", True, "12", rule="exact")
FALSE = ClaimResult("2 * 5 = 11", False, "10", reason="arithmetic does not hold")
UNJUDGED = ClaimResult("2^(10^10) = x", None, reason="too large")
DEFINITION = ClaimResult("3x = 36", None, kind="definition")


def test_claim_results_decide_the_step():
    assert step_verdict([HELD]).label == "correct"
    assert step_verdict([HELD, FALSE]).label == "incorrect"
    assert step_verdict([FALSE, UNJUDGED]).label == "incorrect"
    assert step_verdict([HELD, UNJUDGED]).label == "unverifiable"
    assert step_verdict([]).label == "unverifiable"
    assert step_verdict([HELD, DEFINITION]).label == "correct"  # a definition is neither judged nor unjudged
    assert step_verdict([DEFINITION]).label == "unverifiable"


def test_evidence_counts_and_names_the_failed_claim():
    verdict = step_verdict([HELD, FALSE, UNJUDGED])
    assert verdict.evidence["failed_claim"] == "2 * 5 = 11" and verdict.evidence["expected"] == "10"
    assert (verdict.evidence["judged"], verdict.evidence["held"], verdict.evidence["unjudged"]) == (2, 1, 1)
    assert step_verdict([HELD]).evidence["rules"] == ["exact"]


def test_the_walk_yields_a_result_per_claim():
    results = {i: r for i, r, _, _ in walk_steps(["3 + 4 = 7 apples.", "Then 2 * 5 = 11.", "No numbers."])}
    assert [(r.claim, r.holds) for r in results[0]] == [("3 + 4 = 7", True)]
    assert [(r.claim, r.holds, r.expected) for r in results[1]] == [("2 * 5 = 11", False, "10")]
    assert results[2] == []
