"""Continued chains of rewrites (issue 46: "a continued chain read pairwise"), as models write nested
arithmetic (`A = (x) = (y) = z`, negative literals as `+ -5` and `- -8`, brackets regrouped): every link
that holds is never `incorrect`, and a false link is never passed as `correct`.

Generated (Hypothesis), never copied from a set: BIG-Bench Mistake's PaLM 2 traces
(evaluation/data/bbm_arithmetic.md) are where this idiom was measured, 100 % adjudicated precision.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.verifier import MathVerifier

PROBLEM = Problem("c1", "external", "math", "Compute ((3 + -4) * (2 - -5)) =")
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DIGIT = st.integers(-9, 9)
POSITIVE = st.integers(1, 9)
NONZERO = st.integers(-9, 9).filter(bool)


@pytest.fixture(scope="module")
def checker():
    verifier = MathVerifier()
    yield lambda text: verifier.check_steps(
        PROBLEM, ["It can be written as B.", text, "So B is the answer."]
    )[1]
    verifier.close()


def _signed(n: int) -> str:
    """`+ 5` or `+ -5`: a model's way of adding a negative number."""
    return f"+ {n}"


@SETTINGS
@given(a=DIGIT, b=POSITIVE, c=NONZERO, d=DIGIT)
def test_a_continued_chain_whose_links_all_hold_is_never_incorrect(checker, a, b, c, d) -> None:
    regrouped = (
        f"B = ({a} - {b} {_signed(c)}) = (({a} - {b}) {_signed(c)}) = ({a - b} {_signed(c)}) = {a - b + c}."
    )
    negated = f"B = ({a} - -{b} * {d}) = ({a} - ({-b * d})) = {a + b * d}."
    for text in (regrouped, negated):
        assert checker(f"Let's calculate {text}").label != "incorrect", text


@SETTINGS
@given(a=DIGIT, b=POSITIVE, c=NONZERO)
def test_a_false_regrouping_inside_a_continued_chain_is_never_passed(checker, a, b, c) -> None:
    # a - b + c rewritten as a - (b + c): false for every c != 0; the links after it hold among themselves
    links = [f"({a} - {b} {_signed(c)})", f"({a} - ({b} {_signed(c)}))", f"({a} - {b + c})", str(a - b - c)]
    text = "Let's calculate B = " + " = ".join(links) + "."
    verdict = checker(text)
    assert verdict.label != "correct", text
    if b != c:  # `a - b + b = a - 2b`'s sides could be a running total (`a - b`, then `+ b`): left unjudged
        assert verdict.label == "incorrect", (text, verdict.reason)
