"""audit.allocation: the budget over strata (even floor, then proportional, capped at each stratum's size)."""

import pytest

from prm_factory.audit.allocation import allocate


def test_the_budget_is_spent_exactly_and_no_stratum_gets_more_than_it_has():
    sizes = {"rare": 3, "middle": 40, "common": 5000, "one": 1}
    for budget in (1, 4, 7, 50, 300, 5043):
        taken = allocate(sizes, budget)
        assert sum(taken.values()) == min(budget, sum(sizes.values()))
        assert all(0 <= taken[key] <= sizes[key] for key in sizes)


def test_rare_strata_are_represented_where_proportional_allocation_would_skip_them():
    taken = allocate({"verifier incorrect": 12, "all agree correct": 20_000}, budget=60)
    assert taken["verifier incorrect"] == 12  # proportional alone: 0
    assert taken["all agree correct"] == 48


def test_every_stratum_of_two_or_more_gets_two_when_the_budget_allows():
    # proportional alone would give "a" all 8; the floor of two each comes first, the last one goes by size
    assert allocate({"a": 10_000, "b": 5, "c": 9, "d": 1}, budget=8, equal_share=0.0) == {
        "a": 3,
        "b": 2,
        "c": 2,
        "d": 1,
    }


def test_the_proportional_share_follows_size():
    taken = allocate({"a": 1000, "b": 500, "c": 300}, budget=100, equal_share=0.0)
    assert taken["a"] > taken["b"] > taken["c"]


def test_a_budget_larger_than_the_population_takes_everything():
    assert allocate({"a": 3, "b": 0}, budget=10) == {"a": 3, "b": 0}


def test_nonsense_is_refused():
    with pytest.raises(ValueError):
        allocate({"a": 3}, budget=-1)
    with pytest.raises(ValueError):
        allocate({"a": 3}, budget=1, equal_share=1.5)
