"""`prm-factory label` on ProcessBench-shape chains: real verifier, real Delta dataset, real Prefect flow."""

import json
from pathlib import Path

from prm_factory.config.run_config import load_config
from prm_factory.flows.label_run import label_external
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query


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
    # the input rows' own ids come back, so labels join back to the user's data (two chains of one
    # problem are told apart by them, not only by the problem's file and line)
    ids = query(ds, "SELECT source_row_id FROM chains ORDER BY source_row_id").to_pylist()
    assert [r["source_row_id"] for r in ids] == ["a", "b"]


GSM8K_ROW = {
    "id": "eggs",
    "problem": "Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4. She sells the rest at $2 "
    "each. How much does she make?",
    "answer": "She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18",
}


def test_chains_are_graded_against_the_rows_reference_and_aligned(
    prefect_server: None, tmp_path: Path
) -> None:
    """A row's `answer` (GSM8K style) is both the reference answer and the worked solution: the chain is
    graded against it and the `reference` source labels its steps."""
    right = {**GSM8K_ROW, "id": "right", "steps": ["16 - 3 - 4 = 9 eggs.", "9 * 2 = 18. The answer is 18."]}
    wrong = {**GSM8K_ROW, "id": "wrong", "steps": ["16 - 3 = 13 eggs.", "13 * 2 = 26. The answer is 26."]}
    no_ref = {"id": "none", "problem": "2 boxes of 6 eggs?", "steps": ["6 * 2 = 12", "12 eggs"]}
    path = tmp_path / "chains.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (right, wrong, no_ref)) + "\n")
    summary = label_external(str(path), load_config(None, {"dataset.root": str(tmp_path / "ds")}))
    outcome = {c.text.split("\n")[0]: c.outcome for c in summary.chains}
    assert outcome == {
        "16 - 3 - 4 = 9 eggs.": "correct",
        "16 - 3 = 13 eggs.": "incorrect",
        "6 * 2 = 12": "unparsed",
    }
    by_chain = {c.chain_id: c for c in summary.chains}
    wrong_chain = next(c for c in summary.chains if c.outcome == "incorrect")
    assert wrong_chain.first_errors["reference"] == 0  # 13 eggs is off the reference; the arithmetic is true
    assert "verifier" not in wrong_chain.first_errors  # no false claim
    for step in summary.steps:
        assert step.label("reference").labeler.startswith("reference-align@")
        if by_chain[step.chain_id].outcome == "unparsed":
            assert step.label("reference").verdict == "unverifiable"  # no worked solution: never a guess


def test_a_verifier_change_relabels_into_a_new_version(
    prefect_server: None, tmp_path: Path, monkeypatch
) -> None:
    """After a verifier version bump, a rerun gives the new version rows that all carry the new version,
    the previous version's rows are unchanged, and `relabel` does the same without the input file."""
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.verifiers.math import MathVerifier

    path = tmp_path / "chains.jsonl"
    rows = [
        {**GSM8K_ROW, "id": "a", "steps": ["16 - 3 - 4 = 9 eggs.", "9 * 2 = 18. The answer is 18."]},
        {**GSM8K_ROW, "id": "b", "steps": ["16 - 3 = 13 eggs.", "13 * 2 = 25"]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    config = load_config(None, {"dataset.root": str(tmp_path / "ds")})
    ds = Dataset(str(tmp_path / "ds"))
    sql = "SELECT verifier_version, count(*) AS n FROM steps GROUP BY ALL"
    first = label_external(str(path), config)
    old_version = MathVerifier.version
    assert query(ds, sql, version=first.version).to_pylist() == [{"verifier_version": old_version, "n": 4}]

    monkeypatch.setattr(MathVerifier, "version", "99.0.0")
    rerun = label_external(str(path), config)
    assert query(ds, sql, version=rerun.version).to_pylist() == [{"verifier_version": "99.0.0", "n": 4}]
    assert query(ds, sql, version=first.version).to_pylist() == [{"verifier_version": old_version, "n": 4}]

    monkeypatch.setattr(MathVerifier, "version", "100.0.0")
    relabelled = relabel_dataset(config)
    assert relabelled.from_version == rerun.version and relabelled.version == rerun.version + 1
    assert query(ds, sql).to_pylist() == [{"verifier_version": "100.0.0", "n": 4}]
    assert query(ds, sql, version=rerun.version).to_pylist() == [{"verifier_version": "99.0.0", "n": 4}]
    labels = query(ds, "SELECT verdict FROM steps ORDER BY chain_id, step_index").to_pylist()
    assert sorted(r["verdict"] for r in labels) == sorted(s.label("verifier").verdict for s in rerun.steps)
    again = relabel_dataset(config)  # nothing changed since: no new version
    assert again.version is None and again.unchanged == 2


def test_solutions_file_supplies_worked_solutions_by_question_text(
    prefect_server: None, tmp_path: Path
) -> None:
    """Chains that carry only the problem get the worked solution of a GSM8K-format file whose question
    matches (whitespace and case aside); its bad rows are rejected with file, line and field."""
    chain = {
        "id": "bare",
        "problem": GSM8K_ROW["problem"].upper().replace(" ", "  "),
        "steps": ["16 - 3 = 13 eggs.", "13 * 2 = 26. The answer is 26."],
    }
    other = {"id": "other", "problem": "2 boxes of 6 eggs?", "steps": ["6 * 2 = 12", "12 eggs"]}
    path = tmp_path / "chains.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (chain, other)) + "\n")
    solutions = tmp_path / "gsm8k.jsonl"
    solutions.write_text(
        json.dumps({"question": GSM8K_ROW["problem"], "answer": GSM8K_ROW["answer"]})
        + "\n"
        + json.dumps({"question": "no answer here"})
        + "\n"
    )
    summary = label_external(
        str(path), load_config(None, {"dataset.root": str(tmp_path / "ds")}), solutions=str(solutions)
    )
    assert [(r.file, r.line, r.field) for r in summary.rejected] == [(str(solutions), 2, "answer")]
    graded = {c.text.split("\n")[0]: c for c in summary.chains}
    assert graded["16 - 3 = 13 eggs."].outcome == "incorrect"  # graded against the file's #### 18
    assert graded["16 - 3 = 13 eggs."].first_errors["reference"] == 0
    assert graded["6 * 2 = 12"].outcome == "unparsed"  # no match: no reference, never a guess
