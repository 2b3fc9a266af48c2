"""The `mc` label source: Monte Carlo rollouts from each step prefix (Math-Shepherd; rollouts/). A step's
label is its hard estimate (some judged rollout from the prefix reached the answer) with the MC value, the
share of judged rollouts that did, as its value. A rollout that got there is a strong positive; none getting
there is a weak negative, since a weak policy fails from right prefixes too. The rollout counts and cost are
the label's evidence (stored in the steps table's rollout columns, schemas/step_labels.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup, Strength
from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.schemas.step_labels import StepLabel, mc_label
from prm_factory.verifiers.identity import code_digest
from prm_factory.verifiers.protocol import outcome_value

if TYPE_CHECKING:
    from prm_factory.labels.assemble import SampledChain
    from prm_factory.rollouts.values import ChainValues, StepValue
    from prm_factory.sampling.protocol import Sampler


class MonteCarloSource(BaseSource):
    name = "mc"
    needs = frozenset({"engine"})
    positive = Strength.STRONG
    negative = Strength.WEAK
    tables_per_labeler = True  # a rollout's fate is its policy's: a table of another model does not apply

    def applies(self, setup: SourceSetup) -> bool:
        return setup.rollouts and setup.engine is not None

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """The policy and the rollout settings (both also in the label config hash) and the rollout code."""
        r = setup.config.rollouts
        policy = setup.engine.model_id if setup.engine else ""
        return {
            "name": "mc",
            "version": f"{r.strategy}:k={r.k}@{policy}",
            "code": code_digest(("prm_factory.rollouts", "prm_factory.labels.sources.mc")),
        }

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        return self.labels_of(chains, chain_values(chains, setup), setup)

    def labels_of(
        self, chains: Sequence[SampledChain], values: Sequence[ChainValues], setup: SourceSetup
    ) -> list[ChainLabels | None]:
        """The labels of chains whose rollouts were drawn already (`values`, by chain id; a chain without
        any: every step `unverifiable`): how `label` turns its own rollouts into labels, and how `run` and
        `label --rollouts` turn their cached rollout stages' (flows/generation_run.py, flows/label_run.py)."""
        by_chain = {v.chain_id: v for v in values}
        policy = setup.engine.model_id if setup.engine else ""
        return [from_values(by_chain.get(c.chain_id), len(c.steps), policy) for c in chains]

    def first_error(self, labels: Sequence[StepLabel]) -> int | None:
        """The earliest step no rollout could rescue, unknown when an unestimated step comes first."""
        hard = [None if lb.verdict == "unverifiable" else lb.verdict == "correct" for lb in labels]
        return first_error_mc(hard)

    def labeler(self, setup: SourceSetup) -> str:
        return f"mc@{setup.engine.model_id if setup.engine else ''}"

    def follow_outcome(self, labels: ChainLabels, outcome: str) -> ChainLabels:
        """The last step's value is the chain's own outcome (`value_source` "outcome"): it follows a new
        grade; every other value stays as drawn."""
        followed = []
        for label in labels:
            evidence = json.loads(label.evidence)
            if evidence.get("value_source") == "outcome":
                hard = outcome_value(outcome)
                label = mc_label(hard, None if hard is None else float(hard), evidence, label.labeler)
            followed.append(label)
        return tuple(followed)


def chain_values(
    chains: Sequence[SampledChain],
    setup: SourceSetup,
    sampler: Sampler | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ChainValues]:
    """Rollouts from every step prefix of the chains that have steps, on `sampler` (default: the setup's
    engine), graded by the setup's verifier, with the config's strategy and budget (`[rollouts]`)."""
    from prm_factory import rollouts
    from prm_factory.labels.assemble import rollout_items
    from prm_factory.sampling.protocol import GenerationParams, batch_scope

    items = rollout_items(chains)
    if not items:
        return []
    if sampler is None:
        if setup.engine is None:
            raise ValueError("the mc source needs an engine (rollouts continue each step prefix)")
        from prm_factory.sampling.backends import get_sampler

        sampler = get_sampler(setup.engine)
    r = setup.config.rollouts
    params = GenerationParams(n=r.k, temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_tokens)
    strategy = rollouts.make_strategy(r.strategy, rollouts_per_probe=r.k, max_steps=r.max_steps)
    # one scope per chunk: the later rounds of a search reuse the prefixes the earlier rounds computed
    with batch_scope(sampler):
        return rollouts.estimate_values(
            items, strategy, sampler, setup.verifier.grade, params, progress=progress
        )


def from_values(values: ChainValues | None, n_steps: int, policy: str) -> ChainLabels:
    """One chain's MC labels from its rollout values (a step without a value: `unverifiable`, "none")."""
    by_index = {v.step_index: v for v in (values.steps if values else ())}
    return tuple(step_label(by_index.get(index), policy) for index in range(n_steps))


def step_label(value: StepValue | None, policy: str) -> StepLabel:
    if value is None:
        return mc_label(None, None, {"value_source": "none"} | _zero_counts(), f"mc@{policy}")
    evidence = {
        "value_source": value.value_source,
        "n_rollouts": value.n_rollouts,
        "n_correct": value.n_correct,
        "n_judged": value.n_judged,
        "tokens": value.tokens,
        "seconds": value.seconds,
    }
    return mc_label(value.hard_label, value.mc_value, evidence, f"mc@{policy}")


def _zero_counts() -> dict[str, int | float]:
    return {"n_rollouts": 0, "n_correct": 0, "n_judged": 0, "tokens": 0, "seconds": 0.0}


SOURCE = MonteCarloSource()
