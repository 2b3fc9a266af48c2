"""Measure label quality on the sets this package builds: `python -m prm_factory.evaluation.report`.

Prints first-error F1 on the altered-GSM8K set (rebuilt from the GSM8K source when it is there, else read
from `data/altered_gsm8k.jsonl`), per-step precision/recall of `incorrect`, and final-answer precision/recall
of `correct` on the hand-labelled pairs. The functions return the numbers, for `prm-factory eval` to reuse.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from prm_factory.evaluation.altered_gsm8k import (
    DEFAULT_SOURCE,
    AlteredSample,
    build_altered_gsm8k,
    first_error_index,
)
from prm_factory.evaluation.answer_pairs import evaluate_answer_pairs, load_answer_pairs
from prm_factory.labels.metrics import (
    FirstErrorScores,
    PrecisionRecall,
    first_error_scores,
    step_incorrect_scores,
    step_labels_from_first_error,
)
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict

ALTERED_SET = Path(__file__).parent / "data" / "altered_gsm8k.jsonl"


@dataclass(frozen=True)
class StepCheckReport:
    first_error: FirstErrorScores
    steps: PrecisionRecall
    predictions: tuple[int, ...]
    seconds: float
    n_steps: int


def load_altered(path: Path = ALTERED_SET) -> list[AlteredSample]:
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            samples.append(
                AlteredSample(
                    row["id"],
                    row["problem"],
                    tuple(row["steps"]),
                    row["label"],
                    row.get("final_answer", ""),
                    row.get("original"),
                    row.get("altered"),
                )
            )
    return samples


def evaluate_step_checker(
    samples: Sequence[AlteredSample], check: Callable[[Sequence[str]], list[Verdict]]
) -> StepCheckReport:
    """First-error F1 and per-step scores of a step checker on samples with gold first-error labels."""
    started = time.perf_counter()
    verdicts = [check(sample.steps) for sample in samples]
    seconds = time.perf_counter() - started
    predictions = tuple(first_error_index(v) for v in verdicts)
    gold_steps = [step_labels_from_first_error(s.label, len(s.steps)) for s in samples]
    predicted_steps = [[v.label for v in chain] for chain in verdicts]
    return StepCheckReport(
        first_error_scores([s.label for s in samples], predictions),
        step_incorrect_scores(gold_steps, predicted_steps),
        predictions,
        seconds,
        sum(len(s.steps) for s in samples),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, action="append", help="build seeds (repeatable); default 0")
    args = parser.parse_args(argv)

    from prm_factory.verifiers.math import MathVerifier
    from prm_factory.verifiers.math.answers import answers_equivalent_many

    verifier = MathVerifier()
    problem = Problem("eval", "altered-gsm8k", "math", "")
    sets: list[tuple[str, list[AlteredSample]]] = []
    if args.source.exists():
        for seed in args.seed or [0]:
            sets.append(
                (
                    f"built from {args.source.name}, seed {seed}",
                    build_altered_gsm8k(args.source, n_samples=args.samples, seed=seed),
                )
            )
    else:
        sets.append((f"committed {ALTERED_SET.name}", load_altered()))
    for name, samples in sets:
        report = evaluate_step_checker(samples, partial(verifier.check_steps, problem))
        fe, st = report.first_error, report.steps
        print(
            f"altered GSM8K ({name}): {fe.n_erroneous} altered + {fe.n_correct} gold samples, "
            f"{report.n_steps} steps"
        )
        print(
            f"  first-error F1 {100 * fe.f1:.2f}  (acc. erroneous {100 * fe.accuracy_erroneous:.2f}, "
            f"acc. correct {100 * fe.accuracy_correct:.2f})"
        )
        print(
            f"  step `incorrect`: precision {100 * st.precision:.2f}  recall {100 * st.recall:.2f}  "
            f"(tp {st.true_positive}, fp {st.false_positive}, fn {st.false_negative})"
        )
        print(f"  {report.n_steps / report.seconds:,.0f} steps/s")
    pairs = load_answer_pairs()
    answer_report = evaluate_answer_pairs(pairs, answers_equivalent_many)
    sc = answer_report.scores
    print(
        f"answer pairs ({len(pairs)} hand-labelled): precision {100 * sc.precision:.2f}  "
        f"recall {100 * sc.recall:.2f}  "
        f"(tp {sc.true_positive}, fp {sc.false_positive}, fn {sc.false_negative})"
    )
    for pair, verdict in answer_report.disagreements:
        print(
            f"  disagree: {pair.predicted!r} vs {pair.reference!r} gold={pair.equivalent} got {verdict.label}"
        )
    verifier.close()


if __name__ == "__main__":
    main()
