"""The quantities of a worked reference solution (labels/reference_quantities.py): givens, what the
solution works out, the partials of its computations, and what a chain on track may bring in."""

from __future__ import annotations

from fractions import Fraction

from prm_factory.labels.reference_quantities import (
    coin_values,
    format_quantity,
    literal_readings,
    reference_answer_value,
    reference_quantities,
    strip_step_marker,
    unit_factors,
    word_numbers,
    written_operations,
)
from prm_factory.verifiers.math.arithmetic import lex

QUESTION = "Janet has 16 eggs, eats 3 and bakes with 4. She sells each for $2."
SOLUTION = (
    "She has 16 - 3 - 4 = <<16-3-4=9>>9 eggs left.\nShe sells them for 9 * 2 = <<9*2=18>>18 dollars.\n#### 18"
)


def test_givens_worked_values_and_partials():
    ref = reference_quantities(QUESTION, SOLUTION)
    assert ref is not None and ref.answer == 18
    assert {16, 3, 4, 2} <= ref.givens
    assert {9, 18, 13, 12, 7} <= set(ref.values)  # 16 - 3 and 16 - 4 and 3 + 4: partials of 16 - 3 - 4
    assert 48 not in ref.values  # 16 * 3: the reference never multiplies these
    assert 13 not in ref.stated  # a partial, not stated outright


def test_a_partial_is_supported_only_from_its_own_expression():
    ref = reference_quantities(QUESTION, SOLUTION)
    assert ref is not None
    assert ref.supports(Fraction(13), [(Fraction(16),), (Fraction(3),)])
    assert not ref.supports(Fraction(13), [(Fraction(10),), (Fraction(3),)])  # 13 hit by chance
    assert ref.supports(Fraction(18), [])  # stated
    assert ref.nearest(Fraction(17), k=1) == ["18 (reference computation <<9*2=18>>)"]


def test_no_solution_or_no_number_is_no_reference():
    assert reference_quantities(QUESTION, "   ") is None
    assert reference_quantities(QUESTION, None) is None
    assert reference_quantities("q", "no numbers here") is None


def test_answer_value_prefers_the_given_answer_then_the_final_mark():
    assert reference_answer_value(None, SOLUTION) == 18
    assert reference_answer_value("42", SOLUTION) == 42
    assert reference_answer_value(None, "She has 5 left.") is None


def test_number_readings_from_text():
    assert literal_readings(lex("25%")[0].literal) == (25, Fraction(1, 4))  # type: ignore[arg-type]
    assert strip_step_marker("Step 3: 16 - 3 = 13").strip() == "16 - 3 = 13"
    assert strip_step_marker("16 - 3 = 13") == "16 - 3 = 13"
    words = dict(word_numbers("twice as many, and two-thirds"))
    assert words["twice"] == 2 and words["two-thirds"] == Fraction(2, 3)
    assert word_numbers("no number words") == []
    assert ("nickel", Fraction(5)) in coin_values("7 nickels and 2 dimes")
    assert coin_values("a quarter of the pie") == []  # a fraction, not a coin
    assert unit_factors("3 hours a week") == {60, 7} and unit_factors("3 apples") == set()
    assert written_operations("9 * 2 = 18 and 3 + 4") == {("*", 9, 2), ("+", 3, 4)}


def test_format_quantity():
    assert [format_quantity(Fraction(n, d)) for n, d in ((13, 1), (5, 2), (1, 3))] == ["13", "2.5", "1/3"]
