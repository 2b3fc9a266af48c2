"""The shared chunk loop (flows/chunk_loop.py): chunks staged as they finish, one version at the commit, and a
chunk staged by an interrupted run reused with its totals instead of labelled again."""

from __future__ import annotations

from pathlib import Path

from prm_factory.flows.chunk_loop import ChunkLoop
from prm_factory.labels.tally import RunTally
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from tests.storage_fixtures import storage_fixtures


def test_a_second_loop_reuses_what_the_first_staged_and_commits_every_row_once(
    prefect_server: None, tmp_path: Path
) -> None:
    records = storage_fixtures().make_run("a", n_problems=4)
    root = str(tmp_path / "ds")
    halves = [records.problems[:2], records.problems[2:]]

    def work(problems):
        ids = {p.problem_id for p in problems}
        chains = [c for c in records.chains if c.problem_id in ids]
        steps = [s for s in records.steps if s.problem_id in ids]
        calls.append(len(problems))
        return lambda: (problems, chains, steps, RunTally.of(chains, steps))

    calls: list[int] = []
    first = ChunkLoop(root)
    assert first.chunk("rows-c0", work(halves[0])) is True  # then the first run dies before its commit
    assert Dataset(root).latest_version() is None

    second = ChunkLoop(root)
    assert second.chunk("rows-c0", work(halves[0])) is False and second.reused == 1
    assert second.chunk("rows-c1", work(halves[1])) is True
    assert second.tally.chains == len(records.chains) and second.tally.steps == len(records.steps)
    version = second.commit(records.run, [])
    assert version == Dataset(root).latest_version()
    steps = query(Dataset(root), "SELECT step_id FROM steps")["step_id"].to_pylist()
    assert sorted(steps) == sorted(s.step_id for s in records.steps)
    staging = tmp_path / "ds" / "_staging"
    assert not [p for p in staging.iterdir() if not p.name.startswith(".")]  # hidden: the commit lock


def test_without_resume_a_staged_chunk_is_labelled_again(prefect_server: None, tmp_path: Path) -> None:
    records = storage_fixtures().make_run("a", n_problems=1)
    made: list[int] = []

    def work():
        made.append(1)
        return records.problems, records.chains, records.steps, RunTally.of(records.chains, records.steps)

    root = str(tmp_path / "ds")
    ChunkLoop(root).chunk("rows-c0", work)
    loop = ChunkLoop(root, resume=False)
    assert loop.chunk("rows-c0", work) is True and len(made) == 2 and loop.reused == 0
