"""Workers forked from the process's preloaded fork server (verifiers/math/fork_server.py): forked, not
spawned; killed and reaped through their pidfd; a dead server is replaced; the caller's import path,
folder and environment reach a worker forked after they changed; a platform without the means spawns as
before; a forked copy of the caller starts its own server."""

from __future__ import annotations

import multiprocessing
import os
import resource
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from multiprocessing.queues import Queue
from pathlib import Path

import pytest

from prm_factory.verifiers.math import bounded, fork_server
from prm_factory.verifiers.math.bounded import FORK_SERVER, BoundedPool, PoolConfig, _Worker, run_items
from prm_factory.verifiers.math.fork_server import ForkedProcess, ForkServer

pytestmark = pytest.mark.skipif(not fork_server.supported(), reason="no fork, pidfds or fd passing here")
LIMIT_S = 30.0


def _state(pid: int) -> str | None:
    """The process's state letter (`Z`: ended, not reaped), None where it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
    except OSError:
        return None


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])


def test_a_worker_is_forked_by_the_server_with_sympy_imported_and_killed_through_its_pidfd() -> None:
    worker = _Worker(PoolConfig())
    try:
        assert isinstance(worker.process, ForkedProcess)
        server = FORK_SERVER._process
        assert server is not None and _parent(worker.process.pid) == server.pid != os.getpid()
        worker.conn.send(("prm_factory.verifiers.math.bounded:imported", ["sympy", "math_verify", "no_such"]))
        assert [worker.conn.recv() for _ in range(4)] == [
            ("item", True),
            ("item", True),
            ("item", False),
            ("done", None),
        ]
        pid = worker.process.pid
        assert worker.alive()
    finally:
        worker.kill()
    assert not worker.alive()
    for _ in range(100):  # the server reaps it on SIGCHLD: no zombie is left
        if _state(pid) is None:
            break
        time.sleep(0.05)
    assert _state(pid) is None


def test_a_dead_fork_server_is_started_again_and_its_workers_die_with_it() -> None:
    worker = _Worker(PoolConfig())
    server = FORK_SERVER._process
    assert server is not None and isinstance(worker.process, ForkedProcess)
    try:
        server.kill()
        server.wait(timeout=30)
        assert worker.process.wait(timeout=30) == 0  # the worker's watcher saw its parent go
        fresh = _Worker(PoolConfig())
        try:
            assert isinstance(fresh.process, ForkedProcess)
            assert FORK_SERVER._process is not None and FORK_SERVER._process.pid != server.pid
        finally:
            fresh.kill()
    finally:
        worker.kill()


def test_a_worker_forked_later_takes_the_callers_current_path_folder_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_items("builtins:iter", [[]], LIMIT_S)  # the server is up before the path changes
    (tmp_path / "fork_server_probe.py").write_text(
        textwrap.dedent(
            """
            import os

            def where(items):
                for _ in items:
                    yield os.getcwd(), os.environ.get("FORK_SERVER_PROBE")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORK_SERVER_PROBE", "set after the server started")
    pool = BoundedPool(PoolConfig())
    try:
        found = run_items("fork_server_probe:where", [1], LIMIT_S, pool)
        assert found == [(str(tmp_path), "set after the server started")]
    finally:
        pool.close()


def test_a_worker_takes_the_callers_path_in_its_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder the caller appended after its server started stays behind the ones before it, as in a
    spawned worker's PYTHONPATH (setuptools appends its `_vendor` folder, whose old typing_extensions once
    shadowed site-packages' in every forked worker)."""
    first, last = tmp_path / "first", tmp_path / "last"
    for folder in (first, last):
        folder.mkdir()
        (folder / "fork_order_probe.py").write_text(
            f"def which(items):\n    for _ in items:\n        yield {folder.name!r}\n"
        )
    monkeypatch.syspath_prepend(str(first))
    monkeypatch.setattr(bounded, "FORK_SERVER", ForkServer())  # started with `first` on its path
    try:
        run_items("builtins:iter", [[]], LIMIT_S, BoundedPool(PoolConfig()))
        monkeypatch.setattr(sys, "path", [*sys.path, str(last)])
        pool = BoundedPool(PoolConfig())
        try:
            assert run_items("fork_order_probe:which", [1], LIMIT_S, pool) == ["first"]
        finally:
            pool.close()
    finally:
        bounded.FORK_SERVER.close()


def test_a_forked_workers_cpu_reaches_the_callers_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As a spawned worker's does when its caller reaps it: the server reaps its workers, and the caller
    reaps the server (tests/phase_cpu.py and the suite's `time` count what the workers computed)."""
    monkeypatch.setattr(bounded, "FORK_SERVER", ForkServer())
    pool = BoundedPool(PoolConfig())
    try:
        run_items("builtins:iter", [[]], LIMIT_S, pool)  # the server is up, its imports counted apart
        before = _children_cpu()
        burnt = run_items(f"{__name__}:burn", [1.0], LIMIT_S, pool)
        assert burnt == [1.0]
    finally:
        pool.close()
        bounded.FORK_SERVER.close()
    assert _children_cpu() - before >= 0.9


def burn(items: list[float]) -> Iterator[float]:
    """In a worker: spend each item's seconds of CPU."""
    for seconds in items:
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
        yield seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_without_the_platforms_means_a_worker_is_a_fresh_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_server, "supported", lambda: False)
    worker = _Worker(PoolConfig())
    try:
        assert isinstance(worker.process, subprocess.Popen)
        assert _parent(worker.process.pid) == os.getpid()
    finally:
        worker.kill()
    off = _Worker(PoolConfig(fork_server=False))  # or when the pool asks for it
    try:
        assert isinstance(off.process, subprocess.Popen)
    finally:
        off.kill()


def _grade_in_a_forked_copy(results: Queue) -> None:
    pool = BoundedPool(PoolConfig())
    try:
        worker = _Worker(PoolConfig())
        worker.kill()
        server = bounded.FORK_SERVER._process
        outcome = run_items(
            "prm_factory.verifiers.math.answer_symbolic:answer_equivalence", [(r"\sqrt{4}", "2")], 60, pool
        )
        forked = isinstance(worker.process, ForkedProcess)
        results.put((outcome[0][0], server.pid if server else None, forked))
    except BaseException as exc:  # reported to the parent, which fails the test with it
        results.put(f"{type(exc).__name__}: {exc}")
    finally:
        pool.close()


def test_a_forked_copy_of_the_caller_starts_its_own_server() -> None:
    """A `fork` start method (Dask's, multiprocessing's default here) copies the server's socket too; the
    copy must not share the parent's server, whose answers would go to whichever reads first."""
    run_items("builtins:iter", [[]], LIMIT_S)
    ours = FORK_SERVER._process
    assert ours is not None
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    process = context.Process(target=_grade_in_a_forked_copy, args=(results,))
    process.start()
    try:
        grade, their_server, forked = results.get(timeout=180)
    finally:
        process.join(timeout=30)
    assert (grade, forked) == ("correct", True)
    assert their_server not in (None, ours.pid)
    assert FORK_SERVER._process is ours and ours.poll() is None  # the parent's server is untouched
    assert sys.modules["prm_factory.verifiers.math.bounded"] is bounded
