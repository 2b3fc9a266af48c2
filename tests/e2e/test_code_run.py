"""A code run on the real stack: vLLM engine, Docker sandbox pool running the tests, Delta, DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.docker, pytest.mark.slow]


def test_code_run_writes_test_labeled_chains(engine, code_config, tmp_path: Path) -> None:
    from flows.generation_run import generation_run
    from storage.dataset import Dataset
    from storage.sql import query

    cfg = code_config(tmp_path / "ds")
    summary = generation_run(cfg)
    assert summary.status == "succeeded", summary.error
    assert summary.domain == "code" and summary.problems == 2 and summary.chains == 4
    ds = Dataset(str(tmp_path / "ds"))
    problems = query(ds, "SELECT domain, tests FROM problems").to_pylist()
    assert {p["domain"] for p in problems} == {"code"} and all(json.loads(p["tests"]) for p in problems)
    chains = query(ds, "SELECT outcome, outcome_reason, outcome_evidence FROM chains").to_pylist()
    assert {c["outcome"] for c in chains} <= {"correct", "incorrect", "unparsed"}
    graded = [c for c in chains if c["outcome"] != "unparsed"]
    for chain in graded:  # a chain whose program ran keeps one record per test, not only pass/fail
        evidence = json.loads(chain["outcome_evidence"])
        if chain["outcome_reason"].startswith("program does not compile"):
            assert "program" in evidence
            continue
        assert evidence["n_tests"] == len(evidence["tests"]) >= 1
        assert all({"name", "passed", "reason"} <= set(t) for t in evidence["tests"])
        assert (chain["outcome"] == "correct") == (evidence["n_passed"] == evidence["n_tests"])
    steps = query(ds, "SELECT verdict, verifier, value_source, n_rollouts FROM steps").to_pylist()
    assert steps and all(s["verifier"] == "code-sandbox" for s in steps)
    assert {s["verdict"] for s in steps} <= {"correct", "incorrect", "unverifiable"}
    assert any(s["value_source"] in ("rollouts", "outcome") for s in steps)
