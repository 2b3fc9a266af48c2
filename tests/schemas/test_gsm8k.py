import json
from pathlib import Path

import pytest

from prm_factory.schemas.gsm8k import ProblemSourceError, gsm8k_reference, gsm8k_solution_steps, load_gsm8k

GOOD = {"question": "Tom has 3 apples and buys 4. How many?", "answer": "3+4=<<3+4=7>>7\n#### 7"}


def write_lines(tmp_path: Path, lines: list[str], name: str = "problems.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_rows_are_rejected_with_file_line_and_field(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path,
        [
            json.dumps(GOOD),
            '{"question": "broken',  # malformed JSON
            json.dumps({"answer": "#### 3"}),  # missing question
            json.dumps({"question": "   ", "answer": "#### 3"}),  # empty question
            json.dumps({"question": "No final?", "answer": "just text"}),
            json.dumps({"question": "Fine too", "answer": "#### 1,200"}),
        ],
    )
    loaded = load_gsm8k(path)
    assert [p.text for p in loaded.problems] == [GOOD["question"], "Fine too"]
    assert loaded.problems[1].reference_answer == "1200"
    assert loaded.problems[0].source_line == 1
    got = [(r.line, r.field) for r in loaded.rejected]
    assert got == [(2, "<line>"), (3, "question"), (4, "question"), (5, "answer")]
    assert all(r.file == str(path) for r in loaded.rejected)
    assert "malformed JSON" in loaded.rejected[0].reason
    assert loaded.rejected[2].reason == "empty question"


def test_offset_and_limit_count_valid_rows(tmp_path: Path) -> None:
    rows = [json.dumps({"question": f"q{i}", "answer": f"#### {i}"}) for i in range(5)]
    path = write_lines(tmp_path, rows[:2] + ["not json"] + rows[2:])
    loaded = load_gsm8k(path, offset=1, limit=2)
    assert [p.text for p in loaded.problems] == ["q1", "q2"]


def test_problem_ids_are_stable_content_hashes(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [json.dumps(GOOD)])
    assert load_gsm8k(path).problems[0].problem_id == load_gsm8k(path).problems[0].problem_id
    other = write_lines(tmp_path, [json.dumps({**GOOD, "answer": "#### 8"})], name="other.jsonl")
    assert load_gsm8k(other).problems[0].problem_id != load_gsm8k(path).problems[0].problem_id


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProblemSourceError, match="problem file not found"):
        load_gsm8k(tmp_path / "nope.jsonl")


def test_reference_and_solution_steps() -> None:
    answer = "She pays 2*3=<<2*3=6>>6 dollars.\nThen 6+1=<<6+1=7>>7.\n#### 7"
    assert gsm8k_reference(answer) == "7"
    assert gsm8k_solution_steps(answer) == ["She pays 2*3=6 dollars.", "Then 6+1=7."]
    assert gsm8k_reference("no marker") is None


def test_shared_train_file_loads() -> None:
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "gsm8k" / "train.jsonl"
    if not shared.exists():
        pytest.skip(f"shared data not beside the repo: {shared}")
    loaded = load_gsm8k(shared, limit=50)
    assert len(loaded.problems) == 50 and not loaded.rejected
    assert all(p.reference_answer for p in loaded.problems)


def test_a_line_that_is_not_utf8_is_a_rejected_row_and_the_rest_is_read(tmp_path):
    good = '{"question": "Q%d?", "answer": "1 + 1 = 2\\n#### 2"}\n'
    path = tmp_path / "train.jsonl"
    path.write_bytes(
        (good % 1).encode() + b'{"question": "caf\xe9?", "answer": "#### 3"}\n' + (good % 3).encode()
    )
    loaded = load_gsm8k(path)
    assert [p.text for p in loaded.problems] == ["Q1?", "Q3?"]  # never silently repaired into U+FFFD
    (bad,) = loaded.rejected
    assert (bad.file, bad.line, bad.field) == (str(path), 2, "<line>")
    assert "UTF-8" in bad.reason
