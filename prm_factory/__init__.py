"""prm-factory: step-labeled training data for process reward models.

The public Python API is what `__all__` names (defined in `prm_factory.api`; docs/python.md shows each in
use); the CLI calls the same functions. Every other module of the package is internal. Names load on first
use, so `import prm_factory` stays light (no torch, vLLM or Prefect until a function needs them).

>>> import prm_factory as pf                                                             # doctest: +SKIP
>>> summary = pf.run(pf.load_config("run.toml"))                                        # doctest: +SKIP
>>> pf.query(summary.dataset_root, "SELECT consensus, count(*) FROM steps GROUP BY 1")   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prm_factory.api import (
        export,
        feed,
        label,
        load_config,
        open_dataset,
        query,
        relabel,
        run,
        score,
        score_dataset,
        score_file,
        train,
        training_rows,
        versions,
    )
    from prm_factory.config.run_config import ConfigError, RunConfig
    from prm_factory.storage.errors import StorageError

__all__ = [
    "load_config",
    "run",
    "label",
    "relabel",
    "open_dataset",
    "versions",
    "query",
    "export",
    "feed",
    "training_rows",
    "train",
    "score",
    "score_file",
    "score_dataset",
    "RunConfig",
    "ConfigError",
    "StorageError",
]

_HOMES = dict.fromkeys(__all__[:14], "prm_factory.api") | {
    "RunConfig": "prm_factory.config.run_config",
    "ConfigError": "prm_factory.config.run_config",
    "StorageError": "prm_factory.storage.errors",
}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'prm_factory' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
