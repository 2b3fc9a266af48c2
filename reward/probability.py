"""`p_correct` of a step: how far a trainer may trust its verdict, until the consensus is a measured
probability (issue 47's calibration tables).

The interim mapping, per step, from the factory's own consensus (labels.consensus) over the sources' votes:

============ ==================================================================================
consensus    p_correct
============ ==================================================================================
negative     the lowest P(right | flag) among the sources that said `incorrect`: 1 minus the precision
             of that source's `incorrect` measured on ProcessBench `math` (dev split,
             docs/label-quality.md): verifier 117 / 122 right (0.041), reference 60 / 66 (0.091); a
             verifier `incorrect` of a reading kind outside `FINAL_KINDS` 0.45 (such kinds were right
             55-85 % of the time on model-written competition chains, issue 47: the low end); a source
             that gives a value in [0, 1] (the trained PRM: its P(right)) that value; any other 0.5
positive     1.0, or the lowest value in [0, 1] a voting source gave (the PRM's P(right)). A positive
             has no measured precision yet: the verifier's `correct` says only that the arithmetic
             written holds, so this is an upper bound, not an estimate
disputed     0.5
unlabeled    a non-voting source's value where one gave it (the PRM by default votes not), else None:
             nothing was checked, and a trainer's aggregation decides what that is worth
============ ==================================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prm_factory.labels.source import LabelSource
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.public import FINAL_KINDS

FLAG_PRECISION: dict[str, float] = {"verifier": 117 / 122, "reference": 60 / 66}
"""Measured precision of each source's `incorrect` (ProcessBench `math` dev, docs/label-quality.md)."""

UNSURE_KIND_PRECISION = 0.55
"""A verifier `incorrect` of a kind not in FINAL_KINDS: the low end of what issue 47 measured."""

UNMEASURED = 0.5
"""P(right) of a flag by a source with no measured precision and no value of its own."""

MAPPING_NAME = "interim-1"
"""Which mapping gave `p_correct` (results carry it, so a later calibrated one is told apart)."""


def flag_p_correct(label: StepLabel) -> float:
    """P(step right | this source said `incorrect`) under the interim mapping.

    >>> flag_p_correct(StepLabel("verifier", "incorrect", kind="closed_arithmetic"))
    0.04098360655737709
    >>> flag_p_correct(StepLabel("verifier", "incorrect", kind="equation_step"))
    0.44999999999999996
    """
    if label.value is not None and label.source not in FLAG_PRECISION:
        return label.value
    if label.source == "verifier" and label.kind is not None and label.kind not in FINAL_KINDS:
        return 1.0 - UNSURE_KIND_PRECISION
    precision = FLAG_PRECISION.get(label.source)
    return UNMEASURED if precision is None else 1.0 - precision


def step_p_correct(
    labels: Sequence[StepLabel], consensus: str, sources: Mapping[str, LabelSource]
) -> float | None:
    """One step's `p_correct` from its labels and their consensus (table in the module docstring)."""
    if consensus == "negative":
        flags = [
            label for label in labels if label.verdict == "incorrect" and sources[label.source].vote(label)
        ]
        return min(flag_p_correct(label) for label in flags)
    if consensus == "disputed":
        return 0.5
    if consensus == "positive":
        values = [
            label.value
            for label in labels
            if label.verdict == "correct" and label.value is not None and sources[label.source].vote(label)
        ]
        return min(values, default=1.0)
    values = [label.value for label in labels if label.value is not None]
    return min(values) if values else None
