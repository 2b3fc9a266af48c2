"""The torch feed: every row exactly once across workers and ranks, spawn and fork, following versions."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from prm_factory.storage.dataset import Dataset
from prm_factory.training.feed import StepFeed, shard_units


@pytest.fixture
def dataset(tmp_path, run_factory) -> Dataset:
    data = Dataset(str(tmp_path / "ds"))
    for index in range(4):  # four runs -> several Parquet files (row groups) per table
        data.commit_run(*run_factory(f"run{index}", n_problems=3, problem_offset=10 * index).args())
    return data


def _step_ids(loader) -> list[str]:
    ids: list[str] = []
    for batch in loader:
        ids.extend(batch["step_id"])
    return ids


def test_shard_units_partition():
    units = list(range(10))
    shards = [shard_units(units, shard, 3, seed=5) for shard in range(3)]
    assert sorted(u for shard in shards for u in shard) == units
    assert shard_units(units, 0, 3, seed=5) == shards[0]  # same seed, same deal


FEED_SCRIPT = """
import json, sys
from torch.utils.data import DataLoader
from prm_factory.storage.dataset import Dataset
from prm_factory.training.feed import StepFeed
feed = StepFeed(Dataset(sys.argv[1]), kind="steps", columns=["step_id", "mc_value"], batch_size=5)
loader = DataLoader(feed, batch_size=None, num_workers=2, multiprocessing_context=sys.argv[2])
print(json.dumps([i for batch in loader for i in batch["step_id"]]))
"""


@pytest.mark.parametrize("context", ["spawn", "fork"])
def test_dataloader_workers_read_every_step_once(dataset, context):
    """Run in a fresh interpreter, as a training job is: this pytest process may also host a vLLM engine
    and other OpenMP/tokio threads, after which no library survives a fork."""
    feed = StepFeed(dataset, kind="steps", columns=["step_id"], batch_size=5)
    assert len(feed.plan.units) >= 4
    result = subprocess.run(
        [sys.executable, "-c", FEED_SCRIPT, dataset.root, context],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ids = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(ids) == len(set(ids)) == 4 * 3 * 2 * 3


def test_ranks_split_without_overlap(dataset):
    per_rank = [
        set(_step_ids(StepFeed(dataset, columns=["step_id"], rank=rank, world_size=2, shuffle_seed=1)))
        for rank in range(2)
    ]
    assert not per_rank[0] & per_rank[1]
    assert len(per_rank[0] | per_rank[1]) == 72
    assert per_rank[0] and per_rank[1]


def test_torch_batches_types_and_nulls(dataset):
    batch = next(
        iter(StepFeed(dataset, columns=["mc_value", "hard_label", "step_index", "text"], batch_size=6))
    )
    assert batch["mc_value"].dtype == torch.float64 and batch["step_index"].dtype == torch.int64
    assert batch["hard_label"].dtype == torch.int8 and set(batch["hard_label"].tolist()) <= {-1, 0, 1}
    assert torch.isnan(batch["mc_value"]).any() == (batch["hard_label"] == -1).any()
    assert isinstance(batch["text"], list) and len(batch["text"]) == len(batch["mc_value"])


def test_old_version_and_arrow_output(dataset):
    feed = StepFeed(dataset, version=1, columns=["step_id", "run_id"], output="arrow")
    rows = sum(batch.num_rows for batch in feed)
    assert rows == 18
    chains = StepFeed(dataset, kind="chains", columns=["chain_id"], output="arrow")
    assert sum(batch.num_rows for batch in chains) == 24


def test_follow_streams_fresh_runs(dataset, run_factory):
    feed = StepFeed(dataset, columns=["step_id", "run_id"], follow=True, poll_seconds=0.05, max_versions=1)
    seen: list[str] = []

    def consume() -> None:
        seen.extend(_step_ids(feed))

    reader = threading.Thread(target=consume)
    reader.start()
    time.sleep(0.5)
    fresh = run_factory("fresh", n_problems=1, problem_offset=100)
    dataset.commit_run(*fresh.args())
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert len(seen) == len(set(seen)) == 72 + 6
    assert set(seen[-6:]) == {step.step_id for step in fresh.steps}
