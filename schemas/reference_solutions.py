"""Worked reference solutions looked up by question text, for chains that arrive without one.

Chains from elsewhere (ProcessBench-shape files, a model's outputs) often carry only the problem, or only
its final answer, while the problem's worked solution sits in the source dataset (GSM8K's `answer` with
its `<<expr=value>>` annotations, MATH's `solution`). The `reference` label source needs that solution;
this module reads such a file and attaches it to every chain whose problem text matches exactly once
whitespace and case are normalised. No fuzzy matching: a near-match may be another problem with other
numbers, and a wrong reference would label steps wrong; an unmatched chain stays without a solution and
the reference source says so.

Accepted rows, one JSON object per line: GSM8K `{"question", "answer"}` (the answer's `#### N` is the
reference answer), or `{"problem", "solution", "answer"?}` (MATH style; the answer else from the
solution's `\\boxed{}`); `reference_answer` wins over both, as in a chain row. A bad row is a `RejectedRow`
with file, line and field; the rest of the file is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from prm_factory.schemas.external_chains import ExternalChain, reference_fields
from prm_factory.schemas.rejected import WHOLE_LINE, RejectedRow, RowError, read_json_lines

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ReferenceSolution:
    solution: str
    answer: str | None


def question_key(text: str) -> str:
    """The matching key of a problem text: whitespace collapsed, case folded.

    >>> question_key("Janet's  ducks\\nlay 16 eggs. ") == question_key("janet's ducks lay 16 eggs.")
    True
    """
    return _SPACE.sub(" ", text).strip().casefold()


def _row_solution(row: dict) -> tuple[str, ReferenceSolution]:
    """(key, solution) of one row; raises `RowError` naming the field that is wrong.

    The answer and solution fields are read as a chain row's are (`schemas.external_chains.reference_fields`),
    so a file means the same thing whether it is given to `label`/`eval` as chains or as `--solutions`.
    """
    field = "question" if "question" in row else "problem"
    question = row.get(field)
    if not isinstance(question, str) or not question.strip():
        raise RowError(field, f"{field} must be a non-empty string")
    answer, solution = reference_fields(row)
    if solution is None:
        field = "solution" if "solution" in row else "answer"
        raise RowError(field, f"{field} must hold a worked solution (a GSM8K answer ends with #### N)")
    return question_key(question), ReferenceSolution(solution, answer)


def read_reference_solutions(path: str | Path) -> tuple[dict[str, ReferenceSolution], list[RejectedRow]]:
    """Solutions by question key; a question listed twice with different solutions is left out."""
    found: dict[str, ReferenceSolution] = {}
    conflicting: set[str] = set()
    rows, rejected = read_json_lines(path)
    for number, row in rows:
        if not isinstance(row, dict):
            rejected.append(RejectedRow(str(path), number, WHOLE_LINE, "a row must be a JSON object"))
            continue
        try:
            key, solution = _row_solution(row)
        except RowError as err:
            rejected.append(err.at(str(path), number))
            continue
        if key in found and found[key].solution != solution.solution:
            conflicting.add(key)
        found.setdefault(key, solution)
    for key in conflicting:
        del found[key]
    rejected.sort(key=lambda r: r.line)
    return found, rejected


def attach_reference_solutions(
    chains: Iterable[ExternalChain], solutions: dict[str, ReferenceSolution]
) -> list[ExternalChain]:
    """Each chain with the worked solution of its problem filled in where it had none.

    A chain's own reference answer wins over the file's (it is what the row was graded against).
    """
    attached: list[ExternalChain] = []
    for chain in chains:
        found = solutions.get(question_key(chain.problem))
        if chain.reference_solution is None and found is not None:
            chain = replace(
                chain,
                reference_solution=found.solution,
                reference_answer=chain.reference_answer or found.answer,
            )
        attached.append(chain)
    return attached
