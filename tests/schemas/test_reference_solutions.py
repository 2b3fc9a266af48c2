"""Worked solutions looked up by question text: exact after whitespace and case, never fuzzy."""

from __future__ import annotations

import json
from pathlib import Path

from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.reference_solutions import attach_reference_solutions, read_reference_solutions

GSM8K = {"question": "Tom has 3 apples and buys 4. How many?", "answer": "3 + 4 = <<3+4=7>>7\n#### 7"}
MATH = {"problem": "What is $1+1$?", "solution": "We get $\\boxed{2}$."}


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_gsm8k_and_math_rows_are_read_and_bad_rows_named(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [GSM8K, "{oops", MATH, {"question": "x", "answer": ""}, [1]])
    table, rejected = read_reference_solutions(path)
    assert [(r.line, r.field) for r in rejected] == [(2, "<line>"), (4, "answer"), (5, "<line>")]
    assert {v.answer for v in table.values()} == {"7", "2"}


def test_only_exact_question_matches_attach(tmp_path: Path) -> None:
    table, _ = read_reference_solutions(write(tmp_path / "s.jsonl", [GSM8K]))
    same = ExternalChain("a", "tom has 3 apples and\n buys 4.  How many?", ("3 + 4 = 7",))
    near = ExternalChain("b", "Tom has 3 apples and buys 5. How many?", ("3 + 5 = 8",))
    own = ExternalChain("c", GSM8K["question"], ("7",), reference_answer="7.0", reference_solution="mine")
    a, b, c = attach_reference_solutions([same, near, own], table)
    assert a.reference_solution == GSM8K["answer"] and a.reference_answer == "7"
    assert b.reference_solution is None and b.reference_answer is None
    assert (c.reference_solution, c.reference_answer) == ("mine", "7.0")  # a row's own reference wins


def test_a_question_with_two_different_solutions_is_left_out(tmp_path: Path) -> None:
    other = {**GSM8K, "answer": "3 + 4 = <<3+4=7>>7 apples\n#### 7"}
    table, _ = read_reference_solutions(write(tmp_path / "s.jsonl", [GSM8K, other]))
    assert table == {}
