"""Code tests as data, and running them against a program in the sandbox with verdicts decided here.

The tests are a `CodeTests` spec (spec.py): each assert split into calls, run inside the sandbox next to
the untrusted program, and a predicate over their values (`__v[0] == 5`), decided outside it.

Where the predicate is `__v[i] == <literal>` (most tests), the host decodes the value and compares it
with the literal itself. Other predicates (`abs(__v[0] - 2.5) < 1e-6`) are evaluated by the harness's
`judge` mode in a second, clean sandbox process that never loads the submission. Either way the expected
value never enters the untrusted process, so neither an `__eq__` override nor a forged record can fake a
pass: only the right value does.

Proxy cases (the dataset's own test code, run unchanged) are decided by the judge's `proxy` mode, which
asks for the candidate's values in rounds (proxy.py). Legacy in-process cases (specs stored before
proxies) are decided from the harness's own verdict record; they are weaker and marked so.

Every test ends with one status: `passed`, `failed` (it ran to completion and failed: a wrong value, a
raising call, a program that died or exited before answering), `timeout`, `memory` (a wall-clock or
memory limit stopped it first) or `error` (the judge or the sandbox could not decide it). Only `failed`
is a judgement against the program; the other three are not.
"""

from __future__ import annotations

import ast
import json
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from prm_factory.schemas.code_spec import VALUES, CodeTests, TestCase, _mentions
from prm_factory.verifiers.code.harness import decode
from prm_factory.verifiers.code.program import stdlib_imports
from prm_factory.verifiers.code.sandbox import NO_OPTIONS, ExecResult, JobOptions

HARNESS_SOURCE = Path(__file__).with_name("harness.py").read_text(encoding="utf-8")
HARNESS_ARGV = ["python3", "-I", "-S", "harness.py"]


TestStatus = Literal["passed", "failed", "timeout", "memory", "error"]
UNJUDGED_STATUSES = frozenset({"timeout", "memory", "error"})


class Runner(Protocol):
    """Anything that runs files + argv in a sandbox: `SandboxPool`, or a fake in unit tests."""

    def run(self, files: dict[str, str], argv: list[str], options: JobOptions = NO_OPTIONS) -> ExecResult: ...


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest class

    name: str
    passed: bool
    reason: str  # "passed" | "missing" | "mismatch" | "error: ..." | ...
    actual: str | None  # repr of the reported value(s), truncated
    source: str
    in_process: bool = False
    status: TestStatus = "failed"
    proxy: bool = False


def test_result(
    name: str,
    status: TestStatus,
    reason: str,
    source: str,
    actual: str | None = None,
    *,
    in_process: bool = False,
    proxy: bool = False,
) -> TestResult:
    return TestResult(name, status == "passed", reason, actual, source, in_process, status, proxy)


def missing_status(execution: ExecResult, program_error: str | None) -> TestStatus:
    """Why a test has no record: a limit stopped the run (timeout / memory), the sandbox gave no report
    (error), or the program itself died, exited or flooded its output first (failed)."""
    if execution.timed_out:
        return "timeout"
    if execution.oom:
        return "memory"
    if program_error or execution.output_truncated:
        return "failed"
    if execution.exit_code is None and execution.signal is None:
        return "error"  # no supervisor report: nothing is known about the run
    return "failed"


@dataclass(frozen=True)
class TestReport:
    __test__ = False  # not a pytest class

    results: tuple[TestResult, ...]
    program_error: str | None
    timed_out: bool
    oom: bool
    misbehaved: bool
    exec_reason: str
    seconds: float
    stderr_tail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every test passed and the run itself was clean: a program that blew a limit or left a
        process behind is not a correct solution, whatever its records say."""
        clean = not (self.timed_out or self.oom or self.misbehaved)
        return clean and bool(self.results) and all(r.passed for r in self.results)

    @property
    def n_failed(self) -> int:
        return sum(r.status == "failed" for r in self.results)

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts

    @property
    def broke_rules(self) -> bool:
        """The program ran but broke the sandbox's rules (a process outlived it, output over its cap):
        a judgement against it, unlike a limit or a lost sandbox."""
        return (
            self.misbehaved
            and not self.timed_out
            and not self.oom
            and "no supervisor report" not in self.exec_reason
        )

    @property
    def n_proxy(self) -> int:
        return sum(r.proxy for r in self.results)

    @property
    def n_in_process(self) -> int:
        return sum(r.in_process for r in self.results)

    @property
    def n_passed(self) -> int:
        return sum(r.passed for r in self.results)

    def evidence(self) -> dict[str, Any]:
        """JSON-serialisable per-test detail for `Verdict.evidence`."""
        return {
            "n_tests": len(self.results),
            "n_passed": self.n_passed,
            "n_in_process": self.n_in_process,  # weaker cases, decided inside the sandboxed process
            "n_proxy": self.n_proxy,  # dataset test code run unchanged by the judge, candidate proxied
            "statuses": self.status_counts(),
            "tests": [asdict(r) for r in self.results],
            "program_error": self.program_error,
            "timed_out": self.timed_out,
            "oom": self.oom,
            "misbehaved": self.misbehaved,
            "sandbox": self.exec_reason,
            "seconds": round(self.seconds, 4),
            "stderr_tail": self.stderr_tail,
        }


def parse_records(stdout: str, nonce: str) -> list[dict[str, Any]]:
    """Records carrying this run's nonce, in order; every other line is ignored (untrusted output)."""
    records = []
    for line in stdout.splitlines():
        if nonce not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("nonce") == nonce:
            records.append(record)
    return records


