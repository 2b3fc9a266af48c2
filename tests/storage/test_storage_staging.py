"""Staged chunks (storage/staging.py) and their commit: one version, the same rows as an in-memory commit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from deltalake import DeltaTable

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from prm_factory.storage.staging import chunk_dir, is_staged, read_note, stage_chunk, staged_batches


def _rows(dataset: Dataset, sql: str) -> list[dict]:
    return sorted(query(dataset, sql).to_pylist(), key=str)


def test_staged_chunks_commit_as_one_version_equal_to_an_in_memory_commit(
    tmp_path: Path, run_factory
) -> None:
    records = run_factory("cfg", n_problems=4)
    staged_root, memory_root = tmp_path / "staged", tmp_path / "memory"
    dataset = Dataset(str(staged_root))
    chunks = []
    for index, problems in enumerate([records.problems[:2], records.problems[2:]]):
        ids = {p.problem_id for p in problems}
        chains = [c for c in records.chains if c.problem_id in ids]
        steps = [s for s in records.steps if s.problem_id in ids]
        directory = chunk_dir(staged_root, f"rows-test-c{index}")
        stage_chunk(directory, dataset.chunk_tables(problems, chains, steps), {"note.txt": f"chunk {index}"})
        chunks.append(directory)
    assert all(is_staged(d) for d in chunks) and read_note(chunks[1], "note.txt") == "chunk 1"
    assert not dataset.exists()  # staged rows are not a dataset version

    version = dataset.commit_staged(records.run, chunks, records.rejections)
    Dataset(str(memory_root)).commit_run(*records.args())
    assert version == dataset.latest_version() and len(dataset.versions()) == 2  # empty + this run
    assert not any(d.exists() for d in chunks)  # removed once committed
    for sql in ("SELECT * EXCLUDE (run_id) FROM steps", "SELECT * FROM chains", "SELECT * FROM problems"):
        assert _rows(dataset, sql) == _rows(Dataset(str(memory_root)), sql)


def test_staged_rows_take_the_committing_runs_id(tmp_path: Path, run_factory) -> None:
    records = run_factory("cfg", n_problems=1)
    dataset = Dataset(str(tmp_path / "ds"))
    directory = chunk_dir(tmp_path / "ds", "rows-reused")
    stage_chunk(directory, dataset.chunk_tables(records.problems, records.chains, records.steps))
    rerun = dataclasses.replace(records.run, run_id="a-later-run")
    dataset.commit_staged(rerun, [directory], [])
    assert query(dataset, "SELECT DISTINCT run_id FROM chains")["run_id"].to_pylist() == ["a-later-run"]
    assert query(dataset, "SELECT DISTINCT run_id FROM steps")["run_id"].to_pylist() == ["a-later-run"]


def test_a_chunk_staged_twice_keeps_the_first_and_leaves_no_partial_directory(
    tmp_path: Path, run_factory
) -> None:
    records = run_factory("cfg", n_problems=1)
    dataset = Dataset(str(tmp_path / "ds"))
    directory = chunk_dir(tmp_path / "ds", "rows-same")
    stage_chunk(directory, dataset.chunk_tables(records.problems, records.chains, records.steps), {"n": "1"})
    stage_chunk(directory, dataset.chunk_tables(records.problems, [], []), {"n": "2"})
    assert read_note(directory, "n") == "1"
    assert [p.name for p in directory.parent.iterdir()] == ["rows-same"]


def test_a_commit_merged_in_small_batches_keeps_every_row(tmp_path: Path, run_factory, monkeypatch) -> None:
    """The commit merges staged rows a batch at a time (bounded memory); the rows are those of one merge."""
    from prm_factory.storage import dataset as dataset_module

    monkeypatch.setattr(dataset_module, "COMMIT_BATCH_ROWS", 3)
    records = run_factory("cfg", n_problems=4)
    dataset = Dataset(str(tmp_path / "staged"))
    chunks = []
    for index, problem in enumerate(records.problems):
        chains = [c for c in records.chains if c.problem_id == problem.problem_id]
        steps = [s for s in records.steps if s.problem_id == problem.problem_id]
        directory = chunk_dir(tmp_path / "staged", f"rows-c{index}")
        stage_chunk(directory, dataset.chunk_tables([problem], chains, steps))
        chunks.append(directory)
    groups = list(staged_batches(chunks, "steps", 3))
    assert len(groups) > 1 and [d for g in groups for d in g] == chunks
    dataset.commit_staged(records.run, chunks, [])
    memory = Dataset(str(tmp_path / "memory"))
    memory.commit_run(*records.args())
    for sql in ("SELECT * EXCLUDE (run_id) FROM steps", "SELECT * FROM chains", "SELECT * FROM problems"):
        assert _rows(dataset, sql) == _rows(memory, sql)
    assert len(dataset.versions()) == 2  # one dataset version, however many merges it took


def test_a_relabel_commit_rewrites_the_tables_to_the_rows_merges_would_leave(
    tmp_path: Path, run_factory, monkeypatch
) -> None:
    """`replaces=True` (relabel) writes chains and steps by one streamed rewrite per table: the same rows
    as batch-by-batch merges, in one table version each, and the version before it still reads as it was."""
    from prm_factory.storage import dataset as dataset_module

    monkeypatch.setattr(dataset_module, "COMMIT_BATCH_ROWS", 5)
    first, other = run_factory("cfg", n_problems=4), run_factory("other", n_problems=2, problem_offset=50)
    relabelled = [dataclasses.replace(s, step_id=f"{s.step_id}-v2") for s in first.steps[::2]]
    run = dataclasses.replace(first.run, run_id="the-relabel")
    results = {}
    for replaces in (False, True):
        root = tmp_path / f"replaces-{replaces}"
        dataset = Dataset(str(root))
        dataset.commit_run(*first.args())
        dataset.commit_run(*other.args())
        directory = chunk_dir(root, "rows-relabel")
        stage_chunk(directory, dataset.chunk_tables(first.problems, first.chains, relabelled))
        version = dataset.commit_staged(run, [directory], [], replaces=replaces)
        results[replaces] = {
            sql: _rows(dataset, sql)
            for sql in ("SELECT * FROM steps", "SELECT * FROM chains", "SELECT * FROM problems")
        }
        before = query(dataset, "SELECT step_id FROM steps", version=version - 1)["step_id"].to_pylist()
        assert sorted(before) == sorted(s.step_id for s in first.steps + other.steps)
        steps_history = DeltaTable(dataset.uri("steps")).history()
        if replaces:
            assert steps_history[0]["operationParameters"]["mode"] == "Overwrite"
    assert results[True] == results[False]
    steps = {r["step_id"] for r in results[True]["SELECT * FROM steps"]}
    assert {s.step_id for s in relabelled} <= steps and len(steps) == len(first.steps) + len(other.steps)
