"""The `human` label source: reviewers' answers of an audit (audit/human.py's rule) as step labels of a
dataset version, the strongest vote of the consensus.

An audit's answers reach the dataset through `prm-factory relabel --source human` with the audit named in the
config (`[labels.options.human] audit = "PATH/audit.sqlite"`, or its folder): each answered step of the
version gets its `human_*` columns (verdict, the reviewers' words as its reason, evidence naming the
reviewers, `human:ana+ben`, the time of the latest answer and every answer) in a new version, and the
consensus and first errors are recomputed with it. Steps nobody answered stay unlabelled by it (no vote),
and so does a chain none of whose steps was answered.

Its vote is `Strength.REVIEWED`, above every automatic source: a reviewer's `incorrect` decides against any
positive, and a reviewer's `correct` overrules an automatic `incorrect` (labels/source.py). Its first error is
the step a reviewer marked as the chain's first wrong one; an `incorrect` without that mark locates none.
Its identity covers the answers (their digest): new answers make new labels, as a new release of any source
does.

Human labels that already exist come in the same way: `prm-factory label FILE --human-labels` (or
`[labels.options.human] input = true`) reads the gold labels a ProcessBench or PRM800K row carries
(audit/human.py `external_human_labels`: ProcessBench's first wrong step, PRM800K's ratings) as this source's
labels of that chain, `human:processbench` or `human:prm800k` as the reviewers. Where an audit answered a
step too, the audit's answer is the label. A relabel keeps the human labels no new answer replaces (the
source reads its own stored labels).

An audit measures the automatic sources against these answers; a version that holds them measures a consensus
that includes them, so draw an audit from a version without them (audit/sources.py leaves `human` out).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prm_factory.audit.human import SOURCE as NAME
from prm_factory.audit.human import HumanStepLabel, external_human_labels, human_labels
from prm_factory.audit.store import AuditStore
from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup, Strength
from prm_factory.schemas.step_labels import StepLabel

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain


class HumanSource(BaseSource):
    name = NAME
    version = "1.2.0"  # 1.2.0: steps nobody reviewed carry no human label (1.1.0 wrote `unverifiable`)
    reads = (NAME,)  # in a relabel: its own stored labels, kept where no new answer replaces them
    identity_covers_options = True  # its version carries the answers its options point at
    positive = Strength.REVIEWED
    negative = Strength.REVIEWED
    positive_overrules = True
    code_modules = ("prm_factory.audit.human", "prm_factory.audit.human_source", "prm_factory.audit.store")

    def applies(self, setup: SourceSetup) -> bool:
        """Where the config names an audit (`[labels.options.human] audit`), or where `label` reads the
        input rows' own gold labels (`[labels.options.human] input = true`)."""
        return bool(setup.options(self.name).get("audit")) or self.reads_input(setup)

    def reads_input(self, setup: SourceSetup) -> bool:
        return setup.pipeline == "label" and bool(setup.options(self.name).get("input"))

    def audit_path(self, setup: SourceSetup) -> Path:
        return Path(str(setup.options(self.name)["audit"])).expanduser()

    def answered(self, setup: SourceSetup) -> dict[tuple[str, int], HumanStepLabel]:
        """The audit's human labels by (chain id, step index); none where no audit is named."""
        if not setup.options(self.name).get("audit"):
            return {}
        store = AuditStore.open(self.audit_path(setup))
        try:
            steps = {item.item_id: (item.chain_id, item.step_index) for item in store.items()}
            labels = human_labels(steps, store.answers())
        finally:
            store.close()
        return {(label.chain_id, label.step_index): label for label in labels}

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """Name, version and code digest, with a digest of the answers (new answers: new rows) and `+input`
        where the input rows' labels are read."""
        return self._identity(setup, None)

    def _identity(
        self, setup: SourceSetup, answered: dict[tuple[str, int], HumanStepLabel] | None
    ) -> dict[str, str]:
        """`identity`, from answers already read (`label` reads the audit store once, not twice)."""
        base = super().identity(setup)
        if not self.applies(setup):
            return base
        version = self.version
        if setup.options(self.name).get("audit"):
            found = self.answered(setup) if answered is None else answered
            answers = sorted((key, label.verdict, label.evidence) for key, label in found.items())
            version += f"+answers.{hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:12]}"
        if self.reads_input(setup):
            version += "+input"
        return {**base, "version": version}

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        """Per step: the audit's answer, else the input row's gold label, else the label stored before."""
        from prm_factory.verifiers.identity import identity_tag

        answered = self.answered(setup)
        tag = identity_tag(self._identity(setup, answered))  # the labeler, from the answers read once
        from_input = self.reads_input(setup)
        stored = prior.get(self.name, [None] * len(chains))
        out: list[ChainLabels | None] = []
        for chain, before in zip(chains, stored, strict=True):
            given: list[StepLabel | None] = [None] * len(chain.steps)
            if before is not None:
                given = list(before)
            if from_input and chain.external is not None:
                for label in external_human_labels(chain.external, chain.chain_id):
                    if label.step_index < len(given):
                        given[label.step_index] = step_label(label, tag)
            for index in range(len(chain.steps)):
                if (chain.chain_id, index) in answered:
                    given[index] = step_label(answered[(chain.chain_id, index)], tag)
            if not any(given):
                out.append(None)
                continue
            # a step nobody reviewed carries no human label (None), not an `unverifiable` one
            out.append(tuple(None if label is None else retagged(label, tag) for label in given))
        return out

    def first_error(self, labels: Sequence[StepLabel]) -> int | None:
        return next(
            (
                index
                for index, label in enumerate(labels)
                if label is not None
                and label.verdict == "incorrect"
                and json.loads(label.evidence).get("first_error") == "this"
            ),
            None,
        )


def retagged(label: StepLabel | None, tag: str) -> StepLabel:
    """A kept label under the source's current labeler `tag` (so a relabel knows it current); no label: no
    vote."""
    if label is None:
        return step_label(None, tag)
    return dataclasses.replace(label, labeler=tag)


def step_label(label: HumanStepLabel | None, tag: str) -> StepLabel:
    """A human label as a step label carrying the source's labeler `tag` (so a relabel knows it current); the
    reviewers (`human:ana+ben`), the time of the latest answer and every answer are its evidence, the
    reviewers' words its reason. No answer: `unverifiable`, no vote."""
    if label is None:
        return StepLabel(NAME, "unverifiable", None, "not reviewed", "{}", tag)
    evidence = {
        "reviewers": label.labeler,
        "labeled_at": label.labeled_at,
        "first_error": label.first_error,
        "answers": json.loads(label.evidence),
    }
    return StepLabel(NAME, label.verdict, None, label.reason, json.dumps(evidence), tag)


SOURCE = HumanSource()
