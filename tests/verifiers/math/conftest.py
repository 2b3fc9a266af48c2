"""The checker the reading tests of this folder share (one killable worker per test module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prm_factory.verifiers.math.verifier import MathVerifier, MathVerifierConfig


@pytest.fixture(scope="module")
def verifier() -> Iterator[MathVerifier]:
    # a generous item limit: these tests pin readings, and a cold worker on a loaded machine ran past 3 s
    checker = MathVerifier(MathVerifierConfig(timeout_s=30.0))
    yield checker
    checker.close()
