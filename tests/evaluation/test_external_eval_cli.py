"""`prm-factory eval` on chains from elsewhere: ProcessBench files, --solutions, --json, --kind."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from prm_factory.cli import app

RIGHT = {"problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 4", "4 + 3 = 7"], "label": -1}
WRONG = {"problem": "What is 2 + 2 + 3?", "steps": ["2 + 2 = 5", "5 + 3 = 8"], "label": 0}
JANET = (
    "Janet's ducks lay 16 eggs. She eats 3 and bakes with 4. She sells the rest at $2 each. "
    "How much does she make?"
)
JANET_WRONG = {
    "id": "janet",
    "problem": JANET,
    "steps": ["She has 16 - 3 = 13 eggs.", "13 * 2 = 26", "The answer is 26."],
    "final_answer_correct": False,
    "label": 0,
}
GSM8K_ROW = {"question": JANET, "answer": "16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n9 * 2 = <<9*2=18>>18\n#### 18"}


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["eval", *map(str, args)])
    return result.exit_code, result.output


def write_split(path: Path, rows: list[dict]) -> Path:
    path.write_text(
        json.dumps([{"id": f"{path.stem}-{i}", **r} for i, r in enumerate(rows)]), encoding="utf-8"
    )
    return path


def test_a_split_json_list_prints_figures_per_source(tmp_path: Path) -> None:
    code, out = run(write_split(tmp_path / "math.json", [RIGHT, WRONG]))
    assert code == 0, out
    assert "label quality: math (math.json)" in out and "2 chains: 1 erroneous, 1 correct" in out
    verifier_row = next(line for line in out.splitlines() if "verifier" in line)
    assert "100.0" in verifier_row and "0 / 1" in verifier_row  # F1 100, no correct chain flagged
    assert "average over" not in out and "reference" not in out  # one split, no worked solution


def test_a_folder_of_two_splits_is_averaged_and_written_as_json(tmp_path: Path) -> None:
    folder = tmp_path / "processbench"
    folder.mkdir()
    write_split(folder / "math.json", [RIGHT, WRONG])
    write_split(folder / "gsm8k.json", [RIGHT, {**WRONG, "label": 1}])  # the verifier says 0, gold 1
    out_json = tmp_path / "figures.json"
    code, out = run(folder, "--json", out_json)
    assert code == 0, out
    assert "label quality: gsm8k (gsm8k.json)" in out and "average over 2 splits" in out
    figures = json.loads(out_json.read_text())
    by_split = {s["split"]: s["sources"]["verifier"] for s in figures["splits"]}
    assert by_split["math"]["first_error_f1"] == 1.0
    assert by_split["gsm8k"]["accuracy_erroneous"] == 0.0 and by_split["gsm8k"]["first_error_f1"] == 0.0
    assert figures["average"]["verifier"]["first_error_f1"] == 0.5
    assert figures["average"]["verifier"]["splits"] == 2


def test_a_bad_row_is_reported_by_file_item_and_field_and_the_rest_is_scored(tmp_path: Path) -> None:
    path = write_split(tmp_path / "math.json", [RIGHT, {**WRONG, "label": 9}, WRONG])
    code, out = run(path, "--limit", "2")
    assert code == 0, out
    assert f"rejected {path} item 2, field label" in " ".join(out.split())
    assert "1 chains: 0 erroneous, 1 correct" in out  # --limit 2: the first two rows, one of them bad


def test_solutions_attach_a_gsm8k_answer_and_the_reference_source_scores(tmp_path: Path) -> None:
    chains = write_split(tmp_path / "gsm8k.json", [JANET_WRONG, RIGHT])
    solutions = tmp_path / "train.jsonl"
    solutions.write_text(json.dumps(GSM8K_ROW) + "\n", encoding="utf-8")
    out_json = tmp_path / "figures.json"
    code, out = run(chains, "--solutions", solutions, "--json", out_json)
    assert code == 0, out
    assert "1 with a worked solution" in out
    sources = json.loads(out_json.read_text())["splits"][0]["sources"]
    assert list(sources) == ["verifier", "reference", "combined"]
    assert sources["reference"]["first_error_f1"] == 1.0  # the wrong first step is found from the solution
    assert sources["verifier"]["accuracy_erroneous"] == 0.0  # its arithmetic is true


def test_the_same_gsm8k_answer_carried_by_the_row_reads_the_same(tmp_path: Path) -> None:
    chains = write_split(tmp_path / "gsm8k.json", [{**JANET_WRONG, "answer": GSM8K_ROW["answer"]}, RIGHT])
    out_json = tmp_path / "figures.json"
    code, out = run(chains, "--json", out_json)
    assert code == 0, out
    assert json.loads(out_json.read_text())["splits"][0]["sources"]["reference"]["first_error_f1"] == 1.0


def test_kind_is_told_by_fields_named_by_option_and_an_unknown_file_is_named(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "predicted": "2", "reference": "2", "equivalent": True}) + "\n")
    code, out = run(pairs)
    assert code == 0 and "final answer `correct` precision" in out
    assert run(pairs, "--kind", "answer-pairs")[0] == 0
    code, out = run(pairs, "--limit", "1")
    assert code == 2 and "chain sets only" in out
    unknown = tmp_path / "labels.jsonl"
    unknown.write_text(json.dumps({"id": 1, "label": 0, "steps_sha256": "ab"}) + "\n")
    code, out = run(unknown)
    assert code == 2 and "labels.jsonl" in out and "--kind" in out
    code, out = run(unknown, "--kind", "chains")
    assert code == 2 and "no chain carries gold labels" in out


def test_a_trained_prm_is_scored_beside_the_label_sources(tmp_path: Path, tiny_token_classifier) -> None:
    """`eval --prm`: a checkpoint's step scores become source `prm` (incorrect below 0.5), table and JSON."""
    checkpoint = tiny_token_classifier(tmp_path / "prm")
    split = write_split(tmp_path / "math.json", [RIGHT, WRONG])
    out = tmp_path / "figures.json"
    code, output = run(split, "--prm", checkpoint, "--json", out)
    assert code == 0, output
    assert "prm" in output
    figures = json.loads(out.read_text())
    assert "prm" in json.dumps(figures) and "verifier" in json.dumps(figures)


def test_prm_is_refused_for_other_eval_sets_and_for_a_missing_checkpoint(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"predicted": "1", "reference": "1", "equivalent": True}) + "\n")
    code, output = run(pairs, "--prm", tmp_path)
    assert code == 2 and "--prm" in output
    code, output = run(write_split(tmp_path / "math.json", [RIGHT]), "--prm", tmp_path / "absent")
    assert code == 2 and "PRM checkpoint not found" in output
