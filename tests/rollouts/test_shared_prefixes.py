"""Chains of one problem that share a prefix share its rollouts: drawn once, charged once."""

from dataclasses import replace

from replay_sampler import TOKENS_PER_ROLLOUT, ReplaySampler, make_item, replay_grade

from prm_factory.rollouts import AdaptiveStrategy, BinarySearchStrategy, ExhaustiveStrategy, estimate_values
from prm_factory.sampling.protocol import GenerationParams

T, F = True, False
PARAMS = GenerationParams()


def _twins():
    a = make_item("a", ["Tom has 3 apples.", "He buys 2 more: 3 + 2 = 5.", "The answer is 5"], True, "<q>")
    b = make_item("b", ["Tom has 3 apples.", "He eats 2: 3 - 2 = 1.", "The answer is 1"], False, "<q>")
    return a, b


def test_shared_first_step_is_drawn_once_and_charged_to_the_first_chain():
    a, b = _twins()
    assert a.rollout_prompt(0) == b.rollout_prompt(0)
    recorded = {("a", 0): [T, F, T, F], ("a", 1): [T, T, T, T], ("b", 1): [F, F, F, F]}
    sampler = ReplaySampler([a, b], recorded)

    va, vb = estimate_values([a, b], ExhaustiveStrategy(4), sampler, replay_grade, PARAMS)

    (prompts, n), *rest = sampler.calls
    assert rest == [] and n == 4
    assert sorted(prompts) == sorted({a.rollout_prompt(0), a.rollout_prompt(1), b.rollout_prompt(1)})
    assert va.steps[0].mc_value == vb.steps[0].mc_value == 0.5
    assert va.steps[0].n_rollouts == vb.steps[0].n_rollouts == 4
    assert (va.rollouts_drawn, va.rollouts_shared) == (8, 0)
    assert (vb.rollouts_drawn, vb.rollouts_shared) == (4, 4)
    assert (vb.steps[0].tokens, vb.steps[1].tokens) == (0, 4 * TOKENS_PER_ROLLOUT)
    assert sampler.rollouts_drawn == va.rollouts_drawn + vb.rollouts_drawn


def test_sharing_can_be_turned_off():
    a, b = _twins()
    recorded = {("a", 0): [T, F, T, F] * 2, ("a", 1): [T] * 4, ("b", 1): [F] * 4}
    sampler = ReplaySampler([a, b], recorded)
    va, vb = estimate_values(
        [a, b], ExhaustiveStrategy(4), sampler, replay_grade, PARAMS, share_prefixes=False
    )
    assert sampler.rollouts_drawn == 16
    assert (vb.rollouts_drawn, vb.rollouts_shared) == (8, 0)


def test_different_problems_never_share():
    a, _ = _twins()
    other = replace(
        make_item("o", ["Tom has 3 apples.", "The answer is 3"], False, "<q>"),
        problem=replace(a.problem, problem_id="p-2", text="What is 1 + 2?", reference_answer="3"),
    )
    recorded = {("a", 0): [T, T, T, T, F, F, F, F], ("a", 1): [T] * 4}
    sampler = ReplaySampler([a, other], recorded)
    va, vo = estimate_values([a, other], ExhaustiveStrategy(4), sampler, replay_grade, PARAMS)
    assert vo.rollouts_shared == 0 and vo.rollouts_drawn == 4
    assert va.steps[0].mc_value == 1.0 and vo.steps[0].mc_value == 0.0


def test_a_later_round_reads_what_an_earlier_one_drew():
    """Binary search on a wrong chain reaches a prefix another chain drew in round 1: no new draw."""
    shared = ["s0", "s1", "s2"]
    right = make_item("r", [*shared, "s3", "The answer is 5"], True, "<q>")
    wrong = make_item("w", [*shared, "bad", "The answer is 4"], False, "<q>")
    recorded = {("r", 1): [T, F], ("r", 3): [T, T], ("w", 1): [T, F], ("w", 2): [T, F], ("w", 3): [F, F]}
    sampler = ReplaySampler([right, wrong], recorded)

    vr, vw = estimate_values(
        [right, wrong], BinarySearchStrategy(2, search="bisect"), sampler, replay_grade, PARAMS
    )

    # right checks steps 2 and 3 (middle, last) in round 1; wrong probes 2 (shared, round 1), then 3
    assert vw.first_error_mc == 3
    assert vw.rollouts_shared == 2
    assert sampler.rollouts_drawn == vr.rollouts_drawn + vw.rollouts_drawn


def test_adaptive_extra_draws_are_shared_too():
    a, b = _twins()
    recorded = {("a", 0): [T, F, T, F, T, F], ("a", 1): [T] * 2, ("b", 1): [F] * 2}
    sampler = ReplaySampler([a, b], recorded)
    va, vb = estimate_values(
        [a, b],
        AdaptiveStrategy(first_draws=2, draws_per_round=2, rollouts_per_probe=6),
        sampler,
        replay_grade,
        PARAMS,
    )
    assert va.steps[0].n_rollouts == vb.steps[0].n_rollouts == 6
    assert sampler.rollouts_drawn == 6 + 2 + 2
