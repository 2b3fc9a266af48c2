"""Shared by the rebuilt real-error sets (`phi35_rft`, `qwen25_train`): labels joined with source chains.

Their chains come from repositories that grant no licence for their data, so only our labels are stored;
each set's module reads its source, and these helpers give every set the same row shape and output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from prm_factory.schemas.reference_solutions import question_key


def steps_digest(steps: Sequence[str]) -> str:
    """The digest a label row stores of its chain's steps: a changed source is refused, never guessed."""
    return hashlib.sha256("\n".join(steps).encode()).hexdigest()


def gold_by_question(gsm8k: Path) -> dict[str, dict]:
    """GSM8K rows by normalised question text."""
    return {question_key(row["question"]): row for row in map(json.loads, gsm8k.open(encoding="utf-8"))}


def real_error_row(
    label: dict, reference: dict, steps: Sequence[str], final_answer: str, source: str
) -> dict:
    """A row in the real-errors shape (`evaluation.real_errors`): the chain, our label, the GSM8K gold."""
    return {
        "id": label["id"],
        "problem": reference["question"],
        "steps": list(steps),
        "final_answer": final_answer,
        "label": label["label"],
        "reference_answer": reference["answer"].rsplit("####", 1)[-1].strip().replace(",", ""),
        "solution": reference["answer"],
        "source": source,
        "note": label["note"],
    }


def write_rows(rows: Iterable[dict], out: Path) -> None:
    rows = list(rows)
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"{out}: {len(rows)} chains, {sum(row['label'] != -1 for row in rows)} with a first error")


def run_cli(
    description: str,
    build: Callable[[Path, Path], Iterable[dict]],
    source_help: str,
    gsm8k: Path,
    argv: Sequence[str] | None = None,
) -> None:
    """`--source S --out FILE [--gsm8k TRAIN]`: build the set from its source and write it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--source", type=Path, required=True, help=source_help)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gsm8k", type=Path, default=gsm8k)
    args = parser.parse_args(argv)
    write_rows(build(args.source, args.gsm8k), args.out)
