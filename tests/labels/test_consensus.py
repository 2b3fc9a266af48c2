import itertools

import pytest

from prm_factory.labels.consensus import (
    combine,
    first_error_index,
    first_error_mc,
    first_error_verifier,
    step_consensus,
)
from prm_factory.labels.registry import registry
from prm_factory.labels.source import BaseSource, Strength, Vote
from prm_factory.schemas.step_labels import StepLabel, mc_label


def consensus(verdict, hard, reference=None, judge=None):
    """The four first sources' labels of one step through the registry's votes (None: not run)."""
    labels = [StepLabel("verifier", verdict), mc_label(hard, None, {}, "mc@m")]
    if reference is not None:
        labels.append(StepLabel("reference", reference))
    if judge is not None:
        labels.append(StepLabel("judge", judge))
    return step_consensus(labels, registry())


@pytest.mark.parametrize(
    ("verdict", "hard", "expected"),
    [
        ("correct", True, ("positive", True)),
        ("incorrect", False, ("negative", True)),
        ("correct", False, ("disputed", False)),
        ("incorrect", True, ("negative", False)),  # a checked false claim stays wrong
        ("unverifiable", True, ("positive", None)),
        ("unverifiable", False, ("negative", None)),
        ("correct", None, ("positive", None)),
        ("incorrect", None, ("negative", None)),
        ("unverifiable", None, ("unlabeled", None)),
    ],
)
def test_consensus_table(verdict, hard, expected):
    assert consensus(verdict, hard) == expected


@pytest.mark.parametrize(
    ("verdict", "hard", "reference", "expected"),
    [
        ("correct", None, "incorrect", ("negative", False)),  # true arithmetic, wrong quantity
        ("unverifiable", None, "incorrect", ("negative", None)),
        ("unverifiable", True, "incorrect", ("disputed", False)),  # the prefix still reaches the answer
        ("correct", False, "correct", ("disputed", False)),  # on track, but no rollout got there
        ("incorrect", True, "correct", ("negative", False)),
        ("correct", True, "correct", ("positive", True)),
        ("unverifiable", None, "correct", ("positive", None)),
        ("unverifiable", None, "unverifiable", ("unlabeled", None)),
    ],
)
def test_consensus_with_the_reference_source(verdict, hard, reference, expected):
    assert consensus(verdict, hard, reference) == expected


def test_consensus_rejects_unknown_verdict():
    with pytest.raises(ValueError, match="unknown verdict"):
        consensus("unparsed", True)


def _rule_before_plugins(verdict, hard, reference, judge):
    """The consensus rule as written before sources became plug-ins (labels/consensus.py at 42aee51),
    kept here as the oracle the generic rule must equal on every input of the four first sources."""
    vote = {"correct": True, "incorrect": False, "unverifiable": None, None: None}
    verifier, ref, jud = vote[verdict], vote[reference], vote[judge]
    cast = [v for v in (verifier, hard, ref, jud) if v is not None]
    agree = None if len(cast) < 2 else len(set(cast)) == 1
    if not cast:
        return "unlabeled", None
    if verifier is False:
        return "negative", agree
    strong_negative = ref is False or jud is False
    strong_positive = ref is True or jud is True or hard is True
    if strong_negative:
        return ("disputed" if strong_positive else "negative"), agree
    if hard is False:
        return ("disputed" if True in cast else "negative"), agree
    return ("positive" if strong_positive or verifier else "unlabeled"), agree


def test_the_registered_votes_give_the_first_rule_on_every_input():
    verdicts = ("correct", "incorrect", "unverifiable")
    optional = (*verdicts, None)
    for verdict, hard, reference, judge in itertools.product(
        verdicts, (True, False, None), optional, optional
    ):
        expected = _rule_before_plugins(verdict, hard, reference, judge)
        assert consensus(verdict, hard, reference, judge) == expected, (verdict, hard, reference, judge)


class Reviewer(BaseSource):
    """A human source's shape: no engine, the strongest vote, and its `correct` overrules."""

    name = "reviewer"
    positive = negative = Strength.REVIEWED
    positive_overrules = True


def test_a_reviewed_vote_decides_against_a_checked_false_claim():
    sources = {**registry(), "reviewer": Reviewer()}
    labels = [StepLabel("verifier", "incorrect"), StepLabel("reviewer", "correct")]
    assert step_consensus(labels, sources) == ("positive", False)
    labels = [
        StepLabel("verifier", "correct"),
        mc_label(True, 1.0, {}, "mc@m"),
        StepLabel("reviewer", "incorrect"),
    ]
    assert step_consensus(labels, sources) == ("negative", False)


def test_a_positive_that_may_not_overrule_only_disputes():
    assert combine([Vote(True, Strength.FINAL), Vote(False, Strength.WEAK)]) == ("disputed", False)
    assert combine([Vote(True, Strength.STRONG), Vote(True, Strength.WEAK)]) == ("positive", True)
    assert combine([]) == ("unlabeled", None)


def test_a_label_of_an_unregistered_source_is_refused():
    with pytest.raises(ValueError, match="no registered source"):
        step_consensus([StepLabel("nosuch", "correct")], registry())


def test_first_error_verifier_skips_unverifiable():
    assert first_error_verifier(["unverifiable", "correct", "incorrect", "incorrect"]) == 2
    assert first_error_verifier(["correct", "unverifiable"]) is None
    assert first_error_verifier([]) is None


def test_first_error_mc_needs_every_earlier_step_known():
    assert first_error_mc([True, False, True]) == 1
    assert first_error_mc([False]) == 0
    assert first_error_mc([True, True]) is None
    assert first_error_mc([True, None, False]) is None


def test_first_error_index_dispatches_on_label_type():
    assert first_error_index(["correct", "incorrect"]) == 1
    assert first_error_index([True, True, False]) == 2
    assert first_error_index([None, False]) is None
