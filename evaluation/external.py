"""Label quality on chains that carry gold labels (ProcessBench `label`, PRM800K ratings)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prm_factory.labels.metrics import (
    FirstErrorScores,
    PrecisionRecall,
    first_error_scores,
    step_incorrect_scores,
    step_labels_from_first_error,
)
from prm_factory.schemas.external_chains import ExternalChain


@dataclass(frozen=True)
class ExternalEvalReport:
    first_error: FirstErrorScores | None  # None when no chain carries a first-error label
    steps: PrecisionRecall | None
    n_chains: int


def gold_step_labels(chain: ExternalChain) -> list[str] | None:
    """Per-step gold labels: PRM800K ratings (-1 incorrect, 0/1 correct, None unlabeled), else implied by
    the first-error label; None when the chain carries neither."""
    if chain.step_labels is not None:
        return [
            "unlabeled" if r is None else ("incorrect" if r < 0 else "correct") for r in chain.step_labels
        ]
    if chain.first_error_label is not None:
        return step_labels_from_first_error(chain.first_error_label, len(chain.steps))
    return None


def predicted_first_error(verdict_labels: Sequence[str]) -> int:
    """ProcessBench convention: index of the first `incorrect` step, -1 when there is none."""
    return next((i for i, label in enumerate(verdict_labels) if label == "incorrect"), -1)


def evaluate_external(
    chains: Sequence[ExternalChain], predicted: Sequence[Sequence[str]]
) -> ExternalEvalReport:
    """First-error F1 over chains with a first-error label, per-step precision/recall of `incorrect` over
    chains with any step labels. `predicted` holds each chain's per-step verdict labels."""
    if len(chains) != len(predicted):
        raise ValueError(f"{len(chains)} chains but {len(predicted)} predictions")
    with_first = [(c, p) for c, p in zip(chains, predicted, strict=True) if c.first_error_label is not None]
    first = (
        first_error_scores(
            [c.first_error_label for c, _ in with_first], [predicted_first_error(p) for _, p in with_first]
        )  # type: ignore[misc]
        if with_first
        else None
    )
    golds, preds = [], []
    for chain, labels in zip(chains, predicted, strict=True):
        gold = gold_step_labels(chain)
        if gold is not None:
            golds.append(gold)
            preds.append(list(labels))
    steps = step_incorrect_scores(golds, preds) if golds else None
    return ExternalEvalReport(first, steps, len(chains))
