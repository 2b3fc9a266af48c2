"""Recompute a stored chain's labels with the current label sources, without sampling.

A verifier fix should reach data already written. `relabel_chain` takes a chain and its step rows as stored
in a dataset version and runs the chosen sources again (by default those that need no engine: the verifier,
which also grades the chain's outcome again, the reference alignment, any plug-in source without one), then
rebuilds consensus and first errors from every source's labels. The other sources' labels are kept as they
were drawn (rollout texts are not stored, so MC values cannot be regraded; the judge needs an engine) and
vote in the new consensus as in a fresh run; the one label that follows a new grade is the MC value of the
last step, which is the chain's own outcome (`LabelSource.follow_outcome`).

The new rows get a label hash derived from the old one and the rerun sources' identities, so they replace
the old rows in the new dataset version (storage.layout.REPLACE_WHEN_CHANGED) while older versions keep
theirs. A chain whose stored labels already carry the current labelers is left alone (`None`), unless its
stored consensus is not what the current calibration tables and thresholds make of those labels (a table
refined by an audit, a row written before `p_correct`): its labels are kept and its consensus, `p_correct`
and first errors are computed again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from prm_factory.labels.assemble import RecordContext, SampledChain, build_records
from prm_factory.labels.consensus import Weighing, domains_of, step_probability, weighing
from prm_factory.labels.source import ChainLabels, LabelSource, SourceSetup, source_identity
from prm_factory.sampling.protocol import Generation
from prm_factory.sampling.segment import StepSpan
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Step
from prm_factory.verifiers.protocol import Verdict


def current(steps: Sequence[Step], labelers: Mapping[str, str]) -> bool:
    """Were these rows labelled by exactly these labelers (source name -> the labeler its labels carry)?"""
    for source, labeler in labelers.items():
        given = [label for step in steps if (label := step.label(source)) is not None]
        if not given or any(label.labeler != labeler for label in given):  # steps it left unlabelled: fine
            return False
    return True


def grade_text(chain: Chain) -> str:
    """What the grader reads: a chain from elsewhere with a given final answer is graded on that answer,
    exactly as `prm-factory label` grades it."""
    if chain.model == "external" and chain.final_answer:
        return f"The answer is {chain.final_answer}"
    return chain.text


def stored_labels(steps: Sequence[Step]) -> dict[str, ChainLabels]:
    """Each source's labels of a chain as stored (None on a step the source left unlabelled: the human source
    on steps nobody reviewed)."""
    names = dict.fromkeys(label.source for step in steps for label in step.labels)
    return {name: tuple(step.label(name) for step in steps) for name in names}  # type: ignore[misc]


def stored_chain(problem: Problem, chain: Chain, steps: Sequence[Step], outcome: Verdict) -> SampledChain:
    """A stored chain as the sources read it: its text, its steps' spans, its (new) outcome."""
    return SampledChain(
        chain_id=chain.chain_id,
        problem=problem,
        prompt=chain.prompt,
        sample_index=chain.sample_index,
        generation=Generation(chain.text, chain.n_tokens, chain.finish_reason),
        steps=tuple(StepSpan(s.step_index, s.text, s.char_start, s.char_end) for s in steps),
        outcome=outcome,
        final_answer=chain.final_answer,
        source_row_id=chain.source_row_id,
    )


LabelWith = Callable[
    [Sequence[LabelSource], Sequence[SampledChain], Mapping[str, Sequence[ChainLabels | None]], SourceSetup],
    dict[str, list[ChainLabels | None]],
]
"""How a pipeline runs sources over chains (flows/runner.ChunkExecutor.label_sources): `labels` plus each
source's labels, the sources in order."""


def label_directly(
    sources: Sequence[LabelSource],
    chains: Sequence[SampledChain],
    labels: Mapping[str, Sequence[ChainLabels | None]],
    setup: SourceSetup,
) -> dict[str, list[ChainLabels | None]]:
    """Each source's batch call in turn, in this process (what a pipeline's executor does as tasks)."""
    out = {name: list(per_chain) for name, per_chain in labels.items()}
    for source in sources:
        out[source.name] = list(source.label(list(chains), dict(out), setup))
    return out


@dataclass(frozen=True)
class StoredChain:
    """A chain of a dataset version with its problem and its step rows."""

    problem: Problem
    chain: Chain
    steps: Sequence[Step]


