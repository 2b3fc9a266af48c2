"""Unit conversions in word problems (verifiers/math/certainty.py, `_converted_units`): a claim whose two
sides count different units (`3 * 12 inches = 3 feet`) states a conversion whose factor it does not
write, so it is never `incorrect`; the same arithmetic with one unit on both sides is still judged.

Generated (Hypothesis) from unit words and numbers, never copied from a set: the class was found on the
model-written dev split (`42 * 20/21 daps = 42 baps`, made-up units read with their units dropped) and shown
general by conversions of ordinary units (inches to feet, minutes to hours); which words are units, and
of which dimension, is pint's (made-up units are not, so that dev flag stays).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.certainty import _converted_units, _dimension
from prm_factory.verifiers.math.verifier import MathVerifier

PROBLEM = Problem("u1", "external", "math", "How long is the rope, and how much does it all weigh?")
SETTINGS = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DIMENSIONS = (  # units of one dimension each, as word problems write them
    ("inches", "feet", "yards", "miles", "meters", "centimeters", "kilometers"),
    ("seconds", "minutes", "hours", "days", "weeks"),
    ("grams", "kilograms", "pounds", "ounces"),
    ("liters", "cups", "gallons", "quarts", "pints"),
)
UNITS = tuple(unit for units in DIMENSIONS for unit in units)
PAIRS = st.sampled_from(DIMENSIONS).flatmap(
    lambda units: st.tuples(st.sampled_from(units), st.sampled_from(units)).filter(lambda p: p[0] != p[1])
)
COUNTED = ("birds", "apples", "chips", "sets", "people", "cans", "spoons", "rows", "plants", "boxes", "eggs")


@pytest.fixture(scope="module")
def checker():
    verifier = MathVerifier()
    yield lambda text: verifier.check_steps(PROBLEM, ["We convert the lengths first.", text])[1]
    verifier.close()


@SETTINGS
@given(a=st.integers(2, 60), b=st.integers(2, 60), c=st.integers(1, 200), units=PAIRS)
def test_a_conversion_between_two_units_is_never_incorrect(checker, a, b, c, units) -> None:
    text = f"So {a} * {b} {units[0]} = {c} {units[1]}."
    assert checker(text).label != "incorrect", text


@SETTINGS
@given(a=st.integers(2, 60), b=st.integers(2, 60), slip=st.integers(1, 9), unit=st.sampled_from(UNITS))
def test_false_arithmetic_in_one_unit_is_still_incorrect(checker, a, b, slip, unit) -> None:
    text = f"So {a} * {b} {unit} = {a * b + slip} {unit}."
    assert checker(text).label == "incorrect", text


@SETTINGS
@given(a=st.integers(2, 60), b=st.integers(2, 60), slip=st.integers(1, 9), things=st.tuples(
    st.sampled_from(COUNTED), st.sampled_from(COUNTED)), unit=st.sampled_from(UNITS))  # fmt: skip
def test_false_arithmetic_between_counted_things_or_dimensions_is_still_incorrect(
    checker, a, b, slip, things, unit
) -> None:
    """Word problems rename what they count (`3 chips x 4 sets = 12 green chips`) and divide a length by a
    speed to get a time: none of that is a conversion, and a false sum there stays an error."""
    for text in (f"So {a} {things[0]} + {b} {things[1]} = {a + b + slip} {things[1]}.",
                 f"So {a} {unit} + {b} {unit} = {a + b + slip} {things[0]}."):  # fmt: skip
        assert checker(text).label == "incorrect", text


def test_units_are_read_with_their_dimension_and_other_words_name_none():
    assert _dimension("feet") == ("foot", "[length]") and _dimension("Hours") == ("hour", "[time]")
    assert [_dimension(w) for w in ("birds", "in", "at", "percent", "daps")] == [None] * 5


def test_a_conversion_needs_a_unit_named_on_each_side():
    assert _converted_units("3 * 12 inches = 3", "So 3 * 12 inches = 3 feet.")
    assert not _converted_units("3 * 12 inches = 35", "So 3 * 12 inches = 35 inches.")
    assert not _converted_units("3 * 4 apples = 13", "So 3 * 4 apples = 13 in total.")  # no unit after
    assert not _converted_units("3 * 4 = 13", "So 3 * 4 = 13 apples.")  # none named on the left
    assert not _converted_units("5 boxes * 12 = 50 eggs", "So 5 boxes * 12 = 50 eggs.")  # counted things
    assert not _converted_units("60 miles / 30 miles/hour = 4", "60 miles / 30 miles/hour = 4 hours")
