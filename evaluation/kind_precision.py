"""Precision of the verifier's `incorrect` per reading kind, against gold step labels.

A step the verifier labels `incorrect` counts for its verdict's `kind` (`verifiers.math.reading_kinds`):
right where the gold label is `incorrect` (ProcessBench: the marked first error), wrong where it is
`correct` (a step before the first error, or any step of a chain whose steps are all right). Steps the gold
leaves unlabelled (after a first error) are not counted, as in the precision of `incorrect` over all kinds.
`prm-factory eval` prints the table per split, each precision with its Wilson 95 % interval (a kind seen
right 12 times of 12 is not known to be 99 % precise: its interval reads 75.8-100); the figures of the
olympiad dev split fill `reading_kinds.KIND_PRECISION`, which decides `FINAL_KINDS`.
"""

from __future__ import annotations

from collections.abc import Sequence

from prm_factory.evaluation.external import gold_step_labels
from prm_factory.labels.calibration import wilson
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.verifiers.math.reading_kinds import READING_KINDS, KindPrecision

UNNAMED = "unnamed"  # an `incorrect` whose verifier named no reading kind


def kind_precision(
    chains: Sequence[ExternalChain],
    labels: Sequence[Sequence[str]],
    kinds: Sequence[Sequence[str | None]],
) -> dict[str, KindPrecision]:
    """Right and wrong `incorrect` flags per reading kind, kinds in `READING_KINDS` order (then others).

    >>> chain = ExternalChain(id="c", problem="p", steps=("a", "b", "c"), first_error_label=1)
    >>> table = kind_precision([chain], [["incorrect", "incorrect", "incorrect"]], [["x", "x", "y"]])
    >>> table["x"].right, table["x"].wrong, "y" in table
    (1, 1, False)
    """
    right: dict[str, int] = {}
    wrong: dict[str, int] = {}
    for chain, predicted, named in zip(chains, labels, kinds, strict=True):
        gold = gold_step_labels(chain)
        if gold is None:
            continue
        for label, truth, kind in zip(predicted, gold, named, strict=False):
            if label != "incorrect" or truth not in ("correct", "incorrect"):
                continue
            key = kind or UNNAMED
            target = right if truth == "incorrect" else wrong
            target[key] = target.get(key, 0) + 1
    found = set(right) | set(wrong)
    order = [k for k in READING_KINDS if k in found] + sorted(found - set(READING_KINDS))
    return {k: KindPrecision(right.get(k, 0), wrong.get(k, 0)) for k in order}


def kind_rows(table: dict[str, KindPrecision]) -> list[tuple[str, str, str, str, str]]:
    """(kind, precision %, Wilson 95 % interval %, right / flags, wrong) rows for printing.

    >>> kind_rows({"closed_arithmetic": KindPrecision(9, 1)})
    [('closed_arithmetic', '90.0', '59.6-98.2', '9 / 10', '1')]
    """
    rows = []
    for kind, counts in table.items():
        share = counts.precision
        low, high = wilson(counts.right, counts.flags)
        rows.append(
            (
                kind,
                "n/a" if share is None else f"{100 * share:.1f}",
                "n/a" if share is None else f"{100 * low:.1f}-{100 * high:.1f}",
                f"{counts.right} / {counts.flags}",
                str(counts.wrong),
            )
        )
    return rows
