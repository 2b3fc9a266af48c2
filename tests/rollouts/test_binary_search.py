"""Binary search for the first error (OmegaPRM style) on recorded chains and recorded outcomes."""

import itertools

import pytest
from replay_sampler import ReplaySampler, make_item, replay_grade

from prm_factory.rollouts import BinarySearchStrategy, ExhaustiveStrategy, estimate_values, make_strategy
from prm_factory.sampling.protocol import GenerationParams

T, F = True, False
PARAMS = GenerationParams()
K = 2


def monotone_chain(chain_id, n_steps, first_error, outcome_correct=False):
    """A recorded chain whose prefixes are good before `first_error` and bad from it on (K outcomes each)."""
    item = make_item(chain_id, [f"step {i}" for i in range(n_steps)], outcome_correct)
    recorded = {(chain_id, i): ([T, F] if i < first_error else [F, F]) for i in range(n_steps - 1)}
    return item, recorded


def run(items, recorded, strategy):
    sampler = ReplaySampler(items, recorded)
    return estimate_values(items, strategy, sampler, replay_grade, PARAMS), sampler


def test_finds_first_error_labels_probed_and_inferred_steps():
    item, recorded = monotone_chain("c1", n_steps=8, first_error=5)

    (values,), sampler = run([item], recorded, BinarySearchStrategy(K, search="bisect"))

    # bisect over [0, 7): probe 3 (good), 5 (bad), 4 (good) -> first error 5
    assert [prompts for prompts, _ in sampler.calls] == [[item.rollout_prompt(s)] for s in (3, 5, 4)]
    assert values.first_error_mc == 5
    assert values.probed_steps == (3, 4, 5)
    assert values.inferred_steps == (0, 1, 2, 6)
    assert [s.hard_label for s in values.steps] == [T] * 5 + [F] * 3
    assert [s.value_source for s in values.steps][-1] == "outcome"
    assert [s.mc_value for s in values.steps][:3] == [None, None, None]  # inferred: no soft estimate
    assert values.rollouts_drawn == 3 * K
    assert [s.n_rollouts for s in values.steps] == [0, 0, 0, K, K, K, 0, 0]


@pytest.mark.parametrize("search", ["bisect", "gallop"])
def test_agrees_with_exhaustive_on_every_monotone_chain(search):
    for n_steps in range(1, 10):
        for first_error in range(n_steps):
            item, recorded = monotone_chain("c", n_steps, first_error)
            (exhaustive,), _ = run([item], recorded, ExhaustiveStrategy(K))
            (searched,), sampler = run([item], recorded, BinarySearchStrategy(K, search=search))
            assert searched.first_error_mc == exhaustive.first_error_mc == first_error
            assert [s.hard_label for s in searched.steps] == [s.hard_label for s in exhaustive.steps]
            assert searched.rollouts_drawn <= exhaustive.rollouts_drawn


def test_bisect_probes_about_log2_prefixes():
    item, recorded = monotone_chain("c", n_steps=16, first_error=11)
    (values,), sampler = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
    assert (
        len(values.probed_steps) == 4
    )  # ceil(log2(16)) over the 15 probeable prefixes and the known-bad end
    assert values.first_error_mc == 11


