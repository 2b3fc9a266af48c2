"""Call-based rows (LiveCodeBench functional, APPS fn_name) become split function tests."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from prm_factory.schemas.code_call_based import apps_call_tests, call_target, lcb_functional_tests
from prm_factory.schemas.code_problems import parse_row
from prm_factory.schemas.code_spec import CodeTests
from prm_factory.verifiers.code.tests_runner import decide_on_host


def test_class_solution_starter_code_calls_a_method():
    assert call_target("class Solution:\n    def f(self, x):", "f") == ("Solution", "Solution().f")
    assert call_target("def f(x):", "f") == ("f", "f")
    with pytest.raises(ValueError):
        call_target("", "f(); import os")


def test_lcb_cases_split_into_calls_and_expected_values_outside_them():
    tests = lcb_functional_tests([("[1, 2]\n3", "4"), ("[]\n0", "[1, 2]")], "f", "def f(a, b):")
    first, second = tests.cases
    assert first.calls == ("f(*[[1, 2], 3])",) and first.predicate == "__v[0] == 4"
    assert decide_on_host(first.predicate, [4]) is True and decide_on_host(first.predicate, [5]) is False
    # a list answer also accepts a tuple (LiveCodeBench reads tuples as lists): decided by the judge
    assert decide_on_host(second.predicate, [(1, 2)]) is None
    assert eval(second.predicate, {"__v": [(1, 2)]}) and not eval(second.predicate, {"__v": [(2, 1)]})
    assert "4" not in "".join(first.calls) and "[1, 2]" not in "".join(second.calls)


def test_apps_accepts_the_wrapped_first_item():
    tests = apps_call_tests([[[1, 2, 3], 3]], [[12]], "maxScore", "class Solution:\n    def maxScore(")
    predicate = tests.cases[0].predicate
    assert (
        eval(predicate, {"__v": [12]})
        and eval(predicate, {"__v": [[12]]})
        and not eval(predicate, {"__v": [13]})
    )


@pytest.mark.parametrize("bad", ["not json\n1", "[1]\nNaN"])
def test_values_that_are_not_plain_json_are_refused(bad):
    with pytest.raises(ValueError):
        lcb_functional_tests([(bad, "1")], "f", "")


def _lcb_row(cases, metadata):
    compressed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases[1:])))).decode()
    return {
        "question_title": "t",
        "question_content": "Return a + b.",
        "platform": "leetcode",
        "question_id": "1",
        "contest_id": "c",
        "contest_date": "2024-01-01T00:00:00",
        "starter_code": "class Solution:\n    def add(self, a: int, b: int) -> int:\n        ",
        "difficulty": "easy",
        "public_test_cases": json.dumps(cases[:1]),
        "private_test_cases": compressed,
        "metadata": json.dumps(metadata),
    }


def test_functional_livecodebench_row_loads_as_function_tests():
    cases = [
        {"input": "1\n2", "output": "3", "testtype": "functional"},
        {"input": "5\n5", "output": "10", "testtype": "functional"},
    ]
    problem = parse_row(json.dumps(_lcb_row(cases, {"func_name": "add"})), "lcb")
    tests = CodeTests.from_json(problem.tests or "")
    assert (
        tests.entry_point == "Solution" and len(tests.cases) == 2 and "from typing import *" in tests.prelude
    )
    assert "class Solution" in problem.text


def test_functional_row_without_func_name_or_mixing_test_types_is_rejected():
    cases = [
        {"input": "1\n2", "output": "3", "testtype": "functional"},
        {"input": "1 2\n", "output": "3\n", "testtype": "stdin"},
    ]
    with pytest.raises(ValueError, match="mixes"):
        parse_row(json.dumps(_lcb_row(cases, {"func_name": "add"})), "lcb")
    with pytest.raises(ValueError, match="func_name"):
        parse_row(json.dumps(_lcb_row(cases[:1] * 2, {})), "lcb")
