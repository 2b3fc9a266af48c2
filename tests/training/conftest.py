"""Fixtures for training tests: a small committed dataset (the storage tests' records, no engine) and the
embedded model's tokenizer."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def storage_fixtures() -> Any:
    """tests/storage/conftest.py as a module: its `make_run` builds deterministic run records."""
    name = "storage_test_fixtures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "storage" / "conftest.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def committed_dataset(tmp_path: Path) -> Callable[..., Any]:
    """Builds a dataset under tmp_path with one committed run of `n_problems` problems (2 chains each)."""

    def build(n_problems: int = 2, name: str = "ds") -> Any:
        from storage.dataset import Dataset

        data = Dataset(str(tmp_path / name))
        data.commit_run(*storage_fixtures().make_run("a", n_problems=n_problems).args())
        return data

    return build


@pytest.fixture(scope="session")
def smol_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from sampling.model_prep import prepare_default_model

    return AutoTokenizer.from_pretrained(prepare_default_model())
