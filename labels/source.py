"""The one shape of a label source, and how its labels vote in the consensus.

A label source is a name, an identity (name, version, code digest: a changed source writes new rows), what
it needs (`engine`, `sandbox`, a worked `solution`, a `checkpoint`), a batch call that labels a chunk's
chains step by step, its own first-error rule, and its vote. The verifier, the reference alignment, Monte
Carlo rollouts and the generative judge are four such sources (labels/sources/); a package adds its own
through the `prm_factory.label_sources` entry-point group (labels/registry.py).

Votes. A label votes positive (`correct`), negative (`incorrect`) or not at all (`unverifiable`). What a vote
weighs is measured, not declared: the consensus reads the precision of the source's verdicts per reading
kind from its calibration table (labels/calibration.py, labels/consensus.py), and a source with no table
weighs a conservative default. The one strength still read is `Strength.REVIEWED`: a reviewer's answer
(the `human` source) decides the label whatever the automatic sources say. The other strengths stay for
plug-ins written against them; they no longer change the consensus.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from prm_factory.config.run_config import RunConfig
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.protocol import Verifier

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain
    from prm_factory.sampling.vllm_sampler import EngineSettings

NEEDS: frozenset[str] = frozenset({"engine", "sandbox", "solution", "checkpoint"})
"""What a source may need: the policy engine, the code sandbox, a worked solution, a checkpoint."""


class Strength(IntEnum):
    """A source's declared weight of a vote: only REVIEWED (a reviewer decides) changes the consensus, whose
    weights come from calibration tables (labels/consensus.py)."""

    WEAK = 1  # a check that can miss: an MC hard label False (a weak policy), arithmetic that holds
    STRONG = 2  # a reading of the whole step: the reference alignment, a judge, a rollout that got there
    FINAL = 3  # a checked false claim: wrong whatever else says
    REVIEWED = 4  # a person's verdict (a `human` source): above every automatic one


@dataclass(frozen=True)
class Vote:
    """One label's vote: its polarity, its strength, and whether it decides against weaker opposite votes
    (negatives do; a positive does only when its source says so, else it can only dispute)."""

    positive: bool
    strength: Strength
    overrules: bool = False

    @property
    def decides(self) -> bool:
        return self.overrules or not self.positive


@dataclass(frozen=True)
class SourceSetup:
    """What a pipeline hands its label sources: the run's config, domain and verifier, and the policy
    engine's settings when the pipeline has an engine (sources that need one derive theirs from it)."""

    config: RunConfig
    domain: str
    verifier: Verifier
    engine: EngineSettings | None = None
    run_id: str = ""
    pipeline: Literal["run", "label", "relabel"] = "run"
    rollouts: bool = True  # whether this pipeline continues step prefixes (`label` without --rollouts: no)

    def options(self, source: str) -> dict[str, Any]:
        """The source's own settings: `[labels.options.<source>]` of the config."""
        return dict(self.config.labels.options.get(source, {}))


ChainLabels = tuple[StepLabel, ...]
"""One source's labels of one chain's steps, in step order."""


@runtime_checkable
class LabelSource(Protocol):
    """A way to label steps. See the module docstring; `BaseSource` gives the usual defaults."""

    name: str
    needs: frozenset[str]
    reads: tuple[str, ...]  # sources whose labels its batch call reads: they run before it

    def applies(self, setup: SourceSetup) -> bool:
        """Whether this source runs in this pipeline (its domain, its config switch, what it needs)."""
        ...

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """`{"name", "version", "code"}`: it keys the label rows and caches (a change gives new rows)."""
        ...

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        """Labels of each chain's steps, in chain order (None: this source leaves that chain unlabelled).
        `prior` holds what the sources in `reads` said, chain by chain."""
        ...

    def vote(self, label: StepLabel) -> Vote | None:
        """The consensus vote of one of its labels (None: no vote, e.g. `unverifiable`)."""
        ...

    def first_error(self, labels: Sequence[StepLabel]) -> int | None:
        """The chain's first error by this source's labels (None: none found, or it cannot be located)."""
        ...

    def labeler(self, setup: SourceSetup) -> str:
        """The labeler its labels carry (a relabel compares it with the stored one)."""
        ...

    def follow_outcome(self, labels: ChainLabels, outcome: str) -> ChainLabels:
        """Its kept labels of a chain whose outcome was graded again (relabel); most do not change."""
        ...


def tables_per_labeler(source: object) -> bool:
    """Do `source`'s calibration tables weigh only the labels of the labeler they measured (MC: its
    policy)? A source of the `LabelSource` shape that does not say is weighed by any table of its name."""
    return bool(getattr(source, "tables_per_labeler", False))


class BaseSource:
    """Defaults of the `LabelSource` shape: runs everywhere, first error = earliest `incorrect`, votes
    `correct` and `incorrect` with the strengths set below, nothing read from other sources."""

    name: str = ""
    version: str = "0"
    needs: frozenset[str] = frozenset()
    reads: tuple[str, ...] = ()
    positive: Strength = Strength.STRONG
    negative: Strength = Strength.STRONG
    positive_overrules: bool = False
    code_modules: tuple[str, ...] = ()  # modules whose source the identity's code digest covers
    # True: a calibration table weighs only the labels of the labeler it measured (labels.consensus): MC's
    # precision is its policy's, so a table measured on one model says nothing of another's rollouts
    tables_per_labeler: bool = False

    def applies(self, setup: SourceSetup) -> bool:
        return True

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        from prm_factory.verifiers.identity import code_digest

        modules = self.code_modules or (type(self).__module__,)
        return {"name": self.name, "version": self.version, "code": code_digest(tuple(modules))}

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        raise NotImplementedError(f"label source {self.name!r} has no batch call")

    def vote(self, label: StepLabel) -> Vote | None:
        if label.verdict == "correct":
            return Vote(True, self.positive, self.positive_overrules)
        if label.verdict == "incorrect":
            return Vote(False, self.negative)
        return None

    def first_error(self, labels: Sequence[StepLabel]) -> int | None:
        return next((i for i, label in enumerate(labels) if label.verdict == "incorrect"), None)

    def labeler(self, setup: SourceSetup) -> str:
        """The labeler string its labels carry: name@version+code digest (`source_identity`: with a digest
        of its effective options where it has any)."""
        from prm_factory.verifiers.identity import identity_tag

        return identity_tag(source_identity(self, setup))

    def follow_outcome(self, labels: ChainLabels, outcome: str) -> ChainLabels:
        return labels


def options_digest(options: Mapping[str, Any]) -> str:
    """A short digest of a source's effective options (`[labels.options.NAME]`), key order aside.

    >>> options_digest({"limit": 300}) == options_digest({"limit": 300}) != options_digest({"limit": 400})
    True
    """
    text = json.dumps(dict(options), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def source_identity(source: LabelSource, setup: SourceSetup) -> dict[str, str]:
    """The one identity of a source in a pipeline, as `run`, `label` and `relabel` key its rows: its own
    `identity(setup)` (name, version, code digest), with `+options.<digest>` appended to the version where
    `[labels.options.NAME]` sets anything, so changing a source's options gives new rows in every pipeline
    (a relabel then finds the stored labels stale). A source whose identity already accounts for its
    options (`identity_covers_options = True`: the `human` source's answers digest) is taken as it is.
    Without options the identity is the source's own, so rows written before keep their keys.
    """
    identity = dict(source.identity(setup))
    options = setup.options(source.name)
    if options and not getattr(source, "identity_covers_options", False):
        identity["version"] = f"{identity['version']}+options.{options_digest(options)}"
    return identity
