"""GSM8K-format problem files (jsonl: `question`, `answer` with `#### N` at the end).

Bad rows never stop a run: each is returned as a `RejectedRow` (schemas.rejected) naming the file, line,
field and reason, and the run records it. A missing or unreadable file is an error of the whole run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import WHOLE_LINE, RejectedRow, read_text_lines

_FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)
_ANNOTATION = re.compile(r"<<[^<>]*>>")


class ProblemSourceError(RuntimeError):
    pass


@dataclass(frozen=True)
class LoadedProblems:
    problems: list[Problem]
    rejected: list[RejectedRow]


def gsm8k_reference(answer: str) -> str | None:
    """The number after `####` in a GSM8K answer, commas removed ("1,200" -> "1200")."""
    match = _FINAL.search(answer)
    return match.group(1).replace(",", "").strip() if match else None


def gsm8k_solution_steps(answer: str) -> list[str]:
    """Gold solution lines without calculator annotations and without the `####` line."""
    lines = [_ANNOTATION.sub("", line).strip() for line in answer.split("####")[0].splitlines()]
    return [line for line in lines if line]


def parse_gsm8k_line(raw: str, file: str, line_no: int) -> Problem | RejectedRow:
    try:
        row = json.loads(raw)
    except json.JSONDecodeError as err:
        return RejectedRow(file, line_no, WHOLE_LINE, f"malformed JSON: {err.msg} at column {err.colno}")
    if not isinstance(row, dict):
        return RejectedRow(file, line_no, WHOLE_LINE, f"expected a JSON object, got {type(row).__name__}")
    for name in ("question", "answer"):
        if name not in row:
            return RejectedRow(file, line_no, name, "missing field")
        if not isinstance(row[name], str):
            return RejectedRow(file, line_no, name, f"expected a string, got {type(row[name]).__name__}")
    question, answer = row["question"].strip(), row["answer"]
    if not question:
        return RejectedRow(file, line_no, "question", "empty question")
    reference = gsm8k_reference(answer)
    if not reference:
        return RejectedRow(file, line_no, "answer", "no final answer after '####'")
    return Problem(
        problem_id=content_id("gsm8k", question, reference),
        source="gsm8k",
        domain="math",
        text=question,
        reference_answer=reference,
        reference_solution=answer,
        source_file=file,
        source_line=line_no,
    )


def load_gsm8k(path: str | Path, *, offset: int = 0, limit: int | None = None) -> LoadedProblems:
    """Valid problems `offset .. offset+limit` of the file (counting valid rows), and every rejected row
    met on the way."""
    file = Path(path)
    if not file.is_file():
        raise ProblemSourceError(f"problem file not found: {file}")
    problems: list[Problem] = []
    rejected: list[RejectedRow] = []
    valid_seen = 0
    for line_no, raw in read_text_lines(file):
        if limit is not None and len(problems) >= limit:
            break
        if isinstance(raw, RejectedRow):
            rejected.append(raw)
            continue
        if not raw.strip():
            continue
        parsed = parse_gsm8k_line(raw, str(file), line_no)
        if isinstance(parsed, RejectedRow):
            rejected.append(parsed)
            continue
        valid_seen += 1
        if valid_seen > offset:
            problems.append(parsed)
    return LoadedProblems(problems, rejected)
