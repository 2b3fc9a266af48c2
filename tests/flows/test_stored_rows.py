"""A version's chains, problems and steps read back as a sorted stream (flows/stored_rows.py): every chain
once, with its own problem and steps in step order, whole problems per chunk, the same records the version
holds; what `relabel` walks instead of loading the version's tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.flows import stored_rows
from prm_factory.flows.stored_rows import committed_rows, stored_chains, stored_chunks
from tests.storage_fixtures import storage_fixtures


def _dataset(tmp_path: Path, n_problems: int = 5):
    from prm_factory.storage.dataset import Dataset

    records = storage_fixtures().make_run("a", n_problems=n_problems)
    dataset = Dataset(str(tmp_path / "ds"))
    version = dataset.commit_run(*records.args())
    return dataset, version, records


def test_every_chain_comes_once_with_its_problem_and_its_steps_in_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(stored_rows, "BATCH_ROWS", 3)  # records cross DuckDB's batch boundaries
    monkeypatch.setattr(stored_rows, "RANGE_CHAINS", 3)  # ranges of two problems' chains,
    monkeypatch.setattr(stored_rows, "RANGES_PER_GROUP", 2)  # in groups of two ranges: three groups
    dataset, version, records = _dataset(tmp_path)
    items = list(stored_chains(dataset.root, version))
    assert sorted(i.chain.chain_id for i in items) == sorted(c.chain_id for c in records.chains)
    assert [i.problem.problem_id for i in items] == sorted(i.problem.problem_id for i in items)
    steps_of = {c.chain_id: [s for s in records.steps if s.chain_id == c.chain_id] for c in records.chains}
    for item in items:
        assert item.problem.problem_id == item.chain.problem_id
        assert [s.step_id for s in item.steps] == [
            s.step_id for s in sorted(steps_of[item.chain.chain_id], key=lambda s: s.step_index)
        ]
        assert [s.labels for s in item.steps] == [
            s.labels for s in sorted(steps_of[item.chain.chain_id], key=lambda s: s.step_index)
        ]


@pytest.mark.parametrize("ranges_per_group", [1, 2, 8])
def test_chunks_hold_whole_problems(tmp_path: Path, monkeypatch, ranges_per_group: int) -> None:
    monkeypatch.setattr(stored_rows, "RANGES_PER_GROUP", ranges_per_group)
    dataset, version, records = _dataset(tmp_path)
    parts = list(stored_chunks(dataset.root, version, size=3))
    assert sum(len(p) for p in parts) == len(records.chains) and len(parts) > 1
    seen: set[str] = set()
    for part in parts:
        problems = {i.problem.problem_id for i in part}
        assert not problems & seen  # a problem's chains never split across two chunks
        seen |= problems
        assert len(part) >= 3 or part is parts[-1]


def test_a_chain_without_its_problem_is_named_not_relabelled(tmp_path: Path) -> None:
    import dataclasses

    from prm_factory.storage.dataset import Dataset

    records = storage_fixtures().make_run("a", n_problems=2)
    kept = records.problems[1:]
    dataset = Dataset(str(tmp_path / "ds"))
    records = dataclasses.replace(records, problems=kept)
    version = dataset.commit_run(*records.args())
    orphans: list[str] = []
    items = list(stored_chains(dataset.root, version, orphans))
    lost = {c.chain_id for c in records.chains if c.problem_id not in {p.problem_id for p in kept}}
    assert set(orphans) == lost and lost
    assert {i.chain.chain_id for i in items} == {c.chain_id for c in records.chains} - lost


def test_committed_rows_are_one_runs_rows(tmp_path: Path) -> None:
    dataset, version, records = _dataset(tmp_path, n_problems=2)
    chains = committed_rows(dataset.root, version, records.run.run_id, "chains")
    assert sorted(c.chain_id for c in chains) == sorted(c.chain_id for c in records.chains)
    assert committed_rows(dataset.root, version, "another-run", "steps") == []
