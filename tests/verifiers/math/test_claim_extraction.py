"""Finding the claim-bearing runs of a step (verifiers/math/claim_extraction.py): annotations first, an
annotation read as blanks where it was written, a run after a word marked as such, nothing from prose."""

from __future__ import annotations

from prm_factory.verifiers.math.claim_extraction import extract_runs


def test_annotations_come_first_and_the_written_text_is_read_without_them():
    runs = extract_runs("She sold 48/2 = <<48/2=24>>24 clips.")
    assert [r.text for r in runs][0] == "48/2=24"
    assert runs[1].text.replace(" ", "") == "48/2=24"  # the annotation became blanks, positions kept
    text = "She sold 48/2 = <<48/2=24>>24 clips."
    assert text[runs[1].start : runs[1].end].startswith("48/2 = <<")


def test_runs_after_a_word_are_marked_and_prose_has_none():
    (run,) = extract_runs("Week 2 = 35 + 35 = 70")
    assert run.after_word and run.text.startswith("2 = 35")  # "Week 2" is a label, not a side
    (plain,) = extract_runs("Then 3 + 4 = 7.")
    assert plain.text == "3 + 4 = 7"
    assert extract_runs("No math here.") == []
    assert extract_runs("She has 3 apples and 4 pears.") == []  # numbers without a claim


def test_which_is_reads_as_equals():
    (run,) = extract_runs("The total is 5 + 3 = 8, which is 8 apples")
    assert run.text.count("=") == 2 and run.text.startswith("5 + 3 = 8")
