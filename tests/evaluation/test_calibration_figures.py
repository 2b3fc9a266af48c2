"""Consensus figures from kept labels (evaluation/calibration_figures.py): negative precision, first-error
F1 and ECE, for the strength rule and the probability."""

from __future__ import annotations

import math

from prm_factory.evaluation.calibrate import MeasuredLabel, tables_from
from prm_factory.evaluation.calibration_figures import figures, measure, strength_rule


def label(chain, index, verdict, right, source="verifier", kind="closed_arithmetic"):
    return MeasuredLabel(chain, index, source, verdict, kind, "gsm8k", right)


def test_the_strength_rule_keeps_a_final_verifier_flag_against_the_reference():
    flagged = [label("c", 0, "incorrect", True), label("c", 0, "correct", True, "reference", None)]
    assert strength_rule(flagged) == "negative"
    unsure = [
        label("c", 0, "incorrect", True, kind="equation_step"),
        label("c", 0, "correct", True, "reference"),
    ]
    assert strength_rule(unsure) == "disputed"
    assert strength_rule([label("c", 0, "unverifiable", True)]) == "unlabeled"


def test_first_error_f1_and_negative_precision():
    predicted = {
        ("a", 0, "gsm8k", True): ("positive", 0.9),
        ("a", 1, "gsm8k", False): ("negative", 0.1),  # found exactly
        ("b", 0, "gsm8k", True): ("negative", 0.2),  # a correct chain flagged
        ("c", 0, "gsm8k", True): ("positive", 0.9),
    }
    result = figures(predicted)
    assert result.chains == 3 and result.negatives == 2 and result.negative_precision == 0.5
    assert result.accuracy_erroneous == 1.0 and result.accuracy_correct == 0.5
    assert math.isclose(result.f1, 2 * 0.5 / 1.5) and result.ece is not None


def test_cross_fitted_tables_come_from_the_other_folds_only():
    rows = [label(f"c{i}", 0, "incorrect", False) for i in range(40)]
    rows += [label(f"d{i}", 0, "correct", True) for i in range(40)]
    old, new = measure(rows, tables_from(rows, {}, ()), folds=2)
    assert old.negative_precision == 1.0 and new.negative_precision == 1.0 and new.negatives == 40
    assert new.ece is not None and new.ece < 0.1
