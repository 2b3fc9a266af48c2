"""HumanEval- and MBPP-shaped loaders: good rows become Problems, bad rows come back with a reason."""

from __future__ import annotations

import json
from pathlib import Path

from prm_factory.schemas.code_problems import load_code_problems
from prm_factory.schemas.code_spec import CodeTests
from prm_factory.schemas.rejected import RejectedRow

DATA = Path(__file__).resolve().parents[2] / "data" / "code_problems"


def test_shipped_problems_load():
    for name, count in (("humaneval_style", 5), ("mbpp_style", 4)):
        problems, rejected = load_code_problems(DATA / f"{name}.jsonl")
        assert len(problems) == count and rejected == []
        for problem in problems:
            assert problem.domain == "code" and problem.source == name
            assert problem.reference_solution and problem.source_line
            tests = CodeTests.from_json(problem.tests or "")
            assert tests.cases and tests.entry_point.isidentifier()
        assert len({p.problem_id for p in problems}) == count


def test_mbpp_prompt_names_the_function_and_entry_point_comes_from_the_tests():
    problems, _ = load_code_problems(DATA / "mbpp_style.jsonl")
    first = problems[0]
    assert "max_of_three(1, 2, 3)" in first.text
    assert CodeTests.from_json(first.tests or "").entry_point == "max_of_three"


def test_humaneval_prompt_imports_become_the_prelude():
    problems, _ = load_code_problems(DATA / "humaneval_style.jsonl")
    mean = next(p for p in problems if "def mean" in p.text)
    assert CodeTests.from_json(mean.tests or "").prelude == "from typing import List"


def test_bad_rows_are_rejected_with_file_line_field_and_reason(tmp_path):
    good = json.loads((DATA / "mbpp_style.jsonl").read_text().splitlines()[0])
    rows = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "test_list": []}),
        json.dumps({**good, "text": 5}),
        json.dumps(
            {
                "task_id": 1,
                "prompt": "def f():\n",
                "canonical_solution": "  pass",
                "test": "x = (",
                "entry_point": "f",
            }
        ),
        json.dumps(
            {
                "task_id": 2,
                "prompt": "def f():\n",
                "canonical_solution": "  pass",
                "test": "def check(candidate):\n    pass\n",
                "entry_point": "f",
            }
        ),
        json.dumps({"task_id": 3, "prompt": "p", "test": "t", "entry_point": "f"}),
        json.dumps({"hello": "world"}),
        "",
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(rows) + "\n")
    problems, rejected = load_code_problems(path)
    assert len(problems) == 1
    got = {(r.line, r.field) for r in rejected}
    assert got == {
        (2, "<line>"),
        (3, "test_list"),
        (4, "text"),
        (5, "test"),
        (6, "test"),
        (7, "canonical_solution"),
        (8, "<line>"),
    }
    assert all(isinstance(r, RejectedRow) and r.file == str(path) and r.reason for r in rejected)
