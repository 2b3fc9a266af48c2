"""Reading ProcessBench- and PRM800K-shaped chains; bad rows come back with file, line, field and reason."""

from __future__ import annotations

import json
from pathlib import Path

from prm_factory.schemas.external_chains import read_external_chains
from prm_factory.schemas.rejected import RejectedRow

PROCESSBENCH = {
    "id": "gsm8k-0",
    "problem": "What is 2+3*4?",
    "steps": ["3*4 = 12", "2 + 12 = 15"],
    "final_answer": "15",
    "label": 1,
}
PRM800K = {
    "question": {"problem": "Compute 1+1.", "ground_truth_answer": "2"},
    "label": {
        "steps": [
            {
                "completions": [{"text": "1+1 = 3", "rating": -1}, {"text": "1+1 = 2", "rating": 1}],
                "chosen_completion": 1,
            },
            {"completions": [{"text": "So 2.", "rating": 1}], "chosen_completion": None},
        ]
    },
}


def test_reads_both_shapes_and_rejects_bad_rows(tmp_path: Path) -> None:
    lines = [
        json.dumps(PROCESSBENCH),
        "{not json",
        json.dumps({"id": "x", "problem": "p", "steps": []}),  # no steps
        json.dumps({**PROCESSBENCH, "label": 7}),  # label out of range
        "",
        json.dumps(PRM800K),
        json.dumps({"question": {}, "label": {"steps": [{"completions": []}]}}),
        json.dumps([1, 2]),
    ]
    path = tmp_path / "chains.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    chains, rejected = read_external_chains(path)
    assert [c.source_format for c in chains] == ["processbench", "prm800k"]
    pb, prm = chains
    assert pb.steps == ("3*4 = 12", "2 + 12 = 15") and pb.first_error_label == 1 and pb.final_answer == "15"
    assert prm.steps == ("1+1 = 2", "So 2.") and prm.step_labels == (1, 1) and prm.first_error_label == -1
    assert prm.reference_answer == "2"
    assert [(r.line, r.field) for r in rejected] == [
        (2, "<line>"),  # not JSON
        (3, "steps"),
        (4, "label"),
        (7, "label.steps[0].completions"),
        (8, "<line>"),  # not an object
    ]
    assert all(isinstance(r, RejectedRow) and r.file == str(path) for r in rejected)
    assert "invalid JSON" in rejected[0].reason and "label" in rejected[2].reason


def test_prm800k_first_negative_rating_is_the_first_error(tmp_path: Path) -> None:
    row = json.loads(json.dumps(PRM800K))
    row["label"]["steps"][0]["chosen_completion"] = 0
    path = tmp_path / "prm.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    chains, rejected = read_external_chains(path)
    assert rejected == [] and chains[0].first_error_label == 0 and chains[0].step_labels == (-1, 1)


def test_rejection_names_the_field_that_was_wrong(tmp_path: Path) -> None:
    bad_rating = json.loads(json.dumps(PRM800K))
    bad_rating["label"]["steps"][1]["completions"][0]["rating"] = 5
    bad_completions = json.loads(json.dumps(PRM800K))
    bad_completions["label"]["steps"][0]["completions"] = {"text": "not a list"}
    rows = [
        {**PROCESSBENCH, "problem": "  "},
        {**PROCESSBENCH, "steps": ["ok", 3]},
        {**PRM800K, "question": "not an object"},
        {**PRM800K, "question": {"ground_truth_answer": "2"}},
        bad_rating,
        bad_completions,
        {"id": "neither"},
    ]
    path = tmp_path / "chains.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    chains, rejected = read_external_chains(path)
    assert chains == []
    assert [(r.line, r.field) for r in rejected] == [
        (1, "problem"),
        (2, "steps"),
        (3, "question"),
        (4, "question.problem"),
        (5, "label.steps[1].rating"),
        (6, "label.steps[0].completions"),
        (7, "<line>"),
    ]
    assert "rating" in rejected[4].reason


def test_unreadable_json_file_is_one_whole_line_rejection(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"id": 1,\n', encoding="utf-8")
    scalar = tmp_path / "scalar.json"
    scalar.write_text("42", encoding="utf-8")
    [whole] = read_external_chains(broken)[1]
    assert whole.field == "<line>" and "invalid JSON" in whole.reason
    assert [(r.line, r.field) for r in read_external_chains(scalar)[1]] == [(1, "<line>")]


def test_a_line_that_is_not_utf8_is_rejected_and_the_rest_is_read(tmp_path):
    from prm_factory.schemas.external_chains import read_external_chains

    row = '{"id": "%s", "problem": "1+1?", "steps": ["1 + 1 = 2"]}\n'
    path = tmp_path / "chains.jsonl"
    path.write_bytes(
        (row % "a").encode() + b'{"id": "b", "problem": "\xff", "steps": ["x"]}\n' + (row % "c").encode()
    )
    chains, rejected = read_external_chains(path)
    assert [c.id for c in chains] == ["a", "c"]
    assert [(r.line, r.field) for r in rejected] == [(2, "<line>")]
    assert "UTF-8" in rejected[0].reason


def test_reference_fields_of_a_processbench_row(tmp_path):
    from prm_factory.schemas.external_chains import parse_external_chain

    base = {"id": "a", "problem": "p", "steps": ["s"]}
    gsm8k = parse_external_chain({**base, "answer": "3 * 4 = <<3*4=12>>12\n#### 12"}, 1)
    assert (gsm8k.reference_answer, gsm8k.reference_solution) == ("12", "3 * 4 = <<3*4=12>>12\n#### 12")
    boxed = parse_external_chain({**base, "solution": r"So $x=\boxed{\frac{1}{2}}$."}, 1)
    assert boxed.reference_answer == r"\frac{1}{2}"
    given = parse_external_chain({**base, "reference_answer": 7, "solution": "#### 8"}, 1)
    assert given.reference_answer == "7"  # an explicit reference answer wins
    import pytest

    from prm_factory.schemas.rejected import RowError

    with pytest.raises(RowError) as err:
        parse_external_chain({**base, "solution": ["not", "text"]}, 1)
    assert err.value.field == "solution"
