"""Session-wide fixtures: runtime defaults, one Prefect test server, one vLLM engine per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prm_factory.runtime import apply_runtime_defaults

apply_runtime_defaults()


@pytest.fixture(scope="session")
def prefect_server() -> Iterator[None]:
    """A temporary Prefect server and database for the whole session (flows run against it)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=None):
        yield
