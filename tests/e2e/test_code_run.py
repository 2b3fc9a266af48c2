"""A code run on the real stack: vLLM engine, Docker sandbox pool running the tests, Delta, DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.docker, pytest.mark.slow]


STATUSES = {"passed", "failed", "timeout", "memory", "error"}
APPS_SLICE = Path(__file__).resolve().parents[2] / "data" / "apps" / "apps_slice.jsonl"


def _assert_test_labeled(dataset_root: Path) -> None:
    """Chains graded by their tests with one status per test; `incorrect` only beside a failed test."""
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    ds = Dataset(str(dataset_root))
    problems = query(ds, "SELECT domain, tests FROM problems").to_pylist()
    assert {p["domain"] for p in problems} == {"code"} and all(json.loads(p["tests"]) for p in problems)
    chains = query(ds, "SELECT outcome, outcome_reason, outcome_evidence FROM chains").to_pylist()
    assert {c["outcome"] for c in chains} <= {"correct", "incorrect", "unparsed", "timeout", "error"}
    graded = [c for c in chains if c["outcome"] != "unparsed"]
    for chain in graded:  # a chain whose program ran keeps one record per test, not only pass/fail
        evidence = json.loads(chain["outcome_evidence"])
        if chain["outcome_reason"].startswith("program does not compile"):
            assert "program" in evidence
            continue
        assert evidence["n_tests"] == len(evidence["tests"]) >= 1
        assert all({"name", "passed", "reason", "status"} <= set(t) for t in evidence["tests"])
        statuses = [t["status"] for t in evidence["tests"]]
        assert set(statuses) <= STATUSES
        assert (chain["outcome"] == "correct") == (evidence["n_passed"] == evidence["n_tests"])
        if chain["outcome"] == "incorrect":
            assert "failed" in statuses or evidence["misbehaved"], evidence
        if chain["outcome"] in ("timeout", "error"):
            assert "failed" not in statuses, evidence
    steps = query(ds, "SELECT verdict, verifier, value_source, n_rollouts FROM steps").to_pylist()
    assert steps and all(s["verifier"] == "code-sandbox" for s in steps)
    assert {s["verdict"] for s in steps} <= {"correct", "incorrect", "unverifiable"}
    assert any(s["value_source"] in ("rollouts", "outcome") for s in steps)


def test_code_run_writes_test_labeled_chains(engine, code_config, tmp_path: Path) -> None:
    from prm_factory.flows.generation_run import generation_run

    cfg = code_config(tmp_path / "ds")
    summary = generation_run(cfg)
    assert summary.status == "succeeded", summary.error
    assert summary.domain == "code" and summary.problems == 2 and summary.chains == 4
    _assert_test_labeled(tmp_path / "ds")


def test_stdin_run_on_the_apps_slice(engine, code_config, tmp_path: Path) -> None:
    """Programs that read stdin (APPS rows): each test's input as a file, output compared on the host."""
    from prm_factory.flows.generation_run import generation_run

    cfg = code_config(tmp_path / "ds", **{"problems.path": str(APPS_SLICE), "problems.limit": 1})
    summary = generation_run(cfg)
    assert summary.status == "succeeded", summary.error
    assert summary.domain == "code" and summary.problems == 1 and summary.chains == 2
    _assert_test_labeled(tmp_path / "ds")
