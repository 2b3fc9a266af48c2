"""The hand-labelled answer pairs: does the final-answer checker agree with a careful human?

`data/answer_pairs.jsonl` holds one pair per line: `{"id", "predicted", "reference", "equivalent", "form"}`,
labelled by hand (`form` names what the pair exercises: thousands, percent, latex-frac, interval, ...).
The checker's `correct` is scored against `equivalent`; `unparsed` counts as "not correct".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.metrics import PrecisionRecall, answer_correct_scores
from verifiers.protocol import Verdict

ANSWER_PAIRS = Path(__file__).parent / "data" / "answer_pairs.jsonl"


@dataclass(frozen=True)
class AnswerPair:
    id: str
    predicted: str
    reference: str
    equivalent: bool
    form: str = ""


@dataclass(frozen=True)
class AnswerPairReport:
    scores: PrecisionRecall
    labels: tuple[str, ...]
    disagreements: tuple[tuple[AnswerPair, Verdict], ...]


def load_answer_pairs(path: Path = ANSWER_PAIRS) -> list[AnswerPair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        AnswerPair(r["id"], r["predicted"], r["reference"], bool(r["equivalent"]), r.get("form", ""))
        for r in rows
    ]


def evaluate_answer_pairs(
    pairs: Sequence[AnswerPair],
    judge: Callable[[Sequence[tuple[str, str]]], list[Verdict]] | None = None,
) -> AnswerPairReport:
    """Score a batch judge (default: `answers_equivalent_many`) on the pairs; list where it disagrees."""
    if judge is None:
        from verifiers.math.answers import answers_equivalent_many

        judge = answers_equivalent_many
    verdicts = judge([(p.predicted, p.reference) for p in pairs])
    labels = tuple(v.label for v in verdicts)
    scores = answer_correct_scores([p.equivalent for p in pairs], labels)
    disagreements = tuple(
        (pair, verdict)
        for pair, verdict in zip(pairs, verdicts, strict=True)
        if (verdict.label == "correct") != pair.equivalent
    )
    return AnswerPairReport(scores, labels, disagreements)
