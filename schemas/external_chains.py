"""Chains produced outside the factory, read into one neutral record (`prm-factory label` and `eval` alike).

Input: one JSON object per line (`.jsonl`), a JSON list (`.json`, as ProcessBench ships each split), or a
folder of such files, one per split (`math.json`, `gsm8k.json`, ...); each chain records its split (the
file's stem) and file. Two row shapes are accepted:
- ProcessBench: `{"id", "problem", "steps": [...], "final_answer"?, "final_answer_correct"?, "label"?,
  "generator"?}`; `label` is the index of the first wrong step, -1 when every step is right, and
  `final_answer_correct` the chain's graded outcome. The reference to grade against comes from
  `reference_answer`, else `answer` (a GSM8K answer with `#### N` counts as the worked solution too), else
  the final answer of a worked `solution` (its `#### N`, its last `\boxed{}`, or its last line).
- PRM800K: `{"question": {"problem", "ground_truth_answer"?}, "label": {"steps": [{"completions": [{"text",
  "rating"}], "chosen_completion": k | null, "human_completion"?}], "finish_reason"?}}`. Each step's text is
  its chosen completion (the first one when none is chosen), its rating (-1, 0, 1) becomes the step label,
  and the first -1 becomes `first_error_label`.

A bad row is returned as a `RejectedRow` (schemas.rejected) with file, line, the field that was wrong (a
dotted path such as `label.steps[2].rating`; `<line>` when the row as a whole is unusable) and reason; the
rest of the file is still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ijson

from prm_factory.schemas.gsm8k import gsm8k_reference
from prm_factory.schemas.rejected import (
    WHOLE_LINE,
    RejectedRow,
    RowError,
    read_json_lines,
    read_text_lines,
)


@dataclass(frozen=True)
class ExternalChain:
    """A chain to label: steps as given, with any gold labels the source carried."""

    id: str
    problem: str
    steps: tuple[str, ...]
    final_answer: str | None = None
    first_error_label: int | None = None  # ProcessBench `label`: -1 = all steps correct, None = unknown
    step_labels: tuple[int | None, ...] | None = None  # PRM800K ratings per step (-1, 0, 1, None)
    source_format: str = "processbench"  # processbench | prm800k
    reference_answer: str | None = None
    reference_solution: str | None = None  # a worked solution, for the `reference` label source
    final_answer_correct: bool | None = None  # ProcessBench: the chain's graded outcome, None = not given
    generator: str | None = None  # the model that wrote the chain, where the source names it
    line: int = 0  # line (jsonl) or item (json list) number in the input file, 1-based
    file: str = ""  # the file the chain was read from
    split: str = ""  # the file's stem: ProcessBench ships one file per split (`math.json`)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RowError(what, f"{what} must be a non-empty string")
    return value


def _processbench(row: dict[str, Any], line: int) -> ExternalChain:
    steps = row.get("steps")
    if not isinstance(steps, list) or not steps:
        raise RowError("steps", "steps must be a non-empty list")
    if not all(isinstance(s, str) for s in steps):
        raise RowError("steps", "every step must be a string")
    label = row.get("label")
    if label is not None and (
        not isinstance(label, int) or isinstance(label, bool) or not -1 <= label < len(steps)
    ):
        raise RowError("label", f"label must be -1 or a step index below {len(steps)}, got {label!r}")
    final = row.get("final_answer")
    graded = row.get("final_answer_correct")
    if graded is not None and not isinstance(graded, bool):
        raise RowError("final_answer_correct", f"final_answer_correct must be true or false, got {graded!r}")
    reference, solution = reference_fields(row)
    return ExternalChain(
        id=str(row.get("id", f"line-{line}")),
        problem=_text(row.get("problem"), "problem"),
        steps=tuple(steps),
        final_answer=str(final) if final is not None else None,
        first_error_label=label,
        source_format="processbench",
        reference_answer=reference,
        reference_solution=solution,
        final_answer_correct=graded,
        generator=_optional_text(row, "generator"),
    )


def _optional_text(row: dict[str, Any], name: str) -> str | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowError(name, f"{name} must be a string or a number, got {type(value).__name__}")
    text = str(value).strip()
    return text or None


def reference_fields(row: dict[str, Any]) -> tuple[str | None, str | None]:
    """(reference answer, worked solution) of a row, read one way for chains and for `--solutions` files.

    `reference_answer`, else `answer`, else the final answer of the worked `solution`; a GSM8K `answer`
    (with `#### N`) is the worked solution too. Raises `RowError` for a field that is not text.

    >>> reference_fields({"answer": "3 + 4 = <<3+4=7>>7\\n#### 7"})
    ('7', '3 + 4 = <<3+4=7>>7\\n#### 7')
    >>> reference_fields({"solution": "So $\\\\boxed{2}$.", "answer": "2"})
    ('2', 'So $\\\\boxed{2}$.')
    >>> reference_fields({"answer": "42"})
    ('42', None)
    """
    solution = _optional_text(row, "solution")
    answer = _optional_text(row, "answer")
    if answer is not None and "####" in answer:  # a GSM8K answer: the worked solution and its final line
        solution = solution or answer
        answer = gsm8k_reference(answer)
    reference = _optional_text(row, "reference_answer") or answer
    if reference is None and solution is not None:
        reference = solution_final_answer(solution)
    return reference, solution


def solution_final_answer(solution: str) -> str | None:
    """The final answer a worked solution states: after `####`, in its last `\\boxed{}`, or its last line.

    >>> solution_final_answer("16 - 3 = 13\\n#### 13")
    '13'
    >>> solution_final_answer(r"So $x = \\boxed{\\frac{1}{2}}$.")
    '\\\\frac{1}{2}'
    >>> solution_final_answer("Half of 18 is 9.\\nShe has 9 left.")
    'She has 9 left.'
    """
    final = gsm8k_reference(solution)
    if final:
        return final
    if "\\boxed{" in solution:
        return boxed_content(solution)  # an unclosed box is no answer
    lines = [line.strip() for line in solution.strip().splitlines() if line.strip()]
    return lines[-1] if lines else None


def boxed_content(text: str) -> str | None:
    """What the last `\\boxed{}` of `text` holds (braces balanced), None without a closed, non-empty box.

    >>> boxed_content(r"so $\\boxed{\\frac{1}{2}}$."), boxed_content(r"\\boxed{3")
    ('\\\\frac{1}{2}', None)
    """
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, begin = 0, start + len("\\boxed{")
    for i in range(begin, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                return text[begin:i].strip() or None
            depth -= 1
    return None


def _prm800k(row: dict[str, Any], line: int) -> ExternalChain:
    question = row.get("question")
    if not isinstance(question, dict):
        raise RowError("question", "question must be an object")
    label = row.get("label")
    if not isinstance(label, dict) or not isinstance(label.get("steps"), list) or not label["steps"]:
        raise RowError("label.steps", "label.steps must be a non-empty list")
    texts: list[str] = []
    ratings: list[int | None] = []
    for k, step in enumerate(label["steps"]):
        if not isinstance(step, dict):
            raise RowError(f"label.steps[{k}]", f"label.steps[{k}] must be an object")
        completions = step.get("completions") or []
        if not isinstance(completions, list):
            raise RowError(f"label.steps[{k}].completions", f"label.steps[{k}] completions must be a list")
        chosen = step.get("chosen_completion")
        human = step.get("human_completion")
        if isinstance(chosen, int) and 0 <= chosen < len(completions):
            picked = completions[chosen]
        elif isinstance(human, dict) and human.get("text"):
            picked = {"text": human["text"], "rating": 1}  # a human-written step is taken as correct
        elif completions:
            picked = completions[0]
        else:
            raise RowError(f"label.steps[{k}].completions", f"label.steps[{k}] has no completion")
        if not isinstance(picked, dict) or not isinstance(picked.get("text"), str):
            raise RowError(f"label.steps[{k}].completions", f"label.steps[{k}] completion has no text")
        rating = picked.get("rating")
        if rating is not None and rating not in (-1, 0, 1):
            field = f"label.steps[{k}].rating"
            raise RowError(field, f"label.steps[{k}] rating must be -1, 0, 1 or null, got {rating!r}")
        texts.append(picked["text"])
        ratings.append(rating)
    first_error = next((k for k, r in enumerate(ratings) if r == -1), None)
    if first_error is None and all(r is not None and r >= 0 for r in ratings):
        first_error = -1
    answer = question.get("ground_truth_answer")
    return ExternalChain(
        id=str(row.get("id", f"line-{line}")),
        problem=_text(question.get("problem"), "question.problem"),
        steps=tuple(texts),
        final_answer=None,
        first_error_label=first_error,
        step_labels=tuple(ratings),
        source_format="prm800k",
        reference_answer=str(answer) if answer is not None else None,
    )


def parse_external_chain(row: Any, line: int) -> ExternalChain:
    """One row in either shape; raises `RowError` (a ValueError) naming the wrong field and the reason."""
    if not isinstance(row, dict):
        raise RowError(WHOLE_LINE, "row must be a JSON object")
    if "question" in row and isinstance(row.get("label"), dict):
        return _prm800k(row, line)
    if "steps" in row:
        return _processbench(row, line)
    raise RowError(
        WHOLE_LINE, "neither ProcessBench shape (problem, steps) nor PRM800K shape (question, label.steps)"
    )


CHAIN_SUFFIXES = (".json", ".jsonl")


def split_files(path: str | Path) -> list[Path]:
    """The files a chain input names: the file itself, or a folder's `.json` / `.jsonl` files by name (one
    per split). Raises FileNotFoundError for a missing path or a folder without such files, ValueError for
    two files of one split (`math.json` beside `math.jsonl`)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"input not found: {path}")
    files = sorted(p for p in path.iterdir() if p.suffix in CHAIN_SUFFIXES and p.is_file())
    if not files:
        raise FileNotFoundError(f"{path}: no .json or .jsonl split file in the folder")
    stems = [p.stem for p in files]
    twice = sorted({stem for stem in stems if stems.count(stem) > 1})
    if twice:
        raise ValueError(f"{path}: more than one file for split {', '.join(twice)}")
    return files


