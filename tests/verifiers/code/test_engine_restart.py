"""A Docker engine restart in the middle of sandbox work, against the real engine.

What must hold: no job is judged on a container that vanished with the engine (that would be a wrong
label), the pool rebuilds its containers once the engine answers again, and an engine that stays away
fails the job loudly (`SandboxUnavailable`) instead of returning a result. And no container is left
half-made: one created as the engine went down, whose start failed, is gone once the pool has closed.
"""

from __future__ import annotations

import threading
import time

import pytest
from docker.models.containers import Container

from prm_factory.verifiers.code.sandbox.container import (
    ENGINE_ERRORS,
    REAPER_COMMAND,
    UNREMOVED,
    SandboxLimits,
    container_kwargs,
    docker_client,
    remove_or_remember,
    start_container,
)
from prm_factory.verifiers.code.sandbox.pool import SandboxPool, SandboxUnavailable

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
    assert not UNREMOVED.snapshot(), "containers the engine could not remove were still not removed"
    assert not dockerd.unstarted_sandboxes(), "a container created as the engine went down was left"


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
    assert not UNREMOVED.snapshot()
    assert not dockerd.unstarted_sandboxes()


def test_a_container_created_as_the_engine_goes_down_is_removed_once_it_answers(
    sandbox_image: str, dockerd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a restart in the middle of pool work hits now and then, made certain: the create is
    answered, the engine stops before the start, and the removal cannot reach it either."""
    client = docker_client()
    kwargs = container_kwargs(sandbox_image, SandboxLimits(), REAPER_COMMAND)
    real_start = Container.start

    def start_after_the_engine_stopped(self: Container, **start_kwargs: object) -> None:
        dockerd.stop()
        real_start(self, **start_kwargs)

    monkeypatch.setattr(Container, "start", start_after_the_engine_stopped)
    with pytest.raises(ENGINE_ERRORS):
        start_container(client, kwargs)
    monkeypatch.undo()
    remembered = UNREMOVED.snapshot()
    dockerd.start()
    half_made = dockerd.unstarted_sandboxes()
    assert len(half_made) == 1 and half_made[0] in remembered  # left `Created`, and known to be

    started = start_container(docker_client(), kwargs)  # the engine answers: the next create removes it
    try:
        assert dockerd.unstarted_sandboxes() == []
        assert half_made[0] not in UNREMOVED.snapshot()
    finally:
        remove_or_remember(client.api, started.id)


def test_a_restarted_engine_does_not_keep_the_callers_preload(dockerd, monkeypatch) -> None:
    """scripts/start_dockerd.sh drops LD_PRELOAD: the engine outlives its caller, and the vLLM engine's
    OpenMP preload, inherited once from a test that restarted dockerd, failed every container start after
    that test's .venv was removed ("ld.so: object ... cannot be preloaded")."""
    from pathlib import Path

    monkeypatch.setenv("LD_PRELOAD", "libm.so.6")  # any library the loader finds
    dockerd.stop()
    dockerd.start()
    pid = int(dockerd.PID_FILE.read_text().strip())
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not [entry for entry in environ if entry.startswith(b"LD_PRELOAD=")]
