"""A local dataset's commits take turns on one lock file (so a commit may append absent keys); a lock held
by a killed writer is free again; an object store has no lock and keeps merging."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from deltalake import DeltaTable

from prm_factory.storage.commit_lock import LOCK_FILE, commit_lock, local_root
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.staging import staging_root

HOLDER = """
import sys, time
from prm_factory.storage.commit_lock import commit_lock
with commit_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold(root, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_writer_waits_for_the_first(tmp_path):
    holder = _hold(tmp_path, 1.5)
    started = time.monotonic()
    with commit_lock(str(tmp_path)) as locked:
        waited = time.monotonic() - started
        assert locked
    assert waited > 1.0  # the holder kept it 1.5 s after saying so
    holder.wait(timeout=30)
    assert (staging_root(tmp_path) / LOCK_FILE).is_file()


def test_a_killed_holder_frees_the_lock(tmp_path):
    holder = _hold(tmp_path, 600)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    with commit_lock(str(tmp_path)) as locked:
        assert locked


def test_an_object_store_root_has_no_lock():
    with commit_lock("s3://bucket/ds") as locked:
        assert not locked
    assert local_root("s3://bucket/ds") is None and str(local_root("/data/ds")) == "/data/ds"


def test_a_local_commit_appends_the_rows_a_table_lacks(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("first").args())
    dataset.commit_run(*run_factory("second", problem_offset=100).args())
    for kind in ("problems", "chains", "steps"):
        operations = {entry["operation"] for entry in DeltaTable(dataset.uri(kind)).history()}
        assert operations == {"CREATE TABLE", "WRITE"}, kind
