"""The eval metrics on small hand-made sets whose scores are worked out by hand."""

from __future__ import annotations

import pytest

from prm_factory.labels.metrics import (
    answer_correct_scores,
    first_error_scores,
    precision_recall,
    step_incorrect_scores,
    step_labels_from_first_error,
)


def test_processbench_f1_worked_example() -> None:
    gold = [2, 0, 3, -1, -1, -1, -1]
    pred = [2, 1, 3, -1, -1, 0, -1]  # erroneous: 2 of 3 exact; correct: 3 of 4 say -1
    scores = first_error_scores(gold, pred)
    assert scores.accuracy_erroneous == pytest.approx(2 / 3)
    assert scores.accuracy_correct == pytest.approx(3 / 4)
    assert scores.f1 == pytest.approx(2 * (2 / 3) * (3 / 4) / (2 / 3 + 3 / 4))
    assert (scores.n_erroneous, scores.n_correct) == (3, 4)


def test_processbench_needs_the_exact_index() -> None:
    assert first_error_scores([1], [2]).accuracy_erroneous == 0.0
    assert first_error_scores([1, -1], [1, -1]).f1 == 1.0
    assert first_error_scores([1, -1], [-1, -1]).f1 == 0.0  # never flagging scores zero, not 50


def test_length_mismatch_raises() -> None:
    with pytest.raises(ValueError):
        first_error_scores([1, 2], [1])


def test_step_scores_ignore_unlabeled_steps() -> None:
    gold = [step_labels_from_first_error(1, 4), step_labels_from_first_error(-1, 2)]
    assert gold[0] == ["correct", "incorrect", "unlabeled", "unlabeled"]
    pred = [["correct", "incorrect", "incorrect", "correct"], ["incorrect", "correct"]]
    scores = step_incorrect_scores(gold, pred)
    # labeled steps: c,i | c,c ; predicted on them: c,i | i,c -> tp 1, fp 1, fn 0
    assert (scores.true_positive, scores.false_positive, scores.false_negative) == (1, 1, 0)
    assert scores.precision == 0.5 and scores.recall == 1.0


def test_answer_precision_counts_unparsed_as_not_correct() -> None:
    gold = [True, True, False, False, True]
    labels = ["correct", "unparsed", "correct", "incorrect", "correct"]
    scores = answer_correct_scores(gold, labels)
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.recall == pytest.approx(2 / 3)


def test_empty_denominators_are_zero() -> None:
    scores = precision_recall([False], [False])
    assert (scores.precision, scores.recall, scores.f1) == (0.0, 0.0, 0.0)
