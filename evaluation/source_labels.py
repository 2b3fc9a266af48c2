"""Registered label sources on chains from elsewhere: what `prm-factory eval` scores beside the verifier and
the reference alignment.

Eval scores the sources `prm-factory label` runs without a model. The verifier and the reference have their
own wiring in evaluation/processbench.py and evaluation/real_errors.py (the reference is told the source's
own grade of a chain; `combined` is their union); every other registered source that labels a chain with
no engine, and applies with the default config (a plug-in, labels/registry.py), is run here through its
batch call and scored the same way. A source that needs an engine (MC, the judge) or a checkpoint not
configured (the trained PRM: `eval --prm`) is not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.assemble import SampledChain, join_steps
from prm_factory.labels.registry import call_source, configured
from prm_factory.labels.source import LabelSource, SourceSetup
from prm_factory.sampling.protocol import Generation
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict, Verifier

SCORED_ELSEWHERE = ("verifier", "reference", "mc", "judge")
"""Sources eval wires by hand (verifier, reference) or cannot run without an engine (mc, judge)."""


def eval_setup(verifier: Verifier, config: RunConfig | None = None) -> SourceSetup:
    """What eval hands a source: the config (`eval --config`; None: the defaults), math chains, the
    verifier, no engine."""
    return SourceSetup(config or RunConfig(), "math", verifier, pipeline="label", rollouts=False)


def other_sources(setup: SourceSetup) -> list[LabelSource]:
    """Registered sources beyond SCORED_ELSEWHERE that need no engine and apply here."""
    return [
        source
        for name, source in configured(setup.config.labels.sources).items()  # its `module:attribute` ones too
        if name not in SCORED_ELSEWHERE and "engine" not in source.needs and source.applies(setup)
    ]


def as_sampled(chain_id: str, problem: Problem, steps: Sequence[str], outcome: str) -> SampledChain:
    """A chain from elsewhere as a source reads it (its steps joined as `prm-factory label` joins them)."""
    text, spans = join_steps(list(steps))
    return SampledChain(
        chain_id, problem, "", 0, Generation(text, 0, "external"), spans, Verdict(outcome), None
    )


def other_labels(
    chains: Sequence[ExternalChain],
    verifier: Verifier,
    problem_of: Callable[[ExternalChain], Problem],
    outcome_of: Callable[[ExternalChain, Problem], str],
    config: RunConfig | None = None,
) -> dict[str, list[list[str]]]:
    """Each other source's step verdicts, chain by chain (`unverifiable` where it left a chain unlabelled);
    outcomes are graded only when some source is there to read them."""
    setup = eval_setup(verifier, config)
    sources = other_sources(setup)
    if not sources:
        return {}
    sampled = []
    for chain in chains:
        problem = problem_of(chain)
        sampled.append(as_sampled(chain.id, problem, chain.steps, outcome_of(chain, problem)))
    labelled: dict[str, list[list[str]]] = {}
    for source in sources:
        per_chain = call_source(source, sampled, {}, setup)  # a failing plug-in: one LabelSourceFailed line
        labelled[source.name] = [
            [label.verdict for label in labels] if labels else ["unverifiable"] * len(chain.steps)
            for chain, labels in zip(sampled, per_chain, strict=True)
        ]
    return labelled
