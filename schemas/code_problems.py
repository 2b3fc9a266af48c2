"""Load code problems (JSON lines) into `Problem` records; the shape is decided per row.

- HumanEval: `task_id, prompt, canonical_solution, test, entry_point`; `test` defines `check(candidate)`.
- MBPP: `task_id, text, code, test_list` (optional `test_setup_code`); MBPP sanitized has `prompt`
  instead of `text` and `test_imports`. `test_list` holds asserts that call the function by name; the
  entry point is the first function they call that the reference code defines.
- stdin/stdout sets (APPS, CodeContests, LiveCodeBench code generation): see `schemas.code_stdio`.

Function tests become a `CodeTests` spec (JSON in `Problem.tests`): asserts split into calls and
predicates where they can be, the dataset's own test code run unchanged with a proxied `candidate`
where they cannot, so the sandbox verifier keeps expected values out of the untrusted process either
way. A row that cannot be used is not fatal: it comes back as a `RejectedRow` naming the file, line,
field and reason, and so does a line that is not valid UTF-8 (the rest of the file is still read).

    >>> problems, rejections = load_code_problems("data/code_problems/mbpp_style.jsonl")  # doctest: +SKIP
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import WHOLE_LINE, RejectedRow, RowError, read_text_lines

HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
MBPP_FIELDS = ("task_id", "text", "code", "test_list")


def load_code_problems(
    path: str | Path, *, source: str | None = None
) -> tuple[list[Problem], list[RejectedRow]]:
    """Problems from a JSON-lines file (or a `.json` list; line = item number) of any known shape
    (decided per row), and the rows refused."""
    path = Path(path)
    source = source or path.stem
    problems: list[Problem] = []
    rejections: list[RejectedRow] = []
    rows = _json_list_items(path) if path.suffix == ".json" else read_text_lines(path)
    for line_no, line in rows:
        if isinstance(line, RejectedRow):
            rejections.append(line)
            continue
        if not line.strip():
            continue
        try:
            problems.append(parse_row(line, source, str(path), line_no))
        except RowError as exc:
            rejections.append(exc.at(str(path), line_no))
    return problems, rejections


def _json_list_items(path: Path) -> list[tuple[int, str | RejectedRow]]:
    """The items of a `.json` file holding a JSON list (MBPP sanitized ships so), numbered from 1, each
    re-serialised for `parse_row`; a file that cannot be read as one list is one rejected row."""
    raw = path.read_bytes()
    try:
        items = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return [
            (line, RejectedRow(str(path), line, WHOLE_LINE, "not valid UTF-8: the JSON list cannot be read"))
        ]
    except json.JSONDecodeError as exc:
        return [(exc.lineno, RejectedRow(str(path), exc.lineno, WHOLE_LINE, f"not valid JSON: {exc.msg}"))]
    if not isinstance(items, list):
        return [(1, RejectedRow(str(path), 1, WHOLE_LINE, "a .json file must hold a list of rows"))]
    return [(number, json.dumps(item, ensure_ascii=False)) for number, item in enumerate(items, start=1)]


def load_many(paths: Iterable[str | Path]) -> tuple[list[Problem], list[RejectedRow]]:
    problems: list[Problem] = []
    rejections: list[RejectedRow] = []
    for path in paths:
        got, refused = load_code_problems(path)
        problems.extend(got)
        rejections.extend(refused)
    return problems, rejections


def parse_row(line: str, source: str, file: str = "", line_no: int | None = None) -> Problem:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise RowError(WHOLE_LINE, f"not valid JSON: {exc}") from None
    if not isinstance(row, dict):
        raise RowError(WHOLE_LINE, "row is not a JSON object")
    from prm_factory.schemas import code_stdio

    if "entry_point" in row:
        return humaneval_problem(row, source, file, line_no)
    if "test_list" in row:
        return mbpp_problem(row, source, file, line_no)
    stdio = code_stdio.parser_for(row)
    if stdio is not None:
        return stdio(row, source, file, line_no)
    if "prompt" in row and "canonical_solution" in row:
        return humaneval_problem(row, source, file, line_no)  # names the missing field
    if "text" in row:
        return mbpp_problem(row, source, file, line_no)
    raise RowError(
        WHOLE_LINE,
        "no known shape: HumanEval (prompt, entry_point, test), MBPP (text or prompt, test_list), APPS "
        "(question, input_output), CodeContests (description, public_tests) or LiveCodeBench "
        "(question_content, public_test_cases)",
    )


def _require_str(row: dict[str, Any], name: str) -> str:
    if name not in row:
        raise RowError(name, "missing")
    value = row[name]
    if isinstance(value, int) and name == "task_id":
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise RowError(name, f"must be a non-empty string, got {type(value).__name__}")
    return value


def humaneval_problem(
    row: dict[str, Any], source: str, file: str = "", line_no: int | None = None
) -> Problem:
    from prm_factory.schemas.code_spec import CodeTests

    for name in HUMANEVAL_FIELDS:
        _require_str(row, name)
    prompt, entry_point = row["prompt"], row["entry_point"].strip()
    if not entry_point.isidentifier():
        raise RowError("entry_point", f"not a python identifier: {entry_point!r}")
    try:
        tests = CodeTests.from_check_function(
            row["test"],
            entry_point,
            prelude=_imports_of(prompt),
            context=_prompt_context(prompt, entry_point),
        )
    except SyntaxError as exc:
        raise RowError("test", f"does not parse: line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise RowError("test", str(exc)) from None
    return Problem(
        problem_id=content_id(source, prompt),
        source=source,
        domain="code",
        text=prompt,
        reference_solution=prompt + row["canonical_solution"],
        tests=tests.to_json(),
        source_file=file or None,
        source_line=line_no,
    )


def mbpp_problem(row: dict[str, Any], source: str, file: str = "", line_no: int | None = None) -> Problem:
    from prm_factory.schemas.code_spec import CodeTests

    text_field = "text" if "text" in row or "prompt" not in row else "prompt"  # prompt: MBPP sanitized
    for name in ("task_id", text_field, "code"):
        _require_str(row, name)
    test_list = row.get("test_list")
    if not isinstance(test_list, list) or not test_list or not all(isinstance(t, str) for t in test_list):
        raise RowError("test_list", "must be a non-empty list of assert strings")
    setup = row.get("test_setup_code") or ""
    if not isinstance(setup, str):
        raise RowError("test_setup_code", "must be a string")
    imports = row.get("test_imports") or []
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports):
        raise RowError("test_imports", "must be a list of import statements")
    setup = "\n".join([*imports, setup]).strip()
    entry_point = _mbpp_entry_point(row["code"], test_list[0])
    try:
        tests = CodeTests.from_asserts(test_list, entry_point, setup=setup)
    except SyntaxError as exc:
        raise RowError("test_list", f"does not parse: line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise RowError("test_list", str(exc)) from None
    text = f"{row[text_field].strip()}\nYour code should pass this test:\n{test_list[0].strip()}"
    return Problem(
        problem_id=content_id(source, text),
        source=source,
        domain="code",
        text=text,
        reference_solution=row["code"],
        tests=tests.to_json(),
        source_file=file or None,
        source_line=line_no,
    )


def _mbpp_entry_point(code: str, first_test: str) -> str:
    """The first function the first test calls that the reference code defines (else the first call)."""
    try:
        test = ast.parse(first_test.strip())
    except SyntaxError as exc:
        raise RowError("test_list", f"does not parse: line {exc.lineno}: {exc.msg}") from None
    try:
        defined = {n.name for n in ast.walk(ast.parse(code)) if isinstance(n, ast.FunctionDef)}
    except SyntaxError as exc:
        raise RowError("code", f"does not parse: line {exc.lineno}: {exc.msg}") from None
    called = [n.func.id for n in ast.walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for name in called:
        if name in defined:
            return name
    if called:
        return called[0]
    raise RowError("test_list", "first test calls no function")


def _prompt_context(prompt: str, entry_point: str) -> str:
    """The prompt's imports and helper definitions (all but the entry point): HumanEval test code may
    call them (`encode_cyclic`, `poly`), so the judge runs them before the test code."""
    module = _parse_prompt(prompt)
    if module is None:
        return ""
    keep = [
        n
        for n in module.body
        if not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry_point)
        and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    return "\n\n".join(ast.unparse(n) for n in keep)


def _parse_prompt(prompt: str) -> ast.Module | None:
    try:
        return ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        try:
            return ast.parse(prompt)
        except SyntaxError:
            return None


def _imports_of(prompt: str) -> str:
    """The import statements of a HumanEval prompt: the program is tested with them in scope."""
    try:
        module = ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        try:
            module = ast.parse(prompt)
        except SyntaxError:
            return ""
    return "\n".join(ast.unparse(n) for n in module.body if isinstance(n, (ast.Import, ast.ImportFrom)))
