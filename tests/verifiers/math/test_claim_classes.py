"""Claim classes read in context by verifier 2.2.0 (issue 22): factorials of written numbers, `\\pm` on both
sides, quadratic-formula lines, degree marks inside fractions and trig powers, bare `\\frac12`, lines of a
displayed derivation, divisibility said in words and LaTeX thousands groups. Each class: a false claim is
caught, a true one is never `incorrect`, and what is not read with certainty stays unjudged."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.display_lines import joined_plus_minus_lines
from prm_factory.verifiers.math.divisibility import divisibility_claims
from prm_factory.verifiers.math.equation_steps import equation_pairs
from prm_factory.verifiers.math.factorials import factorials_written_out
from prm_factory.verifiers.math.solution_sets import judge_step
from prm_factory.verifiers.math.symbolic import in_degrees, latex_claims, plus_minus_branches
from prm_factory.verifiers.math.thousands import thousands_joined
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")


def _labels(verifier: MathVerifier, steps: list[str]) -> list[str]:
    return [v.label for v in verifier.check_steps(COMPETITION, steps)]


# --- factorials ---------------------------------------------------------------------------------------


def test_factorials_of_written_numbers_inside_math_are_written_out() -> None:
    assert factorials_written_out(r"\( \frac{5!}{2!3!} = 10 \)") == r"\( \frac{(120)}{(2)(6)} = 10 \)"
    assert (
        factorials_written_out(r"\[ \frac{13!}{4!(13-4)!} \]") == r"\[ \frac{(6227020800)}{(24)(362880)} \]"
    )
    assert factorials_written_out(r"$10\cdot9!$") == r"$10\cdot(362880)$"  # after a command
    unchanged = [
        r"That is 3! Amazing.",  # prose, not math
        r"\( n! = 120 \)",  # a name
        r"\( (n-4)! \)",  # a bracket in names
        r"\( 5!! = 15 \)",  # a double factorial
        r"\( x9! \)",  # after a name
        r"\( 2^{5!} \)",  # inside a power
        r"$5 for 3! pens$",  # dollars around prose
        r"\( 31! \)",  # beyond the table
    ]
    for text in unchanged:
        assert factorials_written_out(text) == text


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"So there are \(\binom{5}{2} = \frac{5!}{2!3!} = 10\) ways.", "correct"),
        (r"So there are \(\binom{5}{2} = \frac{5!}{2!3!} = 20\) ways.", "incorrect"),
        (r"Thus \[ \sqrt{7!} = \boxed{1680}. \]", "incorrect"),
        (r"Thus \[ 7! = 7 \cdot 720 = 5040. \]", "correct"),
        (r"Thus \( n! = 5040 \).", "unverifiable"),  # a name: not read
    ],
)
def test_factorial_claims(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- plus-minus ---------------------------------------------------------------------------------------


def test_plus_minus_on_both_sides_is_two_claims() -> None:
    assert plus_minus_branches(r"\frac{1 \pm \sqrt{7753}}{6}", r"\frac{1 \pm 88}{6}")[0] is False
    assert plus_minus_branches(r"\frac{4 \pm \sqrt{16 + 96}}{16}", r"\frac{4 \pm \sqrt{112}}{16}")[0] is True
    assert plus_minus_branches(r"\frac{1 \pm 3}{2}", r"2, -1") is None  # one side only: not this form
    assert plus_minus_branches(r"x \pm 1", r"\pm 3")[0] is None  # a name in a branch
    assert plus_minus_branches(r"1 \pm 2 \pm 3", r"\pm 4") is None  # two signs on one side
    rounded = plus_minus_branches(r"\frac{-6 \pm \sqrt{42068}}{2}", r"\frac{-6 \pm 205.1}{2}")
    assert rounded[0] is None  # a decimal written in the pair: rounded, within 1 %
    assert plus_minus_branches(r"\frac{-6 \pm \sqrt{42068}}{2}", r"\frac{-6 \pm 215.1}{2}")[0] is False


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"\[x = \frac{1 \pm \sqrt{1 + 4 \cdot 3 \cdot 646}}{6} = \frac{1 \pm \sqrt{7753}}{6}\]", "correct"),
        (r"\[x = \frac{1 \pm \sqrt{7753}}{6} = \frac{1 \pm 88}{6}\]", "incorrect"),
        (r"\[x = \frac{1 \pm \sqrt{y}}{6} = \frac{1 \pm 88}{6}\]", "unverifiable"),
    ],
)
def test_plus_minus_claims(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


def test_quadratic_formula_lines_are_one_chain() -> None:
    lines = r"\[a = \frac{108 \pm \sqrt{11664 + 54900}}{122}\] \[a = \frac{108 \pm \sqrt{66564}}{122}\]"
    assert joined_plus_minus_lines(lines) == (
        r"\[a = \frac{108 \pm \sqrt{11664 + 54900}}{122} = \frac{108 \pm \sqrt{66564}}{122}\]"
    )
    roots = r"\[x = \frac{1 + \sqrt5}{2}\] \[x = \frac{1 - \sqrt5}{2}\]"  # two roots listed, no \pm
    other_name = r"\[x = 1 \pm 2\] \[y = 3 \pm 1\]"
    words_between = r"\[x = 1 \pm 2\] and so \[x = 3 \pm 1\]"
    for text in (roots, other_name, words_between):
        assert joined_plus_minus_lines(text) == text


def test_quadratic_formula_lines_judged(verifier: MathVerifier) -> None:
    first = r"\[a = \frac{108 \pm \sqrt{(-108)^2 - 4(61)(-225)}}{122}\] "
    wrong = first + r"\[a = \frac{108 \pm \sqrt{11664 + 55425}}{122}\]"  # 4 * 61 * 225 = 54900
    right = first + r"\[a = \frac{108 \pm \sqrt{11664 + 54900}}{122}\]"
    assert _labels(verifier, [wrong]) == ["incorrect"]
    assert _labels(verifier, [right]) != ["incorrect"]


# --- degrees and fractions ------------------------------------------------------------------------------


def test_a_degree_mark_inside_a_fraction_leaves_the_fraction_whole() -> None:
    assert in_degrees(r"\frac{1 - \cos 45^\circ}{2}") == r"\frac{1 - \cos \left(\frac{45 \pi}{180}\right)}{2}"
    assert in_degrees(r"\tan^2 20^\circ") == r"\left(\tan \left(\frac{20 \pi}{180}\right)\right)^{2}"


@pytest.mark.parametrize(
    ("claim", "holds"),
    [
        (r"\sqrt{\frac{1 - \cos 45^\circ}{2}} = \sqrt{\frac{1 - \frac{\sqrt{2}}{2}}{2}}", True),
        (r"\sin 52.5^\circ = \sqrt{\frac{1 - \cos 90^\circ}{2}}", False),  # half of 105 degrees, not 90
        (r"\tan^2 15^\circ = 7 - 4\sqrt{3}", True),
        (r"(\tan 20^\circ - \sqrt{3})(\tan^2 20^\circ - 2) = 0", False),
        (r"\sin 30^\circ = \frac12", True),
        (r"\frac12 + \frac{1}3 = \frac56", True),
        (r"\frac12 + \frac13 = \frac25", False),
    ],
)
def test_trig_in_degrees_and_bare_fractions(claim: str, holds: bool) -> None:
    ((result,),) = latex_claims([(claim, {})])
    assert result[1] is holds


# --- lines of a displayed derivation ----------------------------------------------------------------------


def test_displayed_lines_of_one_derivation_are_equation_steps() -> None:
    block = [r"Solving for \( x \) yields: \[ (16 + x)(12) = 324, \] \[ 16 + x = 27, \] \[ x = 8. \]"]
    pairs = [(p.before, p.after) for p in equation_pairs(block)]
    assert ("16 + x = 27", "x = 8") in pairs
    assert judge_step("16 + x = 27", "x = 8")[0] is False
    assert judge_step("16 + x = 27", "x = 11")[0] is True
    listed_values = [r"The roots are \[ x = 2, \] \[ x = 3. \]"]  # a solved value above: a list
    system = [r"We have \[ a + b = 7 \] \[ a - b = 1 \]"]  # two unknowns, no rewrite said
    inequalities = [r"We need \[ x > 2 \] \[ x < 5 \]"]
    words_between = [r"\[ x + 1 = 3 \] Now take the other equation \[ x^2 = 9 \]"]
    for chain in (listed_values, inequalities, words_between):
        assert equation_pairs(chain) == []
    assert all(judge_step(p.before, p.after, p.rewrite)[0] is None for p in equation_pairs(system))


def test_a_rounded_decimal_after_is_not_judged() -> None:
    rounded = [r"Thus \[ 92y = -1732 \] \[ y = -18.83 \]"]
    assert equation_pairs(rounded) == []


def test_displayed_derivation_judged(verifier: MathVerifier) -> None:
    wrong = [r"Solving for \( x \) yields: \[ 16 + x = 27, \] \[ x = 8. \]"]
    right = [r"Solving for \( x \) yields: \[ 16 + x = 27, \] \[ x = 11. \]"]
    assert _labels(verifier, wrong) == ["incorrect"]
    assert _labels(verifier, right) != ["incorrect"]


# --- divisibility in words ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "holds"),
    [
        ("Since 111111111 is not divisible by 9, we stop.", False),
        ("Since 111111111 is divisible by 9, we go on.", True),
        (r"but \(4! = 24\) is divisible by \(9\).", False),  # the value the computation ended on
        (r"but \((24) = 24\) is divisible by \(9\).", False),  # a computation's value
        ("we find that 10236 is not divisible by 3 and 6, and so on.", False),  # divisible by both
        ("we find that 10239 is not divisible by 3 and 9, and so on.", True),  # not by both: kind reading
        ("Then 10248 is divisible by 8 and 4, hence", True),
        (r"So, \(475,032\) is divisible by 11.", False),  # thousands groups read whole
        (r"So \(12,\!005\) is divisible by 7.", True),
    ],
)
def test_divisibility_of_written_numbers(step: str, holds: bool | None) -> None:
    found = divisibility_claims(step)
    assert (found[0].holds if found else None) is holds


@pytest.mark.parametrize(
    "step",
    [
        "Check if 102 is divisible by 3.",  # a test, not a claim
        "For N to be divisible by 9, 18 is divisible by 4.",  # a requirement
        r"This means \(3x - 1\) is divisible by \(19\).",  # about an expression
        "so 2^3 is divisible by 5",  # an exponent, not the subject
        "a number divisible by both $2$ and $3$ is also divisible by $5$.",  # the end of a list
        "24 is divisible by 3 or 5.",  # "or" is not read
        "Is 12 divisible by 5?",
        "If 12 is divisible by 5, then",
    ],
)
def test_divisibility_not_read_where_not_certain(step: str) -> None:
    assert divisibility_claims(step) == []


def test_divisibility_judged_in_competition_chains(verifier: MathVerifier) -> None:
    assert _labels(verifier, [r"We know $4! = 24$ is divisible by $9$."]) == ["incorrect"]
    assert _labels(verifier, [r"We know $3! = 6$ is divisible by $3$."]) == ["correct"]


# --- thousands groups -----------------------------------------------------------------------------------


def test_latex_thousands_groups_are_one_number() -> None:
    assert thousands_joined(r"$100{,}001 = 7 \times 14{,}286 - 1$") == r"$100001 = 7 \times 14286 - 1$"
    assert thousands_joined(r"$12,\!000$") == "$12000$"
    for text in (r"the list $1,2$", r"$1{,}2345$", r"$1,000$"):  # not a group, or a bare comma
        assert thousands_joined(text) == text


def test_thousands_groups_judged(verifier: MathVerifier) -> None:
    assert _labels(verifier, [r"Second, $100{,}001 = 7 \times 11 \times 13 \times 101$."]) == ["incorrect"]
    assert _labels(verifier, [r"Second, $100{,}001 = 11 \times 9091$."]) == ["correct"]


# --- competition detection ------------------------------------------------------------------------------


def test_an_absolute_value_in_dollars_is_competition_math(verifier: MathVerifier) -> None:
    problem = Problem("m459", "math", "math", "Find the sum of all solutions of the equation $|2-x|= 3$.")
    alternatives = ["In order to have $|2-x| = 3$, we must have $2-x = 3$ or $2-x = -3$."]
    assert [v.label for v in verifier.check_steps(problem, alternatives)] != ["incorrect"]
    money = Problem("g1", "gsm8k", "math", "Tom pays $5 for 2 pens. How much for 6 pens?")
    assert [v.label for v in verifier.check_steps(money, ["6 / 2 * 5 = 16"])] == ["incorrect"]


def test_a_run_opening_on_an_operator_is_cut(verifier: MathVerifier) -> None:
    cut = [r"Setting $n = 7,$ we get \[f(15) = f(7) + 1 = \boxed{4}.\]"]  # read from `+ 1`: not whole
    angle = [r"Substituting: $$\angle DAE + 60^\circ = 180^\circ$$"]
    assert _labels(verifier, cut) == ["unverifiable"]
    assert _labels(verifier, angle) == ["unverifiable"]
    assert _labels(verifier, [r"So $-2 + 3 = 2$."]) == ["incorrect"]  # a leading minus is a sign
    assert _labels(verifier, [r"So $2 + 3 = 6$."]) == ["incorrect"]
