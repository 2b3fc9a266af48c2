"""The math step checker alone on a ProcessBench split (a JSON list of chains with a first-error label).

Prints the five figures issue 22 tracks: the share of fully correct chains with any step labelled
`incorrect`, the precision of `incorrect` on steps up to and including the marked first error, and the
ProcessBench first-error accuracies (erroneous, correct) with their harmonic mean. `--dump` writes each
chain's verdicts (and the failed claim of every `incorrect` step) as JSON lines, to read what was flagged.

    python -m prm_factory.evaluation.processbench_dev PATH/math.json [--limit 200] [--dump verdicts.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prm_factory.evaluation.external import predicted_first_error
from prm_factory.labels.metrics import (
    first_error_scores,
    step_incorrect_scores,
    step_labels_from_first_error,
)
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.verifier import MathVerifier


@dataclass(frozen=True)
class DevFigures:
    correct_chains: int
    correct_chains_flagged: int
    incorrect_precision: float
    incorrect_flags: int
    accuracy_erroneous: float
    accuracy_correct: float
    f1: float

    def lines(self) -> list[str]:
        share = self.correct_chains_flagged / self.correct_chains if self.correct_chains else 0.0
        return [
            f"correct chains with any incorrect step: {self.correct_chains_flagged}/{self.correct_chains}"
            f" = {100 * share:.1f} %",
            f"precision of incorrect (steps up to the first error): {100 * self.incorrect_precision:.1f} %"
            f" of {self.incorrect_flags}",
            f"first-error accuracy, erroneous chains: {100 * self.accuracy_erroneous:.1f} %",
            f"first-error accuracy, correct chains: {100 * self.accuracy_correct:.1f} %",
            f"first-error F1: {100 * self.f1:.1f}",
        ]


def figures(gold: Sequence[int], predicted: Sequence[Sequence[str]]) -> DevFigures:
    """The five figures from gold first-error labels and predicted per-step labels."""
    scores = first_error_scores(gold, [predicted_first_error(p) for p in predicted])
    golds = [step_labels_from_first_error(g, len(p)) for g, p in zip(gold, predicted, strict=True)]
    steps = step_incorrect_scores(golds, [list(p) for p in predicted])
    correct = [p for g, p in zip(gold, predicted, strict=True) if g == -1]
    return DevFigures(
        correct_chains=len(correct),
        correct_chains_flagged=sum("incorrect" in p for p in correct),
        incorrect_precision=steps.precision,
        incorrect_flags=steps.true_positive + steps.false_positive,
        accuracy_erroneous=scores.accuracy_erroneous,
        accuracy_correct=scores.accuracy_correct,
        f1=scores.f1,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a ProcessBench split: a JSON list of chains")
    parser.add_argument("--limit", type=int, default=0, help="every k-th chain, about this many (0 = all)")
    parser.add_argument("--dump", type=Path, help="write each chain's verdicts here (JSON lines)")
    args = parser.parse_args(argv)
    rows = json.loads(args.path.read_text())
    if args.limit and args.limit < len(rows):
        stride = len(rows) / args.limit
        rows = [rows[int(i * stride)] for i in range(args.limit)]
    verifier = MathVerifier()
    gold: list[int] = []
    predicted: list[list[str]] = []
    n_steps = 0
    started = time.perf_counter()
    dump = args.dump.open("w") if args.dump else None
    try:
        for row in rows:
            problem = Problem(str(row["id"]), "processbench", "math", row["problem"])
            verdicts = verifier.check_steps(problem, row["steps"])
            gold.append(int(row["label"]))
            predicted.append([v.label for v in verdicts])
            n_steps += len(row["steps"])
            if dump is not None:
                flagged = {
                    str(i): {"reason": v.reason, "claim": v.evidence.get("failed_claim")}
                    for i, v in enumerate(verdicts)
                    if v.label == "incorrect"
                }
                record = {"id": row["id"], "label": row["label"], "labels": predicted[-1], "flagged": flagged}
                dump.write(json.dumps(record) + "\n")
    finally:
        verifier.close()
        if dump is not None:
            dump.close()
    elapsed = time.perf_counter() - started
    print(f"{len(rows)} chains, {n_steps} steps, {elapsed:.1f} s")
    for line in figures(gold, predicted).lines():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
