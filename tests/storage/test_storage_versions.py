"""Naming versions (number, tag, time), listing them, and the headline stats."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
import typer
from typer.testing import CliRunner

from prm_factory.commands.dataset import register
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import UnknownVersionError
from prm_factory.storage.stats import headline_stats
from prm_factory.storage.versions import TagError, list_versions, resolve, set_tag, tags


@pytest.fixture
def dataset(tmp_path, run_factory) -> Dataset:
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*run_factory("a").args())
    data.commit_run(*run_factory("b", problem_offset=5, model="other-model").args())
    return data


def test_list_versions_with_runs_and_counts(dataset, run_factory):
    summaries = list_versions(dataset)
    assert [s.version for s in summaries] == [0, 1, 2]
    assert summaries[0].run_id is None and summaries[0].row_counts["steps"] == 0
    assert summaries[1].run_id == run_factory("a").run.run_id
    assert summaries[1].config_hash == run_factory("a").run.config_hash
    assert summaries[2].model == "other-model" and summaries[2].status == "succeeded"
    assert summaries[1].row_counts == {"runs": 1, "problems": 2, "chains": 4, "steps": 12, "rejections": 1}
    assert summaries[2].row_counts["steps"] == 24


def test_tags_name_versions_and_do_not_move_silently(dataset):
    assert set_tag(dataset, "release-1", 1) == 1
    assert resolve(dataset, "release-1") == 1
    assert resolve(dataset, "2") == 2
    with pytest.raises(TagError, match="already on version 1"):
        set_tag(dataset, "release-1", 2)
    set_tag(dataset, "release-1", 2, force=True)
    assert tags(dataset) == {"release-1": 2}
    with pytest.raises(TagError):
        set_tag(dataset, "7up", 1)  # would read as a number
    with pytest.raises(UnknownVersionError, match="neither a version number nor a tag"):
        resolve(dataset, "release-9")
    # tagging makes no dataset version
    assert dataset.latest_version() == 2
    assert [s.tags for s in list_versions(dataset, with_counts=False)] == [(), (), ("release-1",)]


def test_as_of_picks_the_last_version_committed_before(tmp_path, run_factory):
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*run_factory("a").args())
    time.sleep(0.05)
    between = datetime.now(UTC)
    time.sleep(0.05)
    data.commit_run(*run_factory("b", problem_offset=5).args())
    assert resolve(data, as_of=between) == 1
    assert resolve(data, as_of=between.isoformat()) == 1
    assert resolve(data, as_of=datetime.now(UTC).isoformat()) == 2
    with pytest.raises(UnknownVersionError, match="no dataset version"):
        resolve(data, as_of="2001-01-01")
    with pytest.raises(UnknownVersionError, match="not an ISO 8601"):
        resolve(data, as_of="yesterday-ish")


def test_headline_stats(dataset):
    stats = headline_stats(dataset, 1)
    assert stats["version"] == 1
    assert (stats["problems"], stats["chains"], stats["steps"], stats["runs"]) == (2, 4, 12, 1)
    assert stats["chain_accuracy"] == pytest.approx(0.5)
    assert stats["verdict_incorrect"] == 4 and stats["hard_negative"] == 4
    assert stats["agreement_rate"] == pytest.approx(1.0)
    assert stats["rollout_tokens"] == 12 * 120


def test_cli_versions_tag_stats(dataset):
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Group mode."""

    register(app)
    runner = CliRunner()
    result = runner.invoke(app, ["tag", "release-1", "--dataset", dataset.root, "--version", "1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["versions", "--dataset", dataset.root, "--format", "json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(v["version"], v["tags"], v["steps"]) for v in listed] == [
        (0, "", 0),
        (1, "release-1", 12),
        (2, "", 24),
    ]
    result = runner.invoke(
        app, ["stats", "--dataset", dataset.root, "--version", "release-1", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["steps"] == 12
    result = runner.invoke(
        app,
        [
            "query",
            "SELECT count(*) AS n FROM chains",
            "--dataset",
            dataset.root,
            "--version",
            "release-1",
            "--format",
            "json",
        ],
    )
    assert json.loads(result.stdout) == [{"n": 4}]
    result = runner.invoke(app, ["stats", "--dataset", dataset.root])
    assert result.exit_code == 0 and "chain_accuracy" in result.stdout
    result = runner.invoke(app, ["tag", "release-1", "--dataset", dataset.root])
    assert result.exit_code == 1 and "--force" in result.stderr
