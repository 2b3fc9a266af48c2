"""The olympiad-level dev sets' builder (issue 38): steps, AoPS solutions, altered copies, the split and the
source errors read by hand."""

from __future__ import annotations

import json
import random

from prm_factory.evaluation.olympiad_dev import (
    SOURCE_ERRORS,
    Chain,
    alter,
    aops_solutions,
    build_sets,
    line_steps,
    main,
    paragraph_steps,
    split_of,
)


def test_paragraphs_keep_a_display_with_its_sentence_and_numbered_items_apart() -> None:
    text = "1. First we get\n\\[\nx = 2\n\\]\n2. Then\n\n\\[ y = 3 \\]\n\nSo done."
    assert paragraph_steps(text) == [
        "1. First we get\n\\[\nx = 2\n\\]",
        "2. Then\n\n\\[ y = 3 \\]",
        "So done.",
    ]
    assert line_steps("a\n\n b \n") == ["a", "b"]


def test_aops_solutions_are_cut_at_their_signatures_and_need_an_answer() -> None:
    text = "So $\\boxed{204}$\n~Failure.net\nAnother way, $\\boxed{204}$.\n~Xyco\nA note with no answer."
    assert aops_solutions(text) == ["So $\\boxed{204}$", "Another way, $\\boxed{204}$."]


def test_an_altered_copy_changes_one_computed_result_and_marks_that_step() -> None:
    chain = Chain("c", "s", "p", ("Let $n = 5$.", r"So \( 4 \cdot 6 = 24 \) and \( n^2 = 25 \)."))
    altered = alter(chain, random.Random(0))
    assert altered is not None and altered.label == 1 and altered.id == "c-altered"
    assert altered.steps[0] == chain.steps[0] and "4 \\cdot 6 = 24" not in altered.steps[1]
    assert alter(Chain("d", "s", "p", ("No numbers.", "Let $n = 5$.")), random.Random(0)) is None


def test_the_split_is_stable_and_source_errors_set_the_first_error(tmp_path) -> None:
    assert split_of("Find $x$.") == split_of("  Find $x$.\n")
    listed, (step, _) = next(iter(SOURCE_ERRORS.items()))
    steps = tuple(f"Step {i}: nothing to read." for i in range(step + 2))
    sets = build_sets([Chain(listed, "olympiads", "p", steps)])
    [row] = sets["dev"] + sets["heldout"]
    assert row["label"] == step and row["final_answer_correct"] is False
    numina = tmp_path / "numina.json"
    numina.write_text(
        json.dumps(
            [
                {"original_id": 1, "source": "olympiads", "problem": "Find $x$.", "solution": "A\n\nB"},
                {"original_id": 2, "source": "cn_k12", "problem": "Find $y$.", "solution": "A\n\nB"},
            ]
        )
    )
    assert main(["--numina", str(numina), "--out", str(tmp_path / "out")]) == 0
    rows = [
        r
        for name in ("olympiad_dev.json", "olympiad_heldout.json")
        for r in json.loads((tmp_path / "out" / name).read_text())
    ]
    assert [r["id"] for r in rows] == ["numina-1"] and rows[0]["label"] == -1


def test_another_aime_year_builds_one_split_measured_once(tmp_path) -> None:
    """A set built after the rules (`--one-split`): every chain in it, no dev / heldout cut, ids by year."""
    aime = tmp_path / "aime.jsonl"
    rows = [
        {"id": f"2023-I-{k}", "problem": f"Problem {k}", "solution": "So $2+2=4$.\nThus $\\boxed{4}$.\n~A"}
        for k in range(6)
    ]
    aime.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    args = ["--aime", str(aime), "--aime-tag", "aime23", "--one-split", "fresh", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["olympiad_fresh.json"]
    built = json.loads((tmp_path / "o" / "olympiad_fresh.json").read_text())
    written = [r for r in built if r["label"] == -1]
    assert len(written) == 6 and all(r["id"].startswith("aime23-2023-I-") for r in built)
    assert {r["generator"] for r in built} == {"aime23-aops"}
