"""`eval` picks its eval set by `--kind` or by declared shape (prm_factory.commands.eval_kinds), never by a
first-row guess: the one kind whose shape the rows carry, or an error that names every shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prm_factory.cli import app
from prm_factory.commands.eval_kinds import SHAPES, EvalKind, UnknownShape, kind_of

DATA = Path(__file__).resolve().parents[3] / "evaluation" / "data"
PAIR = {"id": "p1", "predicted": "2", "reference": "2", "equivalent": True}
OUTPUT = {"id": "o1", "completion": "so 2", "reference": "2", "equivalent": True}
CLAIM = {"id": "c1", "step": "2 + 2 = 4", "has_false_claim": False, "claims": []}
CHAIN = {"id": "x", "problem": "2 + 2?", "steps": ["2 + 2 = 4"], "label": -1}
PRM800K = {"question": {"problem": "2 + 2?"}, "label": {"steps": []}}


def jsonl(path: Path, *rows: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("row", "kind"),
    [
        (PAIR, EvalKind.answer_pairs),
        (OUTPUT, EvalKind.math_outputs),
        (CLAIM, EvalKind.claim_steps),
        (CHAIN, EvalKind.chains),
        (PRM800K, EvalKind.chains),
    ],
)
def test_each_declared_shape_names_its_kind(tmp_path: Path, row: dict, kind: EvalKind) -> None:
    assert kind_of(jsonl(tmp_path / "set.jsonl", row)) is kind


def test_a_json_list_and_a_folder(tmp_path: Path) -> None:
    (tmp_path / "math.json").write_text(json.dumps([CHAIN, CHAIN]))
    assert kind_of(tmp_path / "math.json") is EvalKind.chains
    assert kind_of(tmp_path) is EvalKind.chains  # a folder is chain splits, whatever it holds
    (tmp_path / "pairs.json").write_text(json.dumps([PAIR]))
    assert kind_of(tmp_path / "pairs.json") is EvalKind.answer_pairs


def test_every_row_counts_not_only_the_first(tmp_path: Path) -> None:
    """A first row of no shape (or a broken line) does not decide: the rows that match do."""
    assert kind_of(jsonl(tmp_path / "a.jsonl", "{oops", {"id": 1}, OUTPUT)) is EvalKind.math_outputs
    # a chain file with a row lacking `steps` is still chains: that row is the reader's to reject
    assert kind_of(jsonl(tmp_path / "b.jsonl", CHAIN, {"id": "y", "problem": "?"})) is EvalKind.chains


def test_rows_of_two_kinds_are_an_error_naming_both(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "mixed.jsonl", PAIR, OUTPUT)
    with pytest.raises(UnknownShape) as raised:
        kind_of(path)
    message = str(raised.value)
    assert "answer-pairs (row 1)" in message and "math-outputs (row 2)" in message and "--kind" in message
    both = jsonl(tmp_path / "both.jsonl", {**PAIR, **OUTPUT})  # one row carrying two shapes
    with pytest.raises(UnknownShape, match="more than one eval set"):
        kind_of(both)


def test_no_shape_is_an_error_naming_every_shape(tmp_path: Path) -> None:
    with pytest.raises(UnknownShape) as raised:
        kind_of(jsonl(tmp_path / "labels.jsonl", {"id": 1, "label": 0, "steps_sha256": "ab"}))
    message = str(raised.value)
    assert "no row has the fields of an eval set" in message
    for shape in SHAPES:
        assert shape.describe() in message
    with pytest.raises(UnknownShape, match="no row is a JSON object"):
        kind_of(jsonl(tmp_path / "lists.jsonl", "[1, 2]", "{oops"))


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("altered_gsm8k.jsonl", EvalKind.chains),
        ("real_errors_gsm8k.jsonl", EvalKind.chains),
        ("real_errors_gsm8k_heldout.jsonl", EvalKind.chains),
        ("answer_pairs.jsonl", EvalKind.answer_pairs),
        ("answer_pairs_math_style.jsonl", EvalKind.answer_pairs),
        ("math_outputs_dev.jsonl", EvalKind.math_outputs),
        ("math_outputs_heldout.jsonl", EvalKind.math_outputs),
        ("claim_steps.jsonl", EvalKind.claim_steps),
    ],
)
def test_the_dev_sets_are_read_as_before_without_kind(name: str, kind: EvalKind) -> None:
    assert kind_of(DATA / name) is kind


def test_the_labels_files_are_no_eval_set() -> None:
    with pytest.raises(UnknownShape):
        kind_of(DATA / "real_errors_phi35_labels.jsonl")


def test_the_cli_error_is_one_line_with_exit_2_and_kind_overrides_the_shape(tmp_path: Path) -> None:
    mixed = jsonl(tmp_path / "mixed.jsonl", {**PAIR, **OUTPUT})  # an answer pair and a math output at once
    result = CliRunner().invoke(app, ["eval", str(mixed)])
    assert result.exit_code == 2
    assert (
        "cannot tell which eval set" in result.output
        and "claim-steps (has_false_claim, step)" in result.output
    )
    named = CliRunner().invoke(app, ["eval", str(mixed), "--kind", "answer-pairs"])
    assert named.exit_code == 0, named.output
    assert "final answer `correct` precision" in named.output
