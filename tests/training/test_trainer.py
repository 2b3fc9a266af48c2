"""The training loop on a tiny random model: checkpoints, exact resume, the final folder, and scoring it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prm_factory.training.rows import rows_from_dataset
from prm_factory.training.trainer import Provenance, TrainingError, TrainSettings, latest_checkpoint, train


def _settings(base: Path, out: Path, **changes: object) -> TrainSettings:
    defaults = dict(
        base_model=base,
        output_dir=out,
        separator=" ки\n",
        max_length=128,
        batch_size=2,
        max_steps=3,
        epochs=2,
        learning_rate=1e-3,
        held_out=0.5,
        save_every=2,
    )
    return TrainSettings(**{**defaults, **changes})  # type: ignore[arg-type]


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, tiny_token_classifier) -> Path:
    return tiny_token_classifier(tmp_path_factory.mktemp("tiny"))


def test_train_checkpoints_resumes_exactly_and_writes_a_card(tiny_base, committed_dataset, tmp_path) -> None:
    import torch

    torch.set_num_threads(1)
    data = committed_dataset(6)
    rows = rows_from_dataset(data, None, "verifier")
    provenance = Provenance(data.root, 1, "verifier")
    straight = train(rows, _settings(tiny_base, tmp_path / "a"), provenance)
    assert straight.global_step == 3 and straight.n_train > 0 and straight.n_held_out > 0
    assert straight.train_loss is not None and straight.train_loss > 0 and straight.train_tokens > 0
    assert straight.train_seconds > 0 and straight.train_cpu_seconds > 0 and straight.other_seconds > 0
    assert [p.name for p in sorted((tmp_path / "a" / "checkpoints").iterdir())] == ["step-2", "step-3"]
    assert straight.evaluations and straight.evaluations[-1][1].n_steps == 3 * straight.n_held_out

    # the same run interrupted after step 2 and resumed gives the same weights
    shutil.copytree(tmp_path / "a" / "checkpoints" / "step-2", tmp_path / "b" / "checkpoints" / "step-2")
    resumed = train(rows, _settings(tiny_base, tmp_path / "b"), provenance, resume=True)
    assert resumed.global_step == 3
    ours, theirs = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)

    card = (tmp_path / "a" / "README.md").read_text()
    assert data.root in card and "version 1" in card and "label source: `verifier`" in card
    assert "weights sha256" in card and "held out" not in card.lower().split("## held-out problems")[0][-1:]
    record = json.loads((tmp_path / "a" / "prm_factory.json").read_text())
    assert record["head"] == "classes" and record["separator"] == " ки\n" and record["global_step"] == 3

    # a checkpoint of other rows is refused, not mixed in
    other = rows_from_dataset(data, None, "mc")
    with pytest.raises(TrainingError, match="other rows, settings"):
        train(other, _settings(tiny_base, tmp_path / "a"), provenance, resume=True)
    with pytest.raises(TrainingError, match="no checkpoint"):
        train(rows, _settings(tiny_base, tmp_path / "c"), provenance, resume=True)


def test_soft_labels_train_a_one_output_value_head(tiny_base, committed_dataset, tmp_path) -> None:
    data = committed_dataset(6)
    rows = rows_from_dataset(data, None, "mc", soft=True)
    result = train(
        rows,
        _settings(tiny_base, tmp_path / "soft", max_steps=2, save_every=None, soft=True),
        Provenance(data.root, 1, "mc"),
    )
    assert result.global_step == 2 and result.train_loss is not None
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(tmp_path / "soft").num_labels == 1
    assert json.loads((tmp_path / "soft" / "prm_factory.json").read_text())["head"] == "value"
    assert latest_checkpoint(tmp_path / "soft").name == "step-2"


def test_no_training_rows_is_an_error(tiny_base, committed_dataset, tmp_path) -> None:
    data = committed_dataset(2)
    rows = rows_from_dataset(data, None, "verifier")
    with pytest.raises(TrainingError, match="no training rows"):
        train(rows, _settings(tiny_base, tmp_path / "x", held_out=1.0), Provenance(data.root, 1, "verifier"))


def test_the_fingerprint_counts_processes_above_one(tmp_path) -> None:
    from prm_factory.training.layout import Example
    from prm_factory.training.trainer import fingerprint

    examples = [Example("c1", (1, 2, 3), (2,), (True,))]
    settings = _settings(tmp_path, tmp_path / "out")
    assert fingerprint(examples, settings) == fingerprint(
        examples, settings, 1
    )  # old checkpoints still resume
    assert fingerprint(examples, settings, 2) != fingerprint(examples, settings, 1)
    assert fingerprint(examples, settings, 2) != fingerprint(examples, settings, 4)
