"""The one verifier protocol: grade a chain's outcome and judge each of its steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from schemas.records import Problem

StepLabel = Literal["correct", "incorrect", "unverifiable"]
OutcomeLabel = Literal["correct", "incorrect", "unparsed"]


@dataclass(frozen=True)
class Verdict:
    """A label with the reason behind it, never a bare bool.

    `evidence` is JSON-serialisable detail (the failing claim and its expected value, the extracted
    answer span, per-test results) so a reader of the dataset can see why.
    """

    label: str
    reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)


class Verifier(Protocol):
    """Judges chains for one domain. `name` and `version` go into every label's provenance."""

    name: str
    version: str

    def grade(self, problem: Problem, completion: str) -> Verdict:
        """Outcome of a full chain (or rollout) text: correct | incorrect | unparsed."""
        ...

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        """One verdict per step, in order: correct | incorrect | unverifiable."""
        ...
