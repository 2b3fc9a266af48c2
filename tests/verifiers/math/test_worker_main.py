"""The bounded worker's entry point
(`python -m prm_factory.verifiers.math.worker_main READ_FD WRITE_FD MEMORY_MB`),
run as the pool runs it: it says ready, streams a generator's items, reports a failing call as an error and
lives on, and exits when the parent says stop."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection

import pytest


def test_worker_streams_items_reports_errors_and_stops():
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prm_factory.verifiers.math.worker_main",
            str(to_child_r),
            str(from_child_w),
            "0",
        ],
        pass_fds=(to_child_r, from_child_w),
        stdin=subprocess.DEVNULL,
    )
    os.close(to_child_r)
    os.close(from_child_w)
    reader, writer = Connection(from_child_r, writable=False), Connection(to_child_w, readable=False)
    try:
        assert reader.poll(120), "worker did not start"
        assert reader.recv() == ("ready", None)
        writer.send(("builtins:iter", [1, 2]))
        assert [reader.recv() for _ in range(3)] == [("item", 1), ("item", 2), ("done", None)]
        writer.send(("builtins:int", "not a number"))
        kind, message = reader.recv()
        assert kind == "error" and message.startswith("ValueError")
        writer.send(("builtins:iter", []))  # still alive after the error
        assert reader.recv() == ("done", None)
        writer.send(None)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        reader.close()
        writer.close()


PARENT = """
import sys
import time
from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig
pool = BoundedPool(PoolConfig(workers=1, fork_server=sys.argv[1] == "forked"))
list(pool.run_stream("builtins:iter", [], 0, 120.0))  # the worker starts
worker = pool._idle.get()
pool._idle.put(worker)
print(worker.process.pid, flush=True)
list(pool.run_stream("math:factorial", 10**8, 1, 600.0))  # one C call that holds the GIL for minutes
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"  # a zombie has ended
    except OSError:
        return False


@pytest.mark.parametrize("start", ["forked", "spawned"])
def test_a_worker_busy_in_c_code_dies_with_its_parent(start: str):
    """Its own watch thread cannot run then (tests/reward/test_budget.py's bomb once ran on, orphaned).
    A forked worker's parent is the fork server, which dies with the pool's process: the chain holds."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, start], stdout=subprocess.PIPE, text=True)
    worker = 0
    try:
        worker = int(parent.stdout.readline())
        time.sleep(2.0)  # the factorial is under way in the worker
        assert _running(worker)
        parent.kill()
        parent.wait(timeout=30)
        for _ in range(300):  # the watcher polls twice a second; wait without timing it
            if not _running(worker):
                break
            time.sleep(0.1)
        assert not _running(worker), "the worker outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if worker and _running(worker):
            os.kill(worker, 9)
