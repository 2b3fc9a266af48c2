from pathlib import Path

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.stats import headline_stats, run_costs


def test_run_costs_labels_per_hour_and_tokens_per_label(tmp_path: Path, run_factory) -> None:
    dataset = Dataset(str(tmp_path / "ds"))
    first = run_factory("a", n_problems=2, chains_per_problem=2, steps_per_chain=3)  # 12 steps in 60 s
    second = run_factory("b", n_problems=1, chains_per_problem=1, steps_per_chain=2, problem_offset=5)
    dataset.commit_run(*first.args())
    version = dataset.commit_run(*second.args())
    costs = {row["run_id"]: row for row in run_costs(dataset, version)}
    a = costs[first.run.run_id]
    assert (a["wall_seconds"], a["step_labels"], a["rollout_labels"]) == (60, 12, 12)
    assert a["labels_per_hour"] == 12 * 60.0
    assert a["rollouts"] == 48 and a["rollout_tokens"] == 12 * 120
    assert a["tokens_per_rollout_label"] == 120.0 and a["engine_seconds_per_rollout_label"] == 0.5
    assert costs[second.run.run_id]["step_labels"] == 2
    only = run_costs(dataset, version, second.run.run_id)
    assert [row["run_id"] for row in only] == [second.run.run_id]
    assert run_costs(dataset, version, "missing") == []
    assert headline_stats(dataset, version)["steps"] == 14


def test_run_costs_raise_no_warning(tmp_path: Path, run_factory) -> None:
    import warnings

    dataset = Dataset(str(tmp_path / "ds"))
    version = dataset.commit_run(*run_factory("a", n_problems=1).args())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `prm-factory stats` printed DuckDB's UserWarning on every call
        assert len(run_costs(dataset, version)) == 1
