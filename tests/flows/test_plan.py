"""The run plan (flows/plan.py): every chunk's keys computed once, read by `needs_engine` and the chunk loop;
and the run's summary types (flows/run_summary.py) travel without importing a flow."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import prm_factory.flows.plan as plan_module
from prm_factory.flows.domains import domain_for
from prm_factory.flows.plan import labeler_versions, needs_engine, plan_run, run_labelers
from prm_factory.flows.resume import cache_dir
from prm_factory.flows.run_summary import RunFailed, RunSummary
from prm_factory.flows.stages import GENERATION
from prm_factory.storage.staging import chunk_dir


def make_plan(config):
    domain = domain_for(config)
    verifier = domain.make_verifier()
    problems, _ = domain.load(config, config.problems.limit)
    return plan_run(config, domain, verifier, problems, "run-1")


def test_the_plan_keys_every_chunk_once_and_apart(fake_engine, flow_config) -> None:
    plan = make_plan(flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2}))
    assert [c.index for c in plan.chunks] == [0, 1] and [len(c.problems) for c in plan.chunks] == [2, 2]
    first, second = (c.keys for c in plan.chunks)
    assert set(first.stages) == set(GENERATION.names())
    assert all(first[s] != second[s] for s in GENERATION.names())
    assert first.staged == first["rows"]  # resume on: the staged rows are keyed by content
    assert first["sample"].startswith(plan.keys["sample"] + "-c0000-")


def test_without_resume_staged_rows_are_keyed_by_the_run(fake_engine, flow_config) -> None:
    plan = make_plan(flow_config(**{"resume.enabled": False}))
    assert [c.keys.staged for c in plan.chunks] == ["run-1-c0000"]


def test_needs_engine_reads_the_planned_keys(fake_engine, flow_config, tmp_path: Path) -> None:
    config = flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2})
    root = str(config.dataset_root())
    plan = make_plan(config)
    assert needs_engine(root, config, plan)
    cache = cache_dir(root)
    cache.mkdir(parents=True)
    first, second = plan.chunks
    for key in (first.keys["sample"], first.keys["rollouts"]):
        (cache / key).write_text("cached")
    assert needs_engine(root, config, plan)  # the second chunk still has engine work
    chunk_dir(root, second.keys.staged).mkdir(parents=True)
    assert not needs_engine(root, config, plan)
    assert needs_engine(root, flow_config(**{"resume.enabled": False}), plan)  # no resume: always


def test_a_run_computes_each_chunks_keys_once(
    prefect_server: None, fake_engine, flow_config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prm_factory.flows.generation_run import generation_run

    calls: list[int] = []
    real = GENERATION.chunk_keys

    class Counting:
        def __getattr__(self, name):
            return getattr(GENERATION, name)

        def chunk_keys(self, run_keys, inputs, index, part):
            calls.append(index)
            return real(run_keys, inputs, index, part)

    monkeypatch.setattr(plan_module, "GENERATION", Counting())
    summary = generation_run(flow_config(**{"problems.limit": 4, "resume.chunk_problems": 2}))
    assert summary.status == "succeeded", summary.error
    assert calls == [0, 1]


def test_labelers_name_their_versions(fake_engine, flow_config) -> None:
    config = flow_config()
    domain = domain_for(config)
    labelers = run_labelers(domain.make_verifier(), domain, config)
    assert "judge" not in labelers
    versions = labeler_versions(labelers)
    assert all("+" in v for v in versions.values()) and len(versions) == len(labelers)
    judged = run_labelers(domain.make_verifier(), domain, flow_config(**{"judge.enabled": True}), "j-model")
    assert judged["judge"]["name"] == "j-model"


def test_a_failed_runs_summary_pickles_with_its_message() -> None:
    summary = RunSummary(
        run_id="r",
        domain="math",
        dataset_root="/ds",
        version=None,
        status="failed",
        error="boom",
        problems=0,
        chains=0,
        steps=0,
        rejected=[],
        chain_accuracy=0.0,
        stage_seconds={},
        rollout_tokens=0,
    )
    failed = pickle.loads(pickle.dumps(RunFailed("run r failed", summary)))
    assert str(failed) == "run r failed" and failed.summary == summary
    assert str(RunFailed("other", summary)) != str(failed)


def test_a_plugin_sources_identity_keys_the_labels(fake_engine, flow_config, tmp_path, monkeypatch) -> None:
    """A package's source joins the labelers, so its new release gives new label rows and stage keys."""
    from prm_factory.labels.registry import registry
    from tests.plugin_fixtures import install_plugin, uninstall_plugin

    install_plugin(tmp_path / "plugin", monkeypatch)
    try:
        config = flow_config(**{"labels.sources": ["reference", "digits"]})
        first = make_plan(config)
        assert first.labelers["digits"]["version"] == "1.0"
        monkeypatch.setattr(type(registry()["digits"]), "version", "2.0")
        second = make_plan(config)
        assert second.context.label_config_hash != first.context.label_config_hash
        assert second.chunks[0].keys["rows"] != first.chunks[0].keys["rows"]
        assert first.chunks[0].keys["sample"] == second.chunks[0].keys["sample"]  # the chains stay
    finally:
        uninstall_plugin(monkeypatch)
