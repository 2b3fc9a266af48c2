"""The named aggregations: an unchecked step is never an error, each rule reads what its docstring says."""

from __future__ import annotations

import pytest

from prm_factory.reward.aggregate import AGGREGATIONS, AggregateInput, aggregate


def test_no_checked_step_is_no_error_for_the_step_rules() -> None:
    unchecked = AggregateInput([None, None], None, None)
    for name in ("min", "first_error", "product", "mean"):
        assert aggregate(name, unchecked) == 1.0, name
    assert aggregate("outcome_penalty", unchecked) == 0.0  # an ungraded answer earns nothing


def test_a_wrong_step_lowers_every_rule() -> None:
    right = AggregateInput([1.0, 1.0, 1.0, 1.0], None, True)
    wrong = AggregateInput([1.0, 0.04, 1.0, 1.0], 1, True)
    for name in AGGREGATIONS:
        assert aggregate(name, wrong) < aggregate(name, right), name
    assert aggregate("first_error", wrong) == 0.25
    assert aggregate("outcome_penalty", wrong) == pytest.approx(0.9)


def test_outcome_penalty_is_floored_and_an_unknown_rule_is_refused() -> None:
    assert aggregate("outcome_penalty", AggregateInput([0.0] * 30, 0, False)) == -1.0
    with pytest.raises(ValueError, match="choose one of"):
        aggregate("median", AggregateInput([], None, None))