def read_external_chains(path: str | Path) -> tuple[list[ExternalChain], list[RejectedRow]]:
    """Chains and rejected rows of a file or a folder of split files (`split_files`), file by file.

    A missing or unreadable file raises (the caller must say so and stop); a bad row never does.
    """
    chains: list[ExternalChain] = []
    rejected: list[RejectedRow] = []
    for file in split_files(path):
        file_chains, file_rejected = _read_file(file)
        chains.extend(file_chains)
        rejected.extend(file_rejected)
    return chains, rejected


def iter_external_chains(path: str | Path) -> Iterator[ExternalChain | RejectedRow]:
    """The chains and rejected rows of `path` one at a time, in file and line order (`prm-factory label`
    reads its input this way, so its memory does not grow with the file).

    A `.jsonl` file is read line by line. A `.json` list is checked whole by a streaming parser (ijson, its C
    backend) and then read item by item, so it is never held either; a `.json` file that is anything else
    (invalid JSON, one object, one object per line) is read whole by `read_external_chains`' rules. Same
    rows and rejections as `read_external_chains`.
    """
    for file in split_files(path):
        if file.suffix == ".json":
            if _is_json_list(file):
                with file.open("rb") as stream:
                    for number, row in enumerate(ijson.items(stream, "item", use_float=True), start=1):
                        yield from _parse_row(file, number, row)
                continue
            chains, rejected = _read_file(file)
            yield from sorted([*chains, *rejected], key=lambda row: row.line)
            continue
        for number, line in read_text_lines(file):
            if isinstance(line, RejectedRow):
                yield line
            elif line.strip():
                yield from _parse_line(file, number, line)


