"""Equation steps (issue 22): a relation the chain derives from the one before is checked by solution sets;
a true rewrite, a root dropped for a stated reason, a case or a system is never `incorrect`."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.congruences import congruence_claims
from prm_factory.verifiers.math.equation_steps import equation_pairs
from prm_factory.verifiers.math.solution_sets import judge_step
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")


@pytest.mark.parametrize(
    ("before", "after", "rewrite"),
    [
        ("2x + 3 = 7", "2x = 4", False),
        ("2x = 4", "x = 2", False),
        ("x^2 = 9", r"x = 3 \text{ or } x = -3", False),
        ("x^2 = 9", r"x = \pm 3", False),
        ("x^2 = 3x + 1", "x^2 - 3x = 1", True),
        ("x^2 - 5x + 6 = 0", "(x - 2)(x - 3) = 0", True),
        ("m^2 - 64 > 0", "(m - 8)(m + 8) > 0", True),
        (r"\frac{1}{x} = 2", r"x = \frac{1}{2}", False),
        (r"4 - 3t = -2 + 2u", r"6 = 3t + 2u", True),
    ],
)
def test_true_steps_hold(before: str, after: str, rewrite: bool) -> None:
    assert judge_step(before, after, rewrite)[0] is not False


@pytest.mark.parametrize(
    ("before", "after", "rewrite"),
    [
        ("x^2 - 3x = 1", "(x - 1)(x - 3) = 0", True),  # a wrong factorisation
        ("-2 + 4a + 8 = 0", "4a = -10", False),  # a wrong move
        ("x^2 = 9", r"x = 3 \text{ or } x = 4", False),  # a wrong root beside a dropped one
        ("x^2 = 9", r"x = \pm 4", False),
        ("4 - 3t = -2 + 2u", "6t = 6u + 2", True),  # several unknowns, said as a rewrite
        ("b^2 - 4c = b^2 - 4bc + 4c^2", "4c^2 - 4bc = 0", True),
        ("m^2 - 4(2)(8) > 0", "m^2 - 32 > 0", True),  # a simplification that changes the set
    ],
)
def test_false_steps_fail(before: str, after: str, rewrite: bool) -> None:
    assert judge_step(before, after, rewrite)[0] is False


@pytest.mark.parametrize(
    ("before", "after", "rewrite"),
    [
        ("x^2 = 9", "x = 3", False),  # a dropped root: a condition stated elsewhere may drop it
        (r"\sqrt{x} = -1", "x = 1", False),  # squaring adds a root: implied
        ("a + b = 7", "ab = 12", False),  # two equations of a system, joined by "so"
        ("f(x) = 2", "x = 1", False),  # a function applied: not plain algebra
        ("f^{-1}(2) = 4", "f^{-1}(4) = 2", False),  # an inverse function, never a power of a name
        ("AB + BE = 40", "AB = 20", False),  # segment names
        ("x > 2", "x > 1", False),  # implied, not the same: never false
    ],
)
def test_unread_or_undecided_is_not_false(before: str, after: str, rewrite: bool) -> None:
    assert judge_step(before, after, rewrite)[0] is not False


def test_pairs_need_a_link_in_words_and_no_other_source() -> None:
    linked = [r"We have \( x^2 = 3x + 1 \). Subtracting \( 3x \) from both sides, we get \( x^2 - 3x = 1 \)."]
    assert [(p.before, p.after, p.rewrite) for p in equation_pairs(linked)] == [
        ("x^2 = 3x + 1", "x^2 - 3x = 1", True)
    ]
    arrows = [r"\[ -2 + 4a + 8 = 0 \Rightarrow 4a = -10 \Rightarrow a = -\frac{5}{2} \]"]
    assert len(equation_pairs(arrows)) == 2
    system = [r"We have \( a + b = 7 \). Substituting into the second equation, \( a - b = 1 \)."]
    cases = [r"Case 1: \( x - 3 = 5 \), so \( x = 8 \).", r"Case 2: \( x - 3 = -5 \), so \( x = -2 \)."]
    side_by_side = [r"\( x = 3, \quad y = 4 \)"]
    assert equation_pairs(system) == []
    assert [(p.before, p.after) for p in equation_pairs(cases)] == [
        ("x - 3 = 5", "x = 8"),
        ("x - 3 = -5", "x = -2"),
    ]
    assert equation_pairs(side_by_side) == []


def test_chain_with_a_wrong_factorisation_is_flagged_at_that_step(verifier: MathVerifier) -> None:
    steps = [
        r"Multiplying both sides by \( x \), we have \( x^2 = 3x + 1 \).",
        r"Subtracting \( 3x \) from both sides, we have \( x^2 - 3x = 1 \). Factoring, we have "
        r"\( (x - 1)(x - 3) = 0 \).",
    ]
    assert [v.label for v in verifier.check_steps(COMPETITION, steps)] == ["unverifiable", "incorrect"]


def test_true_chain_of_equation_steps_is_not_flagged(verifier: MathVerifier) -> None:
    steps = [
        r"We have \( x^2 - 5x + 6 = 0 \). Factoring, we get \( (x - 2)(x - 3) = 0 \).",
        r"So \( x = 2 \text{ or } x = 3 \).",
        r"Since \( x > 2 \), we take \( x = 3 \).",
    ]
    assert "incorrect" not in [v.label for v in verifier.check_steps(COMPETITION, steps)]


def test_identity_chain_is_checked_without_a_cue(verifier: MathVerifier) -> None:
    wrong = [
        r"\[ (x-1)P(x+1) = (x-1)\frac{8}{9}((x+1)^2-1) = (x-1)\frac{8}{9}(x^2+2x)"
        r" = \frac{8}{9}(x^3+2x^2-x-2) \]"
    ]
    right = [
        r"\[ (x-1)P(x+1) = (x-1)\frac{8}{9}((x+1)^2-1) = (x-1)\frac{8}{9}(x^2+2x)"
        r" = \frac{8}{9}(x^3+x^2-2x) \]"
    ]
    equation = [r"\[ (x - 2)(x - 3) = x^2 - 6x + 6 = x(x - 6) + 6 \]"]  # a slip in a coefficient
    assert [v.label for v in verifier.check_steps(COMPETITION, wrong)] == ["incorrect"]
    assert [v.label for v in verifier.check_steps(COMPETITION, right)] != ["incorrect"]
    assert "incorrect" in [v.label for v in verifier.check_steps(COMPETITION, equation)]
    # a value put in for a part (`ab + bc + ca = -11` known) is a substitution, not an identity
    substituted = [r"\[ (a+b+c)^2 = a^2 + b^2 + c^2 + 2(-11) = a^2 + b^2 + c^2 - 22. \]"]
    assert "incorrect" not in [v.label for v in verifier.check_steps(COMPETITION, substituted)]
    # `A = B = 0` sets each side to zero (a system); `1\frac16` may be a mixed number
    both_zero = [r"Then we must have $-a + b - 1 = a + b - 5 = 0.$"]
    mixed = [r"\[\frac{1\frac16}{w} = \frac{\frac{7}{6}}{w} = \frac{7}{6}\cdot\frac1w = \frac{7}{6w},\]"]
    for steps in (both_zero, mixed):
        assert "incorrect" not in [v.label for v in verifier.check_steps(COMPETITION, steps)]
    names = [r"\[ AB + BC = AC = CA + 1 \]", r"\[ y = 2x + 1 = 2(3) + 1 = 7 \]"]
    assert "incorrect" not in [v.label for v in verifier.check_steps(COMPETITION, names)]


def test_a_run_cut_at_one_end_is_judged_without_that_side(verifier: MathVerifier) -> None:
    wrong = [
        r"This yields \( f(x) = \left(\frac{1}{4}\right)^2 + \left(\frac{1}{4}\right)^2 = \frac{1}{4} \)."
    ]
    right = [
        r"This yields \( f(x) = \left(\frac{1}{4}\right)^2 + \left(\frac{1}{4}\right)^2 = \frac{1}{8} \)."
    ]
    assert [v.label for v in verifier.check_steps(COMPETITION, wrong)] == ["incorrect"]
    assert [v.label for v in verifier.check_steps(COMPETITION, right)] == ["correct"]
    lone = [r"So \( f(x) = \frac{1}{4} \)."]  # one side left: nothing to judge
    assert [v.label for v in verifier.check_steps(COMPETITION, lone)] != ["incorrect"]


@pytest.mark.parametrize(
    ("step", "holds"),
    [
        (r"so \[327 \equiv 8 \pmod{17}.\]", False),
        (r"\(2^8 = 256 \equiv 1 \pmod 5\)", True),
        (r"\(2^{10} = 4 \pmod{17}\)", None),  # no \equiv: not read as a congruence here
        (r"\(3^{100} \equiv 4 \pmod{7}\)", True),
        (r"\(16 \equiv 2 \ (\text{mod } 5)\)", False),
        (r"\(x \equiv 3 \pmod 5\)", None),  # a name: not read
        (r"\(9^{9^{9}} \equiv 1 \pmod{7}\)", None),  # a tower: not evaluated
    ],
)
def test_congruences_of_whole_numbers(step: str, holds: bool | None) -> None:
    found = congruence_claims(step)
    assert (found[0].holds if found else None) is holds


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"So \(\binom{8}{3} = 56\).", "correct"),
        (r"So \(\binom{8}{3} = 58\).", "incorrect"),
        (r"So \(\dbinom{8}{3} = \frac{8 \cdot 7 \cdot 6}{6} = 56\).", "correct"),
        (r"So \(\binom{n}{3} = 58\).", "unverifiable"),  # a name: not read
    ],
)
def test_binomials_of_written_numbers(verifier: MathVerifier, step: str, label: str) -> None:
    assert [v.label for v in verifier.check_steps(COMPETITION, [step])] == [label]


def test_alternatives_in_words_and_value_chains_are_one_statement() -> None:
    wrong_root = [r"We have \(x^2 = 9\), so \(x = 3\) or \(x = -4\)."]
    ((pair,),) = (equation_pairs(wrong_root),)
    assert (pair.before, pair.after) == ("x^2 = 9", r"x = 3 \text{ or } x = -4")
    assert judge_step(pair.before, pair.after, pair.rewrite)[0] is False
    right = [r"We have \(x^2 = 9\), so \(x = 3\) or \(x = -3\)."]
    assert all(judge_step(p.before, p.after, p.rewrite)[0] is True for p in equation_pairs(right))
    chained = [r"From \(2x + 3 = 7\) we get \(2x = 7 - 3 = 5\)."]
    assert [(p.before, p.after) for p in equation_pairs(chained)] == [("2x + 3 = 7", "2x = 5")]
    assert judge_step("2x + 3 = 7", "2x = 5")[0] is False
    assert judge_step("x + 2 < 4.47", "x < 2.47", True)[0] is True  # decimals are exact


def test_a_factorisation_said_in_words_is_an_identity(verifier: MathVerifier) -> None:
    wrong = [r"Factoring, we get \( x^3 - 4x^2 - 7x + 6 = (x-1)(x^2 - 3x - 6) \)."]
    right = [r"Factoring, we get \( x^3 - 4x^2 - x + 10 = (x-2)(x^2 - 2x - 5) \)."]
    said_nothing = [r"We need \( x^3 - 4x^2 - 7x + 6 = (x-1)(x^2 - 3x - 6) \)."]  # an equation to solve?
    assert [v.label for v in verifier.check_steps(COMPETITION, wrong)] == ["incorrect"]
    assert [v.label for v in verifier.check_steps(COMPETITION, right)] != ["incorrect"]
    assert [v.label for v in verifier.check_steps(COMPETITION, said_nothing)] != ["incorrect"]


def test_a_run_cut_inside_its_math_segment_is_not_judged_whole(verifier: MathVerifier) -> None:
    true_identity = [r"the quartic is \[(x - p)^2 (x + p)^2 = x^4 - 2p^2 x^2 + p^4.\]"]
    assert [v.label for v in verifier.check_steps(COMPETITION, true_identity)] != ["incorrect"]


def test_money_dollars_open_no_math_segment() -> None:
    from prm_factory.verifiers.math.competition import certain_context

    money = "Tanya spent a total of 240+100 = $336 in the store."
    assert certain_context(money, money.index("240"), money.index(" in the"))
    cut = r"so $x = 2y + 3 z$ and"
    assert not certain_context(cut, cut.index("x ="), cut.index(" z"))


@pytest.mark.parametrize(
    ("before", "after", "rewrite", "holds"),
    [
        # a double inequality is its two relations holding together (2.3.0)
        ("0 < 3m + 2 < 60", r"-\frac{2}{3} < m < \frac{58}{3}", False, True),
        (r"1 \le 2x - 3 \le 5", r"2 \le x \le 4", True, True),
        ("5 > 2x - 3 > 1", "4 > x > 2", False, True),
        ("x^2 < 4", "-2 < x < 2", False, True),
        # whole numbers in a bound: narrowing it to integers is never called wrong, even as a rewrite
        (r"-\frac{2}{3} < m < \frac{58}{3}", r"0 \le m \le 19", True, None),
        (r"m > \frac{5}{2}", r"m \ge 3", True, None),
        # an interval given is a set a step may map (`2 \le x \le 3` becomes `1 \le x \le 3/2` under a
        # compression): never judged as an inequality to solve
        (r"-2 < m < 19 + \frac{1}{3}", r"-2 \le m \le 18", False, None),
        (r"2 \le x \le 3", r"1 \le x \le \frac{3}{2}", False, None),
        # a wrong bound: neither set holds the other
        (r"0 < 3m + 2 < 60", r"-2 < m < 19", False, False),
        ("x^2 < 9", "-2 < x < 4", False, False),
        (r"1 \le 2x - 3 \le 5", r"1 \le x \le 3", False, False),
        # marks pointing both ways, or an equation beside an inequality: not one statement, unread
        ("-2 < x > 1", "x > 1", False, None),
        ("x = 2 < 3", "x = 2", False, None),
    ],
)
def test_double_inequalities_are_read_as_both_relations(
    before: str, after: str, rewrite: bool, holds: bool | None
) -> None:
    assert judge_step(before, after, rewrite)[0] is holds


def test_a_numeral_with_leading_zeros_is_the_number_after_them() -> None:
    """AIME answers are written with three digits (`x = 080`): not 0 times 80."""
    from prm_factory.verifiers.math.solution_sets import judge_step

    assert judge_step(r"\frac{3}{2}x + x = 200", "x = 080")[0] is True
    assert judge_step(r"\frac{3}{2}x + x = 200", "x = 081")[0] is False
    assert judge_step("4x = 10", "x = 2.50")[0] is True  # a decimal's zeros are left alone
