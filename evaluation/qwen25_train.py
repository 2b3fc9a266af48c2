"""Rebuild the Qwen2.5-3B real-errors set from its source: a third model's wrong chains, first errors by hand.

The chains are Qwen/Qwen2.5-3B-Instruct's greedy chain-of-thought answers to GSM8K train problems that end
on a wrong number, as published in shauryajeloka/yoda-gsm8k-posttraining (commit e40c8b95,
`outputs/base-train-cot/gsm8k_train.jsonl`). That repository carries no license grant for its data, so the
chain texts are not copied into this one: `data/real_errors_qwen25_labels.jsonl` holds only our labels
(first error, note), the source record's id, and a digest of its steps. This module joins the two:

    python -m prm_factory.evaluation.qwen25_train --source gsm8k_train.jsonl \
        --out /tmp/real_errors_qwen25.jsonl
    prm-factory eval /tmp/real_errors_qwen25.jsonl

Steps are the response's paragraphs (split on blank lines, as ProcessBench splits), exactly as labelled.
A row whose steps do not match the stored digest is refused with its label line, never guessed. Notes:
`data/real_errors_qwen25.md`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from prm_factory.evaluation.labelled_sets import gold_by_question, real_error_row, run_cli, steps_digest
from prm_factory.evaluation.real_errors import SHARED_GSM8K_TRAIN
from prm_factory.schemas.reference_solutions import question_key

LABELS = Path(__file__).parent / "data" / "real_errors_qwen25_labels.jsonl"
GENERATOR = "Qwen/Qwen2.5-3B-Instruct"
_BOXED = re.compile(r"\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def split_steps(response: str) -> list[str]:
    """The response's paragraphs, stripped, empty ones dropped."""
    return [part.strip() for part in response.split("\n\n") if part.strip()]


def final_answer(response: str) -> str:
    """The last `\\boxed{}`'s last number, else the response's last number (as the set was selected)."""
    boxes = _BOXED.findall(response)
    numbers = _NUMBER.findall(boxes[-1] if boxes else response)
    return numbers[-1].replace(",", "") if numbers else ""


def build(source: Path, gsm8k: Path = SHARED_GSM8K_TRAIN, labels: Path = LABELS) -> Iterator[dict]:
    """Rows in the real-errors shape; raises ValueError naming the label line whose chain does not match."""
    gold = gold_by_question(gsm8k)
    records = {}
    for line in source.open(encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            records[record["id"]] = record
    for number, line in enumerate(labels.open(encoding="utf-8"), start=1):
        label = json.loads(line)
        record = records.get(label["source_id"])
        if record is None:
            raise ValueError(f"{labels}:{number}: field source_id: {label['source_id']} is not in {source}")
        steps = split_steps(record["response"])
        if steps_digest(steps) != label["steps_sha256"]:
            raise ValueError(f"{labels}:{number}: field steps_sha256: {label['id']} differs from the source")
        reference = gold[question_key(record["prompt"])]
        yield real_error_row(label, reference, steps, final_answer(record["response"]), GENERATOR)


def main(argv: Sequence[str] | None = None) -> None:
    run_cli(
        __doc__.splitlines()[0], build, "a copy of base-train-cot/gsm8k_train.jsonl", SHARED_GSM8K_TRAIN, argv
    )


if __name__ == "__main__":
    main()
