"""Resume, fresh-problem selection, the failure record and the run artifact, on the real flow over a
fake engine (tests/flows/conftest.py). The real-engine SIGKILL test is tests/e2e/test_resume.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.flows.domains import domain_for
from prm_factory.flows.generation_run import RunFailed, generation_run, run_generation
from prm_factory.flows.resume import CACHE_DIR, chunks
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query

CACHED = ["sample", "segment_grade", "verify", "rollouts"]


def labels_at(summary) -> list[tuple[str, float | None]]:
    """(step_id, mc_value) of every step in the dataset version the run committed, sorted."""
    table = query(
        Dataset(summary.dataset_root), "SELECT step_id, mc_value FROM steps", version=summary.version
    )
    return sorted(zip(table["step_id"].to_pylist(), table["mc_value"].to_pylist(), strict=True))


def run_problem_ids(summary) -> set[str]:
    """Problems whose chains the run owns (rows it wrote first)."""
    sql = f"SELECT DISTINCT problem_id FROM chains WHERE run_id = '{summary.run_id}'"
    return set(query(Dataset(summary.dataset_root), sql, version=summary.version)["problem_id"].to_pylist())


def verdicts_at(summary) -> list[tuple[str, str]]:
    table = query(
        Dataset(summary.dataset_root), "SELECT step_id, verdict FROM steps", version=summary.version
    )
    return sorted(zip(table["step_id"].to_pylist(), table["verdict"].to_pylist(), strict=True))


def keys(root: str | Path) -> dict[str, set[str]]:
    ds = Dataset(str(root))
    return {
        "problems": set(query(ds, "SELECT problem_id FROM problems")["problem_id"].to_pylist()),
        "chains": set(query(ds, "SELECT chain_id FROM chains")["chain_id"].to_pylist()),
        "steps": set(query(ds, "SELECT step_id FROM steps")["step_id"].to_pylist()),
    }


def test_a_rerun_reuses_every_cached_stage_and_never_starts_the_engine(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    cfg = flow_config()
    first = generation_run(cfg)
    assert first.status == "succeeded", first.error
    assert first.cached_stages == [] and first.chains == 4 and first.steps > 0
    cached = sorted(p.name.split("-")[0] for p in (tmp_path / "ds" / CACHE_DIR).iterdir())
    assert cached == ["rollouts", "sample", "segment", "verify"]
    starts, calls = fake_engine.starts, fake_engine.sampler.generate_calls

    second = generation_run(cfg)
    assert second.status == "succeeded", second.error
    assert second.cached_stages == CACHED
    assert "engine_start" not in second.stage_seconds
    assert (fake_engine.starts, fake_engine.sampler.generate_calls) == (starts, calls)
    assert (second.chains, second.steps, second.tally.labels) == (
        first.chains,
        first.steps,
        first.tally.labels,
    )
    assert labels_at(second) == labels_at(first)
    ds = Dataset(str(tmp_path / "ds"))
    assert query(ds, "SELECT count(*) AS n FROM chains").to_pylist()[0]["n"] == 4  # no duplicates


def test_a_run_that_crashed_in_rollouts_resumes_and_ends_like_an_uninterrupted_run(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    fake_engine.fail_in = {"rollouts"}
    with pytest.raises(
        RunFailed, match="failed in stage rollouts: RuntimeError: engine died during rollouts"
    ):
        generation_run(flow_config())  # a failed run is a Failed flow run, not a Completed one
    crashed = run_generation(flow_config())
    assert crashed.status == "failed" and "engine died during rollouts" in crashed.error
    ds = Dataset(str(tmp_path / "ds"))
    runs = query(ds, "SELECT status, error, n_chains FROM runs").to_pylist()
    assert runs == [{"status": "failed", "error": crashed.error, "n_chains": 0}] * 2
    assert query(ds, "SELECT count(*) AS n FROM chains").to_pylist()[0]["n"] == 0

    fake_engine.fail_in = set()
    prompts_before = len(fake_engine.sampler.prompts_seen)
    resumed = generation_run(flow_config())
    assert resumed.status == "succeeded", resumed.error
    assert resumed.cached_stages == ["sample", "segment_grade", "verify"]
    new_prompts = fake_engine.sampler.prompts_seen[prompts_before:]
    chain_prompts = [p for p in new_prompts if p.endswith("<assistant>")]
    assert chain_prompts == [], "sampling was redone although its result was cached"

    clean = generation_run(flow_config(**{"dataset.root": str(tmp_path / "clean")}))
    assert clean.cached_stages == []
    assert keys(tmp_path / "ds") == keys(tmp_path / "clean")


@pytest.mark.parametrize("stage", ["sample", "rollouts"])
def test_a_crash_half_way_through_a_long_stage_keeps_its_finished_chunks(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path, stage: str
) -> None:
    cfg = flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2})  # two chunks of two problems
    fake_engine.fail_in, fake_engine.ok_calls = {stage}, {stage: 1}  # the second chunk's engine call dies
    crashed = run_generation(cfg)
    assert crashed.status == "failed" and "engine died" in crashed.error
    prefix = "sample-" if stage == "sample" else "rollouts-"
    kept = [p.name for p in (tmp_path / "ds" / CACHE_DIR).iterdir() if p.name.startswith(prefix)]
    assert len(kept) == 1 and "-c0000-" in kept[0]

    fake_engine.fail_in = set()
    before = len(fake_engine.sampler.prompts_seen)
    resumed = generation_run(cfg)
    assert resumed.status == "succeeded", resumed.error
    assert stage not in resumed.cached_stages
    is_chain_prompt = stage == "sample"  # chain prompts end at the assistant turn, rollout prompts after it
    redone = [
        p for p in fake_engine.sampler.prompts_seen[before:] if p.endswith("<assistant>") == is_chain_prompt
    ]
    loaded, _ = domain_for(cfg).load(cfg, cfg.problems.limit)
    first_chunk = [problem.text for problem in chunks(loaded, 2)[0]]  # canonical order, not the file's
    assert len(first_chunk) == 2 and redone and not any(q in p for p in redone for q in first_chunk), (
        "a finished chunk was redone"
    )

    clean = generation_run(flow_config(**{"problems.limit": 4, "dataset.root": str(tmp_path / "clean")}))
    assert keys(tmp_path / "ds") == keys(tmp_path / "clean")
    assert labels_at(resumed) == labels_at(clean)
    assert (resumed.chains, resumed.steps, resumed.tally.labels) == (
        clean.chains,
        clean.steps,
        clean.tally.labels,
    )


def test_a_config_change_upstream_invalidates_the_stages_after_it(
    prefect_server: None, fake_engine, flow_config
) -> None:
    assert run_generation(flow_config()).status == "succeeded"  # the CLI's entry, on the success path
    more_rollouts = generation_run(flow_config(**{"rollouts.k": 3}))
    assert more_rollouts.cached_stages == ["sample", "segment_grade", "verify"]
    other_sampling = generation_run(flow_config(**{"sampling.temperature": 0.9}))
    assert other_sampling.cached_stages == []


def test_resume_disabled_caches_nothing(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    cfg = flow_config(**{"resume.enabled": False})
    generation_run(cfg)
    second = generation_run(cfg)
    assert second.cached_stages == [] and "engine_start" in second.stage_seconds
    cache = tmp_path / "ds" / CACHE_DIR
    assert not cache.exists() or not any(cache.iterdir())


def test_skip_labeled_runs_pick_problems_not_in_the_dataset_yet(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    cfg = flow_config(**{"problems.skip_labeled": True})
    first, second = generation_run(cfg), generation_run(cfg)
    starts = fake_engine.starts
    third = generation_run(cfg)
    assert (first.problems, second.problems, third.problems) == (2, 2, 0)
    assert fake_engine.starts == starts and "engine_start" not in third.stage_seconds
    first_ids, second_ids = run_problem_ids(first), run_problem_ids(second)
    assert len(first_ids) == len(second_ids) == 2 and not first_ids & second_ids
    assert len(keys(tmp_path / "ds")["problems"]) == 4
    assert third.status == "succeeded" and third.chains == 0

    before = keys(tmp_path / "ds")
    repeat = generation_run(flow_config())  # without the option the same slice is labeled again
    assert repeat.chains == first.chains and keys(tmp_path / "ds") == before  # no new problem or chain


def test_a_run_publishes_a_markdown_artifact_with_counts_and_version(
    prefect_server: None, fake_engine, flow_config
) -> None:
    from prefect.artifacts import Artifact

    summary = generation_run(flow_config(name="Nightly GSM8K"))
    artifact = Artifact.get("prm-run-nightly-gsm8k")
    assert artifact is not None and artifact.type == "markdown"
    text = str(artifact.data)
    assert f"PRM run `{summary.run_id}`: succeeded" in text
    assert f"version **{summary.version}**" in text
    assert f"steps {summary.steps}" in text and "| positive |" in text and "rollout tokens" in text


@pytest.mark.slow  # spawns two worker processes that import the stack (about 100 s on 2 busy cores)
def test_verification_in_chunks_on_worker_processes_gives_the_same_labels(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    threads = generation_run(flow_config(**{"dataset.root": str(tmp_path / "threads")}))
    chunked = generation_run(
        flow_config(**{"runner.task_runner": "processes", "runner.workers": 2, "runner.verify_chunk": 1})
    )
    assert chunked.status == "succeeded", chunked.error
    assert verdicts_at(chunked) == verdicts_at(threads)
    cache = tmp_path / "ds" / CACHE_DIR
    assert len([p for p in cache.iterdir() if p.name.startswith("verify-chunk-")]) == 4  # one per chain


@pytest.mark.slow
def test_verification_on_a_local_dask_cluster_gives_the_same_labels(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    pytest.importorskip("prefect_dask", reason="prefect-dask is an optional extra (pip install prefect-dask)")
    threads = generation_run(flow_config(**{"dataset.root": str(tmp_path / "threads")}))
    on_dask = generation_run(
        flow_config(**{"runner.task_runner": "dask", "runner.workers": 2, "runner.verify_chunk": 2})
    )
    assert on_dask.status == "succeeded", on_dask.error
    assert verdicts_at(on_dask) == verdicts_at(threads)
