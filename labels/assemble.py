"""Build the stored records from what the label sources said: pure, so label rules are tested without an
engine. The flows call these between their tasks; nothing here names a source (they come as a mapping,
labels.registry)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prm_factory.labels.consensus import Weighing, domains_of, step_probability
from prm_factory.labels.source import ChainLabels, LabelSource
from prm_factory.rollouts.items import RolloutItem
from prm_factory.sampling.chains import DrawnChain
from prm_factory.sampling.protocol import Generation
from prm_factory.sampling.segment import StepSpan
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Step
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.protocol import Verdict, outcome_value


@dataclass(frozen=True)
class SampledChain:
    """One generation for one problem, before labeling."""

    chain_id: str
    problem: Problem
    prompt: str
    sample_index: int
    generation: Generation
    steps: tuple[StepSpan, ...]
    outcome: Verdict
    final_answer: str | None
    source_row_id: str | None = None  # a chain from elsewhere: its input row's own id
    external: ExternalChain | None = None  # a chain from elsewhere: its input row (gold labels it carries)


def chain_id_for(
    problem_id: str, model_id: str, weights_hash: str, sampling_json: str, seed: int, index: int
) -> str:
    """Same problem, model, sampling and seed give the same id, so reruns write no duplicates."""
    return content_id("chain", problem_id, model_id, weights_hash, sampling_json, seed, index)


@dataclass(frozen=True)
class ChainIdentity:
    """What names a sampled chain besides its problem and sample index (see `chain_id_for`)."""

    model_id: str
    weights_hash: str
    sampling_json: str
    seed: int

    def chain_id(self, problem_id: str, sample_index: int) -> str:
        return chain_id_for(
            problem_id, self.model_id, self.weights_hash, self.sampling_json, self.seed, sample_index
        )


def sampled_chain(
    drawn: DrawnChain, identity: ChainIdentity, steps: Sequence[StepSpan], outcome: Verdict
) -> SampledChain:
    """A drawn generation with its id, its steps and its graded outcome (`answer` in the evidence)."""
    return SampledChain(
        chain_id=identity.chain_id(drawn.problem.problem_id, drawn.sample_index),
        problem=drawn.problem,
        prompt=drawn.prompt,
        sample_index=drawn.sample_index,
        generation=drawn.generation,
        steps=tuple(steps),
        outcome=outcome,
        final_answer=outcome.evidence.get("answer"),
    )


def rollout_items(sampled: Sequence[SampledChain]) -> list[RolloutItem]:
    """What the rollout stage needs of each chain that has steps (a chain without steps has no prefix)."""
    return [
        RolloutItem(
            chain_id=c.chain_id,
            problem=c.problem,
            prompt=c.prompt,
            chain_text=c.generation.text,
            step_ends=tuple(s.end for s in c.steps),
            outcome_correct=outcome_value(c.outcome.label),
        )
        for c in sampled
        if c.steps
    ]


@dataclass(frozen=True)
class RecordContext:
    """What every record of a run shares: who sampled, under which label config.

    `verifier_*` and `reference_labeler` are no longer read (every label carries its own labeler); they stay
    until flows/plan.py stops passing them.
    """

    run_id: str
    model_id: str
    sampling_json: str
    seed: int
    verifier_name: str
    verifier_version: str
    label_config_hash: str
    verifier_code: str = ""
    reference_labeler: str | None = None
    weighing: Weighing | None = None  # tables and thresholds of the consensus (None: shipped, defaults)


def chunk_records(
    sampled: Sequence[SampledChain],
    labels: Mapping[str, Sequence[ChainLabels | None]],
    context: RecordContext,
    sources: Mapping[str, LabelSource],
) -> tuple[list[Chain], list[Step]]:
    """The chain and step records of a group of chains (one chunk of a run), in chain order.

    `labels` holds each source's labels chain by chain (None: that source left the chain unlabelled).
    """
    for name, per_chain in labels.items():
        if len(per_chain) != len(sampled):
            raise ValueError(f"{name}: labels for {len(per_chain)} chains, {len(sampled)} given")
    chains: list[Chain] = []
    steps: list[Step] = []
    for position, chain in enumerate(sampled):
        by_source = {name: per_chain[position] for name, per_chain in labels.items()}
        record, step_rows = build_records(chain, by_source, context, sources)
        chains.append(record)
        steps.extend(step_rows)
    return chains, steps


@dataclass(frozen=True)
class ChainConsensus:
    """What the sources' labels of one chain come to, per step and per source: the rules `label`'s records
    and the reward's result share (build_records; reward/labelling.py reads it without the records)."""

    labels: tuple[tuple[StepLabel, ...], ...]  # each step's labels, from the sources that labelled it
    consensus: tuple[str, ...]
    agree: tuple[bool | None, ...]
    p_correct: tuple[float | None, ...]
    first_errors: dict[str, int]  # each source's own first error (its step index; -1: a judge's "none")

    @property
    def first_error(self) -> int | None:
        """The position of the earliest step whose consensus is negative (disputed steps do not count)."""
        return next((i for i, label in enumerate(self.consensus) if label == "negative"), None)


