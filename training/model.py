"""The PRM: a token-classification model read only at the label positions of training.layout.

Two heads on `AutoModelForTokenClassification`:
* `classes` (hard labels): two outputs, cross-entropy on right / wrong; P(right) = softmax[..., 1], the
  checkpoint TRL's PRM trainer writes, so either trainer's checkpoints score alike;
* `value` (soft labels, `--label mc --soft`): one output, binary cross-entropy against the MC value (the share
  of rollouts from the step's prefix that reached the reference); P(right) = sigmoid(output).

`prm_factory.json` beside the weights records the head, separator and max length, so scoring reads a chain
at the positions it was trained on; a checkpoint without it (TRL's) is read as `classes` with TRL's "\\n".
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prm_factory.training.layout import Example

METADATA = "prm_factory.json"
TRL_SEPARATOR = "\n"  # PRMConfig's default, for checkpoints PRMTrainer wrote
LABEL_NAMES = {2: ("wrong", "right"), 1: ("mc_value",)}


@dataclass(frozen=True)
class HeadSpec:
    """How a checkpoint reads a chain: its head and the layout it was trained with."""

    head: str  # "classes" | "value"
    separator: str
    max_length: int | None

    def save(self, folder: Path, extra: dict[str, Any] | None = None) -> None:
        (folder / METADATA).write_text(
            json.dumps({**asdict(self), **(extra or {})}, indent=2, ensure_ascii=False)
        )

    @classmethod
    def load(cls, folder: Path, num_labels: int) -> HeadSpec:
        path = folder / METADATA
        if path.exists():
            data = json.loads(path.read_text())
            return cls(data["head"], data["separator"], data.get("max_length"))
        if num_labels != 2:
            raise ValueError(f"{folder}: no {METADATA} and {num_labels} labels; expected a 2-label PRM")
        return cls("classes", TRL_SEPARATOR, None)


def load_tokenizer(path: Path) -> Any:
    """The model's tokenizer, padding with its end token where it names no pad token."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(path: Path, *, num_labels: int | None = None, tokenizer: Any | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) in float32; `num_labels` replaces the head (a base model), None keeps it;
    `tokenizer` one `load_tokenizer(path)` gave already."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForTokenClassification

    tokenizer = tokenizer if tokenizer is not None else load_tokenizer(path)
    # a new head for the task; a checkpoint with another head (a hard PRM trained on soft labels) gets one too
    extra: dict[str, Any] = {}
    if num_labels is not None:
        names = LABEL_NAMES[num_labels]
        extra = {
            "num_labels": num_labels,
            "id2label": dict(enumerate(names)),
            "label2id": {name: i for i, name in enumerate(names)},
            "ignore_mismatched_sizes": True,
        }
    model = AutoModelForTokenClassification.from_pretrained(path, dtype=torch.float32, **extra)
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def collate(examples: Sequence[Example], pad_id: int) -> dict[str, Any]:
    """Right-padded ids and mask, the (row, position) of every label, and its hard and soft targets."""
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    rows, positions, labels, values = [], [], [], []
    for row, example in enumerate(examples):
        ids[row, : len(example.input_ids)] = torch.tensor(example.input_ids)
        mask[row, : len(example.input_ids)] = 1
        rows += [row] * len(example.positions)
        positions += example.positions
        labels += [int(label) for label in example.labels[: len(example.positions)]]
        if example.values is not None:
            values += example.values[: len(example.positions)]
    batch = {
        "input_ids": ids,
        "attention_mask": mask,
        "rows": torch.tensor(rows, dtype=torch.long),
        "positions": torch.tensor(positions, dtype=torch.long),
        "labels": torch.tensor(labels, dtype=torch.long),
    }
    if values:
        batch["values"] = torch.tensor(values, dtype=torch.float32)
    return batch


def position_logits(model: Any, batch: dict[str, Any]) -> Any:
    """The model's logits at the label positions only: (n_labels, num_labels)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return logits[batch["rows"], batch["positions"]]


def step_loss(logits: Any, batch: dict[str, Any], head: str) -> Any:
    import torch.nn.functional as F

    if head == "value":
        return F.binary_cross_entropy_with_logits(logits[:, 0].float(), batch["values"])
    return F.cross_entropy(logits.float(), batch["labels"])


def right_probability(logits: Any, head: str) -> Any:
    import torch

    if head == "value":
        return torch.sigmoid(logits[:, 0].float())
    return torch.softmax(logits.float(), dim=-1)[:, 1]


def score_examples(
    model: Any, examples: Sequence[Example], head: str, pad_id: int, batch_size: int = 8
) -> list[list[float]]:
    """P(right) at every label position of each example, in the examples' order (batched by length)."""
    import torch

    device = next(model.parameters()).device
    out: list[list[float]] = [[] for _ in examples]
    order = sorted(range(len(examples)), key=lambda i: len(examples[i].input_ids))
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = [i for i in order[start : start + batch_size] if examples[i].positions]
            if not chunk:
                continue
            batch = collate([examples[i] for i in chunk], pad_id)
            batch = {k: v.to(device) for k, v in batch.items()}
            probabilities = right_probability(position_logits(model, batch), head).cpu().tolist()
            offset = 0
            for i in chunk:
                n = len(examples[i].positions)
                out[i] = probabilities[offset : offset + n]
                offset += n
    model.train(was_training)
    return out
