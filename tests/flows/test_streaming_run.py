"""Streaming runs: each chunk's rows are staged as the chunk finishes, become visible only when the run
commits, and no chunk's records outlive it (the real flow over the fake engine, tests/flows/conftest.py)."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from prm_factory.flows.generation_run import generation_run, run_generation
from prm_factory.labels.assemble import SampledChain
from prm_factory.schemas.records import Chain, Step
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from prm_factory.storage.staging import STAGING_DIR


def staged_chunks(root: Path) -> list[Path]:
    staging = root / STAGING_DIR
    return sorted(p for p in staging.iterdir() if not p.name.startswith(".")) if staging.exists() else []


def live() -> tuple[int, int, int]:
    """Sampled chains, chain records and step records alive in this process."""
    gc.collect()
    kinds = (SampledChain, Chain, Step)
    return tuple(sum(1 for obj in gc.get_objects() if type(obj) is kind) for kind in kinds)  # type: ignore[return-value]


def settled(expected: tuple[int, int, int], timeout: float = 5.0) -> tuple[int, int, int]:
    """Records alive once background threads have let go of them, or the last count after `timeout`.

    Prefect's own worker threads may still be walking a finished task's arguments (a list of the chunk's
    chain records under iteration) for a moment after the task returns; the flow itself holds nothing. A
    record the flow kept would stay alive past the timeout, and the test would still fail.
    """
    deadline = time.monotonic() + timeout
    while (counts := live()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return counts


def visible_chains(root: Path) -> int:
    dataset = Dataset(str(root))
    return query(dataset, "SELECT count(*) AS n FROM chains")["n"][0].as_py() if dataset.exists() else 0


def test_chunks_are_staged_as_they_finish_and_seen_only_once_the_run_commits(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import prm_factory.flows.chunk_loop as loop
    import prm_factory.flows.tasks as gen

    root = tmp_path / "ds"
    at_sample: list[tuple[int, tuple[int, int, int]]] = []  # (chunks staged, records alive) per chunk
    at_commit: dict[str, object] = {}
    real_draw, real_commit = gen.draw_chains, loop.commit_staged_task

    def draw_chains(*args, **kwargs):
        at_sample.append((len(staged_chunks(root)), settled(before)))
        return real_draw(*args, **kwargs)

    def commit(*args, **kwargs):
        at_commit["files"] = [sorted(f.name for f in d.iterdir()) for d in staged_chunks(root)]
        at_commit["live"] = settled(before)  # the commit reads the rows from disk
        at_commit["visible"] = visible_chains(root)
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(gen, "draw_chains", draw_chains)
    monkeypatch.setattr(loop, "commit_staged_task", commit)  # the run commits through its chunk loop
    before = live()  # records earlier tests left behind
    summary = generation_run(flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2}))

    assert summary.status == "succeeded", summary.error
    # each chunk starts with the chunks before it on disk and none of their records in memory
    assert at_sample == [(0, before), (1, before)]
    assert at_commit["live"] == before and at_commit["visible"] == 0
    assert at_commit["files"] == [["chains.parquet", "problems.parquet", "steps.parquet", "tally.json"]] * 2
    assert staged_chunks(root) == []  # committed chunks are removed
    assert visible_chains(root) == summary.chains == 8
    rows = query(Dataset(str(root)), "SELECT DISTINCT run_id FROM steps")["run_id"].to_pylist()
    assert rows == [summary.run_id] and summary.tally.steps == summary.steps > 0


def test_a_run_killed_after_a_chunk_reuses_its_staged_rows_without_the_engine(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    cfg = flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2})
    fake_engine.fail_in, fake_engine.ok_calls = {"sample"}, {"sample": 1}  # the second chunk dies sampling
    crashed = run_generation(cfg)
    assert crashed.status == "failed"
    assert len(staged_chunks(tmp_path / "ds")) == 1  # the first chunk's rows wait for the rerun
    assert Dataset(str(tmp_path / "ds")).tables()["chains"].count_rows() == 0  # and are not visible

    fake_engine.fail_in = set()
    rollout_calls = fake_engine.calls.get("rollouts", 0)
    resumed = generation_run(cfg)
    assert resumed.status == "succeeded", resumed.error
    assert fake_engine.calls["rollouts"] == rollout_calls + 1  # only the second chunk drew rollouts
    clean = generation_run(flow_config(**{"problems.limit": 4, "dataset.root": str(tmp_path / "clean")}))
    assert (resumed.chains, resumed.steps, resumed.tally.labels) == (
        clean.chains,
        clean.steps,
        clean.tally.labels,
    )
    assert staged_chunks(tmp_path / "ds") == []
