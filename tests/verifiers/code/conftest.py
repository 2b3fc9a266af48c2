"""Fixtures for the code sandbox tests: one image, one small warm pool per module.

Docker tests skip (with the reason) only when the engine does not answer; CI starts it with
scripts/start_dockerd.sh. Pools stay small: the project's machines have 2 cores.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prm_factory.schemas.code_problems import load_code_problems
from prm_factory.schemas.records import Problem
from tests.docker_turns import DOCKER_TURNS

# the suite imports with --import-mode=importlib: put this folder on sys.path for `exec_results`
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = Path(__file__).resolve().parents[3] / "data" / "code_problems"
FAST_LIMITS = dict(memory_mb=128, pids=32, cpus=1.0, wall_seconds=2.0, output_cap_bytes=1 << 20, tmpfs_mb=16)


def _docker_problem() -> str | None:
    try:
        from prm_factory.verifiers.code.sandbox import docker_client

        docker_client().close()
    except Exception as exc:  # noqa: BLE001 - any failure to reach the engine means "skip", with its reason
        return f"docker engine not answering ({type(exc).__name__}: {exc}); run scripts/start_dockerd.sh"
    return None


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    problem = _docker_problem()
    if problem:
        pytest.skip(problem)
    from prm_factory.verifiers.code.image import ensure_image

    return ensure_image()


@pytest.fixture(scope="module")
def pool(request: pytest.FixtureRequest, sandbox_image: str) -> Iterator[object]:
    from prm_factory.verifiers.code.sandbox import SandboxLimits, SandboxPool

    # PRM_SANDBOX_DISPATCH=exec runs the whole suite through `docker exec` dispatch instead.
    dispatch = os.environ.get("PRM_SANDBOX_DISPATCH", "server")
    # A module whose tests judge verdicts, not limits, sets POOL_LIMITS over FAST_LIMITS (a longer wall
    # clock): a tight 2 s wall turns a right program into `timeout` when the suite loads the machine.
    limits = SandboxLimits(**{**FAST_LIMITS, **getattr(request.module, "POOL_LIMITS", {})})
    # its containers live across the module's tests: no dockerd restart in between (tests/docker_turns.py)
    with DOCKER_TURNS.shared(), SandboxPool(sandbox_image, size=2, limits=limits, dispatch=dispatch) as warm:
        yield warm


@pytest.fixture(scope="module")
def verifier(pool: object) -> Iterator[object]:
    from prm_factory.verifiers.code.verifier import CodeVerifier

    yield CodeVerifier(runner=pool)  # the pool fixture owns the containers


@pytest.fixture(scope="session")
def code_problems() -> dict[str, Problem]:
    """The shipped problems, keyed by entry point."""
    from prm_factory.schemas.code_spec import CodeTests

    problems: dict[str, Problem] = {}
    for name in ("humaneval_style", "mbpp_style"):
        loaded, rejected = load_code_problems(DATA / f"{name}.jsonl")
        assert not rejected
        for problem in loaded:
            problems[CodeTests.from_json(problem.tests or "").entry_point] = problem
    return problems


@pytest.fixture(scope="session")
def squares(code_problems: dict[str, Problem]) -> Problem:
    """`sum_of_squares(nums)`: the problem every attack targets."""
    return code_problems["sum_of_squares"]
