"""Rows of stdin/stdout code sets as they ship, into `Problem` records with a `StdioTests` spec.

- APPS (`problem_id, question, solutions, input_output, difficulty, url, starter_code`): `solutions`
  and `input_output` are JSON strings; `input_output` holds `inputs` and `outputs` (a list of lines is
  joined with newlines, as APPS's own grader does). Compared by tokens, numbers within 1e-5 (APPS
  accepts outputs `np.allclose` to the expected ones).
- CodeContests (`name, description, public_tests, private_tests, generated_tests, solutions,
  time_limit, memory_limit_bytes, ...`): tests are `{input: [...], output: [...]}`, every split used;
  the reference is the first Python 3 solution (language 3). Compared by tokens, a real-number answer
  within 1e-6 (absolute or relative, the usual Codeforces checker; integers always exactly); the time
  limit is the problem's, doubled for Python (the limits are set for C++), the memory limit the problem's.
- LiveCodeBench code generation (`question_title, question_content, platform, question_id,
  contest_date, starter_code, difficulty, public_test_cases, private_test_cases, metadata`): test cases
  are a JSON list of `{input, output, testtype}`; `private_test_cases` is that JSON, or its
  base64(zlib(pickle)) form, unpickled with every global refused (plain data only). Compared line by
  line, numbers equal as numbers (LiveCodeBench's grader compares tokens as decimals).

Rows whose tests call a function instead of reading stdin (APPS `fn_name`, LiveCodeBench
`testtype: functional`) become function tests (`schemas.code_call_based`).
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from collections.abc import Callable
from typing import Any

from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RowError

RowParser = Callable[[dict[str, Any], str, str, "int | None"], Problem]

DEFAULT_TIME_LIMIT_S = 4.0
# Said in the problem text of every stdin row, so a model asked for "the function described below" writes
# a whole program (LiveCodeBench's own prompt says the same).
STDIN_INSTRUCTION = "\n\nWrite a complete program: read the input from standard input and print the answer."
PYTHON_TIME_FACTOR = 2.0  # CodeContests limits are set for C++ solutions
CODECONTESTS_PYTHON3 = 3


def parser_for(row: dict[str, Any]) -> RowParser | None:
    """The parser for a stdin/stdout row's shape, or None when it is none of them."""
    if "input_output" in row and "question" in row:
        return apps_problem
    if "public_tests" in row or "private_tests" in row:
        return codecontests_problem
    if "question_content" in row or "public_test_cases" in row:
        return livecodebench_problem
    return None


def apps_problem(row: dict[str, Any], source: str, file: str = "", line_no: int | None = None) -> Problem:
    from prm_factory.schemas.code_spec import StdioTests

    question = _text(row, "question")
    io_spec = _json_field(row, "input_output")
    if not isinstance(io_spec, dict):
        raise RowError("input_output", "must be a JSON object with inputs and outputs")
    if io_spec.get("fn_name"):
        return _apps_call_problem(row, question, io_spec, source, file, line_no)
    inputs, outputs = io_spec.get("inputs"), io_spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or not inputs:
        raise RowError("input_output", "needs non-empty lists inputs and outputs")
    if len(inputs) != len(outputs):
        raise RowError("input_output", f"{len(inputs)} inputs but {len(outputs)} outputs")
    cases = [
        _case(f"test_{i}", _joined(x, "input_output"), (_joined(y, "input_output"),))
        for i, (x, y) in enumerate(zip(inputs, outputs, strict=True))
    ]
    solutions = _json_field(row, "solutions") if row.get("solutions") else []
    if not isinstance(solutions, list) or not all(isinstance(s, str) for s in solutions):
        raise RowError("solutions", "must be a JSON list of program strings")
    tests = StdioTests(
        tuple(cases), compare="tokens", float_tolerance=1e-5, time_limit_s=DEFAULT_TIME_LIMIT_S
    )
    return _problem(
        source,
        question + STDIN_INSTRUCTION,
        solutions[0] if solutions else None,
        tests.to_json(),
        file,
        line_no,
    )


