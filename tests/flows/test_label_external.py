"""`prm-factory label` on ProcessBench-shape chains: real verifier, real Delta dataset, real Prefect flow."""

import json
from pathlib import Path

from flows.label_run import label_external
from prm_factory.config import load_config
from storage.dataset import Dataset
from storage.sql import query


def test_external_chains_are_labeled_and_committed(prefect_server: None, tmp_path: Path) -> None:
    rows = [
        {
            "id": "a",
            "problem": "Tom has 3 apples and buys 4. How many?",
            "steps": ["3 + 4 = 7", "So 7 apples."],
            "final_answer": "7",
            "label": -1,
        },
        {"id": "b", "problem": "2 boxes of 6 eggs?", "steps": ["6 * 2 = 13", "13 eggs"], "label": 0},
    ]
    path = tmp_path / "chains.jsonl"
    no_steps = {"id": "c", "problem": "1+1?", "steps": []}
    path.write_text(
        "\n".join(json.dumps(r) for r in rows[:1])
        + "\n{oops\n"
        + json.dumps(rows[1])
        + "\n"
        + json.dumps(no_steps)
        + "\n"
    )
    summary = label_external(str(path), load_config(None, {"dataset.root": str(tmp_path / "ds")}))
    assert [(r.line, r.file, r.field) for r in summary.rejected] == [
        (2, str(path), "<line>"),  # not JSON: the whole line
        (4, str(path), "steps"),  # a bad field is named
    ]
    ds = Dataset(str(tmp_path / "ds"))
    recorded = query(ds, "SELECT line, field FROM rejections ORDER BY line").to_pylist()
    assert recorded == [{"line": 2, "field": "<line>"}, {"line": 4, "field": "steps"}]
    steps = query(
        ds,
        "SELECT c.model, s.step_index, s.verdict, s.char_start, s.char_end, c.text "
        "FROM steps s JOIN chains c USING (chain_id) ORDER BY c.text, s.step_index",
    ).to_pylist()
    assert [s["verdict"] for s in steps] == ["correct", "unverifiable", "incorrect", "unverifiable"]
    assert all(s["model"] == "external" for s in steps)
    assert all(s["text"][s["char_start"] : s["char_end"]] for s in steps)
    problems = query(ds, "SELECT source_line FROM problems ORDER BY source_line").to_pylist()
    assert [p["source_line"] for p in problems] == [1, 3]
