"""Running totals of a run's records: what the runs row, the summary and the artifact report need.

A streaming run writes each chunk's chains and steps to storage and forgets them; the counts, accuracy,
cost and label table it reports at the end are folded in chunk by chunk here, so they cost constant memory
whatever the run's size, and they agree with the rows because they are computed from the same records.

>>> from collections import Counter
>>> tally = RunTally(chains=4, correct_chains=1, outcomes=Counter(correct=1))
>>> tally.labels[("positive", "correct")] += 2
>>> tally.chain_accuracy
0.25
>>> RunTally.from_json(tally.to_json()) == tally
True
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from prm_factory.rollouts.values import ChainValues
from prm_factory.schemas.records import Chain, Step


@dataclass
class RunTally:
    """Totals over every chain, step and rollout estimate added so far."""

    problems: int = 0
    chains: int = 0
    steps: int = 0
    correct_chains: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    labels: Counter[tuple[str, str]] = field(default_factory=Counter)  # (consensus, verdict) -> steps
    labeled_steps: int = 0  # consensus other than "unlabeled"
    sampled_tokens: int = 0
    rollout_tokens: int = 0
    probed_steps: int = 0  # steps whose value comes from rollouts
    reaching_steps: int = 0  # probed steps with mc_value > 0 (some rollout reached the reference)
    mc_sum: float = 0.0
    mc_count: int = 0  # probed steps with an mc_value
    rollouts_drawn: int = 0
    rollout_seconds: float = 0.0
    verdicts: Counter[tuple[str, str]] = field(default_factory=Counter)  # (source, verdict) -> steps
    current_chains: int = 0  # relabel: chains whose stored labels were already current (no new rows)

    @classmethod
    def of(
        cls, chains: Iterable[Chain] = (), steps: Iterable[Step] = (), values: Iterable[ChainValues] = ()
    ) -> RunTally:
        tally = cls()
        tally.add(chains, steps, values)
        return tally

    def add(
        self, chains: Iterable[Chain] = (), steps: Iterable[Step] = (), values: Iterable[ChainValues] = ()
    ) -> None:
        """Fold in one chunk's records."""
        for chain in chains:
            self.chains += 1
            self.correct_chains += chain.outcome == "correct"
            self.outcomes[chain.outcome] += 1
            self.sampled_tokens += chain.n_tokens
        for step in steps:
            self.steps += 1
            verifier, mc = step.label("verifier"), step.label("mc")
            self.labels[(step.consensus, verifier.verdict if verifier else "unverifiable")] += 1
            self.labeled_steps += step.consensus != "unlabeled"
            for label in step.labels:
                self.verdicts[(label.source, label.verdict)] += 1
            evidence = json.loads(mc.evidence) if mc else {}
            self.rollout_tokens += evidence.get("tokens", 0)
            if evidence.get("value_source") == "rollouts":
                self.probed_steps += 1
                self.reaching_steps += (mc.value or 0) > 0  # type: ignore[union-attr]
                if mc.value is not None:  # type: ignore[union-attr]
                    self.mc_sum += mc.value  # type: ignore[union-attr]
                    self.mc_count += 1
        for chain_values in values:
            self.rollouts_drawn += chain_values.rollouts_drawn
            self.rollout_seconds += chain_values.seconds

    def merge(self, other: RunTally) -> None:
        """Add another chunk's totals to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_json(self) -> str:
        """The totals as JSON, staged beside a chunk's rows so a reused chunk still counts."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["outcomes"] = dict(self.outcomes)  # (asdict would rebuild a Counter from its items)
        data["labels"] = [[consensus, verdict, n] for (consensus, verdict), n in self.labels.items()]
        data["verdicts"] = [[source, verdict, n] for (source, verdict), n in self.verdicts.items()]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunTally:
        data = json.loads(text)
        data["outcomes"] = Counter(data["outcomes"])
        data["labels"] = Counter({(consensus, verdict): n for consensus, verdict, n in data["labels"]})
        # a chunk staged before per-source counts were kept reads as none
        data["verdicts"] = Counter({(source, verdict): n for source, verdict, n in data.get("verdicts", [])})
        data.setdefault("current_chains", 0)
        return cls(**data)

    def source_verdicts(self, skip: tuple[str, ...] = ()) -> dict[str, dict[str, int]]:
        """Each label source's verdict counts over the steps, e.g. `{"verifier": {"correct": 3}}`."""
        out: dict[str, dict[str, int]] = {}
        for (source, verdict), n in self.verdicts.items():  # in the order the sources labelled
            if source not in skip:
                out.setdefault(source, {})[verdict] = n
        return out

    @property
    def chain_accuracy(self) -> float:
        """Share of chains graded correct; 0.0 for no chains."""
        return self.correct_chains / self.chains if self.chains else 0.0

    @property
    def mean_mc_value(self) -> float:
        return self.mc_sum / self.mc_count if self.mc_count else 0.0

    @property
    def reaching_share(self) -> float:
        """Share of probed step prefixes from which some rollout reached the reference."""
        return self.reaching_steps / self.probed_steps if self.probed_steps else 0.0
