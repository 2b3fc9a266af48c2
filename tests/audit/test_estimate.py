"""audit.estimate: weighted ratios, the Rao-Wu bootstrap, the Wilson floor, first-error agreement, kappa."""

import numpy as np
import pytest

from prm_factory.audit.estimate import (
    METRICS,
    ReviewedStep,
    cohen_kappa,
    estimate,
    kappa_with_interval,
    rao_wu_weights,
    wilson,
)


def _step(i, stratum, vote, human, first_of=(), human_first=None):
    return ReviewedStep(i, stratum, {"v": vote}, first_of, human, human_first)


def test_weights_expand_each_stratum_to_its_size_and_a_census_does_not_vary():
    rng = np.random.default_rng(1)
    weights, replicates = rao_wu_weights(["a"] * 4 + ["b"] * 3, {"a": 100, "b": 3}, 500, rng)
    assert weights.tolist() == [25.0] * 4 + [1.0] * 3
    assert np.allclose(replicates[:, 4:], 1.0)  # stratum b was reviewed in full
    assert np.allclose(replicates[:, :4].sum(axis=1), 100.0)  # Rao-Wu keeps the stratum total
    assert replicates[:, :4].std() > 0
    with pytest.raises(ValueError, match="only 3"):
        rao_wu_weights(["b"] * 4, {"b": 3}, 10, rng)


def test_the_point_estimate_is_the_weighted_ratio():
    # stratum "flagged" (the source says incorrect): 1000 steps, 4 reviewed, 3 truly wrong
    # stratum "passed" (the source says correct): 9000 steps, 4 reviewed, 1 truly wrong
    steps = [_step(i, "flagged", "incorrect", "incorrect" if i < 3 else "correct") for i in range(4)]
    steps += [_step(10 + i, "passed", "correct", "incorrect" if i == 0 else "correct") for i in range(4)]
    result = estimate(steps, {"flagged": 1000, "passed": 9000}, ["v"], replicates=200, seed=0)
    figures = result.figures["v"]
    assert figures["precision_incorrect"].estimate == pytest.approx(0.75)
    # recall: 750 of the 750 + 2250 truly wrong steps are flagged
    assert figures["recall_incorrect"].estimate == pytest.approx(750 / 3000)
    assert figures["precision_correct"].estimate == pytest.approx(0.75)
    assert figures["recall_correct"].estimate == pytest.approx(6750 / (6750 + 250))
    for metric in METRICS[:4]:
        low, high = figures[metric].low, figures[metric].high
        assert 0 <= low <= figures[metric].estimate <= high <= 1
    assert result.coverage.covered_population == 10_000 and result.coverage.decided == 8


def test_a_perfect_sample_is_not_taken_for_certainty_unless_it_is_a_census():
    steps = [_step(i, "s", "incorrect", "incorrect") for i in range(10)]
    sampled = estimate(steps, {"s": 500}, ["v"], replicates=200).figures["v"]["precision_incorrect"]
    assert sampled.estimate == 1.0 and sampled.high == 1.0
    assert sampled.low == pytest.approx(wilson(1.0, 10 / (1 - 10 / 500))[0]) and sampled.low < 0.8
    census = estimate(steps, {"s": 10}, ["v"], replicates=200).figures["v"]["precision_incorrect"]
    assert (census.low, census.high) == (1.0, 1.0)
    plain = estimate(steps, {"s": 500}, ["v"], replicates=200, wilson_floor=False).figures["v"]
    assert plain["precision_incorrect"].low == 1.0  # what the floor is for


def test_undecided_steps_are_left_out_and_an_empty_ratio_has_no_estimate():
    steps = [_step(1, "s", "correct", "correct"), _step(2, "s", "correct", None)]
    result = estimate(steps, {"s": 10}, ["v"], replicates=50)
    assert result.coverage.decided == 1 and result.coverage.undecided == 1
    assert result.figures["v"]["precision_incorrect"].estimate is None
    assert result.figures["v"]["precision_incorrect"].n == 0


def test_first_error_agreement_needs_the_reviewers_first_error_answer():
    steps = [
        _step(1, "s", "incorrect", "incorrect", ("v",), "this"),  # agrees
        _step(2, "s", "incorrect", "incorrect", ("v",), "earlier"),  # an earlier step was wrong
        _step(3, "s", "incorrect", "correct", ("v",)),  # not wrong at all
        _step(4, "s", "incorrect", "incorrect", ("v",), None),  # unknown: left out
        _step(5, "s", "incorrect", "incorrect", (), "this"),  # not the source's first error
    ]
    figure = estimate(steps, {"s": 5}, ["v"], replicates=50).figures["v"]["first_error_agreement"]
    assert figure.n == 3 and figure.estimate == pytest.approx(1 / 3)


def test_kappa_matches_the_worked_example_and_has_an_interval():
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    result = kappa_with_interval(pairs, replicates=300, seed=1)
    assert result.low < 0.4 < result.high and result.n == 50 and result.agreement == pytest.approx(0.7)
    assert cohen_kappa([("y", "y"), ("y", "y")]) is None  # chance agreement is total
    assert kappa_with_interval([("y", "n")]).kappa is None


def test_no_answers_yet_gives_no_figures():
    result = estimate([], {"s": 10}, ["v"], replicates=20)
    assert all(figure.estimate is None for figure in result.figures["v"].values())
    assert result.coverage.covered_strata == 0 and result.coverage.population == 10


def test_kappa_over_a_handful_of_steps_has_no_zero_width_interval():
    # 3 steps, one rater always `correct`: every defined resample gives 0, the others none
    few = [("correct", "correct"), ("correct", "correct"), ("correct", "incorrect")]
    result = kappa_with_interval(few, replicates=500, seed=0)
    assert result.kappa == pytest.approx(0.0) and result.low is None and result.high is None
    many = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert kappa_with_interval(many, replicates=300, seed=1).low is not None
