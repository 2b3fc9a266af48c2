"""The runs-table row: status from the error, counts from the committed rows, provenance always filled."""

from __future__ import annotations

import json

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.run_record import RunOutput, run_record
from prm_factory.schemas.records import Rejection


def test_a_failed_run_records_its_error_zero_counts_and_full_provenance() -> None:
    config = RunConfig()
    rejected = [Rejection("r1", "problems.jsonl", 3, "answer", "missing field")]
    run = run_record(
        run_id="r1",
        started_at="2026-11-22T00:00:00+00:00",
        config=config,
        output=RunOutput(rejections=rejected),
        model="m",
        verifiers={"math-sympy": "3"},
        error="RuntimeError: engine died",
        stage_seconds={"load": 0.5},
    )
    assert run.status == "failed" and run.error == "RuntimeError: engine died"
    assert (run.n_problems, run.n_chains, run.n_steps, run.n_rejected) == (0, 0, 0, 1)
    assert json.loads(run.counts) == {"problems": 0, "chains": 0, "steps": 0, "rejected": 1}
    assert run.chain_accuracy == 0.0 and run.rollout_tokens == 0 and run.rollouts_drawn == 0
    assert run.config_hash == config.config_hash() and json.loads(run.config) == json.loads(config.to_json())
    assert "prefect" in json.loads(run.package_versions)
    assert json.loads(run.verifier_versions) == {"math-sympy": "3"}
    assert json.loads(run.stage_seconds) == {"load": 0.5}
    assert run.ended_at >= run.started_at


def test_a_run_without_error_succeeded() -> None:
    run = run_record(
        run_id="r2", started_at="2026-11-22T00:00:00+00:00", config=RunConfig(), output=RunOutput(), model="m"
    )
    assert run.status == "succeeded" and run.error == "" and run.verifier_versions == "{}"