def codecontests_problem(
    row: dict[str, Any], source: str, file: str = "", line_no: int | None = None
) -> Problem:
    from prm_factory.schemas.code_spec import StdioTests

    description = _text(row, "description")
    cases = []
    for split in ("public_tests", "private_tests", "generated_tests"):
        block = row.get(split)
        if block is None:
            continue
        if (
            not isinstance(block, dict)
            or not isinstance(block.get("input"), list)
            or not isinstance(block.get("output"), list)
        ):
            raise RowError(split, "must be an object with lists input and output")
        if len(block["input"]) != len(block["output"]):
            raise RowError(split, f"{len(block['input'])} inputs but {len(block['output'])} outputs")
        for i, (x, y) in enumerate(zip(block["input"], block["output"], strict=True)):
            if not isinstance(x, str) or not isinstance(y, str):
                raise RowError(split, f"test {i}: input and output must be strings")
            cases.append(_case(f"{split.split('_')[0]}_{i}", x, (y,)))
    if not cases:
        raise RowError("public_tests", "no tests in public_tests, private_tests or generated_tests")
    time_limit = row.get("time_limit")
    seconds = DEFAULT_TIME_LIMIT_S
    if isinstance(time_limit, dict):
        value = float(time_limit.get("seconds") or 0) + float(time_limit.get("nanos") or 0) / 1e9
        if value > 0:
            seconds = PYTHON_TIME_FACTOR * value
    memory = row.get("memory_limit_bytes")
    memory_mb = int(memory) >> 20 if isinstance(memory, int) and memory > 0 else None
    tests = StdioTests(
        tuple(cases), compare="tokens", float_tolerance=1e-6, time_limit_s=seconds, memory_mb=memory_mb
    )
    return _problem(
        source,
        description + STDIN_INSTRUCTION,
        _python3_solution(row.get("solutions")),
        tests.to_json(),
        file,
        line_no,
    )


def livecodebench_problem(
    row: dict[str, Any], source: str, file: str = "", line_no: int | None = None
) -> Problem:
    from prm_factory.schemas.code_spec import StdioTests

    content = _text(row, "question_content")
    cases = []
    functional: list[bool] = []
    for name in ("public_test_cases", "private_test_cases"):
        if not row.get(name):
            continue
        listed = _lcb_cases(row[name], name)
        for i, case in enumerate(listed):
            if (
                not isinstance(case, dict)
                or not isinstance(case.get("input"), str)
                or not isinstance(case.get("output"), str)
            ):
                raise RowError(name, f"test {i}: needs string input and output")
            if case.get("testtype", "stdin") not in ("stdin", "functional"):
                raise RowError(name, f"test {i}: unknown testtype {case.get('testtype')!r}")
            functional.append(case.get("testtype") == "functional")
            cases.append(_case(f"{name.split('_')[0]}_{i}", case["input"], (case["output"],)))
    if not cases:
        raise RowError("public_test_cases", "no test cases")
    if any(functional):
        if not all(functional):
            raise RowError("public_test_cases", "mixes stdin and functional test cases")
        return _lcb_call_problem(row, content, cases, source, file, line_no)
    tests = StdioTests(tuple(cases), compare="lines", float_tolerance=0.0, time_limit_s=DEFAULT_TIME_LIMIT_S)
    title = row.get("question_title")
    text = f"{title}\n\n{content}" if isinstance(title, str) and title.strip() else content
    return _problem(source, text + STDIN_INSTRUCTION, None, tests.to_json(), file, line_no)


def _lcb_call_problem(
    row: dict[str, Any], content: str, cases: list[Any], source: str, file: str, line_no: int | None
) -> Problem:
    """A LeetCode-style row (`testtype: functional`): function tests (schemas.code_call_based)."""
    from prm_factory.schemas.code_call_based import lcb_functional_tests

    metadata = _json_field(row, "metadata")
    fn_name = metadata.get("func_name") if isinstance(metadata, dict) else None
    if not isinstance(fn_name, str) or not fn_name:
        raise RowError("metadata", "a functional row needs metadata.func_name")
    starter = row.get("starter_code") or ""
    if not isinstance(starter, str):
        raise RowError("starter_code", "must be a string")
    try:
        tests = lcb_functional_tests([(c.input, c.outputs[0]) for c in cases], fn_name, starter)
    except ValueError as exc:
        raise RowError("private_test_cases", str(exc)) from None
    title = row.get("question_title")
    text = f"{title}\n\n{content}" if isinstance(title, str) and title.strip() else content
    text += f"\n\nComplete this starter code:\n```python\n{starter.rstrip()}\n```" if starter.strip() else ""
    return _problem(source, text, None, tests.to_json(), file, line_no)


