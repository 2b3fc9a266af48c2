"""Test specs, the value codec, the supervisor report and verdict rules, without Docker."""

from __future__ import annotations

import json

import pytest
from exec_results import exec_result

from prm_factory.schemas.code_spec import CodeTests
from prm_factory.verifiers.code.grading import run_tests
from prm_factory.verifiers.code.harness import EncodeError, decode, encode
from prm_factory.verifiers.code.sandbox import SandboxLimits, container_kwargs, parse_report
from prm_factory.verifiers.code.tests_runner import decide_on_host, host_comparison, parse_records


def test_asserts_split_into_calls_and_predicates():
    tests = CodeTests.from_asserts(["assert f(1, [2]) == (3,)", "assert abs(f(2) - f(3)) < 1e-6"], "f")
    first, second = tests.cases
    assert first.calls == ("f(1, [2])",) and first.predicate == "__v[0] == (3,)"
    assert second.calls == ("f(2)", "f(3)") and second.predicate == "abs(__v[0] - __v[1]) < 1e-06"
    assert not first.in_process


def test_call_inside_a_comprehension_becomes_a_proxy_case():
    tests = CodeTests.from_asserts(["assert all(f(i) == i for i in range(3))"], "f")
    case = tests.cases[0]
    assert case.proxy and not case.in_process and case.calls == ()
    assert case.source == "assert all((f(i) == i for i in range(3)))"


def test_spec_round_trips_through_json():
    tests = CodeTests.from_asserts(["assert f(1) == 1"], "f", setup="import math", prelude="import os")
    assert CodeTests.from_json(tests.to_json()) == tests


def test_check_function_shape():
    code = (
        "M = {'a': 1}\n\ndef check(c):\n    import math\n    assert c(2) == 4\n"
        "    assert math.isclose(c(1.5), 2.25)\n"
    )
    tests = CodeTests.from_check_function(code, "square")
    assert [c.calls for c in tests.cases] == [("candidate(2)",), ("candidate(1.5)",)]
    assert "import math" in tests.setup and "M = " in tests.setup


@pytest.mark.parametrize(
    "code",
    [
        "def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i\n",
        "def check(candidate):\n    assert True, 'This prints if this assert fails'\n"
        "    assert candidate(1) == 1\n",
        "def helper(f, x):\n    return f(x)\n\ndef check(candidate):\n    assert helper(candidate, 2) == 2\n",
    ],
)
def test_check_functions_the_splitter_cannot_take_apart_run_whole_as_a_proxy_case(code):
    tests = CodeTests.from_check_function(code, "f", context="import math")
    assert len(tests.cases) == 1 and tests.cases[0].proxy
    assert tests.cases[0].source == code.rstrip() + "\n\ncheck(candidate)\n"
    assert tests.context == "import math"


@pytest.mark.parametrize(
    "code, message",
    [
        ("def helper():\n    pass\n", "no check"),
        ("def check(candidate):\n    x = 1\n", "no assert"),
        ("def check(candidate):\n    assert True\n", "never uses"),
    ],
)
def test_unsupported_check_functions_are_refused(code, message):
    with pytest.raises(ValueError, match=message):
        CodeTests.from_check_function(code, "f")


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -(10**5000),
        1.5,
        float("inf"),
        2j,
        "é",
        b"\x00",
        [1, (2, {3})],
        {"a": [None]},
        frozenset({1}),
    ],
    ids=lambda value: type(value).__name__,
)
def test_codec_round_trips_plain_values(value):
    assert decode(json.loads(json.dumps(encode(value)))) == value


def test_codec_refuses_subclasses_and_objects():
    class Sneaky(int):
        def __eq__(self, other):
            return True

    class Anything:
        def __eq__(self, other):
            return True

    for value in (Sneaky(1), Anything(), [Anything()], {"k": Sneaky(2)}):
        with pytest.raises(EncodeError):
            encode(value)


@pytest.mark.parametrize(
    "bad", [[], ["int"], ["int", 5], ["eval", "1"], ["list", "x"], "str", ["dict", [[1]]]]
)
def test_decode_refuses_malformed_records(bad):
    with pytest.raises((ValueError, TypeError)):
        decode(bad)


