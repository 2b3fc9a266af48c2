"""Exhaustive (Math-Shepherd) estimation through the driver, on recorded chains and recorded outcomes."""

import pytest
from replay_sampler import TOKENS_PER_ROLLOUT, ReplaySampler, make_item, replay_grade

from prm_factory.rollouts import ExhaustiveStrategy, estimate_values, make_strategy
from prm_factory.sampling.protocol import GenerationParams

T, F = True, False
PARAMS = GenerationParams(n=99, temperature=0.7, max_tokens=64)


def test_soft_and_hard_labels_per_step():
    item = make_item("c1", ["a = 1", "b = 2", "c = 4", "The answer is 4"], outcome_correct=False)
    recorded = {("c1", 0): [T, F, T, T], ("c1", 1): [F, F, F, T], ("c1", 2): [F, F, F, F]}
    sampler = ReplaySampler([item], recorded)

    (values,) = estimate_values(
        [item], ExhaustiveStrategy(rollouts_per_probe=4), sampler, replay_grade, PARAMS
    )

    assert [s.mc_value for s in values.steps] == [0.75, 0.25, 0.0, 0.0]
    assert [s.hard_label for s in values.steps] == [T, T, F, F]
    assert [s.soft_label for s in values.steps] == [0.75, 0.25, 0.0, 0.0]
    assert [s.n_rollouts for s in values.steps] == [4, 4, 4, 0]
    assert [s.n_correct for s in values.steps] == [3, 1, 0, 0]
    assert [s.value_source for s in values.steps] == ["rollouts", "rollouts", "rollouts", "outcome"]
    assert values.first_error_mc == 2
    assert values.rollouts_drawn == 12
    assert values.tokens == 12 * TOKENS_PER_ROLLOUT
    assert [s.tokens for s in values.steps] == [40, 40, 40, 0]
    assert values.seconds == pytest.approx(sum(s.seconds for s in values.steps))


def test_all_prefixes_of_all_chains_in_one_engine_call():
    items = [
        make_item("c1", ["s0", "s1", "s2"], outcome_correct=False),
        make_item("c2", ["t0", "t1"], outcome_correct=True),
        make_item("c3", ["only step"], outcome_correct=False),
    ]
    recorded = {("c1", 0): [T, T], ("c1", 1): [F, F], ("c2", 0): [T, F]}
    sampler = ReplaySampler(items, recorded)

    values = estimate_values(
        items, make_strategy("exhaustive", rollouts_per_probe=2), sampler, replay_grade, PARAMS
    )

    assert len(sampler.calls) == 1
    prompts, n = sampler.calls[0]
    assert n == 2
    assert sorted(prompts) == sorted(items[c].rollout_prompt(s) for c, s in [(0, 0), (0, 1), (1, 0)])
    assert [v.chain_id for v in values] == ["c1", "c2", "c3"]
    assert [v.first_error_mc for v in values] == [1, None, 0]


def test_engine_text_and_graded_text():
    item = make_item("c1", ["x = 2", "y = 3", "The answer is 5"], outcome_correct=True)
    assert item.rollout_prompt(1) == "<prompt c1>x = 2\ny = 3\n"
    assert item.graded_text(0, "rest") == "x = 2\nrest"
    seen = []

    def grade(problem, text):
        seen.append(text)
        return replay_grade(problem, text)

    estimate_values(
        [item], ExhaustiveStrategy(1), ReplaySampler([item], {("c1", 0): [T], ("c1", 1): [T]}), grade, PARAMS
    )
    assert seen == ["x = 2\nREPLAY-OUTCOME: correct", "x = 2\ny = 3\nREPLAY-OUTCOME: correct"]


def test_last_step_takes_the_chain_outcome():
    correct = make_item("ok", ["a", "b"], outcome_correct=True)
    unparsed = make_item("up", ["a", "b"], outcome_correct=None)
    sampler = ReplaySampler([correct, unparsed], {("ok", 0): [T], ("up", 0): [T]})

    ok, up = estimate_values([correct, unparsed], ExhaustiveStrategy(1), sampler, replay_grade, PARAMS)

    assert ok.steps[-1] == ok.steps[-1].__class__(1, 1.0, 0, 0, True, 1.0, "outcome", 0, 0.0)
    # an unparsed chain outcome is no label at all, never a negative one
    assert (up.steps[-1].hard_label, up.steps[-1].mc_value, up.steps[-1].value_source) == (
        None,
        None,
        "outcome",
    )
    assert (ok.first_error_mc, up.first_error_mc) == (None, None)


def test_one_step_chain_needs_no_engine():
    item = make_item("c1", ["The answer is 5"], outcome_correct=False)
    sampler = ReplaySampler([item], {})
    (values,) = estimate_values([item], ExhaustiveStrategy(8), sampler, replay_grade, PARAMS)
    assert sampler.calls == []
    assert [s.value_source for s in values.steps] == ["outcome"]
    assert values.first_error_mc == 0
    assert values.rollouts_drawn == 0


def test_max_steps_leaves_later_prefixes_unestimated():
    item = make_item("c1", ["a", "b", "c", "d", "e"], outcome_correct=False)
    sampler = ReplaySampler([item], {("c1", 0): [T, T], ("c1", 1): [T, F]})

    (values,) = estimate_values([item], ExhaustiveStrategy(2, max_steps=2), sampler, replay_grade, PARAMS)

    assert [s.value_source for s in values.steps] == ["rollouts", "rollouts", "none", "none", "outcome"]
    assert values.first_error_mc is None  # steps 2 and 3 may hold it: unknown, not guessed
    assert values.rollouts_drawn == 4


def test_all_correct_chain():
    item = make_item("c1", ["a", "b", "c"], outcome_correct=True)
    sampler = ReplaySampler([item], {("c1", 0): [T, T, T], ("c1", 1): [T, F, T]})
    (values,) = estimate_values([item], ExhaustiveStrategy(3), sampler, replay_grade, PARAMS)
    assert [s.hard_label for s in values.steps] == [T, T, T]
    assert values.first_error_mc is None


def test_options_are_checked():
    with pytest.raises(ValueError, match="rollouts_per_probe"):
        ExhaustiveStrategy(rollouts_per_probe=0)
    with pytest.raises(ValueError, match="unknown rollout strategy"):
        make_strategy("beam")


def test_timed_out_rollouts_are_not_failures():
    """MC values count judged rollouts only, so they do not depend on how busy the machine was."""
    from replay_sampler import ReplaySampler, make_item, replay_grade

    from prm_factory.rollouts import ExhaustiveStrategy, estimate_values
    from prm_factory.sampling.protocol import GenerationParams

    item = make_item("c1", ["a", "b", "c"], outcome_correct=True)
    recorded = {("c1", 0): [True, None, None, False], ("c1", 1): [None, None, None, None]}
    sampler = ReplaySampler([item], recorded)
    (values,) = estimate_values([item], ExhaustiveStrategy(4), sampler, replay_grade, GenerationParams())
    step0, step1 = values.steps[0], values.steps[1]
    assert (step0.n_rollouts, step0.n_judged, step0.mc_value, step0.hard_label) == (4, 2, 0.5, True)
    assert (step1.n_rollouts, step1.n_judged, step1.mc_value, step1.hard_label) == (4, 0, None, None)
