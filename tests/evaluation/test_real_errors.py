"""The real-errors evaluation: each label source scored alone, and their consensus keeps both kinds of error
(a verifier flag of a reading kind not counted final gives way to the reference's `correct`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.evaluation.real_errors import (
    consensus_step_labels,
    evaluate_real_errors,
    format_table,
    load_samples,
    main,
)
from prm_factory.verifiers.math import MathVerifier
from prm_factory.verifiers.protocol import Verdict

QUESTION = (
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with four. "
    "She sells the remainder for $2 per egg. How much does she make every day?"
)
SOLUTION = (
    "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18"
)


def row(chain_id: str, steps: list[str], label: int, source: str = "hand") -> dict:
    return {
        "id": chain_id,
        "problem": QUESTION,
        "steps": steps,
        "final_answer": "",
        "label": label,
        "reference_answer": "18",
        "solution": SOLUTION,
        "source": source,
    }


ROWS = [
    row("right", ["She sells 16 - 3 - 4 = 9 eggs.", "9 * 2 = 18 dollars."], -1),
    row("setup", ["She sells 16 * 3 = 48 eggs.", "48 * 2 = 96 dollars."], 0),  # true arithmetic, wrong setup
    row("slip", ["She sells 16 - 3 - 4 = 9 eggs.", "9 * 2 = 20 dollars."], 1, source="other"),
]


@pytest.fixture(scope="module")
def verifier() -> MathVerifier:
    return MathVerifier()


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_combined_is_the_consensus_of_the_shipped_tables() -> None:
    """`combined` is the consensus a `label` without rollouts writes (labels/consensus.py with the shipped
    calibration tables): `incorrect` where it is negative, `correct` where positive, else `unverifiable`."""
    from prm_factory.labels.consensus import step_consensus
    from prm_factory.labels.registry import registry
    from prm_factory.schemas.step_labels import StepLabel

    ok, unsure = Verdict("correct"), Verdict("unverifiable")
    wrong = Verdict("incorrect", kind="closed_arithmetic")
    words = Verdict("incorrect", kind="word_problem_arithmetic")
    for checked, aligned in (
        ([ok, unsure], [unsure, unsure]),
        ([ok, ok], [Verdict("incorrect"), ok]),
        ([wrong, words], [ok, ok]),
        ([wrong, words], [unsure, unsure]),
    ):
        expected = []
        for v, r in zip(checked, aligned, strict=True):
            labels = [StepLabel("verifier", v.label, kind=v.kind), StepLabel("reference", r.label)]
            label = step_consensus(labels, registry())[0]
            expected.append({"negative": "incorrect", "positive": "correct"}.get(label, "unverifiable"))
        assert consensus_step_labels(checked, aligned) == expected
    assert consensus_step_labels([unsure], [unsure]) == ["unverifiable"]


def test_each_source_finds_its_own_kind_of_error(tmp_path: Path, verifier: MathVerifier) -> None:
    samples = load_samples(write(tmp_path / "set.jsonl", ROWS), gsm8k_source=None)
    overall, per_source = evaluate_real_errors(samples, verifier)
    assert overall["verifier"].predictions == (-1, -1, 1)  # the claim checker cannot see the setup error
    assert overall["reference"].predictions[:2] == (-1, 0)
    assert overall["combined"].predictions == (-1, 0, 1)
    assert overall["combined"].first_error.f1 == 1.0
    assert overall["verifier"].first_error.f1 < 1.0
    assert set(per_source) == {"hand", "other"}
    assert per_source["other"]["combined"].first_error.n_erroneous == 1
    assert len(format_table(overall)) == 4


def test_outcome_is_graded_not_read_from_the_gold_label(tmp_path: Path, verifier: MathVerifier) -> None:
    # a wrong gold label does not make the reference source flag a chain that reaches the answer
    mislabeled = [row("right", ["She sells 16 - 3 - 4 = 9 eggs.", "9 * 2 = 18 dollars."], 1)]
    samples = load_samples(write(tmp_path / "set.jsonl", mislabeled), gsm8k_source=None)
    overall, _ = evaluate_real_errors(samples, verifier)
    assert overall["reference"].predictions == (-1,)


def test_rows_without_a_solution_take_it_from_gsm8k_by_id(tmp_path: Path) -> None:
    gsm8k = write(
        tmp_path / "train.jsonl",
        [{"question": "other", "answer": "#### 1"}, {"question": QUESTION, "answer": SOLUTION}],
    )
    bare = {"id": "gsm8k-train-1", "problem": QUESTION, "steps": ["9 * 2 = 18"], "label": -1}
    mismatch = {"id": "gsm8k-train-0", "problem": QUESTION, "steps": ["9 * 2 = 18"], "label": -1}
    samples = load_samples(write(tmp_path / "set.jsonl", [bare, mismatch]), gsm8k_source=gsm8k)
    assert samples[0].solution == SOLUTION and samples[0].reference_answer == "18"
    assert samples[1].solution is None  # the question differs: never join a wrong solution


def test_main_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([str(write(tmp_path / "set.jsonl", ROWS)), "--gsm8k", str(tmp_path / "absent.jsonl")])
    out = capsys.readouterr().out
    assert "3 chains (2 erroneous, 1 correct)" in out
    assert "combined" in out and "source other" in out


def test_table_says_n_a_where_a_class_is_missing(tmp_path: Path, verifier: MathVerifier) -> None:
    samples = load_samples(write(tmp_path / "set.jsonl", ROWS[1:]), gsm8k_source=None)  # erroneous only
    overall, _ = evaluate_real_errors(samples, verifier)
    row = format_table(overall)[3]  # the combined row
    assert row.split()[1:4] == ["n/a", "100.0", "n/a"]