def host_comparison(predicate: str) -> tuple[int, str, Any] | None:
    """(value index, op, literal) when the predicate is simple enough to decide here, else None.

    Handled: `__v[i] == LIT`, `LIT == __v[i]`, `__v[i] is None/True/False`, `__v[i]`, `not __v[i]`.
    """
    tree = ast.parse(predicate, mode="eval").body

    def value_index(node: ast.AST) -> int | None:
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == VALUES
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            return node.slice.value
        return None

    if value_index(tree) is not None:
        return value_index(tree), "truthy", None
    if (
        isinstance(tree, ast.UnaryOp)
        and isinstance(tree.op, ast.Not)
        and value_index(tree.operand) is not None
    ):
        return value_index(tree.operand), "falsy", None
    if isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        left, right, op = tree.left, tree.comparators[0], tree.ops[0]
        if value_index(left) is None:
            left, right = right, left
        index = value_index(left)
        if index is None or _mentions(right, {VALUES}):
            return None
        try:
            literal = ast.literal_eval(right)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(op, ast.Eq):
            return index, "eq", literal
        if isinstance(op, ast.Is) and literal in (None, True, False) and type(literal) in (type(None), bool):
            return index, "is", literal
    return None


def decide_on_host(predicate: str, values: list[Any]) -> bool | None:
    """The verdict for a simple predicate over decoded plain values, or None to defer to the judge."""
    simple = host_comparison(predicate)
    if simple is None:
        return None
    index, op, literal = simple
    if index >= len(values):
        return False
    value = values[index]
    if op == "truthy":
        return bool(value)
    if op == "falsy":
        return not value
    if op == "is":
        return value is literal
    return bool(value == literal)


def run_split_cases(
    program: str, tests: CodeTests, indices: list[int], pool: Runner, results: dict[int, TestResult]
) -> tuple[ExecResult, str | None, float]:
    """The split (and legacy in-process) cases: one `calls` job, verdicts here or in the judge."""
    nonce = secrets.token_hex(16)
    job = {
        "mode": "calls",
        "nonce": nonce,
        "program": tests.prelude + ("\n" if tests.prelude else "") + program,
        "entry_point": tests.entry_point,
        "setup": tests.setup,
        "cases": [
            {
                "id": i,
                "calls": list(tests.cases[i].calls),
                "predicate": tests.cases[i].predicate if tests.cases[i].in_process else "",
                "in_process": tests.cases[i].in_process,
            }
            for i in indices
        ],
    }
    execution = pool.run({"harness.py": HARNESS_SOURCE, "job.json": json.dumps(job)}, HARNESS_ARGV)
    records = parse_records(execution.stdout, nonce)
    program_error = next(
        (
            f"{r['kind']}: {r.get('error', '')}"
            for r in records
            if r.get("kind") in ("program_error", "setup_error")
        ),
        None,
    )
    values: dict[tuple[int, int], dict[str, Any]] = {}
    verdicts: dict[int, dict[str, Any]] = {}
    for record in records:
        key = (record.get("case"), record.get("index"))
        if record.get("kind") == "value" and key not in values:  # first record wins
            values[key] = record  # type: ignore[index]
        elif record.get("kind") == "verdict" and record.get("case") not in verdicts:
            verdicts[record["case"]] = record

    to_judge: list[dict[str, Any]] = []
    for i in indices:
        case = tests.cases[i]
        if case.in_process:
            verdict = verdicts.get(i)
            if verdict is None:
                error = values.get((i, 0), {}).get("error")
                if error:
                    results[i] = test_result(
                        case.name, "failed", f"error: {error}", case.source, in_process=True
                    )
                else:
                    status = missing_status(execution, program_error)
                    reason = _missing_reason(program_error, execution)
                    results[i] = test_result(case.name, status, reason, case.source, in_process=True)
            else:
                ok = verdict.get("ok") is True
                status = "passed" if ok else "failed"
                reason = "passed" if ok else "assert failed"
                results[i] = test_result(case.name, status, reason, case.source, in_process=True)
            continue
        decoded, problem, status = _decoded_values(case, i, values, program_error, execution)
        if problem is not None:
            results[i] = test_result(case.name, status, problem, case.source)
            continue
        actual = _short_repr(decoded)
        verdict_here = decide_on_host(case.predicate, decoded)
        if verdict_here is None:
            to_judge.append(
                {
                    "id": i,
                    "predicate": case.predicate,
                    "values": [values[(i, j)]["value"] for j in range(len(case.calls))],
                    "actual": actual,
                }
            )
        else:
            status = "passed" if verdict_here else "failed"
            results[i] = test_result(
                case.name, status, "passed" if verdict_here else "mismatch", case.source, actual
            )
    judge_seconds = 0.0
    if to_judge:
        judge_seconds = _judge(tests, to_judge, pool, results, stdlib_imports(program))
    return execution, program_error, execution.duration_s + judge_seconds


