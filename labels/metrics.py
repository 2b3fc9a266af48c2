"""Label-quality metrics, as pure functions over gold and predicted labels.

- ProcessBench first-error F1: accuracy on erroneous samples (the predicted first-error index must equal
  the gold one exactly) and on correct samples (the prediction must be -1), and their harmonic mean.
- Per-step precision / recall of `incorrect` (did the checker flag the steps that are wrong?).
- Final-answer precision / recall of `correct` (is a `correct` verdict trustworthy, and how many true
  matches does it find?). `unparsed` counts as "not correct": it costs recall, never precision.

>>> first_error_scores([2, -1, 0, -1], [2, -1, 1, 3]).f1
0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FirstErrorScores:
    """ProcessBench scores in [0, 1]; `n_erroneous` / `n_correct` are the sample counts behind them, and
    `n_correct_flagged` the correct samples with a predicted error (any step labelled `incorrect`)."""

    accuracy_erroneous: float
    accuracy_correct: float
    f1: float
    n_erroneous: int
    n_correct: int
    n_correct_flagged: int = 0

    @property
    def correct_flagged_share(self) -> float:
        """Share of the correct samples accused of an error (0.0 when there is none)."""
        return self.n_correct_flagged / self.n_correct if self.n_correct else 0.0


def _harmonic(a: float, b: float) -> float:
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def first_error_scores(gold: Sequence[int], predicted: Sequence[int]) -> FirstErrorScores:
    """ProcessBench first-error F1; -1 means "no error". Raises on a length mismatch (a zip would lie)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    erroneous = [(g, p) for g, p in zip(gold, predicted, strict=True) if g != -1]
    correct = [(g, p) for g, p in zip(gold, predicted, strict=True) if g == -1]
    acc_err = sum(g == p for g, p in erroneous) / len(erroneous) if erroneous else 0.0
    flagged = sum(p != -1 for _, p in correct)
    acc_cor = (len(correct) - flagged) / len(correct) if correct else 0.0
    return FirstErrorScores(
        acc_err, acc_cor, _harmonic(acc_err, acc_cor), len(erroneous), len(correct), flagged
    )


@dataclass(frozen=True)
class PrecisionRecall:
    precision: float
    recall: float
    true_positive: int
    false_positive: int
    false_negative: int

    @property
    def f1(self) -> float:
        return _harmonic(self.precision, self.recall)


def precision_recall(gold_positive: Sequence[bool], predicted_positive: Sequence[bool]) -> PrecisionRecall:
    """Precision and recall of a positive class; an empty denominator gives 0.0, not a division error."""
    if len(gold_positive) != len(predicted_positive):
        raise ValueError(f"{len(gold_positive)} gold labels but {len(predicted_positive)} predictions")
    pairs = list(zip(gold_positive, predicted_positive, strict=True))
    tp = sum(g and p for g, p in pairs)
    fp = sum(p and not g for g, p in pairs)
    fn = sum(g and not p for g, p in pairs)
    return PrecisionRecall(tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0, tp, fp, fn)


def step_incorrect_scores(
    gold_steps: Sequence[Sequence[str]], predicted_steps: Sequence[Sequence[str]]
) -> PrecisionRecall:
    """Per-step precision/recall of the label `incorrect`, over all steps of all chains.

    Only steps with a gold label `correct` or `incorrect` count (steps after a first error are usually
    unlabeled); chains must have the same number of steps on both sides.
    """
    gold_flat: list[bool] = []
    pred_flat: list[bool] = []
    for gold, pred in zip(gold_steps, predicted_steps, strict=True):
        if len(gold) != len(pred):
            raise ValueError(f"a chain has {len(gold)} gold steps but {len(pred)} predicted")
        for gold_label, pred_label in zip(gold, pred, strict=True):
            if gold_label in ("correct", "incorrect"):
                gold_flat.append(gold_label == "incorrect")
                pred_flat.append(pred_label == "incorrect")
    return precision_recall(gold_flat, pred_flat)


def step_labels_from_first_error(first_error: int, n_steps: int) -> list[str]:
    """Gold step labels implied by a first-error index: steps before it correct, it incorrect, later ones
    unknown (ProcessBench does not label them) and left out as `unlabeled`."""
    if first_error == -1:
        return ["correct"] * n_steps
    return ["correct"] * first_error + ["incorrect"] + ["unlabeled"] * (n_steps - first_error - 1)


def answer_correct_scores(
    gold_equivalent: Sequence[bool], predicted_labels: Sequence[str]
) -> PrecisionRecall:
    """Precision/recall of final-answer verdict `correct` against hand labels (True = equivalent)."""
    return precision_recall(gold_equivalent, [label == "correct" for label in predicted_labels])
