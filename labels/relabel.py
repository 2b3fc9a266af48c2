"""Recompute a stored chain's verifier and reference labels with the current labelers, without sampling.

A verifier fix should reach data already written. `relabel_chain` takes a chain and its step rows as stored
in a dataset version, grades the chain's outcome again, judges its steps again, aligns them with the
reference solution again, and rebuilds consensus and first-error flags. Monte Carlo values and the judge's
verdicts are kept as they were drawn (rollout texts are not stored, so they cannot be regraded; the judge
needs an engine) and vote in the new consensus as in a fresh run; only the last step's value, which is the
chain's own outcome, follows the new grade.

The new rows get a label hash derived from the old one and the new labelers' identities, so they replace the
old rows in the new dataset version (storage.layout.REPLACE_WHEN_CHANGED) while older versions keep theirs.
A chain whose stored labels already carry the current labelers is left alone (`None`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from prm_factory.labels.consensus import consensus
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Step
from prm_factory.verifiers.identity import identity_tag
from prm_factory.verifiers.protocol import Verdict, Verifier, outcome_value

ReferenceLabeler = Callable[[Problem, list[str], str], list[Verdict]]


def current(steps: Sequence[Step], labelers: Mapping[str, Mapping[str, str]]) -> bool:
    """Were these rows written by exactly these labelers (verifier identity and reference labeler)?"""
    verifier = labelers["verifier"]
    reference = identity_tag(dict(labelers["reference"])) if "reference" in labelers else None
    return all(
        s.verifier == verifier["name"]
        and s.verifier_version == verifier["version"]
        and s.verifier_code == verifier["code"]
        and s.reference_labeler == reference
        for s in steps
    )


def grade_text(chain: Chain) -> str:
    """What the grader reads: a chain from elsewhere with a given final answer is graded on that answer,
    exactly as `prm-factory label` grades it."""
    if chain.model == "external" and chain.final_answer:
        return f"The answer is {chain.final_answer}"
    return chain.text


def relabel_chain(
    problem: Problem,
    chain: Chain,
    steps: Sequence[Step],
    verifier: Verifier,
    labelers: Mapping[str, Mapping[str, str]],
    reference: ReferenceLabeler | None,
    run_id: str,
) -> tuple[Chain, list[Step]] | None:
    """New chain and step rows for `run_id`, or None when the stored rows are already current."""
    ordered = sorted(steps, key=lambda s: s.step_index)
    if not ordered or current(ordered, labelers):
        return None
    texts = [s.text for s in ordered]
    outcome = verifier.grade(problem, grade_text(chain))
    verdicts = verifier.check_steps(problem, texts)
    ref_verdicts = reference(problem, texts, outcome.label) if reference is not None else None
    label_hash = content_id("relabel", chain.label_config_hash or ordered[0].label_config_hash, labelers)[:16]
    ref_tag = identity_tag(dict(labelers["reference"])) if "reference" in labelers else None
    rows: list[Step] = []
    first_seen = False
    first_verifier = first_reference = None
    for position, (old, verdict) in enumerate(zip(ordered, verdicts, strict=True)):
        ref = ref_verdicts[position] if ref_verdicts is not None else None
        hard, mc = old.hard_label, old.mc_value
        if old.value_source == "outcome":  # the last step's value is the chain's own (new) outcome
            hard = outcome_value(outcome.label)
            mc = None if hard is None else float(hard)
        # the judge is not run again (it needs an engine): its stored vote counts as a fresh run counts it
        label, agree = consensus(verdict.label, hard, ref.label if ref else None, old.judge_verdict)
        is_first = label == "negative" and not first_seen
        first_seen = first_seen or is_first
        if verdict.label == "incorrect" and first_verifier is None:
            first_verifier = old.step_index
        if ref is not None and ref.label == "incorrect" and first_reference is None:
            first_reference = old.step_index
        rows.append(
            replace(
                old,
                step_id=content_id("step", chain.chain_id, old.step_index, label_hash),
                run_id=run_id,
                verdict=verdict.label,
                verdict_reason=verdict.reason,
                verdict_evidence=json.dumps(verdict.evidence, default=str),
                verifier=labelers["verifier"]["name"],
                verifier_version=labelers["verifier"]["version"],
                verifier_code=labelers["verifier"]["code"],
                hard_label=hard,
                mc_value=mc,
                soft_label=mc if old.value_source == "outcome" else old.soft_label,
                consensus=label,
                labels_agree=agree,
                first_error=is_first,
                label_config_hash=label_hash,
                reference_verdict=ref.label if ref else None,
                reference_reason=ref.reason if ref else None,
                reference_evidence=json.dumps(ref.evidence, default=str) if ref else None,
                reference_labeler=ref_tag if ref else None,
            )
        )
    new_chain = replace(
        chain,
        run_id=run_id,
        outcome=outcome.label,
        outcome_reason=outcome.reason,
        outcome_evidence=json.dumps(outcome.evidence, default=str),
        first_error_verifier=first_verifier,
        first_error_reference=first_reference,
        label_config_hash=label_hash,
    )
    return new_chain, rows
