"""`CodeVerifier`: grades code chains and judges their steps by running tests in the sandbox pool.

Outcome (`grade`): the program assembled from every python code block of the completion (or the whole
completion, when it has no fence but is itself a program defining the entry point, or for a stdin
problem a program at all) is run against the problem's tests: function tests (`CodeTests`) or
stdin/stdout tests (`StdioTests`). `correct` iff every test passes; `incorrect` only when a test ran to
completion and failed (or the program does not compile, or broke the sandbox's rules); otherwise
`timeout` when a test could not finish in time, `error` when a memory kill, the judge or the sandbox
left a test undecided; `unparsed` when there is no code at all. Fail closed: `timeout` and `error` are
never a negative label (`verifiers.protocol.outcome_value`).

Steps (`check_steps`), for step k with P_k = the program assembled from steps 0..k:
- the step adds no code                                  -> unverifiable ("prose")
- P_k does not compile:
    - the step stops inside a code block and the full chain's program compiles -> unverifiable
      ("code incomplete at this step")
    - otherwise                                          -> incorrect (the syntax error)
- P_k compiles but does not define the entry point yet   -> unverifiable (nothing to test yet)
  (a stdin program: P_k runs no top-level statement yet, only definitions and imports)
- P_k defines the entry point: run the tests on P_k
    - every test passes                                  -> correct
    - tests fail only with NameErrors and later steps define more names -> unverifiable
      ("depends on code written later")
    - a stdin program that prints nothing yet, with top-level code still to come -> unverifiable
    - some test ran and failed                           -> incorrect (per-test results in evidence)
    - no test failed, but some timed out, hit the memory limit or could not be judged -> unverifiable

Thread-safe: the pool hands each concurrent call its own container, and the pool is started once,
lazily, under a lock.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prm_factory.schemas.code_spec import StdioTests, load_tests
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.code.grading import run_tests
from prm_factory.verifiers.code.program import (
    assemble_program,
    compile_error,
    defined_names,
    ends_inside_block,
    extract_code_blocks,
)
from prm_factory.verifiers.code.sandbox import SandboxLimits, SandboxPool
from prm_factory.verifiers.code.stdio_runner import run_stdio_tests
from prm_factory.verifiers.code.tests_runner import CodeTests, Runner, TestReport
from prm_factory.verifiers.protocol import Verdict

Tests = CodeTests | StdioTests


@dataclass(frozen=True)
class CodeVerifierConfig:
    pool_size: int = 2
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    image: str | None = None  # None: `ensure_image()` (builds it offline on first use)
    engine_wait_s: float = 60.0  # how long a job waits for a restarting Docker engine before failing


class CodeVerifier:
    """Verifier protocol for domain="code". Use as a context manager, or call `close()` at the end."""

    name = "code-sandbox"
    # 2: proxy cases (dataset test code run unchanged), stdin/stdout tests, per-test statuses, and
    # timeout / error outcomes instead of `incorrect` for tests that could not be judged
    version = "2"

    def __init__(self, config: CodeVerifierConfig | None = None, runner: Runner | None = None) -> None:
        self.config = config or CodeVerifierConfig()
        self._runner = runner
        self._pool: SandboxPool | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> CodeVerifier:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
                self._runner = None

    def runner(self) -> Runner:
        with self._lock:
            if self._runner is None:
                from prm_factory.verifiers.code.image import ensure_image

                image = self.config.image or ensure_image()
                self._pool = SandboxPool(
                    image, self.config.pool_size, self.config.limits, engine_wait_s=self.config.engine_wait_s
                )
                self._pool.start()
                self._runner = self._pool
            return self._runner

    def grade(self, problem: Problem, completion: str) -> Verdict:
        tests = _tests_of(problem)
        if tests is None:
            return Verdict("unparsed", "problem has no code tests", {})
        program = program_of_completion(completion, _entry_point(tests))
        if program is None:
            return Verdict("unparsed", "no code in the completion", {})
        error = compile_error(_prelude(tests) + "\n" + program)
        if error is not None:
            return Verdict("incorrect", f"program does not compile: {error}", {"program": program[-4000:]})
        return _outcome(self._run(program, tests))

    def _run(self, program: str, tests: Tests) -> TestReport:
        if isinstance(tests, StdioTests):
            return run_stdio_tests(program, tests, self.runner())
        return run_tests(program, tests, self.runner())

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        tests = _tests_of(problem)
        if tests is None:
            return [Verdict("unverifiable", "problem has no code tests", {}) for _ in steps]
        full_program = assemble_program("\n".join(steps))
        full_compiles = compile_error(_prelude(tests) + "\n" + full_program) is None
        full_names = defined_names(full_program)
        verdicts: list[Verdict] = []
        previous = ""
        reports: dict[str, TestReport] = {}
        for k in range(len(steps)):
            prefix = "\n".join(steps[: k + 1])
            program = assemble_program(prefix)
            if program == previous:
                verdicts.append(Verdict("unverifiable", "prose: the step adds no code", {}))
                continue
            previous = program
            verdicts.append(
                self._judge_step(tests, prefix, program, full_compiles, full_names, reports, full_program)
            )
        return verdicts

    def _judge_step(
        self,
        tests: Tests,
        prefix: str,
        program: str,
        full_compiles: bool,
        full_names: set[str],
        reports: dict[str, TestReport],
        full_program: str = "",
    ) -> Verdict:
        error = compile_error(_prelude(tests) + "\n" + program)
        if error is not None:
            if ends_inside_block(prefix) and full_compiles:
                return Verdict("unverifiable", "code incomplete at this step", {"syntax_error": error})
            return Verdict("incorrect", f"code so far does not compile: {error}", {"syntax_error": error})
        names = defined_names(_prelude(tests) + "\n" + program)
        entry_point = _entry_point(tests)
        if entry_point is not None and entry_point not in names:
            return Verdict("unverifiable", f"compiles; {entry_point} not defined yet", {})
        if entry_point is None and not runs_statements(program):
            return Verdict("unverifiable", "compiles; no top-level statement runs yet", {})
        if program not in reports:
            reports[program] = self._run(program, tests)
        report = reports[program]
        evidence = report.evidence()
        if report.passed:
            return Verdict("correct", f"all {len(report.results)} tests pass with the code so far", evidence)
        failing = [r for r in report.results if r.status == "failed"]
        later_names = full_names - names
        if failing and all(_name_error(r, report) for r in failing) and later_names:
            return Verdict("unverifiable", "tests need names defined in later steps", evidence)
        if isinstance(tests, StdioTests) and failing and all(not r.actual for r in failing):
            if _running_statements(full_program) > _running_statements(program):
                return Verdict("unverifiable", "prints nothing yet; later steps write the output", evidence)
        if failing:
            return Verdict(
                "incorrect",
                f"{len(failing)} of {len(report.results)} tests fail with the code so far",
                evidence,
            )
        if report.broke_rules:
            return Verdict(
                "incorrect", f"the code so far broke the sandbox's rules: {report.exec_reason}", evidence
            )
        counts = ", ".join(f"{n} {status}" for status, n in sorted(report.status_counts().items()))
        return Verdict("unverifiable", f"tests could not be judged ({counts})", evidence)


def program_of_completion(completion: str, entry_point: str | None) -> str | None:
    """The program a completion writes, or None when it writes none.

    Without any fence, the whole completion counts as code only if it compiles and defines the
    entry point (models sometimes answer with bare code); for a stdin program (no entry point), if it
    compiles and runs a top-level statement.
    """
    if any(block.is_python for block in extract_code_blocks(completion)):
        program = assemble_program(completion)
        return program if program.strip() else None
    if compile_error(completion) is not None:
        return None
    if entry_point is None:
        return completion if runs_statements(completion) else None
    return completion if entry_point in defined_names(completion) else None


def _tests_of(problem: Problem) -> Tests | None:
    if not problem.tests:
        return None
    return load_tests(problem.tests)


def _entry_point(tests: Tests) -> str | None:
    return None if isinstance(tests, StdioTests) else tests.entry_point


def _prelude(tests: Tests) -> str:
    return "" if isinstance(tests, StdioTests) else tests.prelude


def _name_error(result: Any, report: TestReport) -> bool:
    return "NameError" in result.reason or (
        "NameError" in report.stderr_tail and "runtime error" in result.reason
    )


def runs_statements(program: str) -> bool:
    """Whether a program runs anything at top level besides definitions, imports and docstrings."""
    try:
        module = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    inert = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(
        not isinstance(node, inert)
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        for node in module.body
    )


def _running_statements(program: str) -> int:
    try:
        module = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return 0
    return sum(runs_statements(ast.unparse(node)) for node in module.body)


def _outcome(report: TestReport) -> Verdict:
    """correct | incorrect (a test ran and failed, or the program broke the sandbox's rules) | timeout |
    error (a memory kill, the judge or the sandbox left a test undecided)."""
    evidence: dict[str, Any] = report.evidence()
    total = len(report.results)
    if report.passed:
        return Verdict("correct", f"all {total} tests pass", evidence)
    failing = report.n_failed
    if failing:
        first = next(r for r in report.results if r.status == "failed")
        why = report.program_error[:300] if report.program_error else first.reason[:300]
        return Verdict("incorrect", f"{failing} of {total} tests fail: {why}", evidence)
    if report.broke_rules:
        return Verdict("incorrect", f"sandbox: {report.exec_reason}", evidence)
    counts = report.status_counts()
    if counts.get("timeout"):
        return Verdict("timeout", f"{counts['timeout']} of {total} tests did not finish in time", evidence)
    undecided = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if status != "passed")
    return Verdict("error", f"tests could not be judged ({undecided})", evidence)
