"""The bounded worker's entry point
(`python -m prm_factory.verifiers.math.worker_main READ_FD WRITE_FD MEMORY_MB`),
run as the pool runs it: it says ready, streams a generator's items, reports a failing call as an error and
lives on, and exits when the parent says stop."""

from __future__ import annotations

import os
import subprocess
import sys
from multiprocessing.connection import Connection


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
