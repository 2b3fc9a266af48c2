"""`prm-factory train` on the embedded SmolLM2-135M, no TRL: 2 optimiser steps, a resume for 1 more, and
`prm-factory score` on ProcessBench-shape chains.

The dataset is the storage tests' fixture records (no vLLM engine), committed as one version; the run goes
through the CLI as a user would type it.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prm_factory.commands.train import register
from tests.storage_fixtures import committed_fixture_dataset

pytestmark = pytest.mark.slow


def test_train_resume_and_score_smollm2(tmp_path, command_app) -> None:
    import torch

    from prm_factory.training.trainer import latest_checkpoint

    torch.set_num_threads(2)
    data = committed_fixture_dataset(tmp_path / "ds", n_problems=4)
    app = command_app(register)
    out = tmp_path / "prm"
    train = ["train", "-o", str(out), "--dataset", data.root, "--label", "verifier", "--batch-size", "2"]
    train += [
        "--held-out",
        "0.5",
        "--max-length",
        "256",
        "--learning-rate",
        "1e-4",
        "--keep-checkpoints",
        "1",
        "--epochs",
        "2",  # 4 training chains, batch 2: 2 steps an epoch
    ]

    first = CliRunner().invoke(app, [*train, "--max-steps", "2"])
    assert first.exit_code == 0, first.output
    assert "step 2: mean train loss" in first.output and "held out:" in first.output
    assert latest_checkpoint(out).name == "step-2"

    resumed = CliRunner().invoke(app, [*train, "--max-steps", "3", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "resumed from" in resumed.output and "step 3: mean train loss" in resumed.output
    assert latest_checkpoint(out).name == "step-3"
    assert not (out / "checkpoints" / "step-2").exists()  # --keep-checkpoints 1
    card = (out / "README.md").read_text()
    assert (
        f"`{data.root}`, version 1" in card
        and "label source: `verifier`" in card
        and "3 optimiser steps" in card
    )
    assert json.loads((out / "prm_factory.json").read_text())["global_step"] == 3

    chains = tmp_path / "chains.jsonl"
    rows = [
        {"id": "a", "problem": "What is 2 + 2?", "steps": ["2 + 2 = 4.", "The answer is 4."], "label": -1},
        {"id": "b", "problem": "What is 3 * 3?", "steps": ["3 * 3 = 6.", "So 6.", "#### 6"], "label": 0},
    ]
    chains.write_text("".join(json.dumps(row) + "\n" for row in rows))
    scored = CliRunner().invoke(app, ["score", str(out), str(chains), "-o", str(tmp_path / "scores.jsonl")])
    assert scored.exit_code == 0, scored.output
    assert "2 chains scored" in scored.output and "first-error F1" in scored.output
    records = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [len(r["scores"]) for r in records] == [2, 3]
