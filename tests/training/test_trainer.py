"""The training loop on a tiny random model: checkpoints, exact resume, the final folder, and scoring it."""

from __future__ import annotations

import gc
import json
import shutil
import weakref
from pathlib import Path

import pytest

from prm_factory.training import trainer as trainer_module
from prm_factory.training.chain_source import DatasetRows
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


def test_train_checkpoints_resumes_exactly_and_writes_a_card(
    tiny_base, committed_dataset, tmp_path, monkeypatch
) -> None:
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

    # a checkpoint of other rows is refused, not mixed in, and before the model loads (minutes for a big one)
    monkeypatch.setattr(trainer_module, "load_model", lambda *args, **kwargs: pytest.fail("the model loaded"))
    other = rows_from_dataset(data, None, "mc")
    with pytest.raises(TrainingError, match="other rows, settings"):
        train(other, _settings(tiny_base, tmp_path / "a"), provenance, resume=True)
    with pytest.raises(TrainingError, match="no checkpoint"):
        train(rows, _settings(tiny_base, tmp_path / "c"), provenance, resume=True)


class Watched:
    """A row source that notes, as each read begins, how many rows of earlier reads are still alive."""

    def __init__(self, inner: DatasetRows) -> None:
        self.inner = inner
        self.live: weakref.WeakSet = weakref.WeakSet()
        self.alive_at_read: list[int] = []
        self.sizes: list[int] = []

    @property
    def partitions(self) -> int:
        return self.inner.partitions

    def read(self, partition: int) -> list:
        if len(self.live):  # a full collection costs 0.2 s or more in a large test process: only when needed
            gc.collect()  # (it can only lower the count, so a count of 0 before it is the count after it)
        self.alive_at_read.append(len(self.live))
        rows = self.inner.read(partition)
        self.live.update(rows)
        self.sizes.append(len(rows))
        return rows


def test_streamed_training_holds_one_partition_of_rows_and_resumes_exactly(
    tiny_base, committed_dataset, tmp_path
) -> None:
    import torch

    torch.set_num_threads(1)
    data = committed_dataset(12)  # 72 steps: 6 partitions of about 12

    def source() -> Watched:
        return Watched(DatasetRows(data, None, "verifier", partition_steps=12))

    provenance = Provenance(data.root, 1, "verifier")
    watched = source()
    settings = _settings(tiny_base, tmp_path / "a", **_streamed_changes())
    straight = train(watched, settings, provenance)
    n_rows = straight.n_train + straight.n_held_out
    assert watched.partitions == 6 and straight.global_step == 2 * -(-straight.n_train // 2)
    # the census, then two epochs and two held-out evaluations (partitions with nothing for them unread)
    assert sum(watched.sizes[:6]) == n_rows and len(watched.sizes) > 3 * 6
    assert max(watched.alive_at_read) == 0  # no row of an earlier partition outlived it
    assert max(watched.sizes) < n_rows / 2
    assert [e for e, _ in straight.evaluations] == [0, 1]
    assert straight.evaluations[-1][1].n_chains == straight.n_held_out

    # interrupted inside the first epoch and inside the second, and resumed: the same weights
    for step in (3, 12):
        checkpoint = tmp_path / "a" / "checkpoints" / f"step-{step}"
        again = tmp_path / f"from-{step}"
        shutil.copytree(checkpoint, again / "checkpoints" / checkpoint.name)
        resumed = train(source(), _settings(tiny_base, again, **_streamed_changes()), provenance, resume=True)
        assert resumed.global_step == straight.global_step
        ours, theirs = _weights(tmp_path / "a"), _weights(again)
        assert all(torch.equal(ours[k], theirs[k]) for k in ours), step


def _streamed_changes() -> dict:
    return {"max_steps": None, "epochs": 2, "save_every": 3, "held_out": 0.3, "keep_checkpoints": 10}


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
    from prm_factory.training.stream import examples_digest
    from prm_factory.training.trainer import fingerprint

    digests = [examples_digest([Example("c1", (1, 2, 3), (2,), (True,))])]
    settings = _settings(tmp_path, tmp_path / "out")
    assert fingerprint(digests, settings) == fingerprint(digests, settings, 1)  # one process: left out
    assert fingerprint(digests, settings, 2) != fingerprint(digests, settings, 1)
    assert fingerprint(digests, settings, 2) != fingerprint(digests, settings, 4)
    other = [examples_digest([Example("c1", (1, 2, 3), (2,), (False,))])]
    assert fingerprint(other, settings) != fingerprint(digests, settings)  # another label: other rows
