"""The CPU each test phase took, for the suite's timings (tests/conftest.py, bench/suite_critical_path.py).

Counted in the process that ran the phase, and in the child processes reaped during it (a process still
running at the phase's end, such as the session's engine, is not counted; a long-lived child is charged
whole to the phase that reaps it: the process-wide math verifier pool, stopped by a test of its own, showed
129 s of CPU in a 1.6 s test, the verification of every test before it on that worker. The math workers
are forks of a fork server (verifiers/math/fork_server.py), which reaps them: their CPU is charged with the
server's to the phase that reaps the server, none for the process-wide one, which ends with its worker).
With a worker more than the cores the suite waits on CPU, and wall time alone cannot tell a test that
computes from one that waits. Measured in the worker; the report's `user_properties` carry it to the xdist
controller.

PYTEST_DONT_REWRITE: the root conftest imports this module before pytest registers it as a plugin, and it
asserts nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

CPU_PROPERTY = "prm_factory_cpu_s"
_CPU_AT = pytest.StashKey[tuple[float, float]]()
_CPU_SPENT = pytest.StashKey[tuple[float, float]]()


def cpu_now() -> tuple[float, float]:
    """CPU seconds of this process and of its reaped children, user and system together."""
    times = os.times()
    return times.user + times.system, times.children_user + times.children_system


def _measured(item: pytest.Item) -> Iterator[None]:
    item.stash[_CPU_AT] = cpu_now()
    try:
        return (yield)
    finally:
        (own, children), (own_at, children_at) = cpu_now(), item.stash[_CPU_AT]
        item.stash[_CPU_SPENT] = (own - own_at, children - children_at)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _measured(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _measured(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _measured(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    report = yield
    if (spent := item.stash.get(_CPU_SPENT, None)) is not None:
        report.user_properties.append((CPU_PROPERTY, [round(spent[0], 3), round(spent[1], 3)]))
        del item.stash[_CPU_SPENT]
    return report
