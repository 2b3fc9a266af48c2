"""Exports read committed datasets: the storage tests' records (tests/storage/conftest.py), no engine."""

from tests.storage_fixtures import run_factory  # noqa: F401 (a fixture)
