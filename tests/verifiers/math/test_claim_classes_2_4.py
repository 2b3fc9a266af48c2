"""Claim classes read by verifier 2.4.0 (issue 22): logarithms with a base written in digits, statements
joined by relations other than `=` (`\\ge`, `\\le`, `\\neq`), and displayed lines that continue the line
above. Each class: a false claim is caught, a true one is never `incorrect`, and what is not read with
certainty stays unjudged."""

from __future__ import annotations

import pytest

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.arithmetic import lex
from prm_factory.verifiers.math.competition import certain_claim_text, logs_said, relation_pieces
from prm_factory.verifiers.math.display_lines import continued_lines
from prm_factory.verifiers.math.symbolic import relation_claim
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")


def _labels(verifier: MathVerifier, steps: list[str]) -> list[str]:
    return [v.label for v in verifier.check_steps(COMPETITION, steps)]


# --- logarithms with a stated base --------------------------------------------------------------------


def test_a_logarithm_with_its_base_is_one_token() -> None:
    tokens = lex(r"\log_5 49 = 2.64, \log_{10} 100 = 2")
    assert [(t.kind, t.text) for t in tokens if t.kind == "latex"] == [
        ("latex", r"\log_5"),
        ("latex", r"\log_{10}"),
    ]


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        (r"\log_5 49 = 2.64", True),
        (r"\log_{10} 1000 = 3", True),
        (r"\log_2 (8) + 1 = 4", True),
        (r"2\log_{11} 5^{-1} + 3 = 1", True),  # the power belongs to the argument
        (r"\ln 1 = 0", True),
        (r"\log 100 = 2", False),  # base 10 or e? not said
        (r"\log_b 8 = 3", False),  # a base in a name
        (r"\log_2 8 \cdot 3 = 9", False),  # does the product belong to the argument?
        (r"\log_{10} x = 2", False),  # a name in the argument
    ],
)
def test_logs_said_only_with_a_base_in_digits_and_a_whole_argument(claim: str, said: bool) -> None:
    assert logs_said(claim) is said
    assert certain_claim_text(claim) is said


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"So \( \log_5 49 = 2.64 \).", "incorrect"),  # 2.418...
        (r"So \( \log_5 49 \approx 2.42 \).", "correct"),
        (r"So \( \log_5 125 = 3 \) and \( \log_{10} 0.01 = -2 \).", "correct"),
        (r"So \( \log_2 8 = 4 \).", "incorrect"),
        (r"So \( \log 100 = 3 \).", "unverifiable"),  # no base said
        (r"So \( \log_b 8 = 3 \).", "unverifiable"),
        (r"So \( \log_2 8 \cdot 3 = 10 \).", "unverifiable"),  # log(8)*3 or log(24)?
        (r"So \( 3 \geq \log_5 n > \log_5 49 = 2.64 \).", "incorrect"),  # after a relation too
    ],
)
def test_logarithms_with_a_base_judged(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- statements joined by relations other than `=` -----------------------------------------------------


def test_a_run_is_cut_at_its_relations() -> None:
    assert relation_pieces(r"a^2 \ge (17 - 1)^2 = 49^2 = 2401") == [r"(17 - 1)^2 = 49^2 = 2401"]
    assert relation_pieces(r"2(-3)^4 - 3 = 162 - 3 \neq 0") == [r"2(-3)^4 - 3 = 162 - 3", r"162 - 3 \neq 0"]
    assert relation_pieces(r"x \le y = 5") == []  # `y = 5` after a relation defines no value
    assert relation_pieces(r"f\left(1 \le 2\right) = 3") == [r"f\left(1 \le 2\right) = 3"]  # in a bracket
    assert relation_pieces(r"2 + 2 = 4") == [r"2 + 2 = 4"]  # none


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        (r"162 - 108 - 45 - 6 - 3 \neq 0", False),
        (r"\frac{3}{2} \neq 1", True),
        (r"\sqrt{2} \le 1.5", True),
        (r"2 + 3 \le 4", False),
        (r"\frac{1}{3} > 0.33", None),  # within 1 % with a decimal written: maybe rounded
        (r"x \ge 2", None),  # a name
    ],
)
def test_a_relation_in_numbers_is_judged_on_values(text: str, holds: bool | None) -> None:
    claim = relation_claim(text)
    assert claim is not None and claim[1] is holds
    assert relation_claim(r"2 + 2 = 4") is None  # no relation: the run's own reading


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"Then \[(a^2 + b^2)(1 + 1) \ge (a + b)^2 = (17 - 1)^2 = 49^2 = 2401.\]", "incorrect"),
        (r"Then \[(a^2 + b^2)(1 + 1) \ge (a + b)^2 = (17 - 1)^2 = 16^2 = 256.\]", "unverifiable"),
        (r"So \[\cos \alpha \ge -\frac{1}{2} \cdot (-1) = -\frac{1 + \sqrt{5}}{4}.\]", "incorrect"),
        (r"So \[\cos \alpha \ge -\frac{1}{2} \cdot (-1) = \frac{1}{2}.\]", "unverifiable"),
        (r"Testing: \[2(-3)^4 + 4(-3)^3 - 5(-3)^2 - 3 = 162 - 108 - 45 - 3 \neq 6.\]", "incorrect"),
        (r"Testing: \[2(-2)^4 - 3 = 32 - 3 \neq 0.\]", "unverifiable"),
        (r"So \( a \ge 5 = 2 + 3 \le 4 \).", "incorrect"),
        (r"So \( a \ge 5 = 2 + 3 \le 6 \).", "unverifiable"),
        (r"So \( x \le y = 5 \), and \( 2y = 11 \).", "unverifiable"),  # no value bound after a relation
    ],
)
def test_statements_joined_by_a_relation_judged(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- displayed lines that continue the line above -----------------------------------------------------


def test_continued_lines_are_joined() -> None:
    assert continued_lines(r"\[T = 24 \times 11111\] \[= 266664\]") == r"\[T = 24 \times 11111 = 266664\]"
    assert continued_lines(r"$$T = 5 \cdot 3$$ $$= 15$$") == r"$$T = 5 \cdot 3 = 15$$"
    aligned = r"\begin{align*} x &= 2 + 3 \\ &= 5 \end{align*}"
    assert continued_lines(aligned) == r"\[ x = 2 + 3 = 5 \]"
    system = r"\begin{align*} 4a + 4b &= 21 \\ 5b + 3a &= 16 \end{align*}"
    assert continued_lines(system) == r"\[ 4a + 4b = 21 \\ 5b + 3a = 16 \]"
    assert continued_lines(r"\[x = 5\] \[y = 3\]") == r"\[x = 5\] \[y = 3\]"  # a second equation


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"Total: \[T = 24 \times 24 \times (11111)\] \[= 576 \times 11111\] \[= 6399936\]", "correct"),
        (r"Total: \[T = 24 \times 24 \times (11111)\] \[= 576 \times 11111\] \[= 63950064\]", "incorrect"),
        (r"\begin{align*} T &= 2 \times 2009 \times 2 \\ &= 8036 \end{align*}", "correct"),
        (r"\begin{align*} T &= 2 \times 2009 \times 2 \\ &= 4018 \end{align*}", "incorrect"),
        (r"Simplify: \[ = [4018][2x] \] \[ = 2 \times 2009 \times 2x \] \[ = 4018x \]", "incorrect"),
        # a line opening on an operator goes on with the expression above (never a side cut at the break)
        (
            r"\begin{align*} u &= (1 + \sqrt{2})^2 + (1 - \sqrt{2})^2 \\ &= 1 + 2\sqrt{2} + 2"
            r" \\ &\quad + 1 - 2\sqrt{2} + 2 \\ &= 6 \end{align*}",
            "correct",
        ),
        # two equations of a system, one per aligned line: no chain between them
        (r"\begin{align*} 4a + 4b &= 21\\ 5b + 3a &= 16 \end{align*}", "unverifiable"),
    ],
)
def test_continued_lines_judged_as_one_chain(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- remainders and bare arguments --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"By direct calculation, \(195 \mod 19 = 1\).", "incorrect"),  # 195 = 10 * 19 + 5
        (r"By direct calculation, \(195 \mod 19 = 5\).", "correct"),
        (r"So \((20 - 3) \bmod 5 = 3\).", "incorrect"),
        (r"So \(2 + 17 \mod 5 = 3\).", "unverifiable"),  # (2 + 17) mod 5 or 2 + (17 mod 5)?
        (r"So \((13^{-1}) \mod 19 = 3\).", "unverifiable"),  # a modular inverse, not a remainder
        # `\sqrt6` and `\dfrac4{\sqrt{24}}`: single-token arguments, as TeX reads them
        (r"$$\dfrac{\sqrt{3456}}9 = \dfrac{56}{9}.$$", "incorrect"),  # sqrt(3456) = 24 sqrt(6)
        (r"$$\dfrac4{\sqrt{24}} = \dfrac{2}{\sqrt6}.$$", "correct"),
        (r"$$\sqrt64 = 9.$$", "unverifiable"),  # sqrt(6)4 or sqrt(64)?
    ],
)
def test_remainders_and_bare_arguments_judged(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]


