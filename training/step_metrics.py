"""Held-out scores of a PRM: step accuracy and AUROC, and ProcessBench first-error F1 (labels.metrics).

A step's score is P(step right). Accuracy and the predicted first error use a threshold (0.5); AUROC is
threshold-free, the fair figure for a soft-label model whose scores estimate an MC value rather than a
probability of the hard label. The gold first error of a chain is its first step labelled wrong (-1: none)
among the stored labels the row carries, so a row cut before an unlabelled step counts only what it holds.

>>> predicted_first_error([0.9, 0.4, 0.8]), gold_first_error([True, True])
(1, -1)
>>> auroc([0.9, 0.1, 0.8, 0.3], [True, False, True, False])
1.0
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prm_factory.labels.metrics import first_error_scores

THRESHOLD = 0.5


def predicted_first_error(scores: Sequence[float], threshold: float = THRESHOLD) -> int:
    """The first step scored below `threshold`, -1 when none is."""
    return next((i for i, score in enumerate(scores) if score < threshold), -1)


def gold_first_error(labels: Sequence[bool]) -> int:
    return next((i for i, label in enumerate(labels) if not label), -1)


def auroc(scores: Sequence[float], truths: Sequence[bool]) -> float | None:
    """Probability that a right step scores above a wrong one (ties count half); None without both kinds.

    The Mann-Whitney rank sum with tied scores given their mean rank, in numpy: a held-out split of a
    million-step version has hundreds of thousands of steps.
    """
    import numpy as np

    if len(scores) != len(truths):
        raise ValueError(f"{len(scores)} scores but {len(truths)} labels")
    values = np.asarray(scores, dtype=np.float64)
    right = np.asarray(truths, dtype=bool)
    positives = int(right.sum())
    negatives = len(right) - positives
    if positives == 0 or negatives == 0:
        return None
    _, tie_group, tie_counts = np.unique(values, return_inverse=True, return_counts=True)
    last_rank = np.cumsum(tie_counts)  # 1-based rank of each group's last member
    mean_rank = last_rank - (tie_counts - 1) / 2
    rank_sum = float(mean_rank[tie_group][right].sum())
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


@dataclass(frozen=True)
class StepMetrics:
    n_chains: int
    n_steps: int
    accuracy: float
    auroc: float | None
    first_error_f1: float
    always_correct: float  # the accuracy of calling every step right, the baseline to beat

    def line(self) -> str:
        roc = "n/a" if self.auroc is None else f"{self.auroc:.3f}"
        return (
            f"{self.n_chains} chains, {self.n_steps} steps: step accuracy {self.accuracy:.3f} "
            f"(always right {self.always_correct:.3f}), AUROC {roc}, first-error F1 {self.first_error_f1:.3f}"
        )


class StepTally:
    """Step scores and labels gathered chain by chain in flat arrays (9 bytes a step, 8 a chain), for an
    evaluation that streams its chains: nothing per step stays a Python object. `metrics()` gives the figures
    `step_metrics` gives for the same chains (it is built on this).

    >>> tally = StepTally()
    >>> tally.add([0.9, 0.2], [True, False])
    >>> tally.metrics().accuracy, tally.metrics().n_chains
    (1.0, 1)
    """

    def __init__(self, threshold: float = THRESHOLD) -> None:
        self.threshold = threshold
        self.scores = array("d")
        self.labels = array("b")
        self.gold_first = array("i")
        self.predicted_first = array("i")

    def add(self, scores: Sequence[float], labels: Sequence[bool]) -> None:
        """One chain's step scores and its step labels (equal in number)."""
        if len(scores) != len(labels):
            raise ValueError(f"a chain has {len(scores)} scores but {len(labels)} labels")
        self.scores.extend(scores)
        self.labels.extend(bool(label) for label in labels)
        self.gold_first.append(gold_first_error(labels))
        self.predicted_first.append(predicted_first_error(scores, self.threshold))

    def metrics(self) -> StepMetrics:
        import numpy as np

        scores = np.frombuffer(self.scores, dtype=np.float64)
        labels = np.frombuffer(self.labels, dtype=np.int8).astype(bool)
        n = len(labels)
        right = int(((scores >= self.threshold) == labels).sum())
        return StepMetrics(
            n_chains=len(self.gold_first),
            n_steps=n,
            accuracy=right / n if n else 0.0,
            auroc=auroc(scores, labels),
            first_error_f1=first_error_scores(self.gold_first, self.predicted_first).f1,
            always_correct=int(labels.sum()) / n if n else 0.0,
        )

    def threshold_choice(self) -> ThresholdChoice:
        """The threshold these steps choose (choose_threshold)."""
        import numpy as np

        scores = np.frombuffer(self.scores, dtype=np.float64)
        return _best_threshold(scores, np.frombuffer(self.labels, dtype=np.int8).astype(bool))


def step_metrics(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]], threshold: float = THRESHOLD
) -> StepMetrics:
    """Per-chain step scores against per-chain step labels (each chain's two lists of equal length)."""
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scored chains but {len(labels)} labelled")
    tally = StepTally(threshold)
    for chain_scores, chain_labels in zip(scores, labels, strict=True):
        tally.add(chain_scores, chain_labels)
    return tally.metrics()


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold on P(right) a PRM's step verdicts use, and where it came from (recorded in the
    checkpoint's `prm_factory.json`, read by the `prm` label source)."""

    threshold: float
    rule: str
    n_steps: int
    balanced_accuracy: float | None  # at the threshold, on the steps it was chosen on


def choose_threshold(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]]) -> ThresholdChoice:
    """The threshold with the best balanced accuracy (mean of the right-step and wrong-step recalls:
    Youden's J) over held-out steps, midway between two neighbouring scores; ties go to the lower one.
    Balanced, because most steps are right and plain accuracy would call them all right. Without both kinds
    of step it falls back to THRESHOLD and says so.

    >>> choose_threshold([[0.9, 0.2], [0.7, 0.6, 0.1]], [[True, False], [True, True, False]]).threshold
    0.4
    """
    tally = StepTally()
    for chain_scores, chain_labels in zip(scores, labels, strict=True):
        tally.add(chain_scores, chain_labels)
    return tally.threshold_choice()


def _best_threshold(scores: Any, labels: Any) -> ThresholdChoice:
    """choose_threshold over flat numpy arrays, in O(n log n): counts at every candidate by binary search
    (a streamed held-out split can hold hundreds of thousands of steps)."""
    import numpy as np

    n = len(labels)
    positives = int(labels.sum())
    negatives = n - positives
    if not positives or not negatives:
        return ThresholdChoice(THRESHOLD, "default: the held-out steps are all of one kind", n, None)
    values = np.unique(scores)
    candidates = np.concatenate([[values[0] - 1e-6], (values[:-1] + values[1:]) / 2])
    right = positives - np.searchsorted(np.sort(scores[labels]), candidates, side="left")  # s >= c
    wrong = np.searchsorted(np.sort(scores[~labels]), candidates, side="left")  # s < c, wrong steps
    balanced = (right / positives + wrong / negatives) / 2
    best = int(np.argmax(balanced >= balanced.max() - 1e-12))  # the lowest of the best
    return ThresholdChoice(
        round(float(candidates[best]), 6),
        "max balanced accuracy on the held-out steps",
        n,
        float(balanced[best]),
    )
