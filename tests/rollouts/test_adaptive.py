"""Adaptive estimation: early stop on agreement, more rollouts where uncertain, per-chain budget."""

import pytest
from replay_sampler import ReplaySampler, make_item, replay_grade

from prm_factory.rollouts import AdaptiveStrategy, ExhaustiveStrategy, estimate_values, make_strategy
from prm_factory.sampling.protocol import GenerationParams

T, F = True, False
PARAMS = GenerationParams()


def run(items, recorded, strategy):
    sampler = ReplaySampler(items, recorded)
    return estimate_values(items, strategy, sampler, replay_grade, PARAMS), sampler


def test_decided_prefixes_stop_uncertain_ones_draw_more():
    item = make_item("c1", ["a", "b", "c", "d"], outcome_correct=False)
    recorded = {
        ("c1", 0): [T, T, T, T, F, F],  # first 4 agree: decided after 4
        ("c1", 1): [T, F, T, F, T, T, F, T],  # mixed: drawn to rollouts_per_probe
        ("c1", 2): [F, F, F, F],  # decided negative after 4
    }
    strategy = AdaptiveStrategy(first_draws=4, draws_per_round=2, rollouts_per_probe=8)

    (values,), sampler = run([item], recorded, strategy)

    assert [s.n_rollouts for s in values.steps] == [4, 8, 4, 0]
    assert [s.mc_value for s in values.steps][:3] == [1.0, 5 / 8, 0.0]
    assert [s.hard_label for s in values.steps] == [T, T, F, F]
    assert values.first_error_mc == 2
    assert [n for _, n in sampler.calls] == [4, 2, 2]
    assert values.rollouts_drawn == 16


def test_budget_caps_rollouts_per_chain():
    item = make_item("c1", ["a", "b", "c", "d"], outcome_correct=False)
    recorded = {("c1", s): [T, F] * 8 for s in range(3)}
    strategy = AdaptiveStrategy(first_draws=2, draws_per_round=2, rollouts_per_probe=16, budget_per_chain=10)

    (values,), _ = run([item], recorded, strategy)

    assert values.rollouts_drawn == 10
    assert sum(s.n_rollouts for s in values.steps) == 10


def test_tight_budget_serves_earlier_prefixes_first():
    item = make_item("c1", ["a", "b", "c", "d"], outcome_correct=False)
    recorded = {("c1", s): [F] * 4 for s in range(3)}
    strategy = AdaptiveStrategy(first_draws=4, budget_per_chain=6)

    (values,), sampler = run([item], recorded, strategy)

    assert [s.n_rollouts for s in values.steps] == [4, 2, 0, 0]
    assert [s.value_source for s in values.steps] == ["rollouts", "rollouts", "none", "outcome"]
    # two rollout counts in one round: one engine call each
    assert sorted(n for _, n in sampler.calls) == [2, 4]
    assert values.first_error_mc == 0


def test_most_uncertain_prefix_served_first_when_budget_runs_short():
    item = make_item("c1", ["a", "b", "c"], outcome_correct=False)
    recorded = {("c1", 0): [T, T, T, F, T, T], ("c1", 1): [T, F, F, T, T, T]}  # after 4: 0.75 vs 0.5
    strategy = AdaptiveStrategy(first_draws=4, draws_per_round=2, rollouts_per_probe=16, budget_per_chain=10)

    (values,), _ = run([item], recorded, strategy)

    assert [s.n_rollouts for s in values.steps][:2] == [4, 6]


def test_rounds_are_batched_across_chains():
    items = [make_item(f"c{i}", ["a", "b", "c"], outcome_correct=False) for i in range(5)]
    recorded = {(f"c{i}", s): [T, F, T, F, T, F] for i in range(5) for s in range(2)}
    strategy = AdaptiveStrategy(first_draws=2, draws_per_round=2, rollouts_per_probe=6)

    values, sampler = run(items, recorded, strategy)

    assert [(len(prompts), n) for prompts, n in sampler.calls] == [(10, 2), (10, 2), (10, 2)]
    assert all(v.rollouts_drawn == 12 for v in values)


def test_cheaper_than_exhaustive_on_decided_prefixes():
    item = make_item("c1", [f"s{i}" for i in range(6)], outcome_correct=False)
    recorded = {("c1", s): [F] * 8 for s in range(5)}
    (adaptive,), _ = run([item], recorded, make_strategy("adaptive", rollouts_per_probe=8, first_draws=4))
    (exhaustive,), _ = run([item], recorded, ExhaustiveStrategy(8))
    assert adaptive.first_error_mc == exhaustive.first_error_mc == 0
    assert adaptive.rollouts_drawn == exhaustive.rollouts_drawn // 2


def test_one_step_and_all_correct_chains():
    one = make_item("one", ["The answer is 5"], outcome_correct=True)
    right = make_item("right", ["a", "b", "c"], outcome_correct=True)
    recorded = {("right", 0): [T] * 4, ("right", 1): [T] * 4}
    (v_one, v_right), _ = run([one, right], recorded, AdaptiveStrategy())
    assert v_one.rollouts_drawn == 0 and v_one.first_error_mc is None
    assert [s.hard_label for s in v_right.steps] == [T, T, T]
    assert v_right.first_error_mc is None


def test_options_are_checked():
    with pytest.raises(ValueError, match="rollouts_per_probe"):
        AdaptiveStrategy(first_draws=8, rollouts_per_probe=4)
    with pytest.raises(ValueError, match="budget_per_chain"):
        AdaptiveStrategy(budget_per_chain=0)
