"""MBPP asserts as the dataset writes them become call-based test cases (schemas/code_spec.py)."""

from __future__ import annotations

from prm_factory.schemas.code_spec import CodeTests

REGEX_ASSERTS = ['assert check_str("annie")', 'assert not check_str("dawood")']


def test_truthiness_asserts_ask_the_program_for_bool_only():
    tests = CodeTests.from_asserts(REGEX_ASSERTS, "check_str")
    assert [c.calls for c in tests.cases] == [("bool(check_str('annie'))",), ("bool(check_str('dawood'))",)]
    assert [c.predicate for c in tests.cases] == ["__v[0]", "not __v[0]"]
    assert CodeTests.from_asserts(["assert f(1) == 2"], "f").cases[0].calls == ("f(1)",)
