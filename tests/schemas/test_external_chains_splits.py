"""ProcessBench files as they ship: a JSON-list split, a folder of splits, JSONL, all through one loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.schemas.external_chains import read_external_chains, reference_fields, split_files
from prm_factory.schemas.reference_solutions import attach_reference_solutions, read_reference_solutions

ROW = {
    "id": "math-0",
    "generator": "Qwen2.5-7B-Instruct",
    "problem": "What is 2 + 3 * 4?",
    "steps": ["3 * 4 = 12", "2 + 12 = 14"],
    "final_answer_correct": True,
    "label": -1,
}
GSM8K_ANSWER = "3 * 4 = <<3*4=12>>12\n2 + 12 = <<2+12=14>>14\n#### 14"


def write_list(path: Path, rows: list[object]) -> Path:
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path


def test_a_split_json_list_is_read_with_its_split_file_and_graded_outcome(tmp_path: Path) -> None:
    path = write_list(tmp_path / "math.json", [ROW, {**ROW, "id": "math-1", "final_answer_correct": False}])
    chains, rejected = read_external_chains(path)
    assert rejected == []
    assert [(c.id, c.split, c.file, c.line) for c in chains] == [
        ("math-0", "math", str(path), 1),
        ("math-1", "math", str(path), 2),
    ]
    assert [c.final_answer_correct for c in chains] == [True, False]
    assert chains[0].generator == "Qwen2.5-7B-Instruct" and chains[0].first_error_label == -1
    assert chains[0].reference_answer is None and chains[0].reference_solution is None


def test_a_folder_is_one_split_per_file_in_name_order(tmp_path: Path) -> None:
    folder = tmp_path / "processbench"
    folder.mkdir()
    write_list(folder / "math.json", [ROW])
    (folder / "gsm8k.jsonl").write_text(json.dumps({**ROW, "id": "gsm8k-0"}) + "\n", encoding="utf-8")
    (folder / "README.md").write_text("not a split", encoding="utf-8")
    assert [p.name for p in split_files(folder)] == ["gsm8k.jsonl", "math.json"]
    chains, rejected = read_external_chains(folder)
    assert rejected == [] and [(c.split, c.id) for c in chains] == [("gsm8k", "gsm8k-0"), ("math", "math-0")]


def test_a_folder_without_splits_or_with_a_split_twice_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no .json or .jsonl"):
        split_files(tmp_path)
    with pytest.raises(FileNotFoundError, match="not found"):
        split_files(tmp_path / "missing.json")
    write_list(tmp_path / "math.json", [ROW])
    (tmp_path / "math.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="math"):
        split_files(tmp_path)


def test_jsonl_and_one_object_per_line_under_a_json_name_read_alike(tmp_path: Path) -> None:
    lines = json.dumps(ROW) + "\n" + json.dumps({**ROW, "id": "math-1"}) + "\n"
    (tmp_path / "a.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "b.json").write_text(lines, encoding="utf-8")
    by_jsonl, _ = read_external_chains(tmp_path / "a.jsonl")
    by_json, rejected = read_external_chains(tmp_path / "b.json")
    assert rejected == []
    assert (
        [(c.id, c.line) for c in by_jsonl]
        == [(c.id, c.line) for c in by_json]
        == [("math-0", 1), ("math-1", 2)]
    )


def test_a_bad_row_is_named_by_file_item_and_field_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "splits"
    folder.mkdir()
    bad = write_list(
        folder / "math.json",
        [ROW, {**ROW, "final_answer_correct": "yes"}, {**ROW, "label": 5}, {**ROW, "id": "math-3"}],
    )
    write_list(folder / "other.json", [ROW])
    chains, rejected = read_external_chains(folder)
    assert [(c.split, c.line) for c in chains] == [("math", 1), ("math", 4), ("other", 1)]
    assert [(r.file, r.line, r.field) for r in rejected] == [
        (str(bad), 2, "final_answer_correct"),
        (str(bad), 3, "label"),
    ]
    assert "true or false" in rejected[0].reason


def test_answer_solution_and_reference_answer_read_alike_in_chains_and_solutions(tmp_path: Path) -> None:
    rows = [
        {"answer": GSM8K_ANSWER},
        {"solution": "So $\\boxed{14}$.", "answer": "14"},
        {"solution": "So $\\boxed{14}$."},
        {"reference_answer": "14", "answer": GSM8K_ANSWER},
    ]
    expected = [
        ("14", GSM8K_ANSWER),
        ("14", "So $\\boxed{14}$."),
        ("14", "So $\\boxed{14}$."),
        ("14", GSM8K_ANSWER),
    ]
    assert [reference_fields(row) for row in rows] == expected
    chains_path = tmp_path / "chains.jsonl"
    chains_path.write_text(
        "".join(json.dumps({**ROW, "id": f"c{i}", **row}) + "\n" for i, row in enumerate(rows)),
        encoding="utf-8",
    )
    chains, _ = read_external_chains(chains_path)
    assert [(c.reference_answer, c.reference_solution) for c in chains] == expected
    for i, row in enumerate(rows):
        solutions = tmp_path / f"solutions{i}.jsonl"
        solutions.write_text(json.dumps({"problem": ROW["problem"], **row}) + "\n", encoding="utf-8")
        table, rejected = read_reference_solutions(solutions)
        [bare] = attach_reference_solutions(
            read_external_chains(write_list(tmp_path / "bare.json", [ROW]))[0], table
        )
        assert rejected == [] and (bare.reference_answer, bare.reference_solution) == expected[i]


def test_a_solutions_row_without_a_worked_solution_is_rejected_by_field(tmp_path: Path) -> None:
    path = tmp_path / "solutions.jsonl"
    rows = [
        {"question": "q", "answer": "42"},
        {"problem": "p", "solution": ""},
        {"problem": 3, "solution": "x"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table, rejected = read_reference_solutions(path)
    assert table == {}
    assert [(r.line, r.field) for r in rejected] == [(1, "answer"), (2, "solution"), (3, "problem")]


def test_the_streamed_reader_gives_the_rows_and_rejections_of_the_whole_file_reader(tmp_path) -> None:
    """`label` streams its input (issue 48): the list reader's chains and rejected rows, in line order."""
    from prm_factory.schemas.external_chains import iter_external_chains, read_external_chains
    from prm_factory.schemas.rejected import RejectedRow

    good = {"id": "a", "problem": "1+1?", "steps": ["1 + 1 = 2"], "answer": "2"}
    lines = [json.dumps(good), "{not json", json.dumps({"id": "b"}), "", json.dumps({**good, "id": "c"})]
    folder = tmp_path / "splits"
    folder.mkdir()
    (folder / "math.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "gsm8k.json").write_text(json.dumps([good, {"id": "x"}]))
    streamed = list(iter_external_chains(folder))
    chains, rejected = read_external_chains(folder)
    assert [r for r in streamed if not isinstance(r, RejectedRow)] == chains
    assert sorted((r.file, r.line) for r in streamed if isinstance(r, RejectedRow)) == sorted(
        (r.file, r.line) for r in rejected
    )
    assert [(Path(r.file).name, r.line) for r in streamed] == [
        ("gsm8k.json", 1),
        ("gsm8k.json", 2),
        ("math.jsonl", 1),
        ("math.jsonl", 2),
        ("math.jsonl", 3),
        ("math.jsonl", 5),
    ]


GOOD = {
    "id": "a",
    "problem": "Half of 3?",
    "steps": ["3 / 2 = 1.5", "So é is 1.5"],
    "answer": "1.5",
    "label": -1,
}
JSON_FILES = {
    "list": json.dumps([GOOD, {"id": "x"}, {**GOOD, "id": "b", "answer": 2, "label": 0}]),
    "invalid": json.dumps([GOOD])[:-3],
    "one object": json.dumps(GOOD),
    "object per line": json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "id": "b"}),
    "NaN": "[" + json.dumps(GOOD)[:-1] + ', "extra": NaN}]',
    "not a list": '"text"',
    "empty list": "[]",
}


@pytest.mark.parametrize("shape", sorted(JSON_FILES))
def test_a_json_file_streams_to_the_rows_and_rejections_of_the_whole_file_reader(tmp_path, shape) -> None:
    from prm_factory.schemas.external_chains import iter_external_chains, read_external_chains
    from prm_factory.schemas.rejected import RejectedRow

    path = tmp_path / "chains.json"
    path.write_text(JSON_FILES[shape])
    streamed = list(iter_external_chains(path))
    chains, rejected = read_external_chains(path)
    assert [r for r in streamed if not isinstance(r, RejectedRow)] == chains
    assert [r for r in streamed if isinstance(r, RejectedRow)] == rejected


def test_a_json_list_is_never_parsed_whole(tmp_path, monkeypatch) -> None:
    """Its items are handed out one by one (ijson), without the whole-file reader."""
    import prm_factory.schemas.external_chains as module

    def whole(path):
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(module, "_read_file", whole)
    path = tmp_path / "chains.json"
    path.write_text(json.dumps([{**GOOD, "id": str(i)} for i in range(50)]))
    rows = module.iter_external_chains(path)
    assert next(rows).line == 1 and len(list(rows)) == 49
