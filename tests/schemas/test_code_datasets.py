"""The public code slices shipped in data/ load as the benchmarks ship them (no Docker here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.schemas.code_problems import load_code_problems
from prm_factory.schemas.code_spec import CodeTests, StdioTests, load_tests

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize(
    "relative, rows",
    [
        ("humaneval/HumanEval.jsonl", 164),
        ("mbpp/sanitized-mbpp.json", 427),
        ("mbpp/mbpp_first50.jsonl", 50),
        ("apps/apps_slice.jsonl", 3),
        ("code_contests/code_contests_slice.jsonl", 3),
        ("livecodebench/livecodebench_slice.jsonl", 3),
    ],
)
def test_every_shipped_row_loads(relative, rows):
    problems, rejected = load_code_problems(DATA / relative)
    assert rejected == [] and len(problems) == rows
    assert len({p.problem_id for p in problems}) == rows
    for problem in problems:
        assert problem.domain == "code" and problem.source_file and problem.source_line
        assert load_tests(problem.tests or "")
    licence = (DATA / relative).parent
    assert (licence / "README.md").is_file()


def test_humaneval_loops_and_helpers_are_proxied_not_refused():
    problems, _ = load_code_problems(DATA / "humaneval" / "HumanEval.jsonl")
    specs = [load_tests(p.tests or "") for p in problems]
    assert all(isinstance(s, CodeTests) for s in specs)
    proxied = [s for s in specs if isinstance(s, CodeTests) and s.n_proxy]
    assert 30 <= len(proxied) < 164  # the ones the splitter cannot take apart (issue 14: 41 were refused)


def test_sanitized_mbpp_items_are_numbered_like_lines(tmp_path):
    rows = json.loads((DATA / "mbpp" / "sanitized-mbpp.json").read_text(encoding="utf-8"))[:2]
    path = tmp_path / "two.json"
    path.write_text(json.dumps([rows[0], {"prompt": "x"}, rows[1]]), encoding="utf-8")
    problems, rejected = load_code_problems(path)
    assert [p.source_line for p in problems] == [1, 3]
    assert [r.line for r in rejected] == [2]


def test_a_json_list_that_does_not_parse_is_one_rejected_row(tmp_path):
    path = tmp_path / "broken.json"
    path.write_bytes(b'[{"a": 1},\n {"b": \xff}]')
    problems, rejected = load_code_problems(path)
    assert problems == [] and len(rejected) == 1 and rejected[0].line == 2 and "UTF-8" in rejected[0].reason
    path.write_text('{"not": "a list"}', encoding="utf-8")
    assert "list" in load_code_problems(path)[1][0].reason


def test_stdin_slices_carry_their_limits_and_rules():
    contests, _ = load_code_problems(DATA / "code_contests" / "code_contests_slice.jsonl")
    spec = load_tests(contests[2].tests or "")
    assert isinstance(spec, StdioTests) and spec.compare == "tokens"
    assert spec.time_limit_s and spec.memory_mb and max(len(c.input) for c in spec.cases) > 100_000
    lcb, _ = load_code_problems(DATA / "livecodebench" / "livecodebench_slice.jsonl")
    assert isinstance(load_tests(lcb[0].tests or ""), StdioTests)
    functional = load_tests(lcb[2].tests or "")
    assert isinstance(functional, CodeTests) and functional.entry_point == "Solution"
