"""The verification runner a config asks for (flows/scaleout.py) and which problems a run picks
(flows/selection.py): the next unlabeled ones, with the rejected rows of what it read."""

from __future__ import annotations

import sys

import pytest

from prm_factory.config.run_config import ConfigError, RunConfig
from prm_factory.flows.scaleout import chunked, make_task_runner
from prm_factory.flows.selection import labeled_problem_ids, pick_fresh
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.storage.sql import query
from tests.storage_fixtures import committed_fixture_dataset


def config(**runner: object) -> RunConfig:
    return RunConfig.model_validate({"runner": runner})


def test_threads_keep_the_single_verify_task_processes_get_a_pool():
    assert make_task_runner(config(task_runner="threads")) is None
    pool = make_task_runner(config(task_runner="processes", workers=3))
    assert type(pool).__name__ == "ProcessPoolTaskRunner" and pool._max_workers == 3


def test_dask_runner_or_one_line_naming_the_missing_package(monkeypatch):
    try:
        import prefect_dask  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ConfigError, match="prefect-dask"):
            make_task_runner(config(task_runner="dask"))
    else:
        assert type(make_task_runner(config(task_runner="dask"))).__name__ == "DaskTaskRunner"
        monkeypatch.setitem(sys.modules, "prefect_dask", None)  # as if not installed
        with pytest.raises(ConfigError, match="pip install prefect-dask"):
            make_task_runner(config(task_runner="dask"))


def test_chunked_keeps_order_and_the_last_short_chunk():
    assert chunked(list(range(5)), 2) == [[0, 1], [2, 3], [4]]  # type: ignore[arg-type]
    assert chunked([], 2) == []


PROBLEMS = [Problem(f"id{i}", "s", "math", "q", source_line=i + 1) for i in range(4)]


def test_pick_fresh_skips_labeled_problems_and_later_rejections():
    bad = [RejectedRow("f", 3, "answer", "x"), RejectedRow("f", 9, "answer", "y")]
    picked, rejected = pick_fresh(PROBLEMS, bad, {"id0", "id1"}, 1)
    assert [p.problem_id for p in picked] == ["id2"] and [r.line for r in rejected] == [3]
    none_left, all_rejected = pick_fresh(PROBLEMS, bad, {p.problem_id for p in PROBLEMS}, 2)
    assert none_left == [] and all_rejected == bad


def test_labeled_problem_ids_reads_the_committed_chains(tmp_path):
    assert labeled_problem_ids(tmp_path / "nothing-here") == set()
    data = committed_fixture_dataset(tmp_path / "ds", n_problems=2)
    labeled = labeled_problem_ids(tmp_path / "ds")
    assert len(labeled) == 2
    assert labeled == set(query(data, "SELECT DISTINCT problem_id FROM problems")["problem_id"].to_pylist())
