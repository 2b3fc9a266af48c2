"""Rebuild the Phi-3.5 real-errors set from its source: stronger-model chains with hand-marked first errors.

The chains are Phi-3.5-mini-instruct's wrong answers to GSM8K train problems, as published in
RobbenRibery/rft-gsm8k (commit 970e605f, `datasets/<variant>/data-00000-of-00001.arrow`, column
`wrong_solutions`). That repository carries no license grant for its data, so the chain texts are not
copied into this one: `data/real_errors_phi35_labels.jsonl` holds only our labels (first error, note),
where each chain sits in the source, and a digest of its steps. This module joins the two:

    git clone https://github.com/RobbenRibery/rft-gsm8k && git -C rft-gsm8k checkout 970e605f
    python -m prm_factory.evaluation.phi35_rft --source rft-gsm8k/datasets --out /tmp/real_errors_phi35.jsonl
    prm-factory eval /tmp/real_errors_phi35.jsonl

Each row's steps are checked against the stored digest; a row that does not match (another commit, a
changed split) stops the build with its label line, never guessed. Notes: `data/real_errors_phi35.md`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from prm_factory.evaluation.labelled_sets import gold_by_question, real_error_row, run_cli, steps_digest
from prm_factory.evaluation.real_errors import SHARED_GSM8K_TRAIN
from prm_factory.schemas.reference_solutions import question_key

LABELS = Path(__file__).parent / "data" / "real_errors_phi35_labels.jsonl"
ARROW_FILE = "data-00000-of-00001.arrow"
GENERATOR = "microsoft/Phi-3.5-mini-instruct"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z$(\d])")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|approx|No)\.$")


def split_steps(text: str) -> list[str]:
    """Steps as the set was labelled: non-empty lines (a `\\[ ... \\]` block is one), a one-line text by
    sentences."""
    lines: list[str] = []
    block: list[str] | None = None
    for line in (raw.strip() for raw in text.split("\n")):
        if not line:
            continue
        if block is not None:
            block.append(line)
            if line.endswith("\\]"):
                lines.append(" ".join(block))
                block = None
        elif line == "\\[":
            block = [line]
        else:
            lines.append(line)
    if block:
        lines.append(" ".join(block))
    if len(lines) != 1:
        return lines
    merged: list[str] = []
    for part in (p.strip() for p in _SENTENCE.split(lines[0]) if p.strip()):
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] += " " + part
        else:
            merged.append(part)
    return merged


def _source_rows(source: Path, variant: str) -> list[dict]:
    import pyarrow as pa

    with pa.memory_map(str(source / variant / ARROW_FILE)) as stream:
        return pa.ipc.open_stream(stream).read_all().to_pylist()


def build(source: Path, gsm8k: Path = SHARED_GSM8K_TRAIN, labels: Path = LABELS) -> Iterator[dict]:
    """Rows in the real-errors shape; raises ValueError naming the label line whose chain does not match."""
    gold = gold_by_question(gsm8k)
    tables: dict[str, list[dict]] = {}
    for number, line in enumerate(labels.open(encoding="utf-8"), start=1):
        label = json.loads(line)
        table = tables.setdefault(label["variant"], _source_rows(source, label["variant"]))
        record = table[label["row"]]
        steps = split_steps(record["wrong_solutions"])
        if steps_digest(steps) != label["steps_sha256"]:
            raise ValueError(f"{labels}:{number}: field steps_sha256: {label['id']} differs from the source")
        reference = gold[question_key(record["question"])]
        finals = re.findall(r"####\s*\**\s*\$?\s*(-?[\d,]*\.?\d+)", record["wrong_solutions"])
        yield real_error_row(
            label, reference, steps, finals[-1].replace(",", "") if finals else "", GENERATOR
        )


def main(argv: Sequence[str] | None = None) -> None:
    run_cli(__doc__.splitlines()[0], build, "the `datasets` folder of rft-gsm8k", SHARED_GSM8K_TRAIN, argv)


if __name__ == "__main__":
    main()
