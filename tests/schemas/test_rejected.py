"""Every loader hands back a bad row the same way: a `RejectedRow` with file, line, field and reason."""

import dataclasses
import json
from pathlib import Path

import pytest

from prm_factory.schemas.code_problems import load_code_problems
from prm_factory.schemas.external_chains import read_external_chains
from prm_factory.schemas.gsm8k import load_gsm8k
from prm_factory.schemas.rejected import WHOLE_LINE, RejectedRow, RowError


def test_rejected_row_is_frozen_and_row_error_becomes_one() -> None:
    row = RowError("steps", "steps must be a non-empty list").at("f.jsonl", 3)
    assert row == RejectedRow("f.jsonl", 3, "steps", "steps must be a non-empty list")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.field = "other"  # type: ignore[misc]


def test_math_code_and_external_loaders_reject_in_one_shape(tmp_path: Path) -> None:
    math = tmp_path / "math.jsonl"
    math.write_text('{not json\n{"question": "q"}\n')
    code = tmp_path / "code.jsonl"
    code.write_text('{not json\n{"text": 5, "code": "def f(): pass", "task_id": 1, "test_list": ["f()"]}\n')
    chains = tmp_path / "chains.jsonl"
    chains.write_text('{not json\n{"problem": "p", "steps": []}\n')
    got = {
        "math": load_gsm8k(math).rejected,
        "code": load_code_problems(code)[1],
        "external": read_external_chains(chains)[1],
    }
    for rejected in got.values():
        assert all(type(r) is RejectedRow and r.reason for r in rejected)
    fields = {name: [(r.line, r.field) for r in rejected] for name, rejected in got.items()}
    assert fields == {
        "math": [(1, WHOLE_LINE), (2, "answer")],
        "code": [(1, WHOLE_LINE), (2, "text")],
        "external": [(1, WHOLE_LINE), (2, "steps")],
    }
    assert json.loads(json.dumps(dataclasses.asdict(got["external"][1])))["field"] == "steps"
