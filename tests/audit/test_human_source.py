"""The `human` label source (audit/human_source.py): an audit's answers as step labels, the strongest vote of
the consensus, committed into a new dataset version by `relabel --source human`, and read by exports and
training rows like any source's."""

from __future__ import annotations

import json

from prm_factory.audit.create import create_audit
from prm_factory.audit.human_source import SOURCE, step_label
from prm_factory.audit.sample import SampleDesign
from prm_factory.labels.consensus import step_consensus
from prm_factory.labels.registry import registry
from prm_factory.labels.source import Strength, Vote
from prm_factory.schemas.step_labels import StepLabel, mc_label
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from tests.audit.conftest import records


def test_a_reviewer_votes_above_every_automatic_source() -> None:
    sources = registry()
    assert sources["human"] is SOURCE and "engine" not in SOURCE.needs
    said_right = StepLabel("human", "correct", labeler="human:ana")
    said_wrong = StepLabel("human", "incorrect", labeler="human:ana")
    assert SOURCE.vote(said_right) == Vote(True, Strength.REVIEWED, True)
    assert SOURCE.vote(StepLabel("human", "unverifiable")) is None  # disputed or can't tell: no vote
    false_claim = StepLabel("verifier", "incorrect", kind="closed_arithmetic")  # final against the others
    reached = mc_label(True, 1.0, {}, "mc@m")
    assert step_consensus([false_claim, said_right], sources)[0] == "positive"
    assert step_consensus([StepLabel("verifier", "correct"), reached, said_wrong], sources)[0] == "negative"


def test_a_label_keeps_every_answer_and_its_first_error_mark() -> None:
    from prm_factory.audit.human import HumanStepLabel

    given = HumanStepLabel(
        "c", 1, "incorrect", "ana: incorrect", '[{"reviewer": "ana"}]', "human:ana", "t1", "this"
    )
    label = step_label(given, "human@1+ab")
    assert (label.source, label.verdict, label.labeler, label.reason) == (
        "human",
        "incorrect",
        "human@1+ab",
        "ana: incorrect",
    )
    evidence = {
        "reviewers": "human:ana",
        "labeled_at": "t1",
        "first_error": "this",
        "answers": [{"reviewer": "ana"}],
    }
    assert json.loads(label.evidence) == evidence
    assert SOURCE.first_error([step_label(None, "human@1+ab"), label]) == 1
    assert step_label(None, "human@1+ab").verdict == "unverifiable"


def test_answers_land_in_a_new_version_and_show_in_exports_and_training_rows(
    prefect_server: None, tmp_path
) -> None:
    from prm_factory.config.run_config import load_config
    from prm_factory.exports.formats import ExportOptions, export_table
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.training.rows import rows_from_dataset

    run, problems, chains, steps = records()
    math = {p.problem_id for p in problems if p.domain == "math"}  # the code chain would start the sandbox
    problems = [p for p in problems if p.problem_id in math]
    chains = [c for c in chains if c.problem_id in math]
    steps = [s for s in steps if s.problem_id in math]
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(run, problems, chains, steps, [])
    store = create_audit(dataset, tmp_path / "audit", SampleDesign(size=100, seed=0, double_share=0.0))
    by_step = {(s.chain_id, s.step_index): s for s in steps}
    items = store.items()
    vetoed = next(
        i for i in items if by_step[(i.chain_id, i.step_index)].label("verifier").verdict == "incorrect"
    )
    agreed = next(i for i in items if by_step[(i.chain_id, i.step_index)].consensus == "positive")
    store.record_answer(vetoed.item_id, "ana", "correct", answered_at="2026-01-02T10:00:00Z")
    store.record_answer(
        agreed.item_id, "ben", "incorrect", answered_at="2026-01-02T11:00:00Z", first_error="this"
    )
    store.close()
    answered_chains = {vetoed.chain_id, agreed.chain_id}

    config = load_config(
        None,
        {
            "dataset.root": str(tmp_path / "ds"),
            "labels.options": {"human": {"audit": str(tmp_path / "audit")}},
        },
    )
    summary = relabel_dataset(config, sources=["human"])
    assert summary.version == summary.from_version + 1
    assert summary.unchanged == len(chains) - len(answered_chains)
    assert {c.chain_id for c in summary.chains} == answered_chains
    after = {(s.chain_id, s.step_index): s for s in summary.steps}
    overruled = after[(vetoed.chain_id, vetoed.step_index)]
    evidence = json.loads(overruled.label("human").evidence)
    assert overruled.label("human").verdict == "correct" and overruled.label("human").labeler.startswith(
        "human@"
    )
    assert (evidence["reviewers"], evidence["labeled_at"]) == ("human:ana", "2026-01-02T10:00:00Z")
    assert overruled.consensus == "positive"  # the reviewer's `correct` overrules the verifier's `incorrect`
    flagged = after[(agreed.chain_id, agreed.step_index)]
    assert flagged.consensus == "negative" and flagged.first_error
    assert overruled.label("verifier") == by_step[(vetoed.chain_id, vetoed.step_index)].label("verifier")

    ds = Dataset(str(tmp_path / "ds"))
    stored = query(
        ds, "SELECT human_verdict AS v, count(*) AS n FROM steps GROUP BY ALL ORDER BY ALL"
    ).to_pylist()
    assert {"v": "correct", "n": 1} in stored and {"v": "incorrect", "n": 1} in stored
    exported = export_table(ds, "steps", None, ExportOptions(label="human")).to_pylist()
    assert sorted(r["label"] for r in exported if r["label"] is not None) == [False, True]
    trained = rows_from_dataset(ds, None, "human")
    assert trained and all(r.labels for r in trained)
    assert relabel_dataset(config, sources=["human"]).version is None  # nothing new answered: current
