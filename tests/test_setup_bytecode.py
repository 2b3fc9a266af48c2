"""`scripts/setup.sh` leaves the environment's bytecode compiled: with PYTHONDONTWRITEBYTECODE set (it is on
these machines) no import writes a .pyc, and each process then compiled torch and vLLM from source (35 s
against 12 s per import). A setup that skipped the compile once passed every other test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("package", ["torch", "vllm", "transformers", "prefect"])
def test_installed_packages_have_their_bytecode(package: str) -> None:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None
    if not Path(sys.prefix, ".prm-factory-installed").exists():
        pytest.skip("not an environment scripts/setup.sh installed")
    source = Path(spec.origin)
    cached = Path(importlib.util.cache_from_source(str(source)))
    assert cached.exists(), f"{package}: no {cached.name} beside {source} (setup.sh compiles the bytecode)"
