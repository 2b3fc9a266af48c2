"""Several processes, as `accelerate launch` starts them on GPUs, here on CPU (torchrun, gloo): the loader is
sharded, only the main process prints, a resume in as many processes continues exactly, and a checkpoint is
refused by another number of processes (each counts the batches it has done).

Slow (two torch.distributed launches of the tiny model, about a minute on a loaded 2-core machine); the same
code path as `accelerate launch --multi_gpu`, without a GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _train(out: Path, data: str, base: Path, processes: int, *extra: str) -> subprocess.CompletedProcess:
    args = ["-m", "prm_factory.cli", "train", "-o", str(out), "--dataset", data, "--label", "verifier"]
    args += ["--model", str(base), "--batch-size", "2", "--held-out", "0.5", "--max-length", "128"]
    args += ["--threads", "1", "--save-every", "2", "--epochs", "3", "--learning-rate", "1e-3", *extra]
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes)]
    command = [*launcher, *args] if processes > 1 else [sys.executable, *args]
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def test_two_processes_train_and_resume_exactly(tiny_token_classifier, committed_dataset, tmp_path) -> None:
    from safetensors.torch import load_file

    base = tiny_token_classifier(tmp_path / "tiny")
    data = committed_dataset(8).root
    straight = _train(tmp_path / "a", data, base, 2, "--max-steps", "3")
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert straight.stdout.count("step 3: mean train loss") == 1  # the main process only
    assert "12 train" in straight.stdout
    assert sorted(p.name for p in (tmp_path / "a" / "checkpoints" / "step-3").glob("random_states_*")) == [
        "random_states_0.pkl",
        "random_states_1.pkl",
    ]

    shutil.copytree(tmp_path / "a" / "checkpoints" / "step-2", tmp_path / "b" / "checkpoints" / "step-2")
    resumed = _train(tmp_path / "b", data, base, 2, "--max-steps", "3", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ours, theirs = (
        load_file(str(tmp_path / "a" / "model.safetensors")),
        load_file(str(tmp_path / "b" / "model.safetensors")),
    )
    assert all((ours[k] == theirs[k]).all() for k in ours)

    shutil.copytree(tmp_path / "a" / "checkpoints" / "step-2", tmp_path / "c" / "checkpoints" / "step-2")
    alone = _train(tmp_path / "c", data, base, 1, "--max-steps", "3", "--resume")
    assert alone.returncode == 1 and "number of processes" in alone.stdout + alone.stderr
