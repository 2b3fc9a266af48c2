"""Held-out figures of a PRM: AUROC, step accuracy and first-error F1 from step scores."""

from __future__ import annotations

import pytest

from prm_factory.training.step_metrics import (
    StepTally,
    auroc,
    gold_first_error,
    predicted_first_error,
    step_metrics,
)


def test_auroc_counts_ties_half_and_needs_both_classes() -> None:
    assert auroc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auroc([0.1, 0.8, 0.9], [True, True, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc([0.2, 0.6, 0.6, 0.9], [False, True, False, True]) == pytest.approx(0.875)
    assert auroc([0.3, 0.4], [True, True]) is None
    with pytest.raises(ValueError):
        auroc([0.1], [True, False])


def test_first_errors_from_scores_and_from_labels() -> None:
    assert predicted_first_error([0.9, 0.6, 0.2, 0.1]) == 2
    assert predicted_first_error([0.9, 0.5]) == -1  # 0.5 is not below the threshold
    assert predicted_first_error([0.9, 0.7], threshold=0.8) == 1
    assert gold_first_error([True, False, True]) == 1 and gold_first_error([True]) == -1


def test_step_metrics_against_stored_labels() -> None:
    scores = [[0.9, 0.2], [0.8, 0.7], [0.1]]
    labels = [[True, False], [True, True], [True]]
    metrics = step_metrics(scores, labels)
    assert (metrics.n_chains, metrics.n_steps) == (3, 5)
    assert metrics.accuracy == pytest.approx(4 / 5)
    assert metrics.always_correct == pytest.approx(4 / 5)
    assert metrics.auroc == pytest.approx(3 / 4)  # the wrong step (0.2) outranks one right step (0.1)
    # first errors: gold [1, -1, -1], predicted [1, -1, 0] -> erroneous 1/1, correct 1/2 -> F1 2/3
    assert metrics.first_error_f1 == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        step_metrics([[0.1]], [[True, False]])


def test_auroc_is_the_share_of_right_wrong_pairs_ordered_right() -> None:
    import random

    draw = random.Random(4)
    scores = [
        draw.choice([0.1, 0.25, 0.5, 0.5, 0.75, 0.9]) + draw.random() * 0.01 * (i % 3 == 0)
        for i in range(300)
    ]
    truths = [draw.random() < 0.6 for _ in scores]
    right = [s for s, t in zip(scores, truths, strict=True) if t]
    wrong = [s for s, t in zip(scores, truths, strict=True) if not t]
    pairs = sum(1.0 if r > w else 0.5 if r == w else 0.0 for r in right for w in wrong)
    assert auroc(scores, truths) == pytest.approx(pairs / (len(right) * len(wrong)), abs=1e-12)


def test_a_tally_chain_by_chain_gives_the_figures_of_the_whole() -> None:
    scores = [[0.9, 0.2], [0.8, 0.7], [0.1], [0.6, 0.4, 0.3]]
    labels = [[True, False], [True, True], [True], [True, False, False]]
    tally = StepTally()
    for chain_scores, chain_labels in zip(scores, labels, strict=True):
        tally.add(chain_scores, chain_labels)
    assert tally.metrics() == step_metrics(scores, labels)
    assert tally.metrics().n_steps == 8 and tally.metrics().n_chains == 4
    assert StepTally().metrics().n_steps == 0 and StepTally().metrics().auroc is None
    with pytest.raises(ValueError, match="2 scores but 1 labels"):
        tally.add([0.1, 0.2], [True])
