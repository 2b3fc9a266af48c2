"""Compaction and retention keep current readers working and tagged versions readable."""

from __future__ import annotations

import pytest

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.maintenance import compact
from prm_factory.storage.sql import query
from prm_factory.storage.versions import set_tag
from prm_factory.storage.write_rules import WriteRules
from prm_factory.training.feed import StepFeed

SUMMARY = "SELECT count(*) AS n, sum(step_index) AS s, count(DISTINCT run_id) AS runs FROM steps"


@pytest.fixture
def dataset(tmp_path, run_factory) -> Dataset:
    data = Dataset(str(tmp_path / "ds"))
    for index in range(3):
        data.commit_run(*run_factory(f"run{index}", problem_offset=10 * index).args())
    return data


def test_compact_then_vacuum_keeps_current_version_readable(dataset, run_factory):
    before = query(dataset, SUMMARY).to_pylist()
    reports = {report.kind: report for report in compact(dataset, retention_hours=0)}
    assert reports["steps"].files_before == 3 and reports["steps"].files_after == 1
    assert reports["steps"].files_deleted == 3
    assert dataset.latest_version() == 3  # maintenance makes no dataset version
    assert query(dataset, SUMMARY).to_pylist() == before
    assert sum(batch.num_rows for batch in StepFeed(dataset, columns=["step_id"], output="arrow")) == 36
    # the next run lands on the compacted table as usual
    dataset.commit_run(*run_factory("after", problem_offset=50).args())
    assert query(dataset, "SELECT count(*) AS n FROM steps").to_pylist() == [{"n": 48}]
    assert [info.version for info in dataset.versions()] == [0, 1, 2, 3, 4]


def test_tagged_versions_survive_retention(dataset, run_factory):
    set_tag(dataset, "release-1", 3)
    dataset.commit_run(*run_factory("later", problem_offset=50).args())
    compact(dataset, retention_hours=0)
    assert query(dataset, "SELECT count(*) AS n FROM steps", version=3).to_pylist() == [{"n": 36}]
    assert query(dataset, "SELECT count(*) AS n FROM steps").to_pylist() == [{"n": 48}]


def test_compact_without_vacuum_deletes_nothing(dataset):
    reports = compact(dataset, retention_hours=None)
    assert all(report.files_deleted == 0 for report in reports)
    assert query(dataset, "SELECT count(*) AS n FROM steps", version=1).to_pylist() == [{"n": 12}]


def test_rows_of_an_uncommitted_run_stay_hidden_after_compaction_mixes_files(dataset, run_factory):
    from prm_factory.schemas.records import Step, to_table
    from prm_factory.storage.delta_io import merge_rows
    from prm_factory.storage.layout import KEYS

    killed = run_factory("killed", problem_offset=70)
    merge_rows(dataset.uri("steps"), to_table(Step, killed.steps), KEYS["steps"], WriteRules(),
               storage_options=None)  # fmt: skip
    compact(dataset, retention_hours=None)  # one file now holds committed and uncommitted rows
    assert query(dataset, "SELECT count(*) AS n FROM steps").to_pylist() == [{"n": 36}]
    ids = [i for b in StepFeed(dataset, columns=["step_id"], output="arrow") for i in b.column(0).to_pylist()]
    assert len(ids) == 36 and not {s.step_id for s in killed.steps} & set(ids)
