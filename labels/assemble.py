"""Build the stored records from what the stages produced: pure, so label rules are tested without an
engine. The flow calls these between its tasks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prm_factory.labels.consensus import consensus
from prm_factory.labels.judge import JudgeResult
from prm_factory.rollouts.items import RolloutItem
from prm_factory.rollouts.values import ChainValues, StepValue
from prm_factory.sampling.chains import DrawnChain
from prm_factory.sampling.protocol import Generation
from prm_factory.sampling.segment import StepSpan
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Step
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
    """What every record of a run shares: who sampled and labeled, under which label config."""

    run_id: str
    model_id: str
    sampling_json: str
    seed: int
    verifier_name: str
    verifier_version: str
    label_config_hash: str
    verifier_code: str = ""
    reference_labeler: str | None = None


def chunk_records(
    sampled: Sequence[SampledChain],
    verdicts: Sequence[Sequence[Verdict]],
    values: Mapping[str, ChainValues],
    references: Sequence[Sequence[Verdict] | None],
    judged: Mapping[str, JudgeResult],
    context: RecordContext,
) -> tuple[list[Chain], list[Step]]:
    """The chain and step records of a group of chains (one chunk of a run), in chain order."""
    chains: list[Chain] = []
    steps: list[Step] = []
    for chain, chain_verdicts, reference in zip(sampled, verdicts, references, strict=True):
        critic = judged.get(chain.chain_id)
        record, step_rows = build_records(
            chain,
            chain_verdicts,
            values.get(chain.chain_id),
            context,
            reference=reference,
            judge=critic.verdicts if critic else None,
            judge_labeler=critic.labeler if critic else None,
            judge_first_error=critic.first_error if critic else None,
        )
        chains.append(record)
        steps.extend(step_rows)
    return chains, steps


def _no_value(index: int) -> StepValue:
    return StepValue(index, None, 0, 0, None, None, "none", 0, 0.0)


def build_records(
    sampled: SampledChain,
    verdicts: Sequence[Verdict],
    values: ChainValues | None,
    context: RecordContext,
    *,
    reference: Sequence[Verdict] | None = None,
    judge: Sequence[Verdict] | None = None,
    judge_labeler: str | None = None,
    judge_first_error: int | None = None,
) -> tuple[Chain, list[Step]]:
    """The chain record and its step records, with consensus labels and the first-error flag.

    The first error is the earliest step whose consensus is negative (every source that speaks says the
    step is wrong); disputed steps do not count, and each source's own label is kept. `reference` holds
    the reference-alignment verdicts (labels.reference), `judge` a generative judge's (labels.judge), None
    when that source did not run (an empty `judge` too: the chain was not sent to the judge).
    """
    if reference is not None and len(reference) != len(sampled.steps):
        raise ValueError(f"{len(reference)} reference verdicts for {len(sampled.steps)} steps")
    if judge is not None and len(judge) == 0:
        judge = None
    if judge is not None and len(judge) != len(sampled.steps):
        raise ValueError(f"{len(judge)} judge verdicts for {len(sampled.steps)} steps")
    step_values = {v.step_index: v for v in (values.steps if values else ())}
    rows: list[Step] = []
    first_error_seen = False
    first_error_verifier: int | None = None
    first_error_reference: int | None = None
    for position, (span, verdict) in enumerate(zip(sampled.steps, verdicts, strict=True)):
        value = step_values.get(span.index, _no_value(span.index))
        ref = reference[position] if reference is not None else None
        critic = judge[position] if judge is not None else None
        label, agree = consensus(
            verdict.label, value.hard_label, ref.label if ref else None, critic.label if critic else None
        )
        if ref is not None and ref.label == "incorrect" and first_error_reference is None:
            first_error_reference = span.index
        is_first = label == "negative" and not first_error_seen
        first_error_seen = first_error_seen or is_first
        if verdict.label == "incorrect" and first_error_verifier is None:
            first_error_verifier = span.index
        rows.append(
            Step(
                step_id=content_id("step", sampled.chain_id, span.index, context.label_config_hash),
                chain_id=sampled.chain_id,
                problem_id=sampled.problem.problem_id,
                run_id=context.run_id,
                step_index=span.index,
                text=span.text,
                char_start=span.start,
                char_end=span.end,
                verdict=verdict.label,
                verdict_reason=verdict.reason,
                verdict_evidence=json.dumps(verdict.evidence, default=str),
                verifier=context.verifier_name,
                verifier_version=context.verifier_version,
                mc_value=value.mc_value,
                n_rollouts=value.n_rollouts,
                n_rollouts_correct=value.n_correct,
                hard_label=value.hard_label,
                soft_label=value.soft_label,
                value_source=value.value_source,
                consensus=label,
                labels_agree=agree,
                first_error=is_first,
                rollout_tokens=value.tokens,
                rollout_seconds=value.seconds,
                model=context.model_id,
                label_config_hash=context.label_config_hash,
                n_rollouts_judged=value.n_judged,
                verifier_code=context.verifier_code,
                reference_verdict=ref.label if ref else None,
                reference_reason=ref.reason if ref else None,
                reference_evidence=json.dumps(ref.evidence, default=str) if ref else None,
                reference_labeler=context.reference_labeler if ref else None,
                judge_verdict=critic.label if critic else None,
                judge_reason=critic.reason if critic else None,
                judge_labeler=judge_labeler if critic else None,
            )
        )
    chain = Chain(
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
        first_error_verifier=first_error_verifier,
        first_error_mc=values.first_error_mc if values else None,
        label_config_hash=context.label_config_hash,
        first_error_reference=first_error_reference,
        first_error_judge=judge_first_error if judge is not None else None,
        source_row_id=sampled.source_row_id,
    )
    return chain, rows


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
