"""audit.human: answers and file-borne gold labels as per-step `human` labels."""

import json

from prm_factory.audit.human import external_human_labels, human_labels
from prm_factory.audit.store import RecordedAnswer
from prm_factory.schemas.external_chains import ExternalChain


def _answer(answer_id, item, reviewer, answer, first=None, after=False, at="2026-01-01T10:00:00Z"):
    return RecordedAnswer(answer_id, item, reviewer, answer, first, "", at, 1.0, after, "page")


STEPS = {1: ("chain-a", 0), 2: ("chain-a", 1), 3: ("chain-b", 0), 4: ("chain-b", 1)}


def test_agreeing_disputed_and_undecided_answers():
    answers = [
        _answer(1, 1, "ana", "correct"),
        _answer(2, 2, "ana", "incorrect", "this", at="2026-01-01T10:00:00Z"),
        _answer(3, 2, "ben", "incorrect", "this", at="2026-01-02T09:00:00Z"),
        _answer(4, 3, "ana", "correct"),
        _answer(5, 3, "ben", "incorrect"),
        _answer(6, 4, "ana", "cant_tell"),
    ]
    labels = {(label.chain_id, label.step_index): label for label in human_labels(STEPS, answers)}
    assert labels[("chain-a", 0)].verdict == "correct" and labels[("chain-a", 0)].labeler == "human:ana"
    both = labels[("chain-a", 1)]
    assert (both.verdict, both.labeler, both.first_error) == ("incorrect", "human:ana+ben", "this")
    assert both.labeled_at == "2026-01-02T09:00:00Z"
    assert [a["reviewer"] for a in json.loads(both.evidence)] == ["ana", "ben"]
    assert labels[("chain-b", 0)].verdict == "unverifiable" and "disagree" in labels[("chain-b", 0)].reason
    assert labels[("chain-b", 1)].verdict == "unverifiable" and "can't tell" in labels[("chain-b", 1)].reason


def test_a_blind_answer_outweighs_one_given_after_seeing_the_sources():
    answers = [_answer(1, 1, "ana", "incorrect"), _answer(2, 1, "ana", "correct", after=True)]
    assert human_labels(STEPS, answers)[0].verdict == "incorrect"


def test_processbench_and_prm800k_rows_load_as_human_labels():
    processbench = ExternalChain(
        "pb", "q", ("a", "b", "c", "d"), first_error_label=2, file="math.json", line=4
    )
    labels = external_human_labels(processbench, "chain-pb")
    assert [(x.step_index, x.verdict, x.first_error) for x in labels] == [
        (0, "correct", None),
        (1, "correct", None),
        (2, "incorrect", "this"),
    ]
    assert labels[0].labeler == "human:processbench" and json.loads(labels[0].evidence)["line"] == 4
    all_right = external_human_labels(ExternalChain("pb2", "q", ("a", "b"), first_error_label=-1), "c")
    assert [x.verdict for x in all_right] == ["correct", "correct"]
    prm800k = ExternalChain(
        "p8", "q", ("a", "b", "c", "d"), step_labels=(1, 0, -1, None), source_format="prm800k"
    )
    labels = external_human_labels(prm800k, "chain-p8")
    assert [(x.step_index, x.verdict) for x in labels] == [(0, "correct"), (1, "correct"), (2, "incorrect")]
    assert labels[2].first_error == "this" and labels[2].labeler == "human:prm800k"
    assert external_human_labels(ExternalChain("x", "q", ("a",)), "c") == []
