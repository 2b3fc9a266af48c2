"""Claim classes read by verifier 2.5.0 (issue 22): a displayed line opening on `=` after a few words or at
the head of the next step goes on with the display before it, and equation steps read `\\pi` as the constant
and `\\left( ... \\right)` as brackets. Each class: a false claim is caught, a true one is never `incorrect`,
and what is not read with certainty stays unjudged."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.display_lines import continued_across
from prm_factory.verifiers.math.equation_steps import _reduced
from prm_factory.verifiers.math.plain_algebra import plain_algebra
from prm_factory.verifiers.math.solution_sets import judge_step
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")


def _labels(verifier: MathVerifier, steps: list[str]) -> list[str]:
    return [v.label for v in verifier.check_steps(COMPETITION, steps)]


# --- a display opening on `=` after words, or in the next step ----------------------------------------


def test_a_display_after_a_few_words_goes_on_with_the_display_before() -> None:
    steps = [r"So \[ E = (t + 2)(t - 1) \]", r"Let's simplify the expression: \[ = t^2 + t - 2 \]"]
    joined = r"Let's simplify the expression: \[ (t + 2)(t - 1) = t^2 + t - 2 \]"
    assert continued_across(steps) == [steps[0], joined]
    same_step = r"\[ 3 \cdot 4 \] which gives: $$= 12$$"
    assert continued_across([same_step]) == [r"\[ 3 \cdot 4 \] which gives: $$ 3 \cdot 4 = 12$$"]


@pytest.mark.parametrize(
    "steps",
    [
        [r"\[ A = (t + 2)(t - 1) \]", r"Wait, let me recompute: \[ = t^2 + t - 2 \]"],  # a correction
        [r"\[ A = (t + 2)(t - 1) \]", r"For the numerator: \[ = t^2 + t - 2 \]"],  # a part of it
        [r"\[ A = (t + 2)(t - 1) \] with \( t = 2 \)", r"So: \[ = t^2 + t - 2 \]"],  # math between
        [r"\[ A = (t + 2)(t - 1) \]", "Now we expand.", r"\[ = t^2 + t - 2 \]"],  # a step between
        [r"\[ A \le (t + 2)(t - 1) \]", r"So: \[ = t^2 + t - 2 \]"],  # the last side is a bound
        [r"\[ A = 2 \\ B = (t + 2)(t - 1) \]", r"So: \[ = t^2 + t - 2 \]"],  # a list of lines
        [r"\[ A = (t + 2)(t - 1) \]", "So, " + "after a long remark, " * 12 + r"\[ = t^2 + t - 2 \]"],
    ],
)
def test_a_display_is_not_joined_across_anything_but_a_few_words(steps: list[str]) -> None:
    assert continued_across(steps) == steps


@pytest.mark.parametrize(
    ("steps", "labels"),
    [
        # the first line of the next step rewrites the expression the display before ends on
        (
            [
                r"Next: \[ (2x + 3(2x - 3)) - 4(x + 1) \]",
                r"Simplify inside: \[ = (2x + 6x - 9) - 4x - 4 \] \[ = 4x - 13 \]",
            ],
            ["unverifiable", "correct"],
        ),
        (
            [
                r"Next: \[ (2x + 3(2x - 3)) - 4(x + 1) \]",
                r"Simplify inside: \[ = (2x + 6x - 3) - 4x - 4 \] \[ = 4x - 7 \]",
            ],
            ["unverifiable", "incorrect"],
        ),
        (
            [r"So \[ S = 1001 \cdot 999 + 1001 \]", r"Factor out: \[ = 1001(999 + 1) \] \[ = 1001000 \]"],
            ["unverifiable", "correct"],
        ),
        (
            [r"So \[ S = 1001 \cdot 999 + 1001 \]", r"Factor out: \[ = 1001(999 - 1) \] \[ = 998998 \]"],
            ["unverifiable", "incorrect"],
        ),
        # a correction after the display: the new line is not read as the same expression
        (
            [r"So \[ S = 1001 \cdot 999 + 1001 \]", r"Wait, that is wrong: \[ = 1001(999 - 1) \]"],
            ["unverifiable", "unverifiable"],
        ),
    ],
)
def test_a_continued_display_is_judged_against_the_one_before(
    verifier: MathVerifier, steps: list[str], labels: list[str]
) -> None:
    assert _labels(verifier, steps) == labels


# --- equation steps with pi and sized brackets --------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "holds"),
    [
        (r"6531.2 = \left(\frac{r}{2}\right) \cdot 80 \cdot 2\pi", r"6531.2 = r \cdot 80\pi", True),
        (r"6531.2 = \left(\frac{r}{2}\right) \cdot 80 \cdot 2\pi", r"6531.2 = r \cdot 160\pi", False),
        (r"\pi r^2 = 196", r"r^2 = \frac{196}{\pi}", True),
        (r"\pi r^2 = 196", r"r^2 = 196\pi", False),
        (r"2\pi r = 10\pi", r"r = 5", True),
        (r"2\pi r = 10\pi", r"r = 10", False),
        (r"\left(x + 1\right)^2 = 4", r"x + 1 = 2 \text{ or } x + 1 = -2", True),
        (r"\left(x + 1\right)^2 = 4", r"x = 1 \text{ or } x = -2", False),
        (r"\pi r^2 = 196", r"r = \frac{14}{\sqrt{\pi}}", None),  # a dropped root: never called wrong
        (r"x^2 < \pi", r"x < 2", None),  # an inequality with pi: not read
        (r"\pi(x) = 4", r"x = 4", None),  # pi applied like a function: not plain algebra
    ],
)
def test_equation_steps_read_pi_as_the_constant(before: str, after: str, holds: bool | None) -> None:
    assert judge_step(before, after, False)[0] is holds


def test_pi_is_plain_algebra_only_where_asked() -> None:
    assert plain_algebra(r"2\pi r = 10\pi", pi=True)
    assert not plain_algebra(r"2\pi r = 10\pi")  # systems and identities keep their reading
    assert not plain_algebra(r"2\pin = 1", pi=True)  # a longer command is no pi


@pytest.mark.parametrize(
    ("steps", "labels"),
    [
        (
            [
                r"So \[ 6531.2 = \left(\frac{r}{2}\right) \cdot 80 \cdot 2\pi, \] which simplifies to"
                r" \[ 6531.2 = r \cdot 160\pi. \]"
            ],
            ["incorrect"],
        ),
        (
            [
                r"So \[ 6531.2 = \left(\frac{r}{2}\right) \cdot 80 \cdot 2\pi, \] which simplifies to"
                r" \[ 6531.2 = r \cdot 80\pi. \]"
            ],
            ["unverifiable"],  # the equation step holds; each relation alone, in an unknown, is unjudged
        ),
    ],
)
def test_an_equation_step_with_pi_is_judged(
    verifier: MathVerifier, steps: list[str], labels: list[str]
) -> None:
    assert _labels(verifier, steps) == labels


# --- which relation a step rewrites: a radius `r`, a value set equal to a chain of rewrites -----------


def test_a_value_equal_to_a_chain_of_rewrites_states_the_value_equal_to_the_last() -> None:
    assert _reduced(r"6531.2 = \frac{r}{2} \cdot 160\pi = 80\pi r") == r"6531.2 = 80\pi r"
    assert _reduced(r"2x = 7 - 3 = 4") == "2x = 4"
    assert _reduced(r"x + 1 = 2x = 4") == r"x + 1 = 2x = 4"  # names on both ends: no one reading
    assert _reduced(r"6 = 2x = y") == r"6 = y"


@pytest.mark.parametrize(
    ("steps", "labels"),
    [
        # displayed lines of one derivation, in the radius `r` (a name, not the word "or")
        ([r"\[ 62.8 = 2\pi r \cdot 2 = 4\pi r \] \[ 62.8 = 8\pi r \]"], ["incorrect"]),
        ([r"\[ 62.8 = 2\pi r \cdot 2 = 4\pi r \] \[ 62.8 = 4 r\pi \]"], ["unverifiable"]),
        ([r"Subtracting $3r$ from both sides, $5r + 2 = 3r + 8$ becomes $2r = 8$."], ["incorrect"]),
        ([r"Subtracting $3r$ from both sides, $5r + 2 = 3r + 8$ becomes $2r = 6$."], ["unverifiable"]),
        # "or" between alternatives is a word, not a name
        ([r"Factoring, $r^2 - 5r + 6 = 0$ gives $r = 2$ or $r = 3$."], ["unverifiable"]),
    ],
)
def test_equation_steps_in_r_are_judged(verifier: MathVerifier, steps: list[str], labels: list[str]) -> None:
    # a true step stays `unverifiable`: each relation alone, in an unknown, is unjudged
    assert _labels(verifier, steps) == labels


@pytest.mark.parametrize(
    ("before", "after", "holds"),
    [
        # dividing both sides by a common factor drops its zeros, which the text may exclude: not decided
        (r"\frac{4}{3} \pi r^3 = 4 \pi r^2", r"\frac{1}{3} r = 1", None),
        (r"x^3 = 4x^2", r"x - 4 = 0", None),
        # ... but a wrong quotient is still wrong
        (r"\frac{4}{3} \pi r^3 = 4 \pi r^2", r"\frac{1}{3} r = 2", False),
        # with no common factor, a rewrite that changes the solution set is wrong
        (r"-x^2 - x + 1 = 2x^2 - 1", r"0 = 3x^2 - x + 2", False),
    ],
)
def test_a_common_factor_divided_out_is_no_certain_error(before: str, after: str, holds: bool | None) -> None:
    assert judge_step(before, after, True)[0] is holds


@pytest.mark.parametrize(
    ("before", "after", "holds"),
    [
        # divided by `10r` with `r > 0` said elsewhere: the sets agree for every positive `r`
        (r"r^2 < 10", r"\frac{r}{10} < \frac{1}{r}", None),
        (r"x^2 > 4", r"x > \frac{4}{x}", None),
        # a wrong rewrite differs on both halves: still wrong
        (r"r^2 - 5r + 4 > 2r^2 - 4r", r"0 > r^2 - r - 4", False),
        (r"m^2 - 4(2)(8) > 0", r"m^2 - 32 > 0", False),
    ],
)
def test_an_inequality_divided_by_a_signed_unknown_is_no_certain_error(
    before: str, after: str, holds: bool | None
) -> None:
    assert judge_step(before, after, True)[0] is holds


def test_two_empty_halves_excuse_nothing() -> None:
    # [2, 4] -> [1, 3]: no negative solutions on either side, and the positive ones differ
    assert judge_step(r"1 \le 2x - 3 \le 5", r"1 \le x \le 3", False)[0] is False


@pytest.mark.parametrize(
    ("before", "after", "holds"),
    [
        # constants collected to another value: no point solves both, whatever links them
        (r"x^2 - 10x + 25 + y^2 - 14y + 49 = 13", r"x^2 + y^2 - 10x - 14y + 74 = 0", False),
        (r"2x + 2y + 2 + 4 = 10", r"x + y = 3", False),
        (r"x^2 - 10x + 25 + y^2 - 14y + 49 = 13", r"x^2 + y^2 - 10x - 14y + 61 = 0", None),  # right, unjudged
        (r"2x + 2y + 2 + 4 = 10", r"x + y = 2", None),
        # two equations written collected may be two lines or circles of a system: never judged
        (r"3x + 4y = 12", r"3x + 4y = 2", None),
        (r"x^2 + y^2 = 4", r"x^2 + y^2 = 9", None),
        # other terms in the unknowns: another equation, not judged
        (r"x + y + 2 + 4 = 10", r"x - y = 2", None),
    ],
)
def test_constants_collected_to_another_value_in_several_unknowns(
    before: str, after: str, holds: bool | None
) -> None:
    assert judge_step(before, after, False)[0] is holds


def test_a_displayed_expansion_collected_to_another_value_is_caught(verifier: MathVerifier) -> None:
    step = r"We expand: \[ x^2 - 10x + 25 + y^2 - 14y + 49 = 13, \] \[ x^2 + y^2 - 10x - 14y + 74 = 0. \]"
    assert _labels(verifier, [step]) == ["incorrect"]
    step = r"We expand: \[ x^2 - 10x + 25 + y^2 - 14y + 49 = 13, \] \[ x^2 + y^2 - 10x - 14y + 61 = 0. \]"
    assert _labels(verifier, [step]) != ["incorrect"]


def test_alternatives_are_no_chain_of_rewrites() -> None:
    joined = r"0=\frac{2}{3}x+5 \text{ or } -5=\frac{2}{3}x"
    assert _reduced(joined) == joined
    assert _reduced(r"x = 3 \pm 1 = 2") == "x = 2"  # later sides all values: as before
