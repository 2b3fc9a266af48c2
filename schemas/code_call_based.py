"""Call-based rows of the stdin sets as function tests: LiveCodeBench `functional` rows (LeetCode style)
and APPS rows with `fn_name`.

These rows do not read stdin: their tests call a method with arguments and compare the value returned.
They become a `CodeTests` spec whose calls (`Solution().twoSum(*[[2, 7], 9])`) run next to the program
in the sandbox and whose predicates (the expected value) are decided outside it, the same split as
MBPP's asserts, so expected values never enter the submission's process.

How the datasets' own graders call and compare, and so how these tests do:
- the method is `Solution().<fn_name>` when the starter code defines `class Solution`, else the
  function `<fn_name>`;
- LiveCodeBench: each input line is one JSON argument, the output one JSON value; a returned tuple is
  read as a list;
- APPS: `inputs[i]` is the argument list; the value passes when it equals `outputs[i]`, or its only
  item when `outputs[i]` is a non-empty list (APPS wraps some answers in a list); tuples read as lists.
The program runs with LiveCodeBench's import block in scope (its starter code uses `List[int]`).

    >>> t = lcb_functional_tests([("[2, 7]\\n9", "[0, 1]")], "twoSum", "class Solution:\\n    def twoSum(")
    >>> t.entry_point, t.cases[0].calls
    ('Solution', ('Solution().twoSum(*[[2, 7], 9])',))
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

# The imports LiveCodeBench's grader puts before every LeetCode-style program.
CALL_PRELUDE = (
    "from typing import *\nfrom collections import *\n"
    "import math, heapq, bisect, itertools, functools, collections, string, re, random"
)


def call_target(starter_code: str, fn_name: str) -> tuple[str, str]:
    """(entry point the program must define, the callable expression the tests call)."""
    if not fn_name.isidentifier():
        raise ValueError(f"fn_name is not a python identifier: {fn_name!r}")
    if "class Solution" in starter_code:
        return "Solution", f"Solution().{fn_name}"
    return fn_name, fn_name


def lcb_functional_tests(cases: Sequence[tuple[str, str]], fn_name: str, starter_code: str) -> Any:
    """`CodeTests` for LiveCodeBench functional cases: (input lines of JSON arguments, JSON output)."""
    calls = []
    for i, (given, expected) in enumerate(cases):
        try:
            args = [json.loads(line) for line in given.split("\n") if line.strip()]
            value = json.loads(expected)
        except ValueError as exc:
            raise ValueError(f"test {i}: arguments and output must be JSON: {exc}") from None
        calls.append((args, value, False))
    return _call_tests(calls, fn_name, starter_code)


def apps_call_tests(inputs: Sequence[Any], outputs: Sequence[Any], fn_name: str, starter_code: str) -> Any:
    """`CodeTests` for an APPS call-based row (`input_output` with `fn_name`)."""
    calls = []
    for i, (args, value) in enumerate(zip(inputs, outputs, strict=True)):
        if not isinstance(args, list):
            raise ValueError(f"test {i}: inputs must be a list of arguments")
        calls.append((args, value, True))
    return _call_tests(calls, fn_name, starter_code)


def _call_tests(calls: list[tuple[list[Any], Any, bool]], fn_name: str, starter_code: str) -> Any:
    from prm_factory.schemas.code_spec import CodeTests, TestCase

    entry_point, target = call_target(starter_code, fn_name)
    cases = []
    for i, (args, value, first_item_too) in enumerate(calls):
        call = f"{target}(*{_literal(args)})"
        predicate = _predicate(value, first_item_too)
        source = "assert " + predicate.replace("__v[0]", call)
        cases.append(TestCase(f"test_{i}", (call,), predicate, source))
    if not cases:
        raise ValueError("no test cases")
    return CodeTests(entry_point, tuple(cases), "", CALL_PRELUDE, CALL_PRELUDE)


def _predicate(expected: Any, first_item_too: bool) -> str:
    """The comparison over `__v[0]`; a plain `==` (decided on the host) where no reading is needed."""
    literal = _literal(expected)
    if not isinstance(expected, list):
        return f"__v[0] == {literal}"
    value = "(list(__v[0]) if type(__v[0]) is tuple else __v[0])"
    if first_item_too and expected:
        return f"{value} == {literal} or {value} == {_literal(expected[0])}"
    return f"{value} == {literal}"


def _literal(value: Any) -> str:
    """A python literal of plain JSON data (repr of lists, dicts, str, int, float, bool, None)."""
    _check_plain(value)
    return repr(value)


def _check_plain(value: Any, depth: int = 0) -> None:
    if depth > 64:
        raise ValueError("test value nested too deep")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a test value is not a finite number")
    if isinstance(value, list):
        for item in value:
            _check_plain(item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, depth + 1)
            _check_plain(item, depth + 1)
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise ValueError(f"a test value of type {type(value).__name__} is not plain data")