def relabel_chains(
    stored: Sequence[StoredChain],
    rerun: Sequence[LabelSource],
    sources: Mapping[str, LabelSource],
    setup: SourceSetup,
    run_id: str,
    label_with: LabelWith = label_directly,
) -> tuple[list[tuple[Chain, list[Step]]], int]:
    """New chain and step rows for `run_id` of the chains whose stored labels are not `rerun`'s current
    ones, in one batch call per source, and how many chains were already current.

    `rerun` runs in that order (a source reading another's labels after it); every other source's stored
    labels are kept and follow the new outcome where they depend on it (`LabelSource.follow_outcome`). A
    rerun source that lists itself in `reads` is handed its own stored labels (the `human` source keeps the
    labels no new answer replaces).
    """
    tags = {source.name: source.labeler(setup) for source in rerun}
    names = set(tags)
    weighs = weighing(setup.config)
    chosen: list[tuple[StoredChain, list[Step]]] = []
    recount: list[tuple[StoredChain, list[Step]]] = []
    unchanged = 0
    for item in stored:
        ordered = sorted(item.steps, key=lambda s: s.step_index)
        if not ordered:  # no steps: nothing to relabel either
            unchanged += 1
        elif not current(ordered, tags):
            chosen.append((item, ordered))
        elif consensus_current(item.problem, ordered, sources, weighs):
            unchanged += 1
        else:  # labels current, consensus not (new tables or thresholds, a row written before p_correct)
            recount.append((item, ordered))
    identities = {source.name: source_identity(source, setup) for source in rerun}
    identities["consensus"] = weighs.identity()
    results = [recounted(item, ordered, sources, weighs, identities, run_id) for item, ordered in recount]
    if not chosen:
        return results, unchanged
    sampled: list[SampledChain] = []
    kept: list[dict[str, ChainLabels]] = []
    for item, ordered in chosen:
        chain = item.chain
        if "verifier" in names:  # the verifier grades the outcome, too
            outcome = setup.verifier.grade(item.problem, grade_text(chain))
        else:
            outcome = Verdict(chain.outcome, chain.outcome_reason, json.loads(chain.outcome_evidence or "{}"))
        sampled.append(stored_chain(item.problem, chain, ordered, outcome))
        kept.append(
            {
                name: sources[name].follow_outcome(labels, outcome.label)
                for name, labels in stored_labels(ordered).items()
                if name not in names or name in sources[name].reads  # a source reading itself sees its own
            }
        )
    held = sorted({name for chain_labels in kept for name in chain_labels})
    prior = {name: [chain_labels.get(name) for chain_labels in kept] for name in held}
    labels = label_with(rerun, sampled, prior, setup)
    for position, ((item, ordered), chain) in enumerate(zip(chosen, sampled, strict=True)):
        if all(labels[name][position] is None and ordered[0].label(name) is None for name in names):
            # its sources left it unlabelled, as before (reviewers who answered none of it)
            if consensus_current(item.problem, ordered, sources, weighs):
                unchanged += 1
            else:
                results.append(recounted(item, ordered, sources, weighs, identities, run_id))
            continue
        base = item.chain.label_config_hash or ordered[0].label_config_hash
        label_hash = content_id("relabel", base, identities)[:16]
        chain_of = item.chain
        context = RecordContext(
            run_id, chain_of.model, chain_of.sampling, chain_of.seed, "", "", label_hash, weighing=weighs
        )
        by_source = {name: per_chain[position] for name, per_chain in labels.items()}
        results.append(build_records(chain, by_source, context, sources))
    return results, unchanged


def consensus_current(
    problem: Problem, steps: Sequence[Step], sources: Mapping[str, LabelSource], weighs: Weighing
) -> bool:
    """Do the stored consensus, agreement and `p_correct` equal what `weighs` makes of the stored labels?
    (Rows written before `p_correct` never do: a relabel recomputes their consensus.)"""
    domains = domains_of(problem.domain, problem.source, problem.text)
    for step in steps:
        label, agree, p_correct = step_probability(step.labels, sources, weighs, domains)
        if (label, agree) != (step.consensus, step.labels_agree):
            return False
        if (p_correct is None) != (step.p_correct is None):
            return False
        if p_correct is not None and abs(p_correct - float(step.p_correct or 0.0)) > 1e-9:
            return False
    return True


def recounted(
    item: StoredChain,
    ordered: Sequence[Step],
    sources: Mapping[str, LabelSource],
    weighs: Weighing,
    identities: Mapping[str, Mapping[str, str]],
    run_id: str,
) -> tuple[Chain, list[Step]]:
    """New rows of a chain whose labels are kept as stored and whose consensus and first errors are
    computed again (`weighs`: the current tables and thresholds)."""
    chain = item.chain
    outcome = Verdict(chain.outcome, chain.outcome_reason, json.loads(chain.outcome_evidence or "{}"))
    sampled = stored_chain(item.problem, chain, ordered, outcome)
    base = chain.label_config_hash or ordered[0].label_config_hash
    label_hash = content_id("relabel", base, dict(identities))[:16]
    context = RecordContext(
        run_id, chain.model, chain.sampling, chain.seed, "", "", label_hash, weighing=weighs
    )
    return build_records(sampled, stored_labels(ordered), context, sources)


def relabel_chain(
    problem: Problem,
    chain: Chain,
    steps: Sequence[Step],
    rerun: Sequence[LabelSource],
    sources: Mapping[str, LabelSource],
    setup: SourceSetup,
    run_id: str,
) -> tuple[Chain, list[Step]] | None:
    """`relabel_chains` of one chain: its new rows, or None when its stored rows already carry `rerun`'s
    labels (or it has no steps)."""
    results, _ = relabel_chains([StoredChain(problem, chain, steps)], rerun, sources, setup, run_id)
    return results[0] if results else None
