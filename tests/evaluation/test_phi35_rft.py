"""The Phi-3.5 set is rebuilt from its source only where each chain matches the stored digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pytest

from prm_factory.evaluation.phi35_rft import ARROW_FILE, LABELS, build, split_steps

QUESTION = "Tom has 3 apples and buys 4 more. How many apples does he have?"
WRONG = "Tom has 3 apples.\nHe buys 4 more, so 3 + 4 = 8.\n#### 8"


def _source(tmp_path: Path, text: str) -> Path:
    """A stand-in for the rft-gsm8k `datasets` folder: one variant, one row."""
    folder = tmp_path / "datasets" / "v1"
    folder.mkdir(parents=True)
    table = pa.table({"question": [QUESTION], "wrong_solutions": [text]})
    with pa.OSFile(str(folder / ARROW_FILE), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return tmp_path / "datasets"


def _files(tmp_path: Path) -> tuple[Path, Path]:
    gsm8k = tmp_path / "train.jsonl"
    gsm8k.write_text(json.dumps({"question": QUESTION, "answer": "3 + 4 = <<3+4=7>>7\n#### 7"}) + "\n")
    digest = hashlib.sha256("\n".join(split_steps(WRONG)).encode()).hexdigest()
    label = {"id": "t-1", "variant": "v1", "row": 0, "steps_sha256": digest, "label": 1, "note": "3 + 4 = 8"}
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(label) + "\n")
    return gsm8k, labels


def test_rows_join_the_source_text_with_the_labels(tmp_path: Path) -> None:
    gsm8k, labels = _files(tmp_path)
    [row] = build(_source(tmp_path, WRONG), gsm8k, labels)
    assert row["steps"] == ["Tom has 3 apples.", "He buys 4 more, so 3 + 4 = 8.", "#### 8"]
    assert (row["label"], row["final_answer"], row["reference_answer"]) == (1, "8", "7")


def test_a_changed_source_is_refused_with_the_label_line(tmp_path: Path) -> None:
    gsm8k, labels = _files(tmp_path)
    with pytest.raises(ValueError, match=r"labels.jsonl:1: field steps_sha256"):
        list(build(_source(tmp_path, WRONG.replace("8", "9")), gsm8k, labels))


def test_one_line_solutions_split_into_sentences() -> None:
    expected = ["Mr. Lee has 3.", "He buys 4 more.", "So 7."]
    assert split_steps("Mr. Lee has 3. He buys 4 more. So 7.") == expected


def test_the_stored_labels_are_well_formed() -> None:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 149 and len({row["id"] for row in rows}) == 149
    assert all(-1 <= row["label"] and len(row["steps_sha256"]) == 64 and row["note"] for row in rows)
