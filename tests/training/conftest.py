"""Fixtures for training tests: a small committed dataset (the storage tests' records, no engine) and the
embedded model's tokenizer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.storage_fixtures import committed_fixture_dataset, run_factory  # noqa: F401 (a fixture)


@pytest.fixture
def committed_dataset(tmp_path: Path) -> Callable[..., Any]:
    """Builds a dataset under tmp_path with one committed run of `n_problems` problems (2 chains each)."""

    def build(n_problems: int = 2, name: str = "ds") -> Any:
        return committed_fixture_dataset(tmp_path / name, n_problems)

    return build


@pytest.fixture(scope="session")
def smol_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from prm_factory.sampling.model_prep import prepare_default_model

    return AutoTokenizer.from_pretrained(prepare_default_model())