def _apps_call_problem(
    row: dict[str, Any], question: str, io_spec: dict[str, Any], source: str, file: str, line_no: int | None
) -> Problem:
    """An APPS row with `fn_name`: its tests call a function (schemas.code_call_based)."""
    from prm_factory.schemas.code_call_based import apps_call_tests

    inputs, outputs = io_spec.get("inputs"), io_spec.get("outputs")
    if (
        not isinstance(inputs, list)
        or not isinstance(outputs, list)
        or not inputs
        or len(inputs) != len(outputs)
    ):
        raise RowError("input_output", "needs non-empty lists inputs and outputs of the same length")
    starter = row.get("starter_code") or ""
    if not isinstance(starter, str):
        raise RowError("starter_code", "must be a string")
    try:
        tests = apps_call_tests(inputs, outputs, str(io_spec["fn_name"]), starter)
    except ValueError as exc:
        raise RowError("input_output", str(exc)) from None
    solutions = _json_field(row, "solutions") if row.get("solutions") else []
    if not isinstance(solutions, list) or not all(isinstance(s, str) for s in solutions):
        raise RowError("solutions", "must be a JSON list of program strings")
    text = question + (
        f"\n\nComplete this starter code:\n```python\n{starter.rstrip()}\n```" if starter.strip() else ""
    )
    return _problem(source, text, solutions[0] if solutions else None, tests.to_json(), file, line_no)


def _lcb_cases(value: Any, name: str) -> list[Any]:
    if not isinstance(value, str):
        raise RowError(name, "must be a string (JSON, or base64 of zlib-compressed pickle)")
    try:
        listed = json.loads(value)
    except ValueError:
        try:
            listed = json.loads(_restricted_unpickle(zlib.decompress(base64.b64decode(value, validate=True))))
        except (ValueError, zlib.error, pickle.UnpicklingError, EOFError, TypeError) as exc:
            raise RowError(name, f"neither JSON nor base64(zlib(pickle(JSON))): {exc}") from None
    if not isinstance(listed, list):
        raise RowError(name, "must hold a list of test cases")
    return listed


class _PlainDataUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any class or function reference is refused (no code runs)."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def _restricted_unpickle(data: bytes) -> str:
    value = _PlainDataUnpickler(io.BytesIO(data)).load()
    if not isinstance(value, str):
        raise TypeError(f"pickled value is a {type(value).__name__}, not a JSON string")
    return value


def _python3_solution(solutions: Any) -> str | None:
    if not isinstance(solutions, dict):
        return None
    languages, programs = solutions.get("language") or [], solutions.get("solution") or []
    for language, program in zip(languages, programs, strict=False):
        if language == CODECONTESTS_PYTHON3 and isinstance(program, str):
            return program
    return None


def _case(name: str, given: str, accepted: tuple[str, ...]) -> Any:
    from prm_factory.schemas.code_spec import StdioCase

    return StdioCase(name, given, accepted)


def _joined(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value) + "\n"
    raise RowError(
        field, f"a test input or output must be a string or a list of lines, got {type(value).__name__}"
    )


def _text(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RowError(name, "missing" if value is None else "must be a non-empty string")
    return value


def _json_field(row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if isinstance(value, (dict, list)):
        return value  # already decoded (a copy saved from a data frame)
    if not isinstance(value, str) or not value.strip():
        raise RowError(name, "missing or empty")
    try:
        return json.loads(value)
    except ValueError as exc:
        raise RowError(name, f"not valid JSON: {exc}") from None


def _problem(
    source: str, text: str, reference: str | None, tests: str, file: str, line_no: int | None
) -> Problem:
    return Problem(
        problem_id=content_id(source, text),
        source=source,
        domain="code",
        text=text,
        reference_solution=reference,
        tests=tests,
        source_file=file or None,
        source_line=line_no,
    )
