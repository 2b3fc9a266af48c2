"""audit.store: the audit file, the reviewer's queue, durable answers, blind answers and reveals."""

import sqlite3

import pytest

from prm_factory.audit.store import AuditError, AuditStore, effective_answers
from tests.audit.conftest import build_audit


def test_a_new_audit_holds_the_sample_its_chains_and_its_meta(audit_store):
    meta = audit_store.meta()
    assert meta["dataset_version"] == "1" and meta["population"] == "38"
    items = audit_store.items()
    assert len(items) == 38 and [i.item_id for i in items] == list(range(1, 39))
    assert sum(s.drawn for s in audit_store.strata()) == 38
    chain = audit_store.chain(items[0].chain_id)
    assert {"problem", "steps", "verdicts", "outcome"} <= set(chain)


def test_an_audit_is_never_overwritten(tmp_path):
    build_audit(tmp_path)
    with pytest.raises(AuditError, match="never overwritten"):
        build_audit(tmp_path)


def test_the_queue_gives_each_reviewer_the_next_unanswered_step_in_order(audit_store):
    first = audit_store.next_item("ana")
    assert first.item_id == 1
    assert audit_store.next_item("ana").item_id == 1  # shown again until answered (a reload resumes)
    assert audit_store.next_item("ben").item_id == 2  # claimed by ana: ben gets the next one
    audit_store.record_answer(1, "ana", "correct")
    assert audit_store.next_item("ana").item_id == 3
    progress = audit_store.progress("ana")
    assert progress.reviewer_answered == 1 and progress.answered_slots == 1 and progress.needed_slots == 38


def test_a_double_reviewed_step_goes_to_a_second_reviewer(tmp_path):
    store = build_audit(tmp_path, double_share=1.0)
    store.record_answer(1, "ana", "incorrect")
    assert store.next_item("ben").item_id == 1  # it needs two reviews
    store.record_answer(1, "ben", "incorrect")
    assert store.next_item("cleo").item_id == 2  # two is enough


def test_answers_are_on_disk_when_record_returns(audit_store):
    audit_store.record_answer(3, "ana", "cant_tell", note="unclear <b>")
    # another connection, as a restarted server would open it, sees the committed answer
    with sqlite3.connect(audit_store.path) as other:
        rows = other.execute("SELECT item_id, reviewer, answer, note FROM answers").fetchall()
    assert rows == [(3, "ana", "cant_tell", "unclear <b>")]
    assert audit_store.meta()["schema_version"] == "1"
    reopened = AuditStore.open(audit_store.path.parent)
    assert [a.answer for a in reopened.answers()] == ["cant_tell"]


def test_verdicts_stay_hidden_until_answered_and_a_later_answer_is_flagged(audit_store):
    with pytest.raises(AuditError, match="hidden"):
        audit_store.record_reveal(5, "ana")
    audit_store.record_answer(5, "ana", "correct")
    audit_store.record_reveal(5, "ana")
    changed = audit_store.record_answer(5, "ana", "incorrect")
    assert changed.after_reveal
    chosen = effective_answers(audit_store.answers())
    assert chosen[(5, "ana")].answer == "correct"  # the blind answer counts


def test_the_first_error_question_and_bad_input(audit_store):
    first_steps = [i.item_id for i in audit_store.items() if i.step_index == 0]
    assert audit_store.record_answer(first_steps[0], "ana", "incorrect").first_error == "this"
    later = next(i.item_id for i in audit_store.items() if i.step_index > 0)
    answer = audit_store.record_answer(later, "ana", "incorrect")
    assert audit_store.record_first_error(answer.answer_id, "ana", "earlier").first_error == "earlier"
    right = audit_store.record_answer(4, "ana", "correct")
    with pytest.raises(AuditError):
        audit_store.record_first_error(right.answer_id, "ana", "this")
    with pytest.raises(AuditError):
        audit_store.record_answer(4, "ana", "maybe")
    with pytest.raises(AuditError):
        audit_store.record_answer(999, "ana", "correct")


def test_opening_something_else_fails(tmp_path):
    with pytest.raises(AuditError):
        AuditStore.open(tmp_path)
