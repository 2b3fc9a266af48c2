"""Building the altered-GSM8K set, and the checker's score on it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from prm_factory.evaluation.altered_gsm8k import (
    alter_solution,
    annotations_hold,
    build_altered_gsm8k,
    predict_first_errors,
    split_gold,
)
from prm_factory.evaluation.answer_pairs import evaluate_answer_pairs, load_answer_pairs
from prm_factory.evaluation.report import ALTERED_SET, load_altered
from prm_factory.labels.metrics import first_error_scores

GOLD = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72"


def test_alteration_changes_one_visible_result() -> None:
    sample = alter_solution(GOLD, random.Random(3))
    assert sample is not None
    assert all("<<" not in step for step in sample.steps)
    gold_steps = ["Natalia sold 48/2 = 24 clips in May.", "Natalia sold 48+24 = 72 clips."]
    changed = [i for i, (a, b) in enumerate(zip(gold_steps, sample.steps, strict=True)) if a != b]
    assert changed == [sample.label]
    assert sample.altered != sample.original


def test_annotations_hold_filters_wrong_gold() -> None:
    assert annotations_hold(GOLD)
    assert not annotations_hold("10 x 1,248 = <<10*1248=11480>>11,480\n#### 11480")
    assert split_gold(GOLD)[1] == "72"


@pytest.fixture()
def tiny_source(tmp_path: Path) -> Path:
    rows = [
        {
            "question": f"q{i}",
            "answer": f"She has {i}*2 = <<{i}*2={2 * i}>>{2 * i} apples.\n"
            f"Then {2 * i}+1 = <<{2 * i}+1={2 * i + 1}>>{2 * i + 1} apples.\n#### {2 * i + 1}",
        }
        for i in range(3, 23)
    ]
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def test_build_is_deterministic_and_half_altered(tiny_source: Path) -> None:
    first = build_altered_gsm8k(tiny_source, n_samples=10, seed=7)
    again = build_altered_gsm8k(tiny_source, n_samples=10, seed=7)
    other = build_altered_gsm8k(tiny_source, n_samples=10, seed=8)
    assert first == again and first != other
    assert sum(s.label >= 0 for s in first) == 5
    gold = [s.label for s in first]
    assert first_error_scores(gold, predict_first_errors(first)).f1 == 1.0


def test_checker_meets_the_target_on_the_committed_set() -> None:
    samples = load_altered(ALTERED_SET)[:400]
    scores = first_error_scores([s.label for s in samples], predict_first_errors(samples))
    assert scores.f1 >= 0.97, scores


def test_answer_checker_meets_the_targets_on_hand_labels() -> None:
    report = evaluate_answer_pairs(load_answer_pairs())
    assert report.scores.precision >= 0.995, report.disagreements
    assert report.scores.recall >= 0.98, report.disagreements


def test_the_default_source_is_the_shared_split_beside_the_checkout(tmp_path: Path) -> None:
    from prm_factory.config.run_config import REPO_ROOT
    from prm_factory.evaluation.altered_gsm8k import DEFAULT_SOURCE

    assert DEFAULT_SOURCE == REPO_ROOT.parent / "shared" / "data" / "gsm8k" / "train.jsonl"
    assert DEFAULT_SOURCE.is_relative_to(REPO_ROOT.parent)
    with pytest.raises(FileNotFoundError):  # the path given is the path read, never a fallback
        build_altered_gsm8k(tmp_path / "missing.jsonl", n_samples=2)
