"""The storage tests' fixture records (tests/storage/conftest.py) for tests in other folders.

Why a module: tests/storage/conftest.py is a conftest, not importable by name, and its `make_run` builds the
deterministic run records that training and export tests commit as a small dataset without an engine. One
loader here keeps every caller on the same module object (dataclasses look their module up in sys.modules).

Import it as `from tests.storage_fixtures import committed_fixture_dataset` (pytest runs from the repo root,
where `tests` is a namespace package).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
MODULE_NAME = "storage_test_fixtures"


def storage_fixtures() -> ModuleType:
    """tests/storage/conftest.py as a module, loaded once per process."""
    if MODULE_NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(MODULE_NAME, REPO / "tests" / "storage" / "conftest.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE_NAME] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[MODULE_NAME]


def committed_fixture_dataset(root: Path, n_problems: int = 2, config_name: str = "a") -> Any:
    """A storage.dataset.Dataset at `root` with one committed run of `n_problems` problems (2 chains each)."""
    from prm_factory.storage.dataset import Dataset

    data = Dataset(str(root))
    data.commit_run(*storage_fixtures().make_run(config_name, n_problems=n_problems).args())
    return data


@pytest.fixture
def run_factory() -> Callable[..., Any]:
    """`make_run` of the storage tests, for tests of what reads datasets (exports, the feed)."""
    return storage_fixtures().make_run


def with_label(step: Any, source: str, **changes: Any) -> Any:
    """`step` with its `source` label's fields changed (or that label added, from `changes`)."""
    import dataclasses

    from prm_factory.schemas.step_labels import StepLabel

    old = step.label(source)
    new = dataclasses.replace(old, **changes) if old else StepLabel(source, **changes)
    kept = tuple(label for label in step.labels if label.source != source)
    return dataclasses.replace(step, labels=(*kept, new))


OLD_DATASET = REPO / "tests" / "storage" / "data" / "dataset_ns_move"
"""A dataset written by the code before label sources became plug-ins (see build_ns_move_dataset.py)."""


def copy_of_old_dataset(tmp_path: Path) -> Any:
    """A writable copy of OLD_DATASET as a storage.dataset.Dataset (tests never write into the repository)."""
    import shutil

    from prm_factory.storage.dataset import Dataset

    root = tmp_path / "old"
    shutil.copytree(OLD_DATASET, root)
    return Dataset(str(root))
