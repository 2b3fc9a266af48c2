"""The driver's own duties: request checks, engine-answer checks, progress, cost splitting, item checks."""

import pytest
from replay_sampler import ReplaySampler, make_item, replay_grade

from prm_factory.rollouts import ExhaustiveStrategy, RolloutItem, estimate_values, make_strategy
from prm_factory.rollouts.driver import probeable_prefixes, split_seconds
from prm_factory.rollouts.strategies.base import StepEstimate
from prm_factory.sampling.protocol import Generation, GenerationParams

PARAMS = GenerationParams()


class _AskOutOfRange:
    name = "bad"
    max_steps = None

    def start(self, n_prefixes, n_steps, outcome_correct):
        class _State:
            def wanted(self):
                return {n_prefixes: 1}

            def record(self, outcomes):
                pass

            def estimates(self):
                return tuple(StepEstimate(i) for i in range(n_prefixes))

        return _State()


def test_strategy_asking_for_the_last_step_is_refused():
    item = make_item("c1", ["a", "b"], outcome_correct=False)
    with pytest.raises(ValueError, match="probeable steps"):
        estimate_values([item], _AskOutOfRange(), ReplaySampler([item], {}), replay_grade, PARAMS)


class _ShortSampler(ReplaySampler):
    def generate(self, prompts, params):
        return [[Generation("x", 1, "stop")] for _ in prompts]


def test_sampler_returning_too_few_generations_fails_loudly():
    item = make_item("c1", ["a", "b"], outcome_correct=False)
    with pytest.raises(RuntimeError, match="generations"):
        estimate_values([item], ExhaustiveStrategy(2), _ShortSampler([item], {}), replay_grade, PARAMS)


def test_progress_reports_finished_chains_per_round():
    items = [make_item("c1", ["a", "b"], False), make_item("c2", ["a"], True)]
    seen = []
    sampler = ReplaySampler(items, {("c1", 0): [True]})
    estimate_values(
        items, ExhaustiveStrategy(1), sampler, replay_grade, PARAMS, progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(2, 2)]

    seen.clear()
    estimate_values(
        [items[1]],
        ExhaustiveStrategy(1),
        sampler,
        replay_grade,
        PARAMS,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(1, 1)]


def test_no_items_no_calls():
    sampler = ReplaySampler([], {})
    assert estimate_values([], ExhaustiveStrategy(), sampler, replay_grade, PARAMS) == []
    assert sampler.calls == []


def test_split_seconds_by_tokens_then_by_rollouts():
    assert split_seconds(3.0, [10, 20], [1, 1]) == pytest.approx([1.0, 2.0])
    assert split_seconds(2.0, [0, 0], [1, 3]) == pytest.approx([0.5, 1.5])
    assert split_seconds(2.0, [], []) == []


def test_probeable_prefixes():
    assert probeable_prefixes(0, None) == 0
    assert probeable_prefixes(1, None) == 0
    assert probeable_prefixes(5, None) == 4
    assert probeable_prefixes(5, 2) == 2


def test_item_rejects_bad_step_ends():
    problem = make_item("c", ["a"], True).problem
    with pytest.raises(ValueError, match="increasing"):
        RolloutItem("c", problem, "p", "abcd", (2, 2), False)
    with pytest.raises(ValueError, match="outside"):
        RolloutItem("c", problem, "p", "abcd", (2, 9), False)


@pytest.mark.parametrize("name", ["exhaustive", "binary_search", "adaptive"])
def test_every_strategy_takes_the_flows_common_options(name):
    """The flow builds any strategy as make_strategy(name, rollouts_per_probe=k, max_steps=m)."""
    item = make_item("c1", ["a", "b", "c"], outcome_correct=False)
    recorded = {("c1", 0): [False] * 4, ("c1", 1): [False] * 4}
    strategy = make_strategy(name, rollouts_per_probe=4, max_steps=2)
    (values,) = estimate_values([item], strategy, ReplaySampler([item], recorded), replay_grade, PARAMS)
    assert values.first_error_mc == 0


@pytest.mark.parametrize("name", ["exhaustive", "binary_search", "adaptive"])
def test_max_steps_zero_probes_nothing(name):
    item = make_item("c1", ["a", "b", "c"], outcome_correct=False)
    sampler = ReplaySampler([item], {})
    (values,) = estimate_values([item], make_strategy(name, max_steps=0), sampler, replay_grade, PARAMS)
    assert sampler.calls == []
    assert [s.value_source for s in values.steps] == ["none", "none", "outcome"]
    assert values.first_error_mc is None
