"""`prm_factory.labels` exports the reference labeler lazily (PEP 562): the registry and every CLI command
import the package, and importing the step checker behind the reference labeler at each start cost a
second of CPU (issue 44). These pin both halves: the names resolve, and importing the package loads
neither the reference labeler nor the math checker."""

from __future__ import annotations

import subprocess
import sys

import pytest

import prm_factory.labels as labels
from prm_factory.labels import reference


def test_the_reference_exports_resolve_to_the_reference_module() -> None:
    assert labels.REFERENCE_LABELER == reference.REFERENCE_LABELER
    assert labels.REFERENCE_VERSION == reference.REFERENCE_VERSION
    assert labels.reference_step_labels is reference.reference_step_labels


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        labels.nothing_here  # noqa: B018


def test_importing_the_package_loads_neither_the_reference_labeler_nor_the_step_checker() -> None:
    code = (
        "import sys, prm_factory.labels; "
        "print(sorted(m for m in ('prm_factory.labels.reference', 'prm_factory.verifiers.math.claims') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
