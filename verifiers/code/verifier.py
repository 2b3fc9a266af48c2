"""`CodeVerifier`: grades code chains and judges their steps by running tests in the sandbox pool.

Outcome (`grade`): the program assembled from every python code block of the completion (or the whole
completion, when it has no fence but is itself a program defining the entry point) is run against the
problem's tests. `correct` iff every test passes; `incorrect` when any fails (or the program does not
compile); `unparsed` when there is no code at all.

Steps (`check_steps`), for step k with P_k = the program assembled from steps 0..k:
- the step adds no code                                  -> unverifiable ("prose")
- P_k does not compile:
    - the step stops inside a code block and the full chain's program compiles -> unverifiable
      ("code incomplete at this step")
    - otherwise                                          -> incorrect (the syntax error)
- P_k compiles but does not define the entry point yet   -> unverifiable (nothing to test yet)
- P_k defines the entry point: run the tests on P_k
    - every test passes                                  -> correct
    - tests fail only with NameErrors and later steps define more names -> unverifiable
      ("depends on code written later")
    - otherwise                                          -> incorrect (per-test results in evidence)

Thread-safe: the pool hands each concurrent call its own container, and the pool is started once,
lazily, under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schemas.records import Problem
from verifiers.code.program import (
    assemble_program,
    compile_error,
    defined_names,
    ends_inside_block,
    extract_code_blocks,
)
from verifiers.code.sandbox import SandboxLimits, SandboxPool
from verifiers.code.tests_runner import CodeTests, Runner, TestReport, run_tests
from verifiers.protocol import Verdict


@dataclass(frozen=True)
class CodeVerifierConfig:
    pool_size: int = 2
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    image: str | None = None  # None: `ensure_image()` (builds it offline on first use)
    engine_wait_s: float = 60.0  # how long a job waits for a restarting Docker engine before failing


class CodeVerifier:
    """Verifier protocol for domain="code". Use as a context manager, or call `close()` at the end."""

    name = "code-sandbox"
    version = "1"

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
                from verifiers.code.image import ensure_image

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
        program = program_of_completion(completion, tests.entry_point)
        if program is None:
            return Verdict("unparsed", "no code in the completion", {})
        error = compile_error(tests.prelude + "\n" + program)
        if error is not None:
            return Verdict("incorrect", f"program does not compile: {error}", {"program": program[-4000:]})
        report = run_tests(program, tests, self.runner())
        return _outcome(report)

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        tests = _tests_of(problem)
        if tests is None:
            return [Verdict("unverifiable", "problem has no code tests", {}) for _ in steps]
        full_program = assemble_program("\n".join(steps))
        full_compiles = compile_error(tests.prelude + "\n" + full_program) is None
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
            verdicts.append(self._judge_step(tests, prefix, program, full_compiles, full_names, reports))
        return verdicts

    def _judge_step(
        self,
        tests: CodeTests,
        prefix: str,
        program: str,
        full_compiles: bool,
        full_names: set[str],
        reports: dict[str, TestReport],
    ) -> Verdict:
        error = compile_error(tests.prelude + "\n" + program)
        if error is not None:
            if ends_inside_block(prefix) and full_compiles:
                return Verdict("unverifiable", "code incomplete at this step", {"syntax_error": error})
            return Verdict("incorrect", f"code so far does not compile: {error}", {"syntax_error": error})
        names = defined_names(tests.prelude + "\n" + program)
        if tests.entry_point not in names:
            return Verdict("unverifiable", f"compiles; {tests.entry_point} not defined yet", {})
        if program not in reports:
            reports[program] = run_tests(program, tests, self.runner())
        report = reports[program]
        evidence = report.evidence()
        if report.passed:
            return Verdict("correct", f"all {len(report.results)} tests pass with the code so far", evidence)
        failing = [r for r in report.results if not r.passed]
        if failing and all("NameError" in r.reason for r in failing) and full_names - names:
            return Verdict("unverifiable", "tests need names defined in later steps", evidence)
        return Verdict(
            "incorrect", f"{len(failing)} of {len(report.results)} tests fail with the code so far", evidence
        )


def program_of_completion(completion: str, entry_point: str) -> str | None:
    """The program a completion writes, or None when it writes none.

    Without any fence, the whole completion counts as code only if it compiles and defines the
    entry point (models sometimes answer with bare code).
    """
    if any(block.is_python for block in extract_code_blocks(completion)):
        program = assemble_program(completion)
        return program if program.strip() else None
    if compile_error(completion) is None and entry_point in defined_names(completion):
        return completion
    return None


def _tests_of(problem: Problem) -> CodeTests | None:
    if not problem.tests:
        return None
    return CodeTests.from_json(problem.tests)


def _outcome(report: TestReport) -> Verdict:
    evidence: dict[str, Any] = report.evidence()
    if report.passed:
        return Verdict("correct", f"all {len(report.results)} tests pass", evidence)
    if report.program_error:
        return Verdict("incorrect", report.program_error[:300], evidence)
    if report.timed_out:
        return Verdict("incorrect", "wall-clock limit reached", evidence)
    if report.oom or report.misbehaved:
        return Verdict("incorrect", f"sandbox: {report.exec_reason}", evidence)
    failing = len(report.results) - report.n_passed
    return Verdict("incorrect", f"{failing} of {len(report.results)} tests fail", evidence)