def _missing_reason(program_error: str | None, execution: ExecResult) -> str:
    if program_error:
        return f"missing ({program_error})"
    if execution.reason:
        return f"missing ({execution.reason})"
    if execution.exit_code not in (0, None) or execution.signal:
        return f"missing (harness exit {execution.exit_code}, signal {execution.signal})"
    return "missing (no record: the program exited or tampered before this test)"


def _decoded_values(
    case: TestCase,
    i: int,
    values: dict[tuple[int, int], dict[str, Any]],
    program_error: str | None,
    execution: ExecResult,
) -> tuple[list[Any], str | None, TestStatus]:
    decoded = []
    for j in range(len(case.calls)):
        record = values.get((i, j))
        if record is None:
            return [], _missing_reason(program_error, execution), missing_status(execution, program_error)
        if "error" in record:
            return [], f"error: {str(record['error'])[:500]}", "failed"
        try:
            decoded.append(decode(record.get("value")))
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            return [], f"bad value record: {exc}", "failed"
    return decoded, None, "passed"


def _judge(
    tests: CodeTests,
    checks: list[dict[str, Any]],
    pool: Runner,
    results: dict[int, TestResult],
    program_imports: str = "",
) -> float:
    """Evaluate the non-trivial predicates in a clean sandbox process (no submission loaded).

    A judge that gives no verdict (it timed out, its sandbox was lost) leaves the test `timeout` or
    `error`, never `failed`: the program was not shown wrong."""
    nonce = secrets.token_hex(16)
    job = {
        "mode": "judge",
        "nonce": nonce,
        # the program's stdlib imports first (see program.stdlib_imports), then the dataset's setup
        "setup": "\n".join(part for part in (program_imports, tests.setup) if part),
        "checks": [{"id": c["id"], "predicate": c["predicate"], "values": c["values"]} for c in checks],
    }
    execution = pool.run({"harness.py": HARNESS_SOURCE, "job.json": json.dumps(job)}, HARNESS_ARGV)
    verdicts = {}
    for record in parse_records(execution.stdout, nonce):
        if record.get("kind") == "verdict" and record.get("case") not in verdicts:
            verdicts[record["case"]] = record
    for check in checks:
        case = tests.cases[check["id"]]
        verdict = verdicts.get(check["id"])
        if verdict is None:
            reason = f"judge gave no verdict ({execution.reason or execution.stderr[-200:]})"
            status: TestStatus = "timeout" if execution.timed_out else "error"
            results[check["id"]] = test_result(case.name, status, reason, case.source, check["actual"])
        else:
            ok = verdict.get("ok") is True
            reason = (
                "passed"
                if ok
                else ("error: " + str(verdict["error"]) if verdict.get("error") else "mismatch")
            )
            status = "passed" if ok else "failed"
            results[check["id"]] = test_result(case.name, status, reason, case.source, check["actual"])
    return execution.duration_s


def _short_repr(values: list[Any], limit: int = 300) -> str:
    try:
        text = repr(values[0]) if len(values) == 1 else repr(values)
    except ValueError:  # an int beyond Python's str-digits limit
        text = "<value too large to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
