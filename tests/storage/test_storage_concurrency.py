"""Concurrent writers both land; a writer SIGKILLed at any point and rerun loses and doubles nothing."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query

TESTS_DIR = Path(__file__).parent
REPO = TESTS_DIR.parents[1]


def _commit(root: str, config_name: str, offset: int, barrier) -> int:
    sys.path.insert(0, str(TESTS_DIR))
    from conftest import make_run

    records = make_run(config_name, n_problems=20, problem_offset=offset)
    barrier.wait()
    return Dataset(root).commit_run(*records.args())


def test_concurrent_writers_both_commit(tmp_path, run_factory):
    root = str(tmp_path / "ds")  # empty: the writers also race to create the tables
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(3)
        with context.Pool(3) as pool:
            # bounded: a worker that dies unpickling its task is replaced and the task lost, so an unbounded
            # wait hangs the whole suite (tests/test_packaging.py names the cause seen once)
            writers = [(root, f"writer{i}", 100 * i, barrier) for i in range(3)]
            versions = pool.starmap_async(_commit, writers).get(timeout=300)
    dataset = Dataset(root)
    # deltalake lets racing creates each commit a CREATE TABLE (0, then 1, ...), so numbers may skip
    # those; what must hold is one distinct version per run, listed by `versions()` with its run.
    assert len(set(versions)) == 3 and max(versions) == dataset.latest_version()
    listed = {info.version: info.run_id for info in dataset.versions() if info.run_id}
    assert sorted(listed) == sorted(versions)
    counts = query(
        dataset, "SELECT count(*) AS n, count(DISTINCT step_id) AS d, count(DISTINCT run_id) AS r FROM steps"
    )
    assert counts.to_pylist() == [{"n": 3 * 120, "d": 3 * 120, "r": 3}]
    # every version shows exactly the runs committed up to it, each one complete
    for version in versions:
        per_run = query(dataset, "SELECT run_id, count(*) AS n FROM steps GROUP BY run_id", version=version)
        runs = query(dataset, "SELECT run_id FROM runs", version=version)
        committed_so_far = sum(1 for other in versions if other <= version)  # numbers may skip creates
        assert per_run.num_rows == runs.num_rows == committed_so_far
        assert set(per_run["n"].to_pylist()) == {120}


WRITER = textwrap.dedent(
    """
    import os, signal, sys, threading
    sys.path[:0] = [{repo!r}, {tests!r}]
    from conftest import make_run
    from prm_factory.storage import dataset as dataset_module
    from prm_factory.storage.dataset import Dataset

    when, _, where = {kill_at!r}.partition(":")

    def then_maybe_die(real_write):
        def write(uri, *args, **kwargs):
            # SIGKILL this process before, during (a few ms into) or after the write into table `where`
            here = uri.rstrip("/").rsplit("/", 1)[-1] == where
            if here and when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            if here and when == "during":
                threading.Timer(0.003, os.kill, (os.getpid(), signal.SIGKILL)).start()
            result = real_write(uri, *args, **kwargs)
            if here and when == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        return write

    # a local root appends absent keys under the commit lock (insert_rows); the runs row is merged
    dataset_module.insert_rows = then_maybe_die(dataset_module.insert_rows)
    dataset_module.merge_rows = then_maybe_die(dataset_module.merge_rows)
    records = make_run("killed-config", n_problems=60, chains_per_problem=4, steps_per_chain=5)
    Dataset({root!r}).commit_run(*records.args())
    """
)
KILL_POINTS = [
    "before:problems",
    "during:chains",
    "during:steps",
    "after:steps",
    "before:runs",
    "during:runs",
    "after:runs",
]


@pytest.mark.parametrize("kill_at", KILL_POINTS)
def test_sigkill_at_any_point_then_rerun_gives_the_uninterrupted_rows(tmp_path, run_factory, kill_at):
    root = str(tmp_path / "ds")
    Dataset(root).commit_run(*run_factory("earlier", problem_offset=500).args())
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            WRITER.format(repo=str(REPO), tests=str(TESTS_DIR), root=root, kill_at=kill_at),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    if kill_at not in ("during:runs", "after:runs"):  # a late timer may let the runs row land
        # nothing of the killed run is visible before it is run again
        assert query(Dataset(root), "SELECT count(*) AS n FROM steps").to_pylist() == [{"n": 12}]
    script = WRITER.format(repo=str(REPO), tests=str(TESTS_DIR), root=root, kill_at="never:")
    rerun = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    expected = run_factory("killed-config", n_problems=60, chains_per_problem=4, steps_per_chain=5)
    dataset = Dataset(root)
    for kind, records, key in (
        ("steps", expected.steps, "step_id"),
        ("chains", expected.chains, "chain_id"),
        ("problems", expected.problems, "problem_id"),
    ):
        rows = query(
            dataset,
            f"SELECT {key} FROM {kind} WHERE {key} IN (SELECT unnest($keys))".replace(
                "$keys", repr([getattr(r, key) for r in records])
            ),
        )[key].to_pylist()
        assert sorted(rows) == sorted(getattr(r, key) for r in records), kind
    total = query(dataset, "SELECT count(*) AS n, count(DISTINCT step_id) AS d FROM steps").to_pylist()
    assert total == [{"n": 1200 + 12, "d": 1200 + 12}]
    assert query(dataset, "SELECT count(*) AS n FROM runs").to_pylist() == [{"n": 2}]
