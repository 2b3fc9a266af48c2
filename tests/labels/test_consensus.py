import pytest

from prm_factory.labels.consensus import consensus, first_error_index, first_error_mc, first_error_verifier


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
