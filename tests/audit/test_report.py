"""audit.report: figures from the audit file, kappa pairs, wrong steps linked to the page, HTML and JSON."""

import json
import random

from prm_factory.audit.report import (
    collect,
    kappa_pairs,
    render_html,
    report_json,
    reviewed_steps,
    write_report,
)
from tests.audit.conftest import build_audit


def _answer_all(store, reviewers=("ana", "ben"), seed=0):
    rng = random.Random(seed)
    for reviewer in reviewers:
        while (item := store.next_item(reviewer)) is not None:
            truth = "incorrect" if item.votes.get("consensus") == "incorrect" else "correct"
            answer = truth if rng.random() < 0.8 else rng.choice(["correct", "incorrect", "cant_tell"])
            store.record_answer(
                item.item_id, reviewer, answer, note="<b>odd</b>" if rng.random() < 0.1 else ""
            )


def test_a_reviewed_audit_reports_every_source(tmp_path):
    store = build_audit(tmp_path, double_share=0.5)
    _answer_all(store)
    report = collect(store, replicates=200)
    assert report.sources == ["verifier", "mc", "consensus"]
    assert report.answered_items == 38 and set(report.by_reviewer) == {"ana", "ben"}
    assert report.kappa.n >= 10 and list(report.kappa_by_pair) == ["ana+ben"]
    steps = reviewed_steps(store)
    assert len(steps) == 38
    for source in report.sources:  # a wrong step is one where the source's vote differs from the reviewers
        for wrong in report.wrong[source]:
            step = next(s for s in steps if s.item_id == wrong.item_id)
            assert step.human == wrong.human != wrong.said == step.votes[source]
    html = render_html(report, page_url="http://reviews.example:9000/")
    assert 'href="http://reviews.example:9000/item/' in html
    assert "&lt;b&gt;odd&lt;/b&gt;" in html and "<b>odd</b>" not in html
    assert "data:image/svg+xml;base64," in html and "<script" not in html
    figures = report_json(report)["figures"]
    assert set(figures) == {"verifier", "mc", "consensus"} and "precision_incorrect" in figures["mc"]


def test_kappa_pairs_take_the_first_two_decided_reviewers(tmp_path):
    store = build_audit(tmp_path, double_share=1.0)
    store.record_answer(1, "ben", "correct")
    store.record_answer(1, "ana", "incorrect")
    store.record_answer(2, "ana", "cant_tell")
    store.record_answer(2, "ben", "correct")
    assert kappa_pairs(store) == {"ana+ben": [("incorrect", "correct")]}


def test_an_unanswered_audit_says_so_and_writes_json(tmp_path):
    store = build_audit(tmp_path, size=10)
    report = write_report(store, tmp_path / "r.html", json_output=tmp_path / "r.json", replicates=100)
    assert report.answered_items == 0 and len(report.uncovered) == len(store.strata())
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["coverage"]["decided"] == 0 and data["kappa"]["kappa"] is None
    assert "Not covered" in (tmp_path / "r.html").read_text()
