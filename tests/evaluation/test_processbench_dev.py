"""The math checker's five dev figures on a ProcessBench split (evaluation/processbench_dev.py): from gold
first errors and predicted step labels, and end to end on a tiny split file."""

from __future__ import annotations

import json

import pytest

from prm_factory.evaluation.processbench_dev import figures, main


def test_figures_from_gold_and_predicted_labels():
    gold = [1, -1, -1, 0]
    predicted = [
        ["correct", "incorrect", "correct"],  # first error found exactly
        ["correct", "correct"],  # correct chain left alone
        ["incorrect", "correct"],  # correct chain flagged
        ["correct", "unverifiable"],  # first error missed
    ]
    result = figures(gold, predicted)
    assert (result.correct_chains, result.correct_chains_flagged) == (2, 1)
    assert result.accuracy_erroneous == 0.5 and result.accuracy_correct == 0.5
    assert (
        result.incorrect_flags == 2 and result.incorrect_precision == 0.5
    )  # one true, one on a correct chain
    assert result.f1 == pytest.approx(0.5)
    lines = result.lines()
    assert (
        lines[0] == "correct chains with any incorrect step: 1/2 = 50.0 %"
        and lines[-1] == "first-error F1: 50.0"
    )


def test_perfect_labels_score_full_marks():
    result = figures([0, -1], [["incorrect", "correct"], ["correct"]])
    assert (result.accuracy_erroneous, result.accuracy_correct, result.f1) == (1.0, 1.0, 1.0)
    assert result.correct_chains_flagged == 0


def test_main_scores_a_split_file_and_dumps_flags(tmp_path, capsys):
    rows = [
        {"id": "a", "problem": "What is 2 * 5?", "steps": ["2 * 5 = 11", "The answer is 11."], "label": 0},
        {"id": "b", "problem": "What is 3 + 4?", "steps": ["3 + 4 = 7", "The answer is 7."], "label": -1},
    ]
    split = tmp_path / "math.json"
    split.write_text(json.dumps(rows), encoding="utf-8")
    dump = tmp_path / "verdicts.jsonl"
    assert main([str(split), "--dump", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "2 chains, 4 steps" in out and "first-error F1: 100.0" in out
    dumped = [json.loads(line) for line in dump.read_text().splitlines()]
    assert list(dumped[0]["flagged"]) == ["0"] and dumped[1]["flagged"] == {}
