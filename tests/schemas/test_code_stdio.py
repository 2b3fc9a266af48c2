"""stdin/stdout rows (APPS, CodeContests, LiveCodeBench) as they ship; bad rows name file, line, field."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from prm_factory.schemas.code_problems import load_code_problems, parse_row
from prm_factory.schemas.code_spec import StdioTests, load_tests

APPS = {
    "problem_id": 1,
    "question": "Print a + b.",
    "difficulty": "introductory",
    "url": "",
    "starter_code": "",
    "solutions": json.dumps(["print(sum(map(int, input().split())))"]),
    "input_output": json.dumps({"inputs": ["1 2\n", ["3 4"]], "outputs": ["3\n", ["7"]]}),
}
CONTESTS = {
    "name": "x",
    "description": "Print a + b.",
    "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
    "private_tests": {"input": ["5 5\n"], "output": ["10\n"]},
    "generated_tests": {"input": [], "output": []},
    "solutions": {"language": [2, 3], "solution": ["int main(){}", "print(sum(map(int, input().split())))"]},
    "time_limit": {"seconds": 1, "nanos": 500000000},
    "memory_limit_bytes": 268435456,
}


def _lcb(private):
    return {
        "question_title": "Sum",
        "question_content": "Print a + b.",
        "platform": "atcoder",
        "question_id": "a",
        "contest_id": "c",
        "contest_date": "2024-01-01T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
        "private_test_cases": private,
        "metadata": "{}",
    }


def test_apps_row_joins_line_lists_and_reads_numbers_within_tolerance():
    problem = parse_row(json.dumps(APPS), "apps")
    tests = load_tests(problem.tests or "")
    assert isinstance(tests, StdioTests) and tests.compare == "tokens" and tests.float_tolerance
    assert [c.input for c in tests.cases] == ["1 2\n", "3 4\n"] and tests.cases[1].outputs == ("7\n",)
    assert problem.reference_solution == "print(sum(map(int, input().split())))"
    assert problem.text.startswith("Print a + b.") and "standard input" in problem.text


def test_codecontests_row_uses_every_split_python3_and_its_limits():
    problem = parse_row(json.dumps(CONTESTS), "cc")
    tests = load_tests(problem.tests or "")
    assert isinstance(tests, StdioTests) and [c.name for c in tests.cases] == ["public_0", "private_0"]
    assert problem.reference_solution and problem.reference_solution.startswith("print")
    assert tests.time_limit_s == pytest.approx(3.0) and tests.memory_mb == 256


def test_livecodebench_private_tests_decode_from_json_or_compressed_pickle():
    cases = [{"input": "5 5\n", "output": "10\n", "testtype": "stdin"}]
    compressed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()
    for private in (json.dumps(cases), compressed):
        tests = load_tests(parse_row(json.dumps(_lcb(private)), "lcb").tests or "")
        assert isinstance(tests, StdioTests) and len(tests.cases) == 2 and tests.compare == "lines"


class Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_a_pickle_naming_any_global_is_refused_without_running_it():
    payload = base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()
    with pytest.raises(ValueError, match="private_test_cases|refused"):
        parse_row(json.dumps(_lcb(payload)), "lcb")


def test_bad_rows_are_rejected_with_file_line_and_field(tmp_path):
    rows = [
        json.dumps(APPS),
        json.dumps({**APPS, "input_output": "{not json"}),
        json.dumps({**CONTESTS, "public_tests": {"input": ["1"], "output": []}}),
        json.dumps(_lcb("not json and not base64 !")),
        json.dumps({**APPS, "input_output": json.dumps({"inputs": [], "outputs": []})}),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        ("\n".join(rows) + "\n").encode() + b'{"question": "\xff"}\n' + json.dumps(CONTESTS).encode()
    )
    problems, rejected = load_code_problems(path)
    assert [p.source_line for p in problems] == [1, 7]
    assert [(r.line, r.field) for r in rejected] == [
        (2, "input_output"),
        (3, "public_tests"),
        (4, "private_test_cases"),
        (5, "input_output"),
        (6, "<line>"),
    ]
    assert all(r.file == str(path) and r.reason for r in rejected)
    assert "UTF-8" in rejected[-1].reason


def test_parser_for_picks_the_shape_by_its_fields():
    from prm_factory.schemas.code_stdio import (
        apps_problem,
        codecontests_problem,
        livecodebench_problem,
        parser_for,
    )

    assert parser_for({"question": "q", "input_output": "{}"}) is apps_problem
    assert parser_for({"description": "d", "private_tests": {}}) is codecontests_problem
    assert parser_for({"question_content": "q"}) is livecodebench_problem
    assert parser_for({"question": "q"}) is None  # APPS needs its tests
    assert parser_for({"task_id": "HumanEval/0", "prompt": "p"}) is None