def test_gallop_finds_an_early_error_with_one_probe():
    item, recorded = monotone_chain("c", n_steps=12, first_error=0)
    (values,), sampler = run([item], recorded, BinarySearchStrategy(K, search="gallop"))
    assert values.probed_steps == (0,)
    assert values.first_error_mc == 0
    (bisected,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
    assert len(bisected.probed_steps) == 4


def test_probes_of_all_chains_batched_per_round():
    chains = [monotone_chain(f"c{i}", n_steps=8, first_error=i) for i in range(8)]
    items = [item for item, _ in chains]
    recorded = {key: value for _, rec in chains for key, value in rec.items()}

    values, sampler = run(items, recorded, BinarySearchStrategy(K, search="bisect"))

    assert [v.first_error_mc for v in values] == list(range(8))
    assert len(sampler.calls) == 3  # rounds, not chains x probes
    assert [len(prompts) for prompts, _ in sampler.calls] == [8, 8, 8]
    assert all(n == K for _, n in sampler.calls)


def test_correct_chain_light_check_probes_middle_and_last():
    item = make_item("c1", [f"s{i}" for i in range(6)], outcome_correct=True)
    recorded = {("c1", 2): [T, F], ("c1", 4): [F, F]}

    (values,), sampler = run([item], recorded, BinarySearchStrategy(K, search="bisect"))

    assert len(sampler.calls) == 1
    assert values.probed_steps == (2, 4)
    assert values.inferred_steps == (0, 1, 3)
    # the chain itself reached the answer from every prefix; a probe that finds none is kept as measured
    assert [s.hard_label for s in values.steps] == [T, T, T, T, F, T]
    assert values.steps[2].mc_value == 0.5
    assert values.rollouts_drawn == 2 * K


def test_correct_chain_checks_are_configurable():
    item = make_item("c1", [f"s{i}" for i in range(6)], outcome_correct=True)
    (values,), sampler = run([item], {}, make_strategy("binary_search", correct_chain_checks=[]))
    assert sampler.calls == []
    assert values.inferred_steps == (0, 1, 2, 3, 4)
    assert values.first_error_mc is None


def test_unparsed_outcome_is_searched_like_a_wrong_one():
    item, recorded = monotone_chain("c1", n_steps=5, first_error=2, outcome_correct=None)
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
    assert values.first_error_mc == 2
    assert values.steps[-1].value_source == "outcome"


def test_unparsed_outcome_gives_the_last_step_no_label():
    """An outcome nobody could judge is not a wrong one: the search finds no error in sound prefixes, and
    the last step keeps no value instead of a negative one."""
    item, recorded = monotone_chain("c1", n_steps=4, first_error=3, outcome_correct=None)
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
    last = values.steps[-1]
    assert (last.value_source, last.hard_label, last.mc_value, last.soft_label) == (
        "outcome",
        None,
        None,
        None,
    )
    assert values.first_error_mc is None
    assert [s.hard_label for s in values.steps[:-1]] == [True, True, True]


def test_one_step_chain():
    item = make_item("c1", ["The answer is 7"], outcome_correct=False)
    (values,), sampler = run([item], {}, BinarySearchStrategy(K, search="bisect"))
    assert sampler.calls == []
    assert values.first_error_mc == 0


def test_max_steps_when_error_lies_beyond_the_range():
    item, recorded = monotone_chain("c1", n_steps=10, first_error=7)
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect", max_steps=4))
    assert [s.value_source for s in values.steps][4:] == ["none"] * 5 + ["outcome"]
    assert all(s.hard_label for s in values.steps[:4])
    assert values.first_error_mc is None


def test_max_steps_when_error_lies_inside_the_range():
    item, recorded = monotone_chain("c1", n_steps=10, first_error=2)
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect", max_steps=4))
    assert values.first_error_mc == 2


def test_non_monotone_chain_can_disagree_with_exhaustive():
    """The search trusts monotonicity; a lone bad prefix before a good one is missed (documented cost)."""
    item = make_item("c1", [f"s{i}" for i in range(8)], outcome_correct=False)
    recorded = {("c1", i): [T, F] for i in range(7)} | {("c1", 1): [F, F], ("c1", 5): [F, F]}
    (exhaustive,), _ = run([item], recorded, ExhaustiveStrategy(K))
    (searched,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
    assert (exhaustive.first_error_mc, searched.first_error_mc) == (1, 5)


def test_options_are_checked():
    for bad in ({"search": "linear"}, {"correct_chain_checks": (1.5,)}, {"rollouts_per_probe": 0}):
        with pytest.raises(ValueError):
            BinarySearchStrategy(**bad)


def test_probe_counts_are_bounded_for_every_error_position():
    for n_steps, first_error in itertools.product(range(2, 33), range(32)):
        if first_error >= n_steps:
            continue
        item, recorded = monotone_chain("c", n_steps, first_error)
        (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="bisect"))
        assert len(values.probed_steps) <= (n_steps - 1).bit_length()


def test_early_stop_draws_less_and_ends_at_the_same_step():
    item = make_item("c1", [f"s{i}" for i in range(8)], outcome_correct=False)
    good, bad = [T, F, F, F], [F, F, F, F]
    recorded = {("c1", i): (good if i < 5 else bad) for i in range(7)}
    (full,), _ = run([item], recorded, BinarySearchStrategy(4, search="bisect"))
    (early,), sampler = run([item], recorded, BinarySearchStrategy(4, search="bisect", draws_per_round=2))

    assert early.first_error_mc == full.first_error_mc == 5
    assert early.probed_steps == full.probed_steps == (3, 4, 5)
    # good probes 3 and 4 stop after their first 2 rollouts; bad probe 5 draws all 4 over two rounds
    assert [early.steps[i].n_rollouts for i in (3, 4, 5)] == [2, 2, 4]
    assert [n for _, n in sampler.calls] == [2, 2, 2, 2]
    assert early.rollouts_drawn == 8 < full.rollouts_drawn == 12


def test_early_stop_batches_chains_at_different_stages_in_one_call():
    chains = [monotone_chain(f"c{i}", n_steps=8, first_error=i) for i in range(8)]
    items = [item for item, _ in chains]
    recorded = {key: value for _, rec in chains for key, value in rec.items()}
    values, sampler = run(items, recorded, BinarySearchStrategy(K, search="bisect", draws_per_round=1))
    assert [v.first_error_mc for v in values] == list(range(8))
    assert all(n == 1 for _, n in sampler.calls)
    assert len(sampler.calls) <= 6  # rounds: at most 2 per probe x 3 probes


def test_gallop_probe_sequence_and_default():
    assert BinarySearchStrategy().search == "gallop"
    item, recorded = monotone_chain("c", n_steps=16, first_error=9)
    (values,), sampler = run([item], recorded, BinarySearchStrategy(K))
    probes = [item.rollout_prompt(s) for s in (0, 2, 6, 14, 10, 8, 9)]
    assert [prompts for prompts, _ in sampler.calls] == [[p] for p in probes]
    assert values.first_error_mc == 9


def test_gallop_probe_counts_are_bounded_for_every_error_position():
    for n_steps, first_error in itertools.product(range(2, 33), range(32)):
        if first_error >= n_steps:
            continue
        item, recorded = monotone_chain("c", n_steps, first_error)
        (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="gallop"))
        assert values.first_error_mc == first_error
        assert len(values.probed_steps) <= 2 * (first_error + 1).bit_length()


