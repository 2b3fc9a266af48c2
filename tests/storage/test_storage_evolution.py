"""Schema evolution: a column added by a later release keeps old versions readable everywhere."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from prm_factory.schemas.records import Step
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from prm_factory.training.feed import StepFeed


@dataclass(frozen=True)
class StepNextRelease(Step):
    """What `Step` might look like one release later: one more (nullable) column."""

    step_entropy: float | None = None


def _fields(step: Step) -> dict:
    """A step's fields, its labels kept as `StepLabel`s (`dataclasses.asdict` would turn them into dicts)."""
    return {field.name: getattr(step, field.name) for field in dataclasses.fields(step)}


def test_added_column_keeps_old_versions_readable(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("old").args())
    newer = run_factory("new", problem_offset=5)
    newer.steps = [StepNextRelease(**_fields(step), step_entropy=0.5) for step in newer.steps]
    assert dataset.commit_run(*newer.args()) == 2

    old_columns = dataset.tables(1)["steps"].schema.names
    assert "step_entropy" not in old_columns
    assert query(dataset, "SELECT count(*) AS n FROM steps", version=1).to_pylist() == [{"n": 12}]
    assert query(dataset, "SELECT count(*) AS n FROM label_stats", version=1).num_rows == 1

    rows = query(
        dataset,
        "SELECT run_id, count(step_entropy) AS n_set, count(*) AS n FROM steps GROUP BY ALL ORDER BY n_set",
    ).to_pylist()
    assert [(row["n_set"], row["n"]) for row in rows] == [(0, 12), (12, 12)]

    # the feed reads old files with the new schema: the new column is null there
    entropy = [
        value
        for batch in StepFeed(dataset, columns=["step_entropy"], output="arrow")
        for value in batch.column(0).to_pylist()
    ]
    assert sorted(entropy, key=lambda v: v is None) == [0.5] * 12 + [None] * 12

    # a release that drops the column again still writes (the column is filled with nulls)
    dataset.commit_run(*run_factory("after", problem_offset=9).args())
    assert query(dataset, "SELECT count(*) AS n FROM steps WHERE step_entropy IS NULL").to_pylist() == [
        {"n": 24}
    ]