def test_host_decides_simple_predicates_and_defers_others():
    assert host_comparison("__v[0] == [1, 2]") == (0, "eq", [1, 2])
    assert host_comparison("(4,) == __v[0]") == (0, "eq", (4,))
    assert host_comparison("__v[0] is None") == (0, "is", None)
    assert host_comparison("abs(__v[0] - 1) < 1e-6") is None
    assert host_comparison("__v[0] == __v[1]") is None
    assert decide_on_host("__v[0] == (4,)", [[4]]) is False  # same rule as Python: a list is no tuple
    assert decide_on_host("__v[0] == 1", [1.0]) is True
    assert decide_on_host("not __v[0]", [[]]) is True


def test_records_without_the_nonce_are_ignored():
    stdout = '{"nonce": "other", "kind": "value"}\nnoise\n{"nonce": "n1", "kind": "done"}\n{bad json n1\n'
    assert parse_records(stdout, "n1") == [{"nonce": "n1", "kind": "done"}]


_result = exec_result


class ScriptedRunner:
    """Answers the calls job with records built by `respond(nonce)`; no Docker."""

    def __init__(self, respond, **flags):
        self.respond, self.flags = respond, flags

    def run(self, files, argv):
        job = json.loads(files["job.json"])
        return _result(self.respond(job["nonce"]), **self.flags)


def _record(nonce, **fields):
    return json.dumps({"nonce": nonce, **fields})


TESTS = CodeTests.from_asserts(["assert f(1) == 2", "assert f(2) == 4"], "f")


def test_missing_record_is_a_failed_test():
    report = run_tests(
        "def f(x): return 2 * x",
        TESTS,
        ScriptedRunner(lambda n: _record(n, kind="value", case=0, index=0, value=encode(2))),
    )
    assert [r.passed for r in report.results] == [True, False]
    assert report.results[1].reason.startswith("missing")
    assert not report.passed


def test_exit_code_zero_without_records_is_failure():
    report = run_tests("def f(x): return 2 * x", TESTS, ScriptedRunner(lambda n: ""))
    assert not report.passed and all(r.reason.startswith("missing") for r in report.results)


def test_first_record_wins_and_forged_records_need_the_nonce():
    def respond(nonce):
        return "\n".join(
            [
                _record("guessed", kind="value", case=1, index=0, value=encode(4)),
                _record(nonce, kind="value", case=0, index=0, value=encode(2)),
                _record(nonce, kind="value", case=1, index=0, value=encode(5)),
                _record(nonce, kind="value", case=1, index=0, value=encode(4)),
            ]
        )

    report = run_tests("def f(x): return 2 * x", TESTS, ScriptedRunner(respond))
    assert [r.passed for r in report.results] == [True, False]


def test_all_records_right_but_run_misbehaved_is_not_a_pass():
    def respond(nonce):
        return "\n".join(
            _record(nonce, kind="value", case=i, index=0, value=encode(2 * (i + 1))) for i in range(2)
        )

    assert run_tests("", TESTS, ScriptedRunner(respond)).passed
    assert not run_tests("", TESTS, ScriptedRunner(respond, misbehaved=True, reason="strays")).passed
    assert not run_tests("", TESTS, ScriptedRunner(respond, timed_out=True)).passed


def test_container_kwargs_are_hardened():
    kwargs = container_kwargs("img:tag", SandboxLimits(memory_mb=100, pids=10, cpus=0.5, tmpfs_mb=8), ["x"])
    assert kwargs["network_mode"] == "none"
    assert kwargs["read_only"] is True
    assert kwargs["cap_drop"] == ["ALL"]
    assert kwargs["security_opt"] == ["no-new-privileges"]
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == "100m"
    assert kwargs["pids_limit"] == 10 and kwargs["nano_cpus"] == 500_000_000
    assert not kwargs["user"].startswith("0") and kwargs["user"] != "root"
    assert "size=8m" in kwargs["tmpfs"]["/work"]
    assert "volumes" not in kwargs and "mounts" not in kwargs and not kwargs.get("privileged")
    assert kwargs["stop_signal"] == "SIGKILL"


def test_supervisor_report_is_parsed_strictly():
    body = b"hello" + b"err"
    good = b"junk\nPRMREPORT n1 0 -1 0 0 0 0 0 0.5 5 3\n" + body
    report = parse_report(good, "n1")
    assert report is not None and report.stdout == b"hello" and report.stderr == b"err"
    assert report.exit_code == 0 and report.signal is None
    assert parse_report(good, "n2") is None
    assert parse_report(good + b"extra", "n1") is None
    assert parse_report(b"\nPRMREPORT n1 0 -1 0 0 0 0 0 x 5 3\n" + body, "n1") is None
