"""The interim p_correct mapping: a flag's measured precision, a dispute at one half, nothing checked None."""

from __future__ import annotations

import pytest

from prm_factory.labels.registry import registry
from prm_factory.reward.probability import FLAG_PRECISION, UNMEASURED, flag_p_correct, step_p_correct
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.public import FINAL_KINDS

SOURCES = registry()
FINAL = sorted(FINAL_KINDS)[0]


def test_a_flag_maps_to_one_minus_its_sources_measured_precision() -> None:
    flag = StepLabel("verifier", "incorrect", kind=FINAL)
    assert step_p_correct([flag], "negative", SOURCES) == pytest.approx(1 - FLAG_PRECISION["verifier"])
    both = [flag, StepLabel("reference", "incorrect")]
    assert step_p_correct(both, "negative", SOURCES) == pytest.approx(1 - FLAG_PRECISION["verifier"])
    assert flag_p_correct(StepLabel("reference", "incorrect")) == pytest.approx(1 - 60 / 66)
    assert flag_p_correct(StepLabel("verifier", "incorrect", kind="equation_step")) > 0.4  # not final
    assert flag_p_correct(StepLabel("digits", "incorrect")) == UNMEASURED
    assert flag_p_correct(StepLabel("prm", "incorrect", value=0.2)) == 0.2


def test_positive_disputed_and_unlabeled_steps() -> None:
    right = [StepLabel("verifier", "correct"), StepLabel("reference", "unverifiable")]
    assert step_p_correct(right, "positive", SOURCES) == 1.0
    assert step_p_correct(right, "disputed", SOURCES) == 0.5
    assert step_p_correct([StepLabel("verifier", "unverifiable")], "unlabeled", SOURCES) is None