def chain_consensus(
    sampled: SampledChain,
    labels: Mapping[str, ChainLabels | None],
    weighing: Weighing | None,
    sources: Mapping[str, LabelSource],
) -> ChainConsensus:
    """Each step's consensus (P(wrong) at the threshold is `negative`, labels.consensus), whether its votes
    agree and its P(right), and each source that labelled the chain its own first error (its rule:
    `LabelSource.first_error`). A source's labels are None (or empty) where it did not run; a single step a
    source left unlabelled (None: the human source, on steps nobody reviewed) has no vote of it."""
    given = {name: chain_labels for name, chain_labels in labels.items() if chain_labels}
    for name, chain_labels in given.items():
        if len(chain_labels) != len(sampled.steps):
            raise ValueError(f"{len(chain_labels)} {name} labels for {len(sampled.steps)} steps")
    domains = domains_of(sampled.problem.domain, sampled.problem.source, sampled.problem.text)
    step_labels, consensus, agree, p_correct = [], [], [], []
    for position in range(len(sampled.steps)):
        these = tuple(cl[position] for cl in given.values() if cl[position] is not None)
        label, agreed, p = step_probability(these, sources, weighing, domains)
        step_labels.append(these)
        consensus.append(label)
        agree.append(agreed)
        p_correct.append(p)
    first_errors = {}
    for name, chain_labels in given.items():
        position = sources[name].first_error(chain_labels)
        if position is not None:  # -1 is a judge's "no error found", kept
            first_errors[name] = sampled.steps[position].index if position >= 0 else position
    return ChainConsensus(tuple(step_labels), tuple(consensus), tuple(agree), tuple(p_correct), first_errors)


def build_records(
    sampled: SampledChain,
    labels: Mapping[str, ChainLabels | None],
    context: RecordContext,
    sources: Mapping[str, LabelSource],
) -> tuple[Chain, list[Step]]:
    """The chain record and its step records, with consensus labels and the first-error flag
    (`chain_consensus`'s rules; each source's own label is kept)."""
    agreed = chain_consensus(sampled, labels, context.weighing, sources)
    return chain_record(sampled, context, agreed.first_errors), step_records(sampled, agreed, context)


def step_records(sampled: SampledChain, agreed: ChainConsensus, context: RecordContext) -> list[Step]:
    first = agreed.first_error
    return [
        Step(
            step_id=content_id("step", sampled.chain_id, span.index, context.label_config_hash),
            chain_id=sampled.chain_id,
            problem_id=sampled.problem.problem_id,
            run_id=context.run_id,
            step_index=span.index,
            text=span.text,
            char_start=span.start,
            char_end=span.end,
            consensus=agreed.consensus[position],
            labels_agree=agreed.agree[position],
            first_error=position == first,
            model=context.model_id,
            label_config_hash=context.label_config_hash,
            labels=agreed.labels[position],
            p_correct=agreed.p_correct[position],
        )
        for position, span in enumerate(sampled.steps)
    ]


def chain_record(sampled: SampledChain, context: RecordContext, first_errors: Mapping[str, int]) -> Chain:
    return Chain(
        chain_id=sampled.chain_id,
        problem_id=sampled.problem.problem_id,
        run_id=context.run_id,
        model=context.model_id,
        sampling=context.sampling_json,
        seed=context.seed,
        sample_index=sampled.sample_index,
        prompt=sampled.prompt,
        text=sampled.generation.text,
        n_tokens=sampled.generation.n_tokens,
        finish_reason=sampled.generation.finish_reason,
        final_answer=sampled.final_answer,
        outcome=sampled.outcome.label,
        outcome_reason=sampled.outcome.reason,
        outcome_evidence=json.dumps(sampled.outcome.evidence, default=str),
        n_steps=len(sampled.steps),
        label_config_hash=context.label_config_hash,
        source_row_id=sampled.source_row_id,
        first_errors=dict(first_errors),
    )


def join_steps(steps: Sequence[str], separator: str = "\n\n") -> tuple[str, tuple[StepSpan, ...]]:
    """One chain text from given steps, with each step's span in it (so stored spans mean the same thing
    for sampled and external chains)."""
    parts: list[str] = []
    spans: list[StepSpan] = []
    cursor = 0
    for index, step in enumerate(steps):
        if index:
            parts.append(separator)
            cursor += len(separator)
        spans.append(StepSpan(index, step, cursor, cursor + len(step)))
        parts.append(step)
        cursor += len(step)
    return "".join(parts), tuple(spans)


def external_problem(
    source: str,
    problem_text: str,
    reference_answer: str | None,
    file: str,
    line: int,
    reference_solution: str | None = None,
) -> Problem:
    return Problem(
        problem_id=content_id(source, problem_text, reference_answer),
        source=source,
        domain="math",
        text=problem_text,
        reference_answer=reference_answer,
        reference_solution=reference_solution,
        source_file=file,
        source_line=line,
    )
