"""What the review page shows of a drawn step: its problem, its whole chain, and (hidden until answered) what
each source said, read once from the dataset version when the sample is drawn.

Why copied out of the dataset: the audit is of one version, and the page must answer in milliseconds on a
dataset of millions of steps; a few hundred chains as JSON in the audit's own file do both. For a code chain
the page shows the program the sandbox ran (the chain's python blocks joined, verifiers/code/program.py) and
the per-test results of its final answer (the chain's `outcome_evidence`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb

from prm_factory.audit.sources import AuditedSource
from prm_factory.verifiers.code.program import assemble_program

MAX_EVIDENCE_CHARS = 4000
"""A source's evidence (JSON) is cut to this many characters on the page: enough to read, never a flood."""

MAX_TEST_REASON_CHARS = 400

CHAIN_SQL = """
SELECT c.chain_id, c.problem_id, c.run_id, c.model, c.text AS chain_text, c.final_answer, c.outcome,
       c.outcome_reason, c.outcome_evidence, p.source AS problem_set, p.domain, p.text AS problem,
       p.reference_answer, p.reference_solution
FROM chains AS c
LEFT JOIN problems AS p USING (problem_id)
WHERE list_contains($chain_ids, c.chain_id)
"""


def _rows(connection: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = connection.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _json_or_none(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def code_tests(outcome_evidence: str | None) -> list[dict[str, Any]]:
    """Per-test results of a code chain's final program (name, status, reason, actual value).

    >>> code_tests('{"tests": [{"name": "t1", "status": "failed", "reason": "mismatch", "actual": "3"}]}')
    [{'name': 't1', 'status': 'failed', 'reason': 'mismatch', 'actual': '3'}]
    >>> code_tests("{}"), code_tests(None)
    ([], [])
    """
    evidence = _json_or_none(outcome_evidence)
    tests = evidence.get("tests") if isinstance(evidence, dict) else None
    if not isinstance(tests, list):
        return []
    return [
        {
            "name": str(test.get("name", "")),
            "status": str(test.get("status", "passed" if test.get("passed") else "failed")),
            "reason": str(test.get("reason", ""))[:MAX_TEST_REASON_CHARS],
            "actual": None if test.get("actual") is None else str(test.get("actual"))[:MAX_TEST_REASON_CHARS],
        }
        for test in tests
        if isinstance(test, dict)
    ]


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_EVIDENCE_CHARS:
        return value[:MAX_EVIDENCE_CHARS] + f" … [{len(value) - MAX_EVIDENCE_CHARS} more characters]"
    return value


def chain_contexts(
    connection: duckdb.DuckDBPyConnection, chain_ids: Sequence[str], sources: Sequence[AuditedSource]
) -> dict[str, dict[str, Any]]:
    """Each chain's page payload: problem, steps, code program and tests, and per step what each source said
    (`verdicts`: {step index: {source: {column: value}}}, shown only after the reviewer answered)."""
    ids = sorted(set(chain_ids))
    if not ids:
        return {}
    chains = _rows(connection, CHAIN_SQL, {"chain_ids": ids})
    step_columns = sorted({column for source in sources for column in source.shown})
    present = {row[0] for row in connection.execute("DESCRIBE steps").fetchall()}
    columns = [c for c in step_columns if c in present]
    steps = _rows(
        connection,
        f"SELECT chain_id, step_index, text{''.join(', ' + c for c in columns)} FROM steps "
        "WHERE list_contains($chain_ids, chain_id) ORDER BY chain_id, step_index",
        {"chain_ids": ids},
    )
    by_chain: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        by_chain.setdefault(step["chain_id"], []).append(step)
    contexts = {}
    for chain in chains:
        chain_steps = by_chain.get(chain["chain_id"], [])
        code = chain["domain"] == "code"
        verdicts = {
            str(step["step_index"]): {
                source.name: {c: _shown(step.get(c)) for c in source.shown if c in present}
                for source in sources
            }
            for step in chain_steps
        }
        contexts[chain["chain_id"]] = {
            "chain_id": chain["chain_id"],
            "problem_id": chain["problem_id"],
            "run_id": chain["run_id"],
            "model": chain["model"],
            "problem_set": chain["problem_set"],
            "domain": chain["domain"],
            "problem": chain["problem"],
            "reference_answer": chain["reference_answer"],
            "reference_solution": chain["reference_solution"],
            "final_answer": chain["final_answer"],
            "steps": [{"index": int(step["step_index"]), "text": step["text"]} for step in chain_steps],
            "program": assemble_program(chain["chain_text"] or "") if code else None,
            "tests": code_tests(chain["outcome_evidence"]) if code else [],
            # hidden until answered: the chain's graded outcome is a verdict too
            "outcome": {"outcome": chain["outcome"], "reason": chain["outcome_reason"]},
            "verdicts": verdicts,
        }
    return contexts
