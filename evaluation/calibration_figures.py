"""How good the consensus is, from the labels `eval --calibrate --rows` kept: per set, the precision of the
consensus `negative`, ProcessBench first-error F1 and the expected calibration error of `p_correct`, for the
consensus as a probability (labels/consensus.py) and for the rule of declared strengths before it.

Rows hold only steps up to each chain's first error (the later ones' truth is unknown), which is all the
first-error figures need: a chain's first error is found exactly when no step before the marked one is
`negative` and the marked one is; a chain whose every step holds needs no `negative` anywhere.

`--folds 2` measures honestly on a set the tables were built from: each half of the chains (by a hash of
the chain id) is weighed with tables built from the other half only.

    python -m prm_factory.evaluation.calibration_figures ROWS.jsonl... [--tables DIR] [--folds 2]
"""

from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prm_factory.evaluation.calibrate import MeasuredLabel, read_rows, tables_from
from prm_factory.labels.calibration import (
    CalibrationTable,
    expected_calibration_error,
    load_tables,
    read_table,
)
from prm_factory.labels.consensus import Weighing, domains_of, step_probability
from prm_factory.labels.registry import registry
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.public import FINAL_KINDS


@dataclass(frozen=True)
class Figures:
    chains: int
    negatives: int
    negative_precision: float
    accuracy_erroneous: float
    accuracy_correct: float
    f1: float
    ece: float | None  # None: the rule gives no probability

    def line(self) -> str:
        ece = "" if self.ece is None else f", ECE {self.ece:.3f}"
        return (
            f"{self.chains} chains: negative precision {100 * self.negative_precision:.1f} % of "
            f"{self.negatives}, first-error acc. {100 * self.accuracy_erroneous:.1f} / "
            f"{100 * self.accuracy_correct:.1f}, F1 {100 * self.f1:.1f}{ece}"
        )


Step = tuple[str, int, str, bool]  # chain id, step index, where, right


def by_step(rows: Sequence[MeasuredLabel]) -> dict[Step, list[MeasuredLabel]]:
    steps: dict[Step, list[MeasuredLabel]] = defaultdict(list)
    for row in rows:
        steps[(row.chain_id, row.step_index, row.where, row.right)].append(row)
    return steps


def strength_rule(labels: Sequence[MeasuredLabel]) -> str:
    """The consensus of the verifier and the reference by declared strengths (labels/consensus.py before
    issue 47): a verifier `incorrect` of a final kind (or none) is final, of another kind strong; the
    reference strong either way; a verifier `correct` weak."""
    votes: list[tuple[bool, int]] = []
    for label in labels:
        if label.verdict not in ("correct", "incorrect"):
            continue
        if label.source == "verifier":
            final = label.kind is None or label.kind in FINAL_KINDS
            votes.append((True, 1) if label.verdict == "correct" else (False, 3 if final else 2))
        else:
            votes.append((label.verdict == "correct", 2))
    if not votes:
        return "unlabeled"
    if all(positive for positive, _ in votes):
        return "positive"
    if not any(positive for positive, _ in votes):
        return "negative"
    against = max(s for positive, s in votes if not positive)
    for_ = max(s for positive, s in votes if positive)
    return "negative" if against > for_ else "disputed"


def weighed(labels: Sequence[MeasuredLabel], weighing: Weighing) -> tuple[str, float | None]:
    """The consensus as a probability over the same labels."""
    step_labels = [StepLabel(m.source, m.verdict, kind=m.kind) for m in labels]
    domains = domains_of("math", labels[0].where)
    label, _, p = step_probability(step_labels, registry(), weighing, domains)
    return label, p


def figures(predicted: Mapping[Step, tuple[str, float | None]]) -> Figures:
    """The figures of predicted (label, p_correct) per step."""
    chains: dict[str, list[tuple[int, bool, str]]] = defaultdict(list)
    negatives = negative_right = 0
    pairs: list[tuple[float, bool]] = []
    for (chain_id, index, _, right), (label, p) in predicted.items():
        chains[chain_id].append((index, right, label))
        if label == "negative":
            negatives += 1
            negative_right += int(not right)
        if p is not None:
            pairs.append((p, right))
    erroneous = correct = found_erroneous = found_correct = 0
    for steps in chains.values():
        steps.sort()
        wrong = [index for index, right, _ in steps if not right]
        first_negative = next((index for index, _, label in steps if label == "negative"), None)
        if wrong:
            erroneous += 1
            found_erroneous += int(first_negative == wrong[0])
        else:
            correct += 1
            found_correct += int(first_negative is None)
    acc_e = found_erroneous / erroneous if erroneous else 0.0
    acc_c = found_correct / correct if correct else 0.0
    f1 = 2 * acc_e * acc_c / (acc_e + acc_c) if acc_e + acc_c else 0.0
    ece = expected_calibration_error(pairs)
    precision = negative_right / negatives if negatives else 0.0
    return Figures(len(chains), negatives, precision, acc_e, acc_c, f1, ece)


def fold_of(chain_id: str, folds: int) -> int:
    return int(hashlib.sha256(chain_id.encode()).hexdigest(), 16) % folds


def measure(
    rows: Sequence[MeasuredLabel],
    tables: Mapping[str, CalibrationTable],
    folds: int = 1,
    train_rows: Sequence[MeasuredLabel] = (),
) -> tuple[Figures, Figures]:
    """(the strength rule, the probability) on `rows`; with `folds` > 1 each fold is weighed by tables
    built from `train_rows` plus the other folds of `rows`."""
    steps = by_step(rows)
    old = {step: (strength_rule(labels), None) for step, labels in steps.items()}
    new: dict[Step, tuple[str, float | None]] = {}
    if folds <= 1:
        weighing = Weighing(dict(tables))
        new = {step: weighed(labels, weighing) for step, labels in steps.items()}
    else:
        for fold in range(folds):
            train = [*train_rows, *(r for r in rows if fold_of(r.chain_id, folds) != fold)]
            weighing = Weighing(tables_from(train, {}, ()))
            for step, labels in steps.items():
                if fold_of(step[0], folds) == fold:
                    new[step] = weighed(labels, weighing)
    return figures(old), figures(new)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", type=Path, help="--rows files of `eval --calibrate`")
    parser.add_argument("--tables", type=Path, help="a folder of tables (default: the shipped ones)")
    parser.add_argument("--folds", type=int, default=1, help="cross-fit: tables from the other folds")
    parser.add_argument("--train", type=Path, nargs="*", default=[], help="rows always in the tables")
    args = parser.parse_args(argv)
    if args.tables:
        tables = {t.source: t for t in (read_table(p) for p in sorted(args.tables.glob("*.json")))}
    else:
        tables = load_tables()
    train = [m for path in args.train for m in read_rows(path)]
    for path in args.rows:
        old, new = measure(read_rows(path), tables, args.folds, train)
        print(f"{path.name}\n  strengths:   {old.line()}\n  probability: {new.line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