def test_gallop_with_max_steps():
    item, recorded = monotone_chain("c1", n_steps=10, first_error=7)
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="gallop", max_steps=4))
    assert values.first_error_mc is None
    assert all(s.hard_label for s in values.steps[:4])


def test_unjudged_rollouts_count_for_nothing():
    """A rollout the grader could not judge (a time-out on a busy machine) neither lowers a value nor
    decides a probe: the soft label counts judged rollouts only, and a probe with none judged stops the
    search instead of being read as bad."""
    item = make_item("c1", [f"step {i}" for i in range(4)], outcome_correct=False)
    recorded = {("c1", 0): [None, T], ("c1", 1): [None, None], ("c1", 2): [F, F]}
    (values,), _ = run([item], recorded, BinarySearchStrategy(K, search="gallop"))
    first = values.steps[0]
    assert (first.n_rollouts, first.n_judged, first.n_correct, first.mc_value) == (2, 1, 1, 1.0)
    stuck = values.steps[1]
    assert (stuck.value_source, stuck.n_rollouts, stuck.n_judged, stuck.hard_label) == (
        "rollouts",
        2,
        0,
        None,
    )
    assert stuck.mc_value is None
    assert values.steps[2].value_source == "rollouts"  # measured bad, but the step before is unknown
    assert values.first_error_mc is None
