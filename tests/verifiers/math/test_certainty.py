"""The last gate of a competition chain's `incorrect` (issue 38): each class of misreading seen on olympiad
text is closed for every reading kind at once; a plain false claim in a plain step stays `incorrect`."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.certainty import uncertain_reason
from prm_factory.verifiers.math.reading_kinds import (
    CLOSED_ARITHMETIC,
    CONGRUENCE,
    EQUATION_STEP,
    IDENTITY,
)
from prm_factory.verifiers.math.verifier import MathVerifier

PROBLEM = Problem("o1", "olympiad", "math", r"Let $n$ be a positive integer. Find $n$.")


@pytest.fixture(scope="module")
def verifier():
    v = MathVerifier()
    yield v
    v.close()


def _verdicts(verifier: MathVerifier, steps: list[str], problem: Problem = PROBLEM) -> list:
    return verifier.check_steps(problem, steps)


def test_a_plain_false_claim_stays_incorrect_and_names_its_kind(verifier) -> None:
    [verdict] = _verdicts(verifier, [r"The area is \( \frac{1}{2} \times 6 \times 8 = 34 \)."])
    assert verdict.label == "incorrect" and verdict.kind == CLOSED_ARITHMETIC
    [right] = _verdicts(verifier, [r"The area is \( \frac{1}{2} \times 6 \times 8 = 24 \)."])
    assert right.label == "correct" and right.kind == CLOSED_ARITHMETIC


@pytest.mark.parametrize(
    "step",
    [
        r"Let's try $n = 3$: then $n^2 + 1 = 11$.",  # a trial: what follows from the value tried
        r"Result: \[ 1 + 17 = 17 \] (False), so $d = 6$ does not work.",  # a rejection
        r"We need to verify if: \[ \frac{4}{2} = 3 \]",  # a question put
        "Case 2: $a = 2$, $b = 1$, so $a + b = 4$.\nThen we go on.",  # a case heading
        r"Is $2 + 2 = 5$? No.",
    ],
)
def test_tried_rejected_asked_or_case_values_are_never_incorrect(verifier, step: str) -> None:
    [verdict] = _verdicts(verifier, [step])
    assert verdict.label != "incorrect"


def test_arithmetic_in_a_chain_that_works_modulo_a_number_is_not_judged(verifier) -> None:
    steps = [r"We work in the ring \(\mathbb Z/289\mathbb Z\).", r"Since \(-\frac12=144\), we are done."]
    assert [v.label for v in _verdicts(verifier, steps)][1] != "incorrect"
    why = uncertain_reason(CLOSED_ARITHMETIC, r"-\frac12=144", 1, steps, expected="-1/2")
    assert why is not None and why.startswith("the chain works modulo a number")
    # false modulo 289 too: still an error
    assert uncertain_reason(CLOSED_ARITHMETIC, r"2^4 + 1 = 19", 1, steps, expected="17") is None
    # a congruence is its own reading: the modulus is part of the claim
    assert uncertain_reason(CONGRUENCE, r"7 \equiv 2 \pmod{4}", 0, [r"$7 \equiv 2 \pmod{4}$"]) is None


def test_arithmetic_in_written_numbers_worked_for_a_trial_is_still_judged(verifier) -> None:
    [verdict] = _verdicts(verifier, [r"Testing \(x = -3\): \[ 2(-3)^4 - 3 = 150. \]"])
    assert verdict.label == "incorrect" and verdict.kind == CLOSED_ARITHMETIC


def test_arithmetic_worked_inside_a_case_is_still_judged(verifier) -> None:
    [verdict] = _verdicts(verifier, [r"For Case 2, we get a total of $3(36+18)=164$ rectangles."])
    assert verdict.label == "incorrect"


def test_a_factor_the_reader_did_not_see_makes_the_claim_uncertain(verifier) -> None:
    step = r"\[ PS = PU \cos 30^\circ = 2 \cdot \frac{\sqrt{3}}{2} = \sqrt{3}. \]"
    assert uncertain_reason(CLOSED_ARITHMETIC, r"\cos 30^\circ = 2 \cdot \frac{\sqrt{3}}{2}", 0, [step])
    [verdict] = _verdicts(verifier, [step])
    assert verdict.label != "incorrect"
    after_relation = r"\[ k^2 \geq \frac{1536000}{244} = 6300 \]"  # a relation before it is no factor
    assert uncertain_reason(CLOSED_ARITHMETIC, r"\frac{1536000}{244} = 6300", 0, [after_relation]) is None


@pytest.mark.parametrize(
    "claim",
    [r"√9 = 4", r"!4 = 10", r"(3 \text{ for the first}) 2 + 2 = 5", r"2 (the base) + 3 = 6"],
)
def test_notation_with_a_second_reading_is_uncertain(claim: str) -> None:
    assert uncertain_reason(CLOSED_ARITHMETIC, claim, 0, [claim]) is not None


def test_equation_steps_only_between_the_same_equation_in_the_same_unknowns() -> None:
    system = r"x + y = 5 => x - y = 1"
    assert uncertain_reason(EQUATION_STEP, system, 0, [r"Solve the system: $x + y = 5$, $x - y = 1$."])
    expanded = [r"Given the equations (1) and (2).", r"We expand the first equation: ..."]
    assert uncertain_reason(EQUATION_STEP, r"(x + y)y = 5 => xy + y^2 = 6", 1, expanded) is None
    assert uncertain_reason(EQUATION_STEP, r"x + y = 5 => 2x = 7", 0, ["..."])  # a substitution
    assert uncertain_reason(EQUATION_STEP, r"x^2 - 4 > 0 => (x - 2)(x + 2) = 0", 0, ["..."])
    assert uncertain_reason(EQUATION_STEP, r"t = c => t = -c", 0, ["..."])  # branches of a split
    assert uncertain_reason(EQUATION_STEP, r"2x + 3 = 7 => 2x = 5", 0, ["..."]) is None
    assert uncertain_reason(EQUATION_STEP, r"b^2 - 4c = b^2 - 4bc + 4c^2 => 4c^2 - 4bc = 0", 0, ["."]) is None


def test_an_identity_only_between_expressions_in_the_same_names() -> None:
    assert uncertain_reason(IDENTITY, r"x^2 + 3x = 10", 0, ["..."])  # an equation to solve
    assert (
        uncertain_reason(IDENTITY, r"(a + b)^2 = a^2 + b^2", 0, [r"Expanding, $(a + b)^2 = a^2 + b^2$."])
        is None
    )


def test_an_identity_in_unknowns_the_chain_solves_for_is_an_equation() -> None:
    """Found on the held-out olympiad split after its figures were taken: relations between two ways of
    writing one quantity, in names the chain then solves for, read as false identities."""
    proportion = [
        r"By similar triangles, $\frac{h - 2}{6} = \frac{h + 1}{12}$.",
        r"So $h = 5$.",
    ]
    assert uncertain_reason(IDENTITY, r"\frac{h - 2}{6} = \frac{h + 1}{12}", 0, proportion)  # holds at h = 5
    two_ways = [r"The length is $(u + v + 3) \times 2 = (u + v + 9) \times 1$.", r"Hence $u + v = 3$."]
    assert uncertain_reason(IDENTITY, r"(u + v + 3) \times 2 = (u + v + 9) \times 1", 0, two_ways)
    # a rewrite slip stays an error in a chain that solves for its name: it fails at the value found too
    slip = [r"Expanding, $(x + 3)^2 = x^2 + 6x + 6$.", r"so $x^2 + 6x + 6 = 10$, and $x = 1$ ..."]
    assert uncertain_reason(IDENTITY, r"(x + 3)^2 = x^2 + 6x + 6", 0, slip) is None
    # it must hold at every value the chain finds: `x = 1` is a root of both sides, `x = 2` is not
    roots = [r"Check: $(x - 1)(x + 3) = (x - 1)(2x + 1)$.", r"So $x = 1$ or $x = 2$."]
    assert uncertain_reason(IDENTITY, r"(x - 1)(x + 3) = (x - 1)(2x + 1)", 0, roots)
    coincidence = [r"Expanding, $(x - 1)(x + 3) = (x - 1)(2x + 5)$.", r"So $x = 1$ or $x = 3$."]
    assert uncertain_reason(IDENTITY, r"(x - 1)(x + 3) = (x - 1)(2x + 5)", 0, coincidence) is None
    two_names = [
        r"So $\frac{1 + 2ab}{ab} = \frac{1 + ab}{ab}$.",
        r"Given $a + b = 1$ ...",
    ]  # a slip in two names
    assert uncertain_reason(IDENTITY, r"\frac{1 + 2ab}{ab} = \frac{1 + ab}{ab}", 0, two_names) is None
    said = [r"Consider the equation $(p + 1)(p + 2) = p + 4$, which simplifies to a quadratic."]
    assert uncertain_reason(IDENTITY, r"(p + 1)(p + 2) = p + 4", 0, said)  # called an equation


def test_integer_part_brackets_only_where_the_chain_writes_them() -> None:
    chain = [r"Let $[x]$ be the integer part of $x$.", r"So $[3.7] = 4$."]
    assert uncertain_reason(CLOSED_ARITHMETIC, r"[3.7] = 4", 1, chain)
    plain = [r"So $2[3 + 4] = 15$."]
    assert uncertain_reason(CLOSED_ARITHMETIC, r"2[3 + 4] = 15", 0, plain) is None


def test_a_contradiction_counts_after_an_assumption_or_right_after_the_claim(verifier) -> None:
    steps = [r"Suppose $n$ is odd.", r"Then $1 + 1 = 3$. We add one. A contradiction."]
    assert uncertain_reason(CLOSED_ARITHMETIC, "1 + 1 = 3", 1, steps)
    # since 2.8.0 (issue 46) the chain negates the claim in its own sentence or the next: no assumption needed
    assert uncertain_reason(CLOSED_ARITHMETIC, "1 + 1 = 3", 0, [r"Then $1 + 1 = 3$, a contradiction."])
    # a contradiction two sentences on, with nothing assumed, is about something else
    far = [r"Then $1 + 1 = 3$. We add one. So $n$ is even. A contradiction."]
    assert uncertain_reason(CLOSED_ARITHMETIC, "1 + 1 = 3", 0, far) is None


def test_a_function_with_a_prime_before_the_claim_is_a_factor_not_read() -> None:
    """Found on the held-out olympiad split after its figures were taken (`f'(16)` read from `(16)`)."""
    step = r"Evaluate at $x_0 = 16$: $$ f'(16) = \frac{1}{4} \cdot 16^{-3/4} = \frac{1}{32} $$"
    assert uncertain_reason(CLOSED_ARITHMETIC, r"(16) = \frac{1}{4} \cdot 16^{-3/4}", 0, [step])
    plain = r"$$ \frac{1}{4} \cdot 16 = 5 $$"
    assert uncertain_reason(CLOSED_ARITHMETIC, r"\frac{1}{4} \cdot 16 = 5", 0, [plain]) is None


def test_equation_numbers_combined_are_a_reference_not_arithmetic(verifier) -> None:
    """Olympiad solutions tag their equations `(4)`, `(5)` and divide or subtract them by number: a side made
    only of bracketed numbers joined by operators is no arithmetic claim; a product written by juxtaposition,
    `(2)(3)`, is still arithmetic and still judged."""
    tagged = [
        r"Hence \[ w = d \sqrt{2} . \hspace{1cm} (4) \] and \[ w' = d \sqrt{3} . \hspace{1cm} (5) \]",
        r"Dividing, we get \begin{align*} \frac{(4)}{(5)} & = \frac{63}{62}. \end{align*}",
    ]
    assert _verdicts(verifier, tagged)[1].label != "incorrect"
    for claim in (r"\frac{(4)}{(5)} = \frac{63}{62}", "(1) - (2) = 3", r"(3) \cdot (4) = 5"):
        assert uncertain_reason(CLOSED_ARITHMETIC, claim, 0, [f"${claim}$"]) is not None
    [product] = _verdicts(verifier, ["So the count is $(2)(3) = 7$."])
    assert product.label == "incorrect"


def test_a_word_problem_passes_the_same_gate(verifier) -> None:
    """Issue 46: a chain without competition notation is gated too (its claims read as its own kind)."""
    word = Problem("w1", "gsm8k", "math", "The juniors drink 1500 cartons. How many cartons in all?")
    equation = [r"So \(C = 1500 + \frac{4}{7}C\) cartons in all."]  # a name on both sides: to solve
    assert [v.label for v in verifier.check_steps(word, equation)] == ["unverifiable"]
    again = ["There are n = 7 boys.", "We use the same formula with n = 4 and r = 2."]  # a new value
    assert "incorrect" not in [v.label for v in verifier.check_steps(word, again)]
    solved = ["So 10m = 1000.", "Dividing both sides by 10, we get m = 1000."]  # solved: still judged
    assert [v.label for v in verifier.check_steps(word, solved)][1] == "incorrect"
    asserted = ["She buys 12 * 3 = 38 apples."]
    assert [v.label for v in verifier.check_steps(word, asserted)] == ["incorrect"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(v=st.integers(2, 9), a=st.integers(1, 9), off=st.sampled_from([-5, -2, 3, 7]))
def test_an_equation_put_to_the_test_is_never_incorrect(verifier, v: int, a: int, off: int) -> None:
    # both sides worked out from a value tried: the equation is tested, not asserted (generated, issue 46)
    tested = f"To make sure, we try x = {v} in the equation: ({v} - {a})^2 = ({v} + {a})^2 - {off}."
    assert _verdicts(verifier, [tested])[0].label != "incorrect"
    # arithmetic in written numbers with a lone result, in the same frame, is still the chain's own
    wrong = f"To make sure, we try x = {v}: we get {v} \\times {a} = {v * a + off}."
    assert _verdicts(verifier, [wrong])[0].label == "incorrect"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(v=st.integers(1, 9), w=st.integers(10, 40))
def test_a_value_stated_for_a_name_is_no_arithmetic(verifier, v: int, w: int) -> None:
    # `x = 2` "is the answer to f(x) = 6": a value read off, not a substitution (generated, issue 46)
    chain = [
        f"That means finding the value of $x$ such that $f(x) = {w}$.",
        f"From the table, $f({v}) = {w}$.",
        f"So, $x={v}$ is the answer to $f(x) = {w}$.",
    ]
    assert "incorrect" not in [verdict.label for verdict in _verdicts(verifier, chain)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(r=st.integers(2, 30), c=st.integers(40, 90))
def test_a_name_worked_out_again_in_a_check_is_a_new_use(verifier, r: int, c: int) -> None:
    word = Problem("w1", "gsm8k", "math", "A rope makes a circle. How long is its radius?")
    chain = [
        f"The rope is {c} meters long, so C = {c}.",
        f"To verify, we compute the circumference for a radius of {r}: \\[ C = 2 \\times {r} \\]",
    ]
    assert "incorrect" not in [verdict.label for verdict in _verdicts(verifier, chain, word)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(b=st.integers(2, 9), p=st.integers(2, 6), off=st.sampled_from([-3, -1, 2, 9]))
def test_a_claim_cut_out_of_prose_notation_is_never_incorrect(verifier, b: int, p: int, off: int) -> None:
    # `log_5(5^5)=5` in plain text, read from `(5^5)` (generated, issue 46)
    assert _verdicts(verifier, [f"So log_{b}({b}^{p})={p} and we go on."])[0].label != "incorrect"
    assert _verdicts(verifier, [f"So {b}^{p}={b**p + off} and we go on."])[0].label == "incorrect"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(1, 9), b=st.integers(2, 9), off=st.sampled_from([-2, 1, 3]))
def test_a_relation_put_in_for_a_part_is_no_rewrite(verifier, a: int, b: int, off: int) -> None:
    # `x^2 = x + 1` stated, then `(x^2 + x)` becomes `(x + 1 + x)`: a substitution (generated, issue 46)
    said = f"And we know that $x^2 = x + {a}$. So we can just substitute it."
    put_in = f"So $x^3 - {b}x = (x^2 + x) - {b}x$ becomes $x^3 - {b}x = (x + {a} + x) - {b}x$"
    assert _verdicts(verifier, [said, put_in])[1].label != "incorrect"
    wrong = f"So $x^3 - {b}x = (x^2 + x) - {b}x$ becomes $x^3 - {b}x = (x + {a + off} + x) - {b}x$"
    assert _verdicts(verifier, [said, wrong])[1].label == "incorrect"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(v=st.integers(2, 9), a=st.integers(1, 9), off=st.sampled_from([2, 3, 7]))
def test_a_test_said_as_a_noun_puts_nothing_to_the_test(verifier, v: int, a: int, off: int) -> None:
    # "the third test" is an exam, not a check: the equation there is asserted (generated, issue 46)
    step = f"The score on the third test was high, and $({v} - {a})^2 = ({v} + {a})^2 + {off}$."
    assert _verdicts(verifier, [step])[0].label == "incorrect"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(11, 99), b=st.integers(3, 9), off=st.sampled_from([-2, 1, 3]))
def test_a_claim_written_twice_is_cut_only_where_every_place_is(verifier, a: int, b: int, off: int) -> None:
    # `a / b = a / b = q`: the claim `a / b = q` is whole at its second place (overlapping the first)
    word = Problem("w2", "gsm8k", "math", "How many cups does each chair get?")
    q = Fraction(a, b) + off
    if q.denominator != 1:
        q = Fraction(a // b + off)
    step = f"So {a} cups / {b} chairs = {a} cups / {b} chairs = {q} cups per chair."
    expected = "correct" if Fraction(a, b) == q else "incorrect"
    assert _verdicts(verifier, [step], word)[0].label == expected


def test_the_reasons_certainty_matches_are_the_ones_the_worker_writes() -> None:
    """certainty compares the worker's reasons as strings (it does not import the SymPy module that writes
    them, which runs in the bounded worker): an edit of one copy would turn its rules off silently."""
    from prm_factory.verifiers.math import certainty, solution_sets

    assert certainty.SAME_SOLUTIONS == solution_sets.SAME_SOLUTIONS
    assert certainty.ROUNDED_ALIKE == solution_sets.ROUNDED_ALIKE
