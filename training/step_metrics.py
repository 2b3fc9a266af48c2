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

from collections.abc import Sequence
from dataclasses import dataclass

from prm_factory.labels.metrics import first_error_scores

THRESHOLD = 0.5


def predicted_first_error(scores: Sequence[float], threshold: float = THRESHOLD) -> int:
    """The first step scored below `threshold`, -1 when none is."""
    return next((i for i, score in enumerate(scores) if score < threshold), -1)


def gold_first_error(labels: Sequence[bool]) -> int:
    return next((i for i, label in enumerate(labels) if not label), -1)


def auroc(scores: Sequence[float], truths: Sequence[bool]) -> float | None:
    """Probability that a right step scores above a wrong one (ties count half); None without both kinds."""
    if len(scores) != len(truths):
        raise ValueError(f"{len(scores)} scores but {len(truths)} labels")
    ranked = sorted(zip(scores, truths, strict=True), key=lambda pair: pair[0])
    positives = sum(truths)
    negatives = len(truths) - positives
    if positives == 0 or negatives == 0:
        return None
    rank_sum, i = 0.0, 0
    while i < len(ranked):  # average ranks over runs of tied scores
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + 1 + j) / 2
        rank_sum += mean_rank * sum(truth for _, truth in ranked[i:j])
        i = j
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


def step_metrics(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[bool]], threshold: float = THRESHOLD
) -> StepMetrics:
    """Per-chain step scores against per-chain step labels (each chain's two lists of equal length)."""
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scored chains but {len(labels)} labelled")
    flat_scores: list[float] = []
    flat_labels: list[bool] = []
    for chain_scores, chain_labels in zip(scores, labels, strict=True):
        if len(chain_scores) != len(chain_labels):
            raise ValueError(f"a chain has {len(chain_scores)} scores but {len(chain_labels)} labels")
        flat_scores += chain_scores
        flat_labels += chain_labels
    n = len(flat_labels)
    right = sum((s >= threshold) == t for s, t in zip(flat_scores, flat_labels, strict=True))
    f1 = first_error_scores(
        [gold_first_error(chain) for chain in labels],
        [predicted_first_error(chain, threshold) for chain in scores],
    ).f1
    return StepMetrics(
        n_chains=len(labels),
        n_steps=n,
        accuracy=right / n if n else 0.0,
        auroc=auroc(flat_scores, flat_labels),
        first_error_f1=f1,
        always_correct=sum(flat_labels) / n if n else 0.0,
    )


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
    flat = [
        (s, t)
        for chain_s, chain_t in zip(scores, labels, strict=True)
        for s, t in zip(chain_s, chain_t, strict=True)
    ]
    positives = sum(t for _, t in flat)
    negatives = len(flat) - positives
    if not positives or not negatives:
        return ThresholdChoice(THRESHOLD, "default: the held-out steps are all of one kind", len(flat), None)
    values = sorted({s for s, _ in flat})
    candidates = [values[0] - 1e-6, *((a + b) / 2 for a, b in zip(values, values[1:], strict=False))]
    best, best_score = THRESHOLD, -1.0
    for candidate in candidates:
        recall_right = sum(s >= candidate for s, t in flat if t) / positives
        recall_wrong = sum(s < candidate for s, t in flat if not t) / negatives
        score = (recall_right + recall_wrong) / 2
        if score > best_score + 1e-12:
            best, best_score = candidate, score
    return ThresholdChoice(
        round(best, 6), "max balanced accuracy on the held-out steps", len(flat), best_score
    )
