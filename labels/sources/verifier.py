"""The `verifier` label source: the domain's verifier checks each step (SymPy claim checks for math, test
runs in the sandbox for code). The verifier is also what grades outcomes and rollouts, so every run uses it
(labels.registry.ALWAYS).

Its labels name the reading behind each verdict (its `kind`: closed arithmetic, an equation step, ...; the
math verifier from 2.6.0), and that is what a vote weighs by: the consensus reads the precision of each
verdict and kind from the verifier's calibration table (labels/calibration.py, labels/consensus.py), so a
kind measured at 99 % is nearly decisive alone and one measured at 55 % is a guess another source can
dispute. A verdict without a kind (the code verifier's) weighs the verdict's pooled precision."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.identity import labeler_identity
from prm_factory.verifiers.protocol import Verdict

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain


class VerifierSource(BaseSource):
    name = "verifier"
    needs = frozenset({"sandbox"})  # code chains only: the domain decides (flows tag code tasks)

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """The verifier's name, version and the digest of its package (verifiers.identity)."""
        return labeler_identity(setup.verifier)

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        return self.labels_of(
            [setup.verifier.check_steps(c.problem, [s.text for s in c.steps]) for c in chains], setup
        )

    def labels_of(
        self, verdicts: Sequence[Sequence[Verdict]], setup: SourceSetup
    ) -> list[ChainLabels | None]:
        """The labels of chains already checked, one list of verdicts a chain: how `label` turns its own
        checks into labels, and how `run` turns its cached verify stage's (flows/generation_run.py), so
        both carry this source's identity (`labeler`: labels.source.source_identity)."""
        tag = self.labeler(setup)
        return [from_verdicts(chain_verdicts, tag) for chain_verdicts in verdicts]


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
