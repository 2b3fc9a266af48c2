"""The `verifier` label source: the domain's verifier checks each step (SymPy claim checks for math, test
runs in the sandbox for code). Its `incorrect` is a checked false claim, final whatever else says; its
`correct` (the arithmetic holds) is weak, since a step can compute true arithmetic on the wrong quantities.
The verifier is also what grades outcomes and rollouts, so every run uses it (labels.registry.ALWAYS).

Where the verifier names the reading behind an `incorrect` (its `kind`: closed arithmetic, an equation
step, ...; the math verifier from 2.6.0), `final_kinds` says which readings are precise enough to be final:
by default the math verifier's `FINAL_KINDS` (the kinds measured at 99 % precision or more on enough flags,
`verifiers/math/reading_kinds.py`). An `incorrect` of another kind votes as the reference's does (strong: a
strong positive, the reference's or a judge's `correct`, an MC hard label True, disputes it). A verdict
without a kind (the code verifier's) stays final, and so does every `incorrect` of a source whose
`final_kinds` is None."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup, Strength, Vote
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.identity import labeler_identity
from prm_factory.verifiers.math.public import FINAL_KINDS
from prm_factory.verifiers.protocol import Verdict

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain


class VerifierSource(BaseSource):
    name = "verifier"
    needs = frozenset({"sandbox"})  # code chains only: the domain decides (flows tag code tasks)
    positive = Strength.WEAK
    negative = Strength.FINAL
    final_kinds: frozenset[str] | None = FINAL_KINDS  # None: every `incorrect` is final, whatever its kind

    def vote(self, label: StepLabel) -> Vote | None:
        vote = super().vote(label)
        if vote is None or vote.positive or label.kind is None or self.final_kinds is None:
            return vote
        return vote if label.kind in self.final_kinds else Vote(False, Strength.STRONG)

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """The verifier's name, version and the digest of its package (verifiers.identity)."""
        return labeler_identity(setup.verifier)

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        tag = self.labeler(setup)  # labels.source.source_identity
        return [
            from_verdicts(setup.verifier.check_steps(c.problem, [s.text for s in c.steps]), tag)
            for c in chains
        ]


def from_verdicts(verdicts: Sequence[Verdict], labeler: str) -> ChainLabels:
    """The verifier's step verdicts as labels (a verdict's reading kind, where it names one, goes along)."""
    return tuple(
        StepLabel(
            "verifier",
            verdict.label,
            None,
            verdict.reason,
            json.dumps(verdict.evidence, default=str),
            labeler,
            getattr(verdict, "kind", None),  # verifiers name their reading kind from issue 38 on
        )
        for verdict in verdicts
    )


SOURCE = VerifierSource()