def _is_json_list(path: Path) -> bool:
    """Whether the file is one well-formed JSON list, found without building it (ijson's events)."""
    try:
        with path.open("rb") as stream:
            events = ijson.parse(stream)
            first = next(events, None)
            if first is None or first[:2] != ("", "start_array"):
                return False
            for _ in events:
                pass
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
        return False
    return True


def _parse_line(path: Path, number: int, line: str) -> Iterator[ExternalChain | RejectedRow]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        yield RejectedRow(str(path), number, WHOLE_LINE, f"invalid JSON: {exc.msg}")
        return
    yield from _parse_row(path, number, row)


def _parse_row(path: Path, number: int, row: object) -> Iterator[ExternalChain | RejectedRow]:
    try:
        chain = parse_external_chain(row, number)
    except RowError as exc:
        yield exc.at(str(path), number)
    else:
        yield replace(chain, line=number, file=str(path), split=path.stem)


def _read_file(path: Path) -> tuple[list[ExternalChain], list[RejectedRow]]:
    """Chains and rejected rows of a `.jsonl` file (line numbers 1-based) or a `.json` list (item numbers)."""
    chains: list[ExternalChain] = []
    rejected: list[RejectedRow] = []
    if path.suffix == ".json":
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw[: err.start].count(b"\n") + 1
            return [], [
                RejectedRow(str(path), line, WHOLE_LINE, "not valid UTF-8: the JSON list cannot be read")
            ]
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                return [], [RejectedRow(str(path), exc.lineno, WHOLE_LINE, f"invalid JSON: {exc.msg}")]
            rows = None  # one object per line under a .json name (as some dataset exports write)
        if isinstance(rows, dict):
            rows = [rows]
        if rows is None:
            numbered, bad_lines = read_json_lines(path)
            rejected.extend(bad_lines)
        elif isinstance(rows, list):
            numbered = list(enumerate(rows, start=1))
        else:
            numbered = []
            rejected.append(RejectedRow(str(path), 1, WHOLE_LINE, "top level must be a list of chains"))
    else:
        numbered, bad_lines = read_json_lines(path)
        rejected.extend(bad_lines)
    for number, row in numbered:
        try:
            chain = parse_external_chain(row, number)
        except RowError as exc:
            rejected.append(exc.at(str(path), number))
        else:
            chains.append(replace(chain, line=number, file=str(path), split=path.stem))
    rejected.sort(key=lambda r: r.line)
    return chains, rejected
