"""The Qwen2.5-3B set is rebuilt from its source only where each chain matches the stored digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.evaluation.labelled_sets import steps_digest
from prm_factory.evaluation.qwen25_train import LABELS, build, final_answer, split_steps

QUESTION = "Tom has 3 apples and buys 4 more. How many apples does he have?"
RESPONSE = "Tom has 3 apples.\n\nHe buys 4 more:\n\\[\n3 + 4 = 8\n\\]\n\nSo he has \\(\\boxed{8}\\) apples."


def _files(tmp_path: Path, response: str = RESPONSE) -> tuple[Path, Path, Path]:
    """Stand-ins for the source JSONL, GSM8K train and the labels file."""
    source = tmp_path / "gsm8k_train.jsonl"
    record = {"id": "gsm8k_train_00001", "prompt": QUESTION, "response": response, "ground_truth": "7"}
    source.write_text(json.dumps(record) + "\n")
    gsm8k = tmp_path / "train.jsonl"
    gsm8k.write_text(json.dumps({"question": QUESTION, "answer": "3 + 4 = <<3+4=7>>7\n#### 7"}) + "\n")
    label = {
        "id": "t-1",
        "source_id": "gsm8k_train_00001",
        "steps_sha256": steps_digest(split_steps(RESPONSE)),
        "label": 1,
        "note": "3 + 4 = 8",
    }
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(label) + "\n")
    return source, gsm8k, labels


def test_rows_join_the_source_text_with_the_labels(tmp_path: Path) -> None:
    [row] = build(*_files(tmp_path))
    assert row["steps"] == [
        "Tom has 3 apples.",
        "He buys 4 more:\n\\[\n3 + 4 = 8\n\\]",
        RESPONSE.split("\n\n")[-1],
    ]
    assert (row["label"], row["final_answer"], row["reference_answer"]) == (1, "8", "7")


def test_a_changed_source_is_refused_with_the_label_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"labels.jsonl:1: field steps_sha256"):
        list(build(*_files(tmp_path, RESPONSE.replace("8", "9"))))


def test_the_final_answer_is_the_last_box_else_the_last_number() -> None:
    assert final_answer("so \\(\\boxed{1,250}\\) in all, or 1.25 thousand") == "1250"
    assert final_answer("He has 12 apples, 3 more than 9.") == "9"


def test_the_stored_labels_are_well_formed() -> None:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 90 and len({row["id"] for row in rows}) == 90
    assert all(-1 <= row["label"] and len(row["steps_sha256"]) == 64 and row["note"] for row in rows)