# --- `i` as the imaginary unit ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (r"So \[ (5 - 8i)(30 + 48i) = 150 - 384i^2 = 150 + 384 + 240i - 240i = 534 + 240i \]", "incorrect"),
        (r"So \[ (5 - 8i)(30 + 48i) = 150 - 384i^2 = 150 + 384 + 240i - 240i = 534 \]", "correct"),
        (
            r"By the conjugate, \( \frac{1}{-5i} \cdot \frac{-i}{-i} = \frac{-i}{25} \), imaginary.",
            "incorrect",
        ),
        (
            r"By the conjugate, \( \frac{1}{-5i} \cdot \frac{-i}{-i} = \frac{i}{5} \), imaginary.",
            "correct",
        ),
        # `i` not said to be the imaginary unit, or used as an index: no reading
        (r"So \( 240i - 240i + 5 = 5 + 240i \).", "unverifiable"),
        (r"With the complex numbers \(z_i\), \( 3i + 2i = 6i \).", "unverifiable"),
    ],
)
def test_the_imaginary_unit_read_where_the_step_says_so(
    verifier: MathVerifier, step: str, label: str
) -> None:
    assert _labels(verifier, [step]) == [label]


@pytest.mark.parametrize(
    ("step", "label"),
    [
        # a lone name or a norm bar before a run, with spacing, took its first operand (MATH solutions)
        (r"Hence $2b = a - 11 \sqrt{3}$ and $11 + a \sqrt{3} = 74.$", "unverifiable"),
        (
            r"Subtracting, we get \[x \sqrt{57} + \frac{57}{4} = \frac{105}{4},\] so $x$ follows.",
            "unverifiable",
        ),
        (
            r"So \[\|\mathbf{a}\| \|\mathbf{b}\| \cos 60^\circ = 5 \cdot 4 \cdot \frac{1}{2} = 10.\]",
            "correct",
        ),
        (r"So \[ 11 + 2 \sqrt{3} = 74. \]", "incorrect"),  # a number before it: still read
    ],
)
def test_a_run_after_a_spaced_name_is_cut(verifier: MathVerifier, step: str, label: str) -> None:
    assert _labels(verifier, [step]) == [label]
