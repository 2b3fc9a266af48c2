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
    agreed = next(
        i for i in items if i is not vetoed and by_step[(i.chain_id, i.step_index)].consensus != "negative"
    )
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
    # the fixture's rows were written without p_correct: every chain's consensus is computed again (issue 47)
    assert summary.unchanged == 0 and len(summary.chains) == len(chains)
    assert {c.chain_id for c in summary.chains if c.first_errors.get("human") is not None} <= answered_chains
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
    # two steps were answered: no other step carries a human label (1.1.0 gave them `unverifiable`)
    assert sum(row["n"] for row in stored if row["v"] is not None) == 2
    exported = export_table(ds, "steps", None, ExportOptions(label="human")).to_pylist()
    assert sorted(r["label"] for r in exported if r["label"] is not None) == [False, True]
    trained = rows_from_dataset(ds, None, "human")
    assert trained and all(r.labels for r in trained)
    assert relabel_dataset(config, sources=["human"]).version is None  # nothing new answered: current


def test_label_loads_the_rows_gold_labels_as_the_human_source_and_a_relabel_keeps_them(
    prefect_server: None, tmp_path
) -> None:
    """ProcessBench's first wrong step and PRM800K's ratings land as `human` labels; the reviewers' vote
    decides the consensus (a gold `correct` overrules the verifier's `incorrect`), and a later audit's answer
    replaces one step's label while the relabel keeps every other."""
    from prm_factory.api import label, load_config
    from prm_factory.flows.relabel_run import relabel_dataset

    processbench = [
        {
            "id": "pb-all-right",
            "problem": "2 boxes of 6 eggs?",
            "steps": ["6 * 2 = 13", "13 eggs"],
            "label": -1,
        },
        {
            "id": "pb-wrong",
            "problem": "3 bags of 4?",
            "steps": ["3 * 4 = 12", "12 + 1 = 14", "14"],
            "label": 1,
        },
    ]
    prm800k = {
        "question": {"problem": "1 + 1?", "ground_truth_answer": "2"},
        "label": {
            "steps": [
                {"completions": [{"text": "1 + 1 = 2", "rating": 1}], "chosen_completion": 0},
                {"completions": [{"text": "so it is 3", "rating": -1}], "chosen_completion": 0},
                {"completions": [{"text": "done", "rating": None}], "chosen_completion": 0},
            ]
        },
    }
    (tmp_path / "pb.jsonl").write_text("\n".join(json.dumps(row) for row in processbench) + "\n")
    (tmp_path / "prm800k.jsonl").write_text(json.dumps(prm800k) + "\n")
    config = load_config(None, {"dataset.root": str(tmp_path / "ds")})

    plain = label(tmp_path / "pb.jsonl", config)
    assert all(step.label("human") is None for step in plain.steps)  # off unless asked for
    label(tmp_path / "pb.jsonl", config, human_labels=True)
    summary = label(tmp_path / "prm800k.jsonl", config, human_labels=True)
    by_row = {c.chain_id: c.source_row_id for c in summary.chains}
    ds = Dataset(str(tmp_path / "ds"))
    rows = query(
        ds,
        "SELECT c.source_row_id AS row, s.step_index AS i, s.human_verdict AS human, s.verdict AS "
        "verifier, s.consensus, s.human_labeler AS labeler FROM steps s JOIN chains c USING (chain_id) "
        "WHERE s.human_verdict IS NOT NULL ORDER BY row, i",
    ).to_pylist()
    got = {(r["row"], r["i"]): (r["human"], r["verifier"], r["consensus"]) for r in rows}
    assert got[("pb-all-right", 0)] == ("correct", "incorrect", "positive")  # the reviewers overrule
    assert got[("pb-wrong", 0)][0] == "correct" and got[("pb-wrong", 1)][:2] == ("incorrect", "incorrect")
    assert ("pb-wrong", 2) not in got  # after the first error nobody judged it: no human label (human 1.2.0)
    prm = [v[0] for k, v in got.items() if k[0] not in ("pb-all-right", "pb-wrong")]
    assert prm == ["correct", "incorrect"]  # the step rated None was not rated: no human label either
    assert all(r["labeler"].startswith("human@1.2.0+input") for r in rows)
    first = query(
        ds, "SELECT first_error_human AS f FROM chains WHERE source_row_id = 'pb-wrong'"
    ).to_pylist()
    assert first == [{"f": 1}]
    evidence = json.loads(next(s for s in summary.steps if s.step_index == 1).label("human").evidence)
    assert evidence["reviewers"] == "human:prm800k" and evidence["first_error"] == "this"
    assert set(by_row.values()) == {"line-1"}

    # an audit answer on one step of the ProcessBench chain: relabel replaces that label, keeps the rest
    store = create_audit(ds, tmp_path / "audit", SampleDesign(size=100, seed=0, double_share=0.0))
    item = next(i for i in store.items() if (i.step_index, i.chain_id) == (0, _chain_of(ds, "pb-all-right")))
    store.record_answer(
        item.item_id, "ana", "incorrect", answered_at="2026-01-02T10:00:00Z", first_error="this"
    )
    store.close()
    audited = load_config(
        None,
        {
            "dataset.root": str(tmp_path / "ds"),
            "labels.options": {"human": {"audit": str(tmp_path / "audit")}},
        },
    )
    relabel_dataset(audited, sources=["human"])
    after = query(
        Dataset(str(tmp_path / "ds")),
        "SELECT c.source_row_id AS row, s.step_index AS i, s.human_verdict AS human FROM steps s "
        "JOIN chains c USING (chain_id) WHERE s.human_verdict IS NOT NULL ORDER BY row, i",
    ).to_pylist()
    now = {(r["row"], r["i"]): r["human"] for r in after}
    assert now[("pb-all-right", 0)] == "incorrect"  # the audit's answer
    assert now[("pb-all-right", 1)] == "correct" and now[("pb-wrong", 1)] == "incorrect"  # kept
    assert sum(1 for v in now.values() if v != "unverifiable") == sum(
        1 for v in got.values() if v[0] != "unverifiable"
    )


def _chain_of(ds: Dataset, row_id: str) -> str:
    found = query(ds, f"SELECT DISTINCT chain_id FROM chains WHERE source_row_id = '{row_id}'").to_pylist()
    assert len(found) == 1, found
    return found[0]["chain_id"]


def test_a_step_nobody_reviewed_carries_no_human_label(tmp_path) -> None:
    """1.2.0: only answered steps get a human label; the others None (no `unverifiable` "not reviewed"), and
    a relabel then finds the chain current (labels.relabel)."""
    from types import SimpleNamespace

    from prm_factory.audit.human_source import SOURCE as HUMAN
    from prm_factory.labels.relabel import current, stored_labels
    from tests.audit.conftest import build_audit

    store = build_audit(tmp_path)
    item = next(i for i in store.items() if i.step_index == 1)
    store.record_answer(item.item_id, "ana", "correct")
    store.close()
    setup = SimpleNamespace(options=lambda name: {"audit": str(tmp_path / "audit")}, pipeline="relabel")
    chain = SimpleNamespace(chain_id=item.chain_id, steps=("a", "b", "c"), external=None)
    (labels,) = HUMAN.label([chain], {}, setup)
    assert labels[1].verdict == "correct" and labels[0] is None and labels[2] is None
    assert HUMAN.first_error(labels) is None
    steps = [SimpleNamespace(labels=(x,) if x else (), label=lambda name, x=x: x) for x in labels]
    assert stored_labels(steps) == {"human": labels}
    assert current(steps, {"human": labels[1].labeler})
    assert not current(steps, {"human": "human@0+old"})
