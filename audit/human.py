"""Reviewers' answers, and human labels that come with a file (ProcessBench, PRM800K), as per-step `human`
labels: one pure function each, so the rule is read and tested in one place.

The rule for a step's answers (each reviewer's answer that counts: `store.effective_answers`):

- every reviewer who decided (`correct` / `incorrect`) said the same: that is the label;
- reviewers who decided disagree: `unverifiable` (the label is disputed, and says so in its reason);
- nobody decided (only `can't tell`): `unverifiable`.

A human label names its labeler (`human:` and the reviewers, or the file's format) and the time of its latest
answer, and carries every answer (reviewer, answer, note, time) as its evidence, so a changed answer gives a
new label and the old one can still be read where it was stored.

>>> from prm_factory.audit.store import RecordedAnswer
>>> answers = [RecordedAnswer(1, 3, "ana", "incorrect", "this", "off by one", "2026-01-01T10:00:00Z", 9.0,
...                           False, "page"),
...            RecordedAnswer(2, 3, "ben", "incorrect", None, "", "2026-01-01T11:00:00Z", 5.0, False, "page")]
>>> labels = human_labels({3: ("chain-a", 1)}, answers)
>>> [(label.verdict, label.labeler, label.first_error) for label in labels]
[('incorrect', 'human:ana+ben', 'this')]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from prm_factory.audit.store import RecordedAnswer, effective_answers
from prm_factory.schemas.external_chains import ExternalChain

HumanVerdict = Literal["correct", "incorrect", "unverifiable"]
SOURCE = "human"


@dataclass(frozen=True)
class HumanStepLabel:
    """The `human` source's label of one step."""

    chain_id: str
    step_index: int
    verdict: HumanVerdict
    reason: str
    evidence: str  # JSON: the answers behind the label, or the file row it came from
    labeler: str  # `human:` + reviewers joined by `+`, or `human:processbench` / `human:prm800k`
    labeled_at: str | None  # time of the latest answer (None: from a file that gives none)
    first_error: Literal["this", "earlier"] | None = None  # an `incorrect` step: the chain's first wrong one?


def _resolve(answers: Sequence[RecordedAnswer]) -> tuple[HumanVerdict, str]:
    said = "; ".join(f"{a.reviewer}: {a.answer.replace('_', ' ')}" for a in answers)
    decided = {a.answer for a in answers if a.answer != "cant_tell"}
    if not decided:
        return "unverifiable", f"can't tell ({said})"
    if len(decided) > 1:
        return "unverifiable", f"reviewers disagree ({said})"
    verdict = decided.pop()
    return verdict, said  # type: ignore[return-value]


def _first_error(answers: Sequence[RecordedAnswer]) -> Literal["this", "earlier"] | None:
    said = {a.first_error for a in answers if a.answer == "incorrect" and a.first_error is not None}
    return said.pop() if len(said) == 1 else None  # type: ignore[return-value]


def human_labels(
    steps: Mapping[int, tuple[str, int]], answers: Sequence[RecordedAnswer]
) -> list[HumanStepLabel]:
    """One label per answered item: `steps` maps item id -> (chain id, step index); ordered by item id."""
    by_item: dict[int, list[RecordedAnswer]] = {}
    for (item_id, _), answer in sorted(effective_answers(answers).items()):
        by_item.setdefault(item_id, []).append(answer)
    labels = []
    for item_id, given in sorted(by_item.items()):
        chain_id, step_index = steps[item_id]
        given = sorted(given, key=lambda a: a.reviewer)
        verdict, reason = _resolve(given)
        evidence = [
            {
                "reviewer": a.reviewer,
                "answer": a.answer,
                "first_error": a.first_error,
                "note": a.note,
                "answered_at": a.answered_at,
                "after_reveal": a.after_reveal,
                "origin": a.origin,
            }
            for a in given
        ]
        labels.append(
            HumanStepLabel(
                chain_id=chain_id,
                step_index=step_index,
                verdict=verdict,
                reason=reason,
                evidence=json.dumps(evidence, ensure_ascii=False),
                labeler=f"{SOURCE}:" + "+".join(a.reviewer for a in given),
                labeled_at=max(a.answered_at for a in given),
                first_error=_first_error(given) if verdict == "incorrect" else None,
            )
        )
    return labels


def external_human_labels(chain: ExternalChain, chain_id: str) -> list[HumanStepLabel]:
    """The gold labels a ProcessBench or PRM800K row carries, as `human` labels of the stored chain.

    PRM800K ratings: -1 `incorrect`, 0 and 1 `correct` (0 is PRM800K's "neutral": not wrong), no rating no
    label. ProcessBench's `label` (the first wrong step, -1: none): steps before it `correct`, it `incorrect`
    (the first error), later steps no label (ProcessBench does not judge them).

    >>> pb = ExternalChain("pb-1", "2+2?", ("2+2=5", "so 5"), first_error_label=0, file="gsm8k.json", line=1)
    >>> [(label.step_index, label.verdict) for label in external_human_labels(pb, "chain-x")]
    [(0, 'incorrect')]
    """
    row = {"format": chain.source_format, "id": chain.id, "file": chain.file, "line": chain.line}
    labeler = f"{SOURCE}:{chain.source_format}"
    labels: list[HumanStepLabel] = []

    def add(index: int, verdict: HumanVerdict, reason: str, first: Literal["this"] | None = None) -> None:
        labels.append(HumanStepLabel(chain_id, index, verdict, reason, json.dumps(row), labeler, None, first))

    if chain.step_labels is not None:
        seen_error = False
        for index, rating in enumerate(chain.step_labels):
            if rating is None:
                continue
            if rating < 0:
                add(index, "incorrect", f"PRM800K rating {rating}", None if seen_error else "this")
                seen_error = True
            else:
                add(index, "correct", f"PRM800K rating {rating}")
        return labels
    if chain.first_error_label is None:
        return labels
    last = len(chain.steps) if chain.first_error_label == -1 else chain.first_error_label
    for index in range(last):
        add(
            index,
            "correct",
            "before ProcessBench's first error"
            if chain.first_error_label >= 0
            else "ProcessBench: no wrong step",
        )
    if chain.first_error_label >= 0:
        add(chain.first_error_label, "incorrect", "ProcessBench's first error", "this")
    return labels
