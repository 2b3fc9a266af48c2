"""The `prm` label source: a checkpoint of `prm-factory train` scores every step.

A step's label carries the PRM's P(step right) as its value and a verdict by a threshold: `correct` at or
above it, `incorrect` below, `unverifiable` where the PRM gave no score (a step cut by its max length).
The threshold is the one training chose on its held-out split (training.step_metrics.choose_threshold,
recorded in the checkpoint's `prm_factory.json` with its rule); `options.prm.threshold` overrides it, and a
checkpoint that recorded none (TRL's) uses 0.5; the label's evidence says which. So a user trains on the
rules' agreeing labels, scores the rest (`prm-factory relabel --source prm`) and queries where the PRM and
the rules disagree (`... WHERE prm_verdict <> verdict`, docs/labels.md).

The PRM learned from the rules' labels, so by default its labels do not vote in the consensus (it would be
voting on its own teachers): `options.prm.vote = "weak"` or `"strong"` makes them vote.

Settings, in the config: `[labels] sources = ["reference", "prm"]` and `[labels.options.prm]` with
`checkpoint` (required), `threshold`, `vote`, `batch_size`. It registers through the entry-point group
like any package's source (pyproject.toml), not in labels/registry.py: training sits above labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup, Strength, Vote
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.training.model import METADATA
from prm_factory.training.step_metrics import THRESHOLD
from prm_factory.verifiers.identity import code_digest

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain
    from prm_factory.training.scorer import PrmScorer

CODE_MODULES = (
    "prm_factory.training.prm_source",
    "prm_factory.training.scorer",
    "prm_factory.training.layout",
)
VOTES = {"none": None, "weak": Strength.WEAK, "strong": Strength.STRONG}


class PrmSource(BaseSource):
    name = "prm"
    version = "1"
    needs = frozenset({"checkpoint"})

    def applies(self, setup: SourceSetup) -> bool:
        """Where the config names a checkpoint (`[labels.options.prm] checkpoint`)."""
        return bool(setup.options(self.name).get("checkpoint"))

    def settings(self, setup: SourceSetup) -> PrmSettings:
        return prm_settings(setup.options(self.name))

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """The checkpoint's weights and the threshold are the version: another checkpoint, or another
        threshold, is another labeler."""
        settings = self.settings(setup)
        return {
            "name": self.name,
            "version": f"{self.version}:{settings.weights[:12]}:t={settings.threshold:.6g}",
            "code": code_digest(CODE_MODULES),
        }

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        settings = self.settings(setup)
        scorer = _scorer(settings.checkpoint, settings.batch_size)
        scored = scorer.score([(c.problem.text, [s.text.strip() for s in c.steps]) for c in chains])
        labeler = self.labeler(setup)
        return [
            step_labels(list(scores.scores), len(chain.steps), settings, labeler) or None
            for chain, scores in zip(chains, scored, strict=True)
        ]

    def vote(self, label: StepLabel) -> Vote | None:
        strength = VOTES.get(json.loads(label.evidence).get("vote", "none"))
        if strength is None or label.verdict == "unverifiable":
            return None
        return Vote(label.verdict == "correct", strength)


class PrmSettings:
    """`[labels.options.prm]` resolved against the checkpoint's own record."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        if not options.get("checkpoint"):
            raise ValueError(
                "the prm source needs [labels.options.prm] checkpoint = <a prm-factory train folder>"
            )
        self.checkpoint = Path(str(options["checkpoint"])).expanduser().resolve()
        if not (self.checkpoint / "config.json").is_file():
            raise ValueError(f"prm source: {self.checkpoint} is no saved checkpoint (no config.json)")
        self.vote = str(options.get("vote", "none"))
        if self.vote not in VOTES:
            raise ValueError(f"prm source: vote {self.vote!r}; choose one of {', '.join(VOTES)}")
        self.batch_size = int(options.get("batch_size", 8))
        recorded = recorded_threshold(self.checkpoint)
        if options.get("threshold") is not None:
            self.threshold, self.rule = float(options["threshold"]), "set in [labels.options.prm]"
        elif recorded is not None:
            self.threshold, self.rule = float(recorded["threshold"]), str(recorded["rule"])
        else:
            self.threshold, self.rule = THRESHOLD, "default: the checkpoint recorded no threshold"
        self.weights = _weights(self.checkpoint)


def prm_settings(options: Mapping[str, Any]) -> PrmSettings:
    return _settings(tuple(sorted((k, str(v)) for k, v in options.items())))


@cache
def _settings(items: tuple[tuple[str, str], ...]) -> PrmSettings:
    return PrmSettings(dict(items))


def recorded_threshold(checkpoint: Path) -> dict[str, Any] | None:
    """The threshold training chose and recorded in the checkpoint (None: it recorded none)."""
    path = checkpoint / METADATA
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("threshold")


def step_labels(scores: list[float], n_steps: int, settings: PrmSettings, labeler: str) -> ChainLabels:
    """One chain's labels from its step scores (a step past the scored ones: `unverifiable`)."""
    evidence = json.dumps(
        {"threshold": settings.threshold, "threshold_rule": settings.rule, "vote": settings.vote},
        sort_keys=True,
    )
    labels = []
    for index in range(n_steps):
        score = scores[index] if index < len(scores) else None
        if score is None:
            labels.append(
                StepLabel(
                    "prm", "unverifiable", None, "no score: past the PRM's max length", evidence, labeler
                )
            )
            continue
        right = score >= settings.threshold
        reason = f"P(right) {score:.3f} {'>=' if right else '<'} threshold {settings.threshold:.4g}"
        value = min(1.0, max(0.0, float(score)))
        labels.append(StepLabel("prm", "correct" if right else "incorrect", value, reason, evidence, labeler))
    return tuple(labels)


@cache
def _scorer(checkpoint: Path, batch_size: int) -> PrmScorer:
    from prm_factory.training.scorer import PrmScorer

    return PrmScorer(checkpoint, batch_size=batch_size)


@cache
def _weights(checkpoint: Path) -> str:
    from prm_factory.sampling.model_prep import weights_hash

    return weights_hash(checkpoint)


SOURCE = PrmSource()
