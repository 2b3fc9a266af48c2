"""System results (issue 22): a relation a step derives by solving or combining the equations just before it
must hold at one of their solutions; a value tried, a branch, a case, a list or a given taken up again is
never read as a result."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.system_solutions import judge_result
from prm_factory.verifiers.math.systems import system_items
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem(
    "c1", "math", "math", r"Find the ordered pair $(a,c)$ such that the vectors are orthogonal."
)

SYSTEM = r"Expanding these out, we get: \[ a - 1 + 2c = 0, \] \[ 2a + 4 + c = 0. \]"
PARTIAL = [
    r"We can now equate coefficients. Therefore, \[ A+B=7. \]",
    r"The constant term on the left-hand side is \(2A-2B\), while on the right-hand side it is \(-2\). "
    r"Therefore, \[ 2A-2B=-2. \]",
]


@pytest.mark.parametrize(
    ("claim", "system"),
    [
        ("a = -3", ("2a + 4 + c = 0", "a - 1 + 2c = 0")),
        ("4A = 12", ("2A-2B=-2", "A+B=7")),
        ("x = 3", ("x^2 - 5x + 6 = 0",)),  # one root of two, taken for a stated reason
        ("C = -1", ("D = 4 - C", "9C - 2D = -19")),
        ("x = 7", ("y = 2", "x + y = 9", "x + y = 100")),  # the shortest latest run that fixes x
    ],
)
def test_true_results_hold(claim: str, system: tuple[str, ...]) -> None:
    assert judge_result(claim, system)[0] is True


@pytest.mark.parametrize(
    ("claim", "system"),
    [
        ("a = -6", ("2a + 4 + c = 0", "a - 1 + 2c = 0")),
        ("4B = 9", ("2A-2B=-2", "A+B=7")),
        ("x = 4", ("x^2 - 5x + 6 = 0",)),
        ("11C - 12 = 23", ("D = 4 - C", "C + D = 4", "9C - 2D = -19")),
    ],
)
def test_false_results_fail(claim: str, system: tuple[str, ...]) -> None:
    assert judge_result(claim, system)[0] is False


@pytest.mark.parametrize(
    ("claim", "system"),
    [
        ("x = 4", ("x + y = 9",)),  # not fixed: infinitely many solutions
        ("x = 4", ("x = 5",)),  # values given alone: nothing solved
        ("x = 4", ("x + y = 9", "x + y = 10")),  # no solution: not one system
        ("z = 1", ("x + y = 9", "x - y = 1")),  # another unknown
        ("f(x) = 2", ("x = 1", "2x = 2")),  # not plain algebra
        ("x = 2", ("x^3 = 8",)),  # beyond the degree read
    ],
)
def test_unread_or_undecided_is_no_verdict(claim: str, system: tuple[str, ...]) -> None:
    assert judge_result(claim, system)[0] is None


def test_results_are_read_only_after_words_of_solving() -> None:
    solved = [SYSTEM, r"Solving this system of equations, we obtain \(a = -6\) and \(c = \frac{5}{2}\)."]
    assert [(i.step, i.claim) for i in system_items(solved)] == [(1, "a = -6"), (1, r"c = \frac{5}{2}")]
    assert system_items(solved)[0].system == ("2a + 4 + c = 0", "a - 1 + 2c = 0")
    subtracted = [*PARTIAL, r"Subtracting the second equation from the first, we obtain \[ 4B=9 \]."]
    assert [i.claim for i in system_items(subtracted)] == ["4B=9"]
    unsaid = [SYSTEM, r"The answer is \(a = -6\)."]  # no word of solving: not read as a result
    assert system_items(unsaid) == []
    # a substitution that states its result is read; a value put in, or a branch, is not
    put_in = r"\( 8C - 3D = -23 \) and \( D = 4 - C \). Substituting this into the first equation gives "
    assert [i.claim for i in system_items([put_in + r"us \( 11C - 12 = 23 \)."])] == ["11C - 12 = 23"]
    assert system_items([SYSTEM, r"Substituting \( c = 2 \) into the first, we solve."]) == []
    assert system_items([SYSTEM, r"Solving, if \( c = 1 \), then \( a = -1 \)."]) == []


@pytest.mark.parametrize(
    "chain",
    [
        # a value put in or tried is no result
        [SYSTEM, r"Solving, we substitute \(a = -6\) into the second equation."],
        [SYSTEM, r"To solve it, let us try \(a = -6\)."],
        # a case opened between the equations and the result
        [SYSTEM, r"Case 2: suppose \(c = 0\). Solving gives \(a = 1\)."],
        # alternatives solved one by one: the second is a given taken up again
        [
            r"So \( x - 4 = 1 \) or \( x - 4 = 11 \). Solving these equations, we get: "
            r"\[ x - 4 = 1 \implies x = 5 \] \[ x - 4 = 11 \implies x = 15 \]"
        ],
        [
            r"This gives two equations: \[ 5-a = 3 \quad \text{or} \quad 5-a = -3 \]",
            r"Solve the first equation: \[ 5-a = 3 \] Subtract 5 from both sides: \[ a = 2 \]",
            r"Solve the second equation: \[ 5-a = -3 \] so \[ a = 8 \]",
        ],
        # a list of values of one name
        [
            r"Solving \( x^2 - 8x + 13 = 0 \) gives the roots.",
            r"To solve the inequality, the critical points are \(x = 1\), \(x = 4 - \sqrt{3}\), \(x = 7\).",
        ],
        # a retraction between
        [r"We have \( x + y = 5 \) and \( x - y = 1 \). Wait, that is a mistake. Solving, \( x = 4 \)."],
        # a rounded decimal
        [r"We have \( 3n = 74 \). Solving, \( n = 24.67 \)."],
    ],
)
def test_tried_values_branches_lists_and_retractions_are_not_results(chain: list[str]) -> None:
    assert [judge_result(i.claim, i.system)[0] for i in system_items(chain)].count(False) == 0


def test_chain_with_a_wrong_solution_is_flagged_at_that_step(verifier: MathVerifier) -> None:
    wrong = [SYSTEM, r"Solving this system of equations, we obtain \(a = -6\) and \(c = \frac{5}{2}\)."]
    right = [SYSTEM, r"Solving this system of equations, we obtain \(a = -3\) and \(c = 2\)."]
    assert [v.label for v in verifier.check_steps(COMPETITION, wrong)][1] == "incorrect"
    assert [v.label for v in verifier.check_steps(COMPETITION, right)][1] != "incorrect"
    combined = [*PARTIAL, r"Subtracting the second equation from the first, we obtain \[ 4B=9 \]."]
    combined_right = [*PARTIAL, r"Adding twice the first equation to the second, we obtain \[ 4A=12 \]."]
    assert [v.label for v in verifier.check_steps(COMPETITION, combined)][2] == "incorrect"
    assert [v.label for v in verifier.check_steps(COMPETITION, combined_right)][2] != "incorrect"
