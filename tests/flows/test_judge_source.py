"""The `judge` label source wired into a run: the budget picks chains, one engine call judges them, and the
judge's labels land in their own columns and in the consensus (fake engine: a scripted judgement)."""

from __future__ import annotations

import dataclasses

from prm_factory.sampling.protocol import Generation
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query


def _scripted_judge(engine, answer: str) -> list[int]:
    """Make the fake engine answer judge prompts with `answer`; returns the list of judge-call sizes."""
    real_generate = engine.sampler.generate
    calls: list[int] = []

    def generate(prompts, params):
        if prompts and "paragraph_0" in prompts[0]:
            calls.append(len(prompts))
            return [[Generation(answer, 7, "stop")] for _ in prompts]
        return real_generate(prompts, params)

    engine.sampler = dataclasses.replace(engine.sampler)
    engine.sampler.generate = generate  # type: ignore[method-assign]
    return calls


def test_the_judge_labels_every_chain_with_budget_all(fake_engine, flow_config, tmp_path):
    from prm_factory.flows.generation_run import generation_run

    calls = _scripted_judge(fake_engine, r"The earliest error is in paragraph 1: \boxed{1}")
    summary = generation_run(flow_config(**{"judge.enabled": True, "judge.budget": "all"}))
    assert summary.status == "succeeded", summary.error
    assert calls == [summary.chains]  # one batched call for every chain
    ds = Dataset(str(tmp_path / "ds"))
    rows = query(
        ds, "SELECT step_index, judge_verdict, judge_labeler FROM steps ORDER BY chain_id, step_index"
    ).to_pylist()
    by_index = {r["step_index"]: r["judge_verdict"] for r in rows}
    assert by_index[0] == "correct" and by_index[1] == "incorrect"
    assert all(r["judge_labeler"].startswith("fake-model@") for r in rows)
    firsts = query(ds, "SELECT DISTINCT first_error_judge FROM chains").to_pylist()
    assert firsts == [{"first_error_judge": 1}]
    negatives = query(ds, "SELECT count(*) AS n FROM steps WHERE step_index = 1 AND consensus = 'positive'")
    assert negatives.to_pylist() == [{"n": 0}]  # the judge's `incorrect` is a strong vote: never positive


def test_an_unreadable_judgement_is_no_label(fake_engine, flow_config, tmp_path):
    from prm_factory.flows.generation_run import generation_run

    _scripted_judge(fake_engine, "I think the solution looks fine overall.")
    summary = generation_run(flow_config(**{"judge.enabled": True, "judge.budget": "all"}))
    assert summary.status == "succeeded", summary.error
    ds = Dataset(str(tmp_path / "ds"))
    verdicts = query(ds, "SELECT DISTINCT judge_verdict FROM steps").to_pylist()
    assert verdicts == [{"judge_verdict": "unverifiable"}]
    assert query(ds, "SELECT DISTINCT first_error_judge FROM chains").to_pylist() == [
        {"first_error_judge": None}
    ]


def test_the_judge_is_off_by_default(fake_engine, flow_config, tmp_path):
    from prm_factory.flows.generation_run import generation_run

    calls = _scripted_judge(fake_engine, r"\boxed{0}")
    summary = generation_run(flow_config())
    assert summary.status == "succeeded", summary.error
    assert calls == []
    verdicts = query(Dataset(str(tmp_path / "ds")), "SELECT DISTINCT judge_verdict FROM steps").to_pylist()
    assert verdicts == [{"judge_verdict": None}]
