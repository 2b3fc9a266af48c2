"""The host side of proxy cases: a dataset's own test code, run unchanged, with `candidate` proxied.

A proxy case is decided in rounds, each two sandbox jobs in separate processes:

1. `proxy` (judge, clean: the submission is never loaded) runs the test code with the answers known so
   far. When every call it makes is answered, it reports the verdict: that exact pass is the test code
   as written, over the submission's real values. Otherwise it reports the calls it needs.
2. `invoke` (untrusted) calls the entry point with those arguments and reports each value, or the
   exception it raised. Expected values never reach it: it only ever sees arguments.

Answers are keyed by the encoded arguments and shared by every proxy case of one program. A batch that
hits the wall-clock or memory limit answers the calls it finished; the call it was in is retried alone
at the head of the next batch, and only a call that blows the limit on its own is answered `timeout` /
`memory` (the test then ends with that status, not `failed`). A program that dies, exits or floods its
output during a call answers that call with an error, which the test code sees raised (usually a
failed test). Each round answers at least one call, and `MAX_ROUNDS` bounds the rest.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from prm_factory.verifiers.code.sandbox import ExecResult
from prm_factory.verifiers.code.tests_runner import (
    HARNESS_ARGV,
    HARNESS_SOURCE,
    Runner,
    TestResult,
    TestStatus,
    parse_records,
    test_result,
)

MAX_ROUNDS = 64
JUDGE_SEED = 0  # `random` is seeded the same in every round, so unseeded test code repeats its draws
STATUSES = ("passed", "failed", "timeout", "memory", "error")


@dataclass
class ProxyOutcome:
    results: dict[int, TestResult] = field(default_factory=dict)
    runs: list[ExecResult] = field(default_factory=list)
    seconds: float = 0.0
    program_error: str | None = None


def run_proxy_cases(program: str, tests: Any, indices: list[int], pool: Runner) -> ProxyOutcome:
    """Decide the proxy cases `indices` of `tests` (a CodeTests) against `program` (prelude included)."""
    outcome = ProxyOutcome()
    answers: dict[str, dict[str, Any]] = {}
    for i in indices:
        case = tests.cases[i]
        status, reason, calls = _decide(program, tests, case.source, answers, pool, outcome)
        detail = f"{reason} ({calls} candidate calls)" if calls is not None else reason
        outcome.results[i] = test_result(case.name, status, detail, case.source, proxy=True)
    return outcome


def _decide(
    program: str,
    tests: Any,
    code: str,
    answers: dict[str, dict[str, Any]],
    pool: Runner,
    outcome: ProxyOutcome,
) -> tuple[TestStatus, str, int | None]:
    for _ in range(MAX_ROUNDS):
        judge, records = _run(
            pool,
            outcome,
            {
                "mode": "proxy",
                "context": tests.context,
                "code": code,
                "entry_point": tests.entry_point,
                "answers": answers,
                "seed": JUDGE_SEED,
            },
        )
        verdict = next((r for r in records if r.get("kind") == "verdict"), None)
        if verdict is not None:
            status = verdict.get("status")
            if status not in STATUSES:
                return "error", f"judge reported an unknown status {status!r}", None
            if status == "passed" and outcome.program_error is None and _broke_rules(outcome):
                return "failed", "the program broke the sandbox's rules: " + _rule_breaks(outcome), None
            calls = int(verdict.get("calls", 0))
            if status == "passed" and calls == 0:
                return "error", "the test code never called the candidate: nothing was tested", 0
            reason = "passed" if status == "passed" else str(verdict.get("detail", ""))[:500] or status
            return status, reason, calls
        needs: dict[str, dict[str, Any]] = {}
        for record in records:
            if record.get("kind") == "need" and isinstance(record.get("calls"), list):
                for call in record["calls"]:
                    if isinstance(call, dict) and call.get("key") not in answers:
                        needs.setdefault(str(call.get("key")), call)
        if not needs:
            if judge.timed_out:
                return "timeout", "the test code did not finish in the judge's time limit", None
            why = judge.reason or judge.stderr[-300:] or "no verdict and no calls"
            return "error", f"judge gave no verdict ({why})", None
        _invoke(program, tests.entry_point, list(needs.values()), answers, pool, outcome)
    return "error", f"the test code needed more than {MAX_ROUNDS} rounds of dependent calls", None


def _run(pool: Runner, outcome: ProxyOutcome, job: dict[str, Any]) -> tuple[ExecResult, list[dict[str, Any]]]:
    nonce = secrets.token_hex(16)
    execution = pool.run(
        {"harness.py": HARNESS_SOURCE, "job.json": json.dumps({**job, "nonce": nonce})}, HARNESS_ARGV
    )
    outcome.seconds += execution.duration_s
    return execution, parse_records(execution.stdout, nonce)


def _invoke(
    program: str,
    entry_point: str,
    calls: list[dict[str, Any]],
    answers: dict[str, dict[str, Any]],
    pool: Runner,
    outcome: ProxyOutcome,
) -> None:
    """Run `calls` in the submission's process and store what each answered."""
    execution, records = _run(
        pool,
        outcome,
        {
            "mode": "invoke",
            "program": program,
            "entry_point": entry_point,
            "calls": [{"key": c["key"], "args": c["args"], "kwargs": c["kwargs"]} for c in calls],
        },
    )
    outcome.runs.append(execution)
    wanted = {c["key"] for c in calls}
    for record in records:
        if record.get("kind") == "program_error":
            error = str(record.get("error", ""))[:500]
            outcome.program_error = outcome.program_error or f"program_error: {error}"
            for key in wanted - answers.keys():
                answers[key] = {"error_type": "ProgramError", "error": f"the program failed to load: {error}"}
            return
        key = record.get("key")
        if record.get("kind") == "answer" and key in wanted and key not in answers:  # first record wins
            if "error" in record:
                answers[key] = {
                    "error_type": str(record.get("error_type", "")),
                    "error": str(record["error"])[:500],
                }
            else:
                answers[key] = {"value": record.get("value")}
    for position, call in enumerate(calls):
        if call["key"] in answers:
            continue
        answer = _unanswered(execution, first_in_batch=position == 0)
        if answer is not None:
            answers[call["key"]] = answer
        return  # the calls after the first unanswered one never ran: asked again next round


def _unanswered(execution: ExecResult, *, first_in_batch: bool) -> dict[str, Any] | None:
    """The answer for the call a batch stopped in, or None to retry it at the head of the next batch."""
    if execution.output_truncated:
        return {"error_type": "OutputOverflow", "error": "the program's output went over its cap"}
    lost = execution.exit_code is None and execution.signal is None  # no report: nothing known
    if execution.timed_out or execution.oom or lost:
        if not first_in_batch:
            return None
        if execution.timed_out:
            return {"stopped": "timeout", "detail": "the call did not return within the time limit"}
        if execution.oom:
            return {"stopped": "memory", "detail": "the call ran out of memory"}
        return {"stopped": "error", "detail": f"the sandbox lost the call ({execution.reason})"}
    if execution.signal is not None:
        return {
            "error_type": "ProgramExited",
            "error": f"the program was killed by signal {execution.signal} during this call",
        }
    return {"error_type": "ProgramExited", "error": "the program exited during this call"}


def _broke_rules(outcome: ProxyOutcome) -> bool:
    return any(
        r.misbehaved and r.exit_code is not None and not r.timed_out and not r.oom for r in outcome.runs
    )


def _rule_breaks(outcome: ProxyOutcome) -> str:
    return "; ".join(dict.fromkeys(r.reason for r in outcome.runs if r.misbehaved and r.reason))
