"""The exact, bounded evaluator under the step checker (verifiers/math/arithmetic.py): what it reads, the
values it gives, and what it refuses instead of guessing or hanging."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prm_factory.verifiers.math.arithmetic import (
    NotEvaluable,
    Token,
    TooLarge,
    bare_literal,
    evaluate,
    has_percent,
    leading_literal,
    lex,
    literals,
    parse_side,
)
from prm_factory.verifiers.math.claims import check_steps


def value(text: str, **bindings: int) -> Fraction:
    result = evaluate(parse_side(lex(text)), {k: Fraction(v) for k, v in bindings.items()})
    assert result.is_number
    return result.const


def test_exact_values_with_precedence_grouping_and_thousands():
    assert value("48/2") == 24
    assert value("3 + 4.5") == Fraction(15, 2)
    assert value("(1/2) + 1/3") == Fraction(5, 6)
    assert value("2 + 3 * 4") == 14 and value("(2 + 3) * 4") == 20
    assert value("2^10") == 1024
    assert value("1,234 + 1") == 1235
    assert value("2 + 3 * 4") != 20


def test_percent_reads_as_a_fraction_or_as_its_number():
    node = parse_side(lex("15%"))
    assert evaluate(node, {}).const == Fraction(3, 20)
    assert evaluate(node, {}, percent_as_fraction=False).const == 15
    assert has_percent(parse_side(lex("15% * 20"))) and not has_percent(parse_side(lex("15 * 20")))


def test_refusals_are_fast_and_typed():
    with pytest.raises(TooLarge):
        value("5^(5^(5^5))")
    with pytest.raises(NotEvaluable, match="division by zero"):
        value("10 / 0")
    with pytest.raises(NotEvaluable):
        value("7 stickers/page * 6 pages")  # words are not operands
    with pytest.raises(NotEvaluable, match="side too long"):
        value(" + ".join(["1"] * 500))


def test_one_unknown_linearly_and_bound_names():
    x = [Token("num", "2", 0, lex("2")[0].literal), Token("op", "*", 2), Token("var", "x", 4)]
    linear = evaluate(parse_side(x), {})
    assert (linear.coef, linear.var, linear.is_number) == (2, "x", False)
    assert evaluate(parse_side(x), {"x": Fraction(3)}).const == 6
    square = [Token("var", "x", 0), Token("op", "*", 2), Token("var", "x", 4)]
    with pytest.raises(NotEvaluable):
        evaluate(parse_side(square), {})  # not linear


def test_literal_helpers():
    assert [lit.value for lit in literals(parse_side(lex("2 * (3 + 4)")))] == [2, 3, 4]
    assert bare_literal(parse_side(lex("-7"))).value == -7  # type: ignore[union-attr]
    assert bare_literal(parse_side(lex("7 + 1"))) is None
    assert leading_literal(parse_side(lex("24 * 3"))).value == 24  # type: ignore[union-attr]
    assert leading_literal(parse_side(lex("24"))) is None


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 10**6), st.integers(4_000, 7_000), st.sampled_from(["So {} = 5.", "Then 2 * {} = 7."]))
def test_a_value_past_what_python_prints_is_unverifiable_never_a_crash(base, digits, frame):
    """CPython refuses to print an int past 4,300 digits (ValueError): the arithmetic's size limit stays
    below it, so a power near it is not judged rather than crashing the whole chain's labelling."""
    exponent = max(1, round(digits / math.log10(base)))
    [verdict] = check_steps([frame.format(f"{base}^{exponent}")])
    assert verdict.label in ("unverifiable", "incorrect")
