"""Claim-steps set: the loader names file/line/field of a bad row; the metric counts issue 11's targets."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from prm_factory.evaluation.claim_steps import (
    CLAIM_STEPS,
    ClaimStepsError,
    evaluate_claim_steps,
    format_report,
    load_claim_steps,
    main,
)
from prm_factory.verifiers.protocol import Verdict


def _row(rid: str, step: str, holds: bool, source: str = "hand") -> dict:
    return {
        "id": rid,
        "step": step,
        "has_false_claim": not holds,
        "claims": [{"text": step, "holds": holds}],
        "source": source,
        "note": "",
    }


def _write(tmp_path: Path, rows: Sequence[object]) -> Path:
    path = tmp_path / "steps.jsonl"
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def _judge(labels: dict[str, str]):
    """A fake checker: the label is looked up by step text, so the metric is tested without the real one."""

    def judge(steps: Sequence[str]) -> list[Verdict]:
        return [Verdict(labels[s], "fake") for s in steps]

    return judge


def test_loader_reads_rows(tmp_path: Path) -> None:
    rows = load_claim_steps(_write(tmp_path, [_row("a", "2 + 2 = 4", True), _row("b", "2 + 2 = 5", False)]))
    assert [(r.id, r.has_false_claim, r.claims[0].holds) for r in rows] == [
        ("a", False, True),
        ("b", True, False),
    ]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("step"), "'step'"),
        (lambda r: r.update(has_false_claim="yes"), "'has_false_claim'"),
        (lambda r: r.update(has_false_claim=False), "'has_false_claim'"),  # disagrees with claims
        (lambda r: r.update(claims=[]), "'claims'"),
        (lambda r: r.update(claims=[{"text": "x", "holds": 1}]), "'claims[0].holds'"),
        (lambda r: r.update(colour="red"), "'colour'"),
        (lambda r: r.update(source=" "), "'source'"),
    ],
)
def test_loader_names_file_line_and_field(tmp_path: Path, mutate, field: str) -> None:
    bad = _row("b", "2 + 2 = 5", False)
    mutate(bad)
    path = _write(tmp_path, [_row("a", "2 + 2 = 4", True), bad])
    with pytest.raises(ClaimStepsError, match=re.escape(f"steps.jsonl:2: field {field}")):
        load_claim_steps(path)


def test_loader_rejects_duplicate_ids_and_broken_json(tmp_path: Path) -> None:
    with pytest.raises(ClaimStepsError, match=r":2: field 'id': duplicate of line 1"):
        load_claim_steps(_write(tmp_path, [_row("a", "1 = 1", True), _row("a", "2 = 2", True)]))
    with pytest.raises(ClaimStepsError, match=r":1: field '<row>': not JSON"):
        load_claim_steps(_write(tmp_path, ['{"id": "a",']))


def test_metric_counts_false_accepted_and_true_rejected(tmp_path: Path) -> None:
    rows = load_claim_steps(
        _write(
            tmp_path,
            [
                _row("f1", "5 + 3 = 8 + 1", False, "s1"),
                _row("f2", "20% * 50 = 1000", False, "s1"),
                _row("f3", "3 * 4 = 13", False, "s2"),
                _row("t1", "48/2 = 24 and 24/2 = 12", True, "s1"),
                _row("t2", "3 * 4 = 12", True, "s2"),
            ],
        )
    )
    report = evaluate_claim_steps(
        rows,
        _judge(
            {
                "5 + 3 = 8 + 1": "correct",
                "20% * 50 = 1000": "unverifiable",
                "3 * 4 = 13": "incorrect",
                "48/2 = 24 and 24/2 = 12": "incorrect",
                "3 * 4 = 12": "correct",
            }
        ),
    )
    assert [r.id for r, _ in report.false_accepted] == ["f1"]
    assert [r.id for r, _ in report.true_rejected] == ["t1"]
    assert report.true_rejected_rate == pytest.approx(0.5)
    assert report.distribution["s1"]["false"] == {"correct": 1, "unverifiable": 1}
    assert report.distribution["ALL"]["true"] == {"incorrect": 1, "correct": 1}
    assert len(report.misses()) == 2
    text = format_report(report)
    assert "false-claim steps labelled correct: 1/3" in text and "f1 [s1]" in text
    assert "true steps labelled incorrect: 1/2 = 50.0%" in text
    assert "true steps labelled correct 1/2" in text


def test_targets_met_when_unverifiable_and_one_in_forty(tmp_path: Path) -> None:
    rows = [_row(f"t{i}", f"{i} + 1 = {i + 1}", True) for i in range(40)] + [_row("f", "1 + 1 = 3", False)]
    labels = {r["step"]: "correct" for r in rows}
    labels["0 + 1 = 1"] = "incorrect"  # 1 in 40: still within the target
    labels["1 + 1 = 3"] = "unverifiable"  # not a judgement, so not a false acceptance
    report = evaluate_claim_steps(load_claim_steps(_write(tmp_path, rows)), _judge(labels))
    assert report.misses() == []
    labels["1 + 1 = 2"] = "incorrect"  # 2 in 40: over
    report = evaluate_claim_steps(load_claim_steps(_write(tmp_path, rows)), _judge(labels))
    assert report.misses() and "2/40" in report.misses()[0]


def test_metric_rejects_labels_outside_the_protocol(tmp_path: Path) -> None:
    rows = load_claim_steps(_write(tmp_path, [_row("a", "1 = 1", True)]))
    with pytest.raises(ValueError, match="verdict labels outside"):
        evaluate_claim_steps(rows, _judge({"1 = 1": "timeout"}))


def test_main_exit_code_for_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [{"id": "a"}])
    assert main([str(path)]) == 2
    assert "steps.jsonl:1: field 'step'" in capsys.readouterr().err


def test_committed_set_loads_and_is_balanced() -> None:
    rows = load_claim_steps(CLAIM_STEPS)
    n_false = sum(r.has_false_claim for r in rows)
    assert len(rows) >= 400
    assert 0.35 <= n_false / len(rows) <= 0.65
    assert len({r.source for r in rows}) >= 3
