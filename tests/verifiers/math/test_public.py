"""verifiers/math/public.py: the names label sources use, each doing what labels/ relies on."""

from __future__ import annotations

from fractions import Fraction

import pytest

import prm_factory.verifiers.math.public as public
from prm_factory.verifiers.math.public import (
    NotEvaluable,
    StepState,
    boxed_answer,
    check_plain_step,
    evaluate,
    lex,
    parse_side,
    round_half_up,
    truncate,
    walk_steps,
)


def test_the_public_names_are_exactly_what_labels_import():
    assert sorted(public.__all__) == sorted(
        [
            "FINAL_KINDS",
            "Literal",
            "NotEvaluable",
            "StepState",
            "Token",
            "boxed_answer",
            "check_plain_step",
            "evaluate",
        ]
        + ["lex", "parse_side", "round_half_up", "truncate", "walk_steps"]
    )


def test_the_final_kinds_are_the_reading_kinds_measured_final():
    from prm_factory.verifiers.math.reading_kinds import KIND_PRECISION, READING_KINDS, final_kinds

    assert public.FINAL_KINDS == final_kinds(KIND_PRECISION) and public.FINAL_KINDS <= set(READING_KINDS)
    assert "closed_arithmetic" in public.FINAL_KINDS  # 21 / 21 on the olympiad-level dev split


def test_quantities_are_read_exactly_and_refused_when_not_numbers():
    assert evaluate(parse_side(lex("3/4 + 1/4")), {}).const == 1
    assert evaluate(parse_side(lex("0.1 + 0.2")), {}).const == Fraction(3, 10)
    with pytest.raises(NotEvaluable):
        evaluate(parse_side(lex("7 apples / 0")), {})
    assert round_half_up(Fraction(5, 2), 0) == 3 and truncate(Fraction(5, 2), 0) == 2


def _holds(results) -> list[bool | None]:
    return [r.holds for r in results if r.kind == "claim"]


def test_a_step_is_checked_true_and_false():
    assert _holds(check_plain_step("She has 12 * 3 = 36 apples.", StepState())[0]) == [True]
    assert _holds(check_plain_step("She has 12 * 3 = 38 apples.", StepState())[0]) == [False]


def test_a_chain_walk_yields_every_step_in_order():
    steps = ["First, 2 + 3 = 5.", "Then 5 * 4 = 21."]
    walked = [(index, _holds(results)) for index, results, _, _ in walk_steps(steps)]
    assert walked == [(0, [True]), (1, [False])]


def test_the_last_box_is_the_answer():
    found = boxed_answer(r"so $x = \boxed{3}$, not \boxed{4}? No: \boxed{\frac{1}{2}}")
    assert found is not None and found.text == r"\frac{1}{2}"
    assert boxed_answer("no box here") is None
