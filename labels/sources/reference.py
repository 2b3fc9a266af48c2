"""The `reference` label source: each step aligned with the problem's worked solution (labels/reference.py).
Math only. Its `incorrect` (a quantity off the worked solution in a wrong chain) and its `correct` (on the
solution's track) are strong votes: a rollout that still reaches the answer disputes the first, an MC
hard label False the second."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.identity import code_digest

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain
    from prm_factory.schemas.records import Problem
    from prm_factory.verifiers.protocol import Verdict

CODE_MODULES = (
    "prm_factory.labels",
    "prm_factory.verifiers.math",  # its step reading (`claims`, `claim_extraction`) and number rules
    "prm_factory.verifiers.protocol",
)
"""What the reference labeler's code digest covers (its identity is that of `flows.domains` before it)."""


class ReferenceSource(BaseSource):
    name = "reference"
    needs = frozenset({"solution"})

    def applies(self, setup: SourceSetup) -> bool:
        return setup.domain == "math"

    def identity(self, setup: SourceSetup | None = None) -> dict[str, str]:
        from prm_factory.labels.reference import REFERENCE_LABELER, REFERENCE_VERSION

        return {"name": REFERENCE_LABELER, "version": REFERENCE_VERSION, "code": code_digest(CODE_MODULES)}

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        tag = self.labeler(setup)  # labels.source.source_identity
        return [
            from_verdicts(step_verdicts(c.problem, [s.text for s in c.steps], c.outcome.label), tag)
            for c in chains
        ]


def step_verdicts(problem: Problem, steps: list[str], outcome: str) -> list[Verdict]:
    """One chain's alignment with its problem's worked solution (`unverifiable` throughout without one)."""
    from prm_factory.labels.reference import reference_step_labels

    return reference_step_labels(problem, steps, outcome)


def from_verdicts(verdicts: Sequence[Verdict], labeler: str) -> ChainLabels:
    return tuple(
        StepLabel("reference", v.label, None, v.reason, json.dumps(v.evidence, default=str), labeler)
        for v in verdicts
    )


SOURCE = ReferenceSource()
