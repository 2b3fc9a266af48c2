"""A Docker engine restart in the middle of sandbox work, against the real engine.

What must hold: no job is judged on a container that vanished with the engine (that would be a wrong
label), the pool rebuilds its containers once the engine answers again, and an engine that stays away
fails the job loudly (`SandboxUnavailable`) instead of returning a result.
"""

from __future__ import annotations

import threading
import time

import pytest

from verifiers.code.sandbox.container import SandboxLimits
from verifiers.code.sandbox.pool import SandboxPool, SandboxUnavailable

pytestmark = pytest.mark.docker

JOBS = 40  # about 7 s of work on two containers: longer than the engine takes to stop


def _job(i: int) -> dict[str, str]:
    return {"main.py": f"import time\ntime.sleep(0.3)\nprint({i} * {i})\n"}


def test_jobs_rerun_on_fresh_containers_across_an_engine_restart(sandbox_image: str, dockerd) -> None:
    results: dict[int, object] = {}
    errors: list[BaseException] = []
    with SandboxPool(sandbox_image, size=2, limits=SandboxLimits(wall_seconds=5), engine_wait_s=120) as pool:
        before = set(pool.container_ids())

        def worker(ids: range) -> None:
            try:
                for i in ids:
                    results[i] = pool.run(_job(i), ["python3", "main.py"])
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(range(k, JOBS, 2),)) for k in range(2)]
        for thread in threads:
            thread.start()
        while len(results) < 4 and not errors:
            time.sleep(0.05)
        dockerd.stop()  # jobs in flight lose their containers here
        dockerd.start()
        for thread in threads:
            thread.join(timeout=180)
        after = set(pool.container_ids())

    assert not errors, errors
    assert sorted(results) == list(range(JOBS))
    wrong = {i: r for i, r in results.items() if not (r.ok and r.stdout == f"{i * i}\n")}  # type: ignore[attr-defined]
    assert not wrong, wrong
    assert pool.engine_losses >= 1, "no job was in flight when the engine stopped: the test proved nothing"
    assert pool.replaced >= 2, "the engine restart should have cost every warm container"
    assert not before & after, "containers from before the restart were handed out again"


def test_an_engine_that_stays_away_fails_the_job(sandbox_image: str, dockerd) -> None:
    with SandboxPool(sandbox_image, size=1, limits=SandboxLimits(wall_seconds=5), engine_wait_s=3) as pool:
        assert pool.run(_job(2), ["python3", "main.py"]).stdout == "4\n"
        dockerd.stop()
        started = time.monotonic()
        with pytest.raises(SandboxUnavailable, match="not answering"):
            pool.run(_job(3), ["python3", "main.py"])
        assert time.monotonic() - started < 60
        dockerd.start()
        # The failed job left an empty slot behind, not a dead container: the pool works again.
        assert pool.run(_job(5), ["python3", "main.py"]).stdout == "25\n"
