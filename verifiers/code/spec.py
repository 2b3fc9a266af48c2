"""Code tests as data: asserts split into calls (run next to the untrusted program) and predicates.

A test is an `assert` over calls to the entry point. `CodeTests.from_asserts` splits each assert into
the *calls* (run inside the sandbox, next to the untrusted program, which reports their values) and a
*predicate* over those values with the calls replaced by `__v[i]` (evaluated outside the untrusted
process). So `assert add(2, 3) == 5` becomes calls `("add(2, 3)",)` and predicate `__v[0] == 5`.

An assert whose calls cannot be lifted out (a call inside a comprehension or lambda, which needs the
loop variable) runs whole inside the untrusted process, with the entry point wrapped so it may only
return plain data. Such cases are marked `in_process`; they are weaker, and their evidence says so.

Pure (no Docker): the problem loaders in schemas/ build these specs.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

TESTS_FORMAT = "prm-factory/code-tests-v1"
VALUES = "__v"


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest class

    name: str
    calls: tuple[str, ...]  # expressions evaluated next to the untrusted program
    predicate: str  # expression over __v[i], evaluated outside it (or whole, when in_process)
    source: str  # the assert as written, for evidence
    in_process: bool = False


@dataclass(frozen=True)
class CodeTests:
    """A problem's tests. `setup` is trusted test code (imports, helpers, constants) run before the
    calls and before the predicates; `prelude` is prepended to the program (e.g. HumanEval's imports)."""

    entry_point: str
    cases: tuple[TestCase, ...]
    setup: str = ""
    prelude: str = ""

    def to_json(self) -> str:
        payload = {"format": TESTS_FORMAT, **asdict(self)}
        return json.dumps(payload, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CodeTests:
        payload = json.loads(text)
        if payload.get("format") != TESTS_FORMAT:
            raise ValueError(f"not a {TESTS_FORMAT} test spec")
        cases = tuple(
            TestCase(
                name=c["name"],
                calls=tuple(c["calls"]),
                predicate=c["predicate"],
                source=c["source"],
                in_process=bool(c.get("in_process", False)),
            )
            for c in payload["cases"]
        )
        return cls(payload["entry_point"], cases, payload.get("setup", ""), payload.get("prelude", ""))

    @classmethod
    def from_asserts(
        cls, asserts: Sequence[str], entry_point: str, setup: str = "", prelude: str = ""
    ) -> CodeTests:
        """One case per assert statement; `candidate(...)` and `entry_point(...)` calls are lifted out.

        >>> t = CodeTests.from_asserts(["assert add(2, 3) == 5"], "add")
        >>> t.cases[0].calls, t.cases[0].predicate
        (('add(2, 3)',), '__v[0] == 5')
        """
        cases = []
        for index, text in enumerate(asserts):
            module = ast.parse(text.strip())
            for node in module.body:
                if not isinstance(node, ast.Assert):
                    raise ValueError(f"test {index} is not an assert statement: {text[:80]!r}")
                cases.append(split_assert(node, entry_point, f"test_{len(cases)}"))
        if not cases:
            raise ValueError("no test cases")
        return cls(entry_point, tuple(cases), setup, prelude)

    @classmethod
    def from_check_function(cls, test_code: str, entry_point: str, prelude: str = "") -> CodeTests:
        """HumanEval shape: module code defining `check(candidate)` whose body is asserts.

        Module-level statements other than `check` and the non-assert statements inside `check` that
        do not touch `candidate` become `setup`. An assert nested in a loop or branch, or a statement
        that uses `candidate` other than in an assert, is not supported (ValueError), so a loader can
        reject the row with a reason instead of silently testing less.
        """
        module = ast.parse(test_code)
        setup_parts: list[str] = []
        asserts: list[ast.Assert] = []
        check = None
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name == "check":
                check = node
            else:
                setup_parts.append(ast.unparse(node))
        if check is None:
            raise ValueError("test code defines no check(candidate) function")
        arg = check.args.args[0].arg if check.args.args else "candidate"
        for stmt in check.body:
            if isinstance(stmt, ast.Assert):
                asserts.append(stmt)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring or a bare string
            elif _mentions(stmt, {arg}):
                raise ValueError(f"check() uses {arg} outside a top-level assert (line {stmt.lineno})")
            else:
                setup_parts.append(ast.unparse(stmt))
        if not asserts:
            raise ValueError("check() holds no assert")
        if arg != "candidate":
            asserts = [_rename_calls(a, arg, "candidate") for a in asserts]
        cases = tuple(split_assert(a, entry_point, f"test_{i}") for i, a in enumerate(asserts))
        return cls(entry_point, cases, "\n".join(setup_parts), prelude)


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _rename_calls(node: ast.Assert, old: str, new: str) -> ast.Assert:
    class Renamer(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.Name:
            return ast.copy_location(ast.Name(id=new, ctx=name.ctx), name) if name.id == old else name

    return Renamer().visit(node)


def split_assert(node: ast.Assert, entry_point: str, name: str) -> TestCase:
    """Lift the entry-point calls out of an assert; see the module docstring."""
    targets = {entry_point, "candidate"}
    source = ast.unparse(node)
    scoped = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for scope in ast.walk(node.test):
        if isinstance(scope, scoped) and any(_is_target_call(n, targets) for n in ast.walk(scope)):
            return TestCase(name, (), ast.unparse(node.test), source, in_process=True)
    calls: list[str] = []

    class Lifter(ast.NodeTransformer):
        def visit_Call(self, call: ast.Call) -> ast.AST:
            if _is_target_call(call, targets):
                calls.append(ast.unparse(call))
                index = ast.Constant(value=len(calls) - 1)
                placeholder = ast.Subscript(
                    value=ast.Name(id=VALUES, ctx=ast.Load()), slice=index, ctx=ast.Load()
                )
                return ast.copy_location(placeholder, call)
            return self.generic_visit(call)

    predicate = Lifter().visit(ast.parse(ast.unparse(node.test), mode="eval"))
    if not calls:
        raise ValueError(f"assert does not call {entry_point}: {source[:80]!r}")
    return TestCase(name, tuple(calls), ast.unparse(predicate), source)


def _is_target_call(node: ast.AST, targets: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in targets
