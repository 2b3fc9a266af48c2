"""Assertion, not a test (issue 46): the sentence around a claim and a lexicon of markers decide whether the
text asserts it."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.math.assertion import claim_offsets, frame_of, sentences


def test_sentences_end_outside_math_and_a_colon_goes_on() -> None:
    step = "We check: $1.5 + 1 = 2.5$. Then $x = 2$? Yes.\nNext line."
    parts = [step[a:b].strip() for a, b in sentences(step)]
    assert parts == ["We check: $1.5 + 1 = 2.5$.", "Then $x = 2$?", "Yes.", "Next line."]


def test_an_asserted_claim_has_no_frame() -> None:
    assert frame_of("2 + 2 = 5", 0, ["So $2 + 2 = 5$, and we go on."]) is None
    # a negation elsewhere, two sentences on, is about something else
    assert frame_of("2 + 2 = 5", 0, ["So $2 + 2 = 5$.", "We add 3.", "That is wrong."]) is None


@pytest.mark.parametrize(
    ("chain", "why"),
    [
        (["Suppose $2 + 2 = 5$."], "object"),
        (["We need to verify whether $2 + 2 = 5$ holds."], "object"),
        (["Let's test the equation $2 + 2 = 5$."], "object"),
        (["Does $2 + 2 = 5$?"], "question"),
        (["Then $2 + 2 = 5$, which is false."], "negates it in its sentence"),
        (["Then $2 + 2 = 5$.", "This is not correct."], "negates it in the next sentence"),
        (["Then $2 + 2 = 5 \\neq 4$."], "negates it in its sentence"),
        (["Case 1: $2 + 2 = 5$.\nThen more."], "heading of a case"),
    ],
)
def test_each_frame_of_the_lexicon(chain: list[str], why: str) -> None:
    frame = frame_of("2 + 2 = 5", 0, chain)
    assert frame is not None and why in frame.why


def test_a_marker_after_a_determiner_is_a_noun() -> None:
    """ "the test" of a word problem is an exam, "the check" a bill: no test of the claim."""
    assert frame_of("2 * 180 = 360", 0, ["Her score in the test is 2 * 180 = 360."]) is None
    assert frame_of("2 * 180 = 360", 0, ["We test $2 * 180 = 360$."]) is not None


def test_a_supposed_value_frames_claims_in_names_only() -> None:
    chain = ["Let's try $x = 3$: then $x^2 + 1 = 11$ and $3 + 4 = 8$."]
    assert frame_of("x^2 + 1 = 11", 0, chain, names_too=True) is not None
    # arithmetic in written numbers worked for a trial is still the chain's own arithmetic
    assert frame_of("3 + 4 = 8", 0, chain) is None


def test_a_claim_the_step_does_not_write_is_a_test_only_where_the_step_holds_a_marker() -> None:
    assert claim_offsets("a => b", "nothing here") == []
    assert frame_of("q = 1 => q = 2", 0, ["Suppose it is so."]) is not None
    assert frame_of("q = 1 => q = 2", 0, ["It is so."]) is None


def test_a_step_of_many_repeated_claims_is_split_into_sentences_once() -> None:
    """Each copy of a repeated claim asks for its frame at every place the claim is written: the step's
    sentences and each claim's frame are kept, so a step of n copies costs n, not n^3, splits (a 2,240-
    character step of `2^2^2^2 = 16.` took 45 s in `label` before)."""
    from prm_factory.verifiers.math import assertion

    step = "2^2^2^2 = 16. " * 60
    assertion._sentences.cache_clear()
    assertion._frame_in.cache_clear()
    frames = [assertion.frame_of("2^2^2^2 = 16", 0, [step]) for _ in range(60)]
    assert frames == [None] * 60
    assert assertion._sentences.cache_info().misses == 1 and assertion._frame_in.cache_info().misses == 1
