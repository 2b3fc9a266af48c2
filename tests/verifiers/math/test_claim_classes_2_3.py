"""Claim classes read by verifier 2.3.0 (issue 22): trig of a multiple of `\\pi` read in radians, and double
inequalities in one unknown read as both relations. Each class: a false claim is caught, a true one is
never `incorrect`, and what is not read with certainty stays unjudged."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.competition import certain_claim_text, connector_pieces, radians_said
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")


def _labels(verifier: MathVerifier, steps: list[str]) -> list[str]:
    return [v.label for v in verifier.check_steps(COMPETITION, steps)]


# --- trig of a multiple of pi: radians ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        (r"\frac{\sin \frac{7\pi}{2}}{2^6} = \frac{1}{2^6}", True),
        (r"\cos(2\pi/3) = -\frac{1}{2}", True),
        (r"\sin\left(\frac{\pi}{6}\right) = \frac{1}{2}", True),
        (r"\cos 2\pi = 1", True),
        (r"\sin 30 = \frac12", False),  # radians or degrees? not said
        (r"\sin \frac{\pi}{6} + \cos 1 = 2", False),  # one argument without pi
        (r"\tan \pi/4 = 1", False),  # tan(pi)/4 or tan(pi/4)?
        (r"\cos \pi \cdot 2 = -2", False),  # does the product belong to the argument?
        (r"\sin \pi x = 0", False),  # a name in the argument
    ],
)
def test_radians_said_only_by_a_whole_argument_in_pi(claim: str, said: bool) -> None:
    assert radians_said(claim) is said
    assert certain_claim_text(claim) is said


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"So \[ \frac{\sin \frac{7\pi}{2}}{2^6} = \frac{1}{2^6}. \]", "incorrect"),  # sin(7pi/2) = -1
        (r"So \[ \frac{\sin \frac{7\pi}{2}}{2^6} = -\frac{1}{2^6}. \]", "correct"),
        (r"Hence \( \cos\left(\frac{2\pi}{3}\right) = \frac{1}{2} \).", "incorrect"),
        (r"Hence \( \cos\left(\frac{2\pi}{3}\right) = -\frac{1}{2} \).", "correct"),
        (r"Hence \( \tan \pi/4 = 0 \).", "unverifiable"),  # tan(pi)/4 = 0 is one reading
        (r"Hence \( \sin 30 = \frac{1}{2} \).", "unverifiable"),
    ],
)
def test_trig_in_radians_judged(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- double inequalities ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "label"),
    [
        ([r"Since \(0 < 3m + 2 < 60\), we get \(-\frac{2}{3} < m < \frac{58}{3}\)."], "correct"),
        ([r"Since \(0 < 3m + 2 < 60\), we get \(-\frac{2}{3} < m < 20\)."], "correct"),  # implied
        ([r"Since \(0 < 3m + 2 < 60\), we get \(-2 < m < 19\)."], "incorrect"),
        # an interval given may be mapped to another: not an inequality to solve
        ([r"The interval \( 2 \leq x \leq 3 \) becomes \( 1 \leq x \leq \frac{3}{2} \)."], "unverifiable"),
        ([r"So \(x^2 < 9\), which gives \(-2 < x < 4\)."], "incorrect"),
        # whole numbers: a bound narrowed to integers is never called wrong
        ([r"So \(0 < 3m + 2 < 60\), which gives \(0 \le m \le 19\)."], "unverifiable"),
    ],
)
def test_double_inequality_steps_judged(verifier: MathVerifier, steps: list[str], label: str) -> None:
    assert _labels(verifier, steps)[-1] == label


# --- statements joined by a connector inside one run --------------------------------------------------


def test_a_run_is_cut_at_its_connectors() -> None:
    assert connector_pieces(
        r"\frac{100}{11} \approx 9.09 \quad \Rightarrow \quad \lceil 9.09 \rceil = 10"
    ) == [
        r"\frac{100}{11} \approx 9.09",
        r"\lceil 9.09 \rceil = 10",
    ]
    assert connector_pieces(r"x = 3 \quad \text{and} \quad y = 4") == []  # names: left to the whole run
    assert connector_pieces(r"2 + 2 = 4") == [r"2 + 2 = 4"]  # none
    assert connector_pieces(r"f\left(1 \quad 2\right) = 3") == [
        r"f\left(1 \quad 2\right) = 3"
    ]  # inside a bracket


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (
            r"\[ \frac{100}{11} \approx 9.0909 \quad \Rightarrow \quad \lceil 9.0909 \rceil = 9 \]",
            "incorrect",
        ),
        (
            r"\[ \frac{100}{11} \approx 9.0909 \quad \Rightarrow \quad \lceil 9.0909 \rceil = 10 \]",
            "unverifiable",
        ),  # true: never incorrect
        (r"\[ 2x = 8 \implies x = 5 \]", "incorrect"),  # an equation step, as before
        (r"\[ 2x = 8 \quad \Rightarrow \quad x = 4 \]", "unverifiable"),  # true: never incorrect
        (r"\[ x = 3 \quad \Rightarrow \quad 2x + 1 = 6 \]", "unverifiable"),  # a name: not read as a value
        # an equation in names is never read alone as an identity because the step says "simplifies"
        (r"This simplifies to: \[ c + d = 2(d - c) \implies c + d = 2d - 2c \]", "unverifiable"),
    ],
)
def test_statements_joined_by_a_connector_judged(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- misreadings removed: an operator the problem defines, a binary minus, degrees on one side ---------


@pytest.mark.parametrize(
    ("step", "label"),
    [
        # `3 \& 5` is an operator the problem defines: `5 = \frac{3+5}{2}` is no claim
        (r"We have $3 \& 5 = \frac{3+5}{2} = \frac{8}{2} = 4$.", "correct"),
        (r"We have $ \#(\&4) = \#(4+5) = \#(9) = 9^2 = \boxed{81}$.", "correct"),
        (
            r"We have $\frac{7}{30}@\frac{10}{21}=(7)(10)\left(\frac{21}{30}\right)=\boxed{49}$.",
            "correct",
        ),
        # a minus after a name subtracts from it: `- 36^\circ-36^\circ = 108^\circ-...` lost its left operand
        (
            r"Since $\angle SQT = \angle PQR - 36^\circ-36^\circ = 108^\circ-36^\circ-36^\circ = 36^\circ$.",
            "unverifiable",
        ),
        # degrees on one side only: the bare side is in degrees said in words
        (
            r"It has moved $\frac{1}{12}\cdot 360^\circ=30$ degrees past the 3 o'clock position.",
            "unverifiable",
        ),
        (r"The interior angle is $$\frac{180(5-2)}{5}=108^{\circ},$$ as expected.", "unverifiable"),
        (
            r"Since $\angle SQT = \angle PQR - 36^\circ-36^\circ = 108^\circ-36^\circ-36^\circ = 30^\circ$.",
            "incorrect",  # the whole sides after it are still judged
        ),
        # still caught: a false claim in pure numbers, a sign before a bracket, degrees on every side
        (r"So $3 + 5 = 9$.", "incorrect"),
        (r"So $-1 + 4 = 2$.", "incorrect"),
        (r"So $180^\circ - 50^\circ = 120^\circ$.", "incorrect"),
        (r"So $\sin 30^\circ = \frac{1}{3}$.", "incorrect"),
    ],
)
def test_misreadings_of_operators_and_units_are_not_judged(
    verifier: MathVerifier, step: str, label: str
) -> None:
    assert _labels(verifier, [step]) == [label]


@pytest.mark.parametrize(
    ("step", "label"),
    [
        # a whole number written as "about": within a unit of its last digit is no error
        (r"So \[ \sqrt{\tfrac{1000}{3}} \approx 18 \] and we try $n = 18$.", "unverifiable"),
        (r"So \[ \sqrt{\tfrac{1000}{3}} \approx 17 \].", "incorrect"),
        (r"So \( \frac{100}{7} \approx 15.3 \).", "incorrect"),
        (r"So \( \frac{100}{7} \approx 14.3 \).", "correct"),
        # a power of a negative base: the real reading, not the principal complex one
        (
            r"We have \[(-125)^{4/3} = ((-5)^3)^{4/3} = (-5)^{3\cdot (4/3)} = (-5)^4 = \boxed{625}.\]",
            "unverifiable",
        ),
        # binomials side by side multiply (the LaTeX parser had added them: 482)
        (r"$$ \binom{6}{3}\binom{11}{5} = (20)(462) = \boxed{9,\!240}.$$", "correct"),
        (r"$$ \binom{6}{3}\binom{11}{5} = 482.$$", "incorrect"),
        (r"So $\binom{5}{2}(3) = 30$.", "correct"),
        (r"So $\binom{5}{2} + \binom{5}{3} = 20$.", "correct"),
    ],
)
def test_values_read_as_written(verifier: MathVerifier, step: str, label: str) -> None:
    """Approximations, branches of a power and products of binomials: the value the text means."""
    assert _labels(verifier, [step]) == [label]
