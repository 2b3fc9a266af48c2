"""TRL's real PRM trainer on `prm-factory export trl` output: the labels it trains on are the exported ones.

A tiny dataset from the storage fixtures (no vLLM engine) is exported by the CLI with the tokenizer check,
loaded and trained by `examples/train_prm_trl.py`'s functions for one epoch; every batch the trainer
computes a loss on is recorded, so a label shifted, dropped or cut anywhere between export and loss fails.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prm_factory.commands.dataset import register
from prm_factory.storage.dataset import Dataset

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
IGNORED = -100


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_prm_trainer_trains_on_exactly_the_exported_labels(tmp_path, command_app) -> None:
    from prm_factory.sampling.model_prep import prepare_default_model

    fixtures = _module("storage_test_fixtures", REPO / "tests" / "storage" / "conftest.py")
    example = _module("train_prm_trl", REPO / "examples" / "train_prm_trl.py")
    from trl.experimental.prm import PRMTrainer

    records = fixtures.make_run("a", n_problems=2)
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*records.args())
    # the truth, from the records rather than the export: each chain's verifier labels in step order
    truth = sorted(
        [
            int(s.label("verifier").verdict == "correct")
            for s in sorted(records.steps, key=lambda s: s.step_index)
            if s.chain_id == c
        ]
        for c in {s.chain_id for s in records.steps}
    )
    model_dir, export = prepare_default_model(), tmp_path / "trl.parquet"
    exported = CliRunner().invoke(
        command_app(register),
        ["export", "trl", "-o", str(export), "--dataset", data.root, "--label", "verifier"]
        + ["--check-tokenizer", str(model_dir), "--max-length", "256"],
    )
    assert exported.exit_code == 0, exported.output

    rows = example.load_rows(export)
    assert sorted([int(label) for label in row] for row in rows["labels"]) == truth
    assert len(truth) == 4 and {0, 1} <= {label for row in truth for label in row}

    seen: list[tuple[list[int], list[int]]] = []

    class RecordingPRMTrainer(PRMTrainer):
        def compute_loss(self, model, inputs, *args, **kwargs):
            seen.extend(zip(inputs["input_ids"].tolist(), inputs["labels"].tolist(), strict=True))
            return super().compute_loss(model, inputs, *args, **kwargs)

    model, tokenizer = example.load_model(model_dir)
    trainer = example.build_trainer(
        model,
        tokenizer,
        rows,
        None,
        tmp_path / "prm",
        max_steps=2,  # 4 rows, batch 2: one epoch
        batch_size=2,
        learning_rate=1e-5,
        max_length=256,
        seed=0,
        trainer_class=RecordingPRMTrainer,
    )
    result = trainer.train()
    assert result.global_step == 2 and result.training_loss > 0

    seen_labels = []
    for input_ids, labels in seen:
        positions = [i for i, label in enumerate(labels) if label != IGNORED]
        # the tokens up to each label position are exactly that step's text and the separator
        starts = [0, *(p + 1 for p in positions[:-1])]
        spans = [tokenizer.decode(input_ids[a : b + 1]) for a, b in zip(starts, positions, strict=True)]
        assert spans[0].endswith("?step 0\n") and spans[1:] == [f"step {k}\n" for k in range(1, len(spans))]
        seen_labels.append([labels[i] for i in positions])
    assert sorted(seen_labels) == truth

    trainer.save_model(str(tmp_path / "prm"))
    from transformers import AutoModelForTokenClassification

    reloaded = AutoModelForTokenClassification.from_pretrained(tmp_path / "prm")
    assert reloaded.config.num_labels == 2
