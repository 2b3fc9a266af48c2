"""Other readings of a failed claim in written numbers (issue 46, verifier 2.9.0): an integer quotient beside
a remainder, a rounded value, numerals in a named base. Each class is generated (Hypothesis),
as a function of `other_readings` and in chains through the verifier: the other reading leaves the claim
unjudged, and the same claim without it (or wrong under it too) stays `incorrect`.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.other_readings import (
    integer_quotient,
    numerals_in_base,
    rounded_value,
)
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("o1", "olympiad", "math", r"Let $n$ be a positive integer. Find $n$.")
WORD = Problem("o2", "gsm8k", "math", "A farmer sells apples by the pound. How much does he get?")
SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PURE = settings(deadline=None)  # no timing: a loaded machine is no failure
_OFF = st.sampled_from([-7, -3, -2, 2, 3, 5, 11])


def _labels(verifier: MathVerifier, steps: list[str], problem: Problem = COMPETITION) -> list[str]:
    return [v.label for v in verifier.check_steps(problem, steps)]


# --- integer quotient -------------------------------------------------------------------------------


@st.composite
def quotients(draw) -> tuple[int, int]:
    b = draw(st.integers(2, 12))
    a = draw(st.integers(b + 1, 999).filter(lambda a: a % b))
    return a, b


@PURE
@given(ab=quotients(), off=_OFF)
def test_a_quotient_read_as_its_integer_part_only_where_the_text_speaks_of_remainders(ab, off) -> None:
    a, b = ab
    assert integer_quotient(f"{a}/{b} = {a // b}", [f"{a}/{b}={a // b}, rem {a % b}"])
    assert integer_quotient(f"{a} \\div {b} = {a // b}", ["the greatest integer not above it"])
    assert not integer_quotient(f"{a}/{b} = {a // b}", [f"So {a}/{b} = {a // b}."])
    assert not integer_quotient(f"{a}/{b} = {a // b + off}", [f"{a}/{b}={a // b + off}, rem {a % b}"])


@PURE
@given(n=st.integers(30, 500), p=st.sampled_from([2, 3, 5, 7]))
def test_a_sum_of_floors_is_read_as_integer_parts(n: int, p: int) -> None:
    floors = n // p + n // (p * p)
    assert integer_quotient(f"{n}/{p} + {n}/{p * p} = {floors}", [r"By Legendre's formula, \lfloor"])


@SETTINGS
@given(ab=quotients(), off=_OFF)
def test_repeated_division_with_remainders_is_never_incorrect(verifier, ab, off) -> None:
    a, b = ab
    chain = [
        f"Let me compute {a} in base {b}.",
        f"{a}/{b}={a // b}, rem {a % b}",
        f"{a} /{b}={a // b} rem{a % b}",
    ]
    assert "incorrect" not in _labels(verifier, chain)
    wrong = [f"Let me compute {a} in base {b}.", f"{a}/{b}={a // b + off}, rem {a % b}"]
    assert _labels(verifier, wrong)[1] == "incorrect"
    assert _labels(verifier, [f"So {a}/{b} = {a // b}."])[0] == "incorrect"


# --- rounded value ----------------------------------------------------------------------------------


@st.composite
def roundings(draw) -> tuple[str, Fraction]:
    """A quotient with a decimal operand whose value needs more places than two: `a / 0.bc`."""
    a = draw(st.integers(11, 999))
    d = draw(st.sampled_from(["0.3", "0.7", "1.3", "0.4536", "2.54", "0.9"]))
    exact = Fraction(a) / Fraction(d)
    return f"{a} / {d}", exact


@PURE
@given(r=roundings(), places=st.sampled_from([0, 1, 2]), off=st.sampled_from([-3, -2, 2, 5]))
def test_a_value_rounded_to_the_places_written_is_read_as_rounded(r, places: int, off: int) -> None:
    left, exact = r
    if (exact * 10**places).denominator == 1:
        return
    written = round(exact, places)
    text = f"{float(written):.{places}f}"
    if len(text.replace(".", "").lstrip("0")) < 2:
        return  # one figure kept: no rounding (below)
    assert rounded_value(f"{left} = {text}", "")
    wrong = f"{float(written + Fraction(off, 10**places)):.{places}f}"
    assert not rounded_value(f"{left} = {wrong}", "")


@PURE
@given(a=st.integers(1, 50), b=st.sampled_from([3, 7, 9, 11]))
def test_a_whole_quotient_rounded_without_decimals_or_words_is_still_judged(a: int, b: int) -> None:
    if a % b == 0:
        return
    nearest = round(Fraction(a, b))
    assert not rounded_value(f"{a}/{b} = {nearest}", f"So {a}/{b} = {nearest}.")
    assert rounded_value(f"{a}/{b} = {nearest}", f"which is about {nearest}") == (len(str(nearest)) >= 2)


def test_a_value_cut_to_one_figure_is_no_rounding() -> None:
    assert not rounded_value("0.4 * 0.4 = 0.2", "")
    assert rounded_value("1/3 = 0.33", "")


@SETTINGS
@given(r=roundings())
def test_a_rounded_equals_in_a_word_problem_is_never_incorrect(verifier, r) -> None:
    left, exact = r
    if exact.denominator == 1:
        return
    written = round(exact)
    if len(str(written)) < 2:
        return
    [label] = _labels(verifier, [f"So {left} = {written} pounds."], WORD)
    assert label != "incorrect"
    [label] = _labels(verifier, [f"So {left} = {written + 9} pounds."], WORD)
    assert label == "incorrect"


# --- numerals in a named base -----------------------------------------------------------------------


@PURE
@given(n=st.integers(2, 200), base=st.sampled_from([2, 3, 5, 8]), off=st.integers(1, 9))
def test_numerals_read_in_the_base_the_text_names(n: int, base: int, off: int) -> None:
    digits = ""
    m = n
    while m:
        digits, m = str(m % base) + digits, m // base
    assert numerals_in_base(f"{digits} = {n}", [f"Write it in base {base}."])
    assert numerals_in_base(f"{digits}_{base} = {n}", ["so"])
    if any(int(d) >= base for d in str(n + off)):  # the wrong value has no reading in the base
        assert not numerals_in_base(f"{digits} = {n + off}", [f"Write it in base {base}."])
    assert not numerals_in_base(f"{digits} = {n}", ["no base here"]) or digits == str(n)
