"""The one verifier protocol: grade a chain's outcome and judge each of its steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from prm_factory.schemas.records import Problem

StepLabel = Literal["correct", "incorrect", "unverifiable"]
OutcomeLabel = Literal["correct", "incorrect", "unparsed", "timeout", "error"]

# Outcomes that say nothing about the chain: no answer found, a check that ran out of time, or one the
# infrastructure could not run (a dead worker, a lost sandbox). They are never a negative label.
UNJUDGED_OUTCOMES = frozenset({"unparsed", "timeout", "error"})


def outcome_value(label: str) -> bool | None:
    """Three-valued reading of an outcome label: True (correct), False (incorrect), None (not judged).

    >>> [outcome_value(x) for x in ("correct", "incorrect", "unparsed", "timeout", "error")]
    [True, False, None, None, None]
    """
    if label == "correct":
        return True
    if label == "incorrect":
        return False
    if label in UNJUDGED_OUTCOMES:
        return None
    raise ValueError(f"unknown outcome label {label!r}")


@dataclass(frozen=True)
class Verdict:
    """A label with the reason behind it, never a bare bool.

    `evidence` is JSON-serialisable detail (the failing claim and its expected value, the extracted
    answer span, per-test results) so a reader of the dataset can see why. `kind` names the reading a
    step verdict rests on, where the verifier has such readings (the math checker's
    `verifiers.math.reading_kinds`: `closed_arithmetic`, `equation_step`, ...); None for other verdicts.
    A consumer weighs a verdict by its kind's measured precision (`reading_kinds.FINAL_KINDS`).
    """

    label: str
    reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    kind: str | None = None


class Verifier(Protocol):
    """Judges chains for one domain. `name` and `version` go into every label's provenance."""

    name: str
    version: str

    def grade(self, problem: Problem, completion: str) -> Verdict:
        """Outcome of a full chain (or rollout) text: correct | incorrect, or unparsed | timeout | error
        when it could not be judged (see `outcome_value`)."""
        ...

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        """One verdict per step, in order: correct | incorrect | unverifiable."""
        ...
