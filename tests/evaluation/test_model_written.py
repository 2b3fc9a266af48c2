"""The model-written dev sets' builder (issue 46): sources read into chains with provenance, PRMBench's
located errors as first errors, grading, the ProcessBench dedup, the stable split and the flags to read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from prm_factory.evaluation.model_written import (
    FALSE_CLAIM_CLASSES,
    PRIME_FILES,
    PRMBENCH_DATA,
    SKYTHOUGHT_FILES,
    ModelChain,
    Provenance,
    adjudicated,
    bbm_chains,
    build_chains,
    chain_row,
    eval_output_chains,
    main,
    manifest_chains,
    math_references,
    mrmath_chains,
    prmbench_chains,
    qwen_chains,
    qwq_chains,
    split_of,
    split_rows,
    step_flags,
    unnumbered,
    zeroeval_reasoning,
)
from prm_factory.schemas.external_chains import read_external_chains
from prm_factory.schemas.reference_solutions import question_key
from prm_factory.verifiers.protocol import Verdict

PENCILS = "Three pencils and an eraser cost $1.24. Five pencils and an eraser cost $1.82. Cost of a pencil?"
ORIGINAL = ["Let $3p+e=1.24$ and $5p+e=1.82$.", "So $2p=0.58$ and $p=0.29$.", "A pencil costs 29 cents."]


def _prmbench_row(kind: str, error_steps: list[int], numbered: bool = False, **extra: object) -> dict:
    modified = [ORIGINAL[0], "So $2p=0.58$ and $p=0.58$.", "A pencil costs $\\boxed{58}$ cents."]
    steps = [f"{k + 1}. {s}" for k, s in enumerate(ORIGINAL)] if numbered else ORIGINAL
    row = {
        "original_question": PENCILS,
        "modified_question": PENCILS,
        "question": PENCILS,
        "original_process": repr(steps),  # one PRMBench file stores lists as their Python repr
        "modified_process": modified,
        "error_steps": error_steps,
        "idx": "prm_test_p1_0",
        "classification": kind,
    }
    row.update(extra)
    return row


def test_numbering_is_dropped_only_when_every_step_carries_its_own_number() -> None:
    assert unnumbered(["Step 1. a", "Step 2. b"]) == ("a", "b")
    assert unnumbered(["1. a", "3. b"]) == ("1. a", "3. b")
    assert unnumbered(["2 cats", "1. b"]) == ("2 cats", "1. b")


def test_prmbench_copies_carry_their_first_located_error_and_originals_are_right() -> None:
    chains = prmbench_chains([_prmbench_row("confidence", [3, 2], numbered=True)], "f.jsonl", "abc")
    original, copy = chains
    assert original.id == "prmbench-prm_test_p1_0-original" and original.source_says_right
    assert original.steps == tuple(ORIGINAL) and original.label is None
    assert copy.id == "prmbench-prm_test_p1_0-confidence" and copy.label == 1
    assert copy.error_class == "confidence" and copy.provenance.commit == "abc"
    assert copy.provenance.repo == "ssmisya/PRMBench" and "GPT-4o" in copy.provenance.model


@pytest.mark.parametrize(
    "row",
    [
        _prmbench_row("redundency", [2]),  # a restated step asserts nothing false
        _prmbench_row("circular", [2]),
        _prmbench_row("confidence", []),  # no located error
        _prmbench_row("confidence", [9]),  # past the last step
        _prmbench_row("confidence", [2], modified_question="Four pencils cost $1.24. Cost of a pencil?"),
    ],
)
def test_copies_without_a_false_claim_to_find_or_with_another_question_are_left_out(row: dict) -> None:
    assert [c.id.rsplit("-", 1)[1] for c in prmbench_chains([row], "f", "c")] == ["original"]
    assert "redundency" not in FALSE_CLAIM_CLASSES and "circular" not in FALSE_CLAIM_CLASSES


def test_qwq_and_qwen_rows_become_chains_with_their_answers_and_grades() -> None:
    qwq = qwq_chains(
        [{"idx": "p1", "question": "Q?", "modified_process": ["Step 1. a", "Step 2. b"], "ground_truth": 29}],
        "m.jsonl",
        "c",
    )
    assert qwq[0].reference_answer == "29" and qwq[0].source_says_right and qwq[0].steps == ("a", "b")
    qwen = qwen_chains(
        [
            {
                "idx": "7",
                "question": "Q?",
                "gt": "3",
                "code": repr(["A.\n\nSo $\\boxed{3}$.", "one paragraph"]),
                "score": "[True, False]",
            }
        ],
        "q.jsonl",
        "c",
    )
    assert [c.id for c in qwen] == ["qwen25math-7-s0"]  # one paragraph is no chain of steps
    assert qwen[0].source_correct is True and qwen[0].steps == ("A.", "So $\\boxed{3}$.")


def test_harness_outputs_are_chains_of_their_paragraphs_with_the_harness_grade() -> None:
    row = {
        "id": "60",
        "question": "Q?",
        "generated_responses": repr(["<think>\nA.\n\nSo $\\boxed{204}$.", "cut"]),
        "gold_answer": "204",
        "answers_correctness": "[True, False]",
    }
    [chain] = eval_output_chains([row], "out.jsonl", "c", "o/r", "DeepScaleR", "ds")
    assert chain.id == "ds-60-s0" and chain.steps == ("<think>\nA.", "So $\\boxed{204}$.")
    assert chain.source_correct is True and chain.reference_answer == "204"
    assert chain.provenance == Provenance("o/r", "c", "out.jsonl", "DeepScaleR")


def test_bbm_traces_carry_the_located_mistake_and_a_wrong_answer_without_one_has_no_label() -> None:
    row = {"input": "((1 + 2) * 3) =", "steps": ["A = (1 + 2) = 3.", "A * 3 = 9. So the answer is 9"]}
    rows = [
        {**row, "target": "9", "answer": "9", "mistake_index": None},
        {**row, "target": "9", "answer": "8", "mistake_index": 1},
        {**row, "target": "9", "answer": "8", "mistake_index": None},  # wrong, no mistake located
        {**row, "steps": ["one step"], "target": "9", "answer": "9", "mistake_index": None},
        {**row, "target": "9", "answer": "9", "mistake_index": 5},  # past the last step
    ]
    chains = bbm_chains(rows, "multistep_arithmetic.jsonl", "c")
    assert [(c.id, c.label, c.source_correct) for c in chains] == [
        ("bbm-arithmetic-0", -1, True),
        ("bbm-arithmetic-1", 1, False),
        ("bbm-arithmetic-2", None, False),
    ]
    assert chains[0].problem == "Compute ((1 + 2) * 3) =" and chains[0].reference_answer == "9"
    assert chains[0].provenance.model.startswith("PaLM 2") and chain_row(chains[1])["label"] == 1


def test_mrmath_rows_carry_the_hand_marked_first_error_or_the_first_bad_rating() -> None:
    invalid = {
        "id": 3,
        "question": "Q?",
        "ground_truth_answer": "52_8",
        "generator": "Abel13B-001",
        "model_output_step_format": [["1. a"], ["2. b", "$$x$$"], ["3. c"]],
        "model_output_answer_correctness": "correct",
        "model_output_solution_first_error_step": 2,
    }
    valid = {**invalid, "id": 4, "model_output_solution_first_error_step": "N/A"}
    rated = {k: v for k, v in invalid.items() if not k.startswith("model_output_")}
    rated.update(id=5, model_output_step_format=[["a"], ["b"], ["c"]], rating=[1, 0, -1])
    chains = mrmath_chains([invalid, valid], "dataset/mr-math_invalid_errors.json", "c")
    chains += mrmath_chains(
        [rated, {**rated, "id": 6, "rating": [1, 0, 1]}], "mr-math_redundant_errors.json", "c"
    )
    assert [(c.id, c.label) for c in chains] == [
        ("mrmath-invalid_errors-3", 1),
        ("mrmath-invalid_errors-4", -1),
        ("mrmath-redundant_errors-5", 2),
        ("mrmath-redundant_errors-6", -1),
    ]
    assert chains[0].steps == ("a", "b\n$$x$$", "c") and chains[0].provenance.model == "Abel13B-001"
    assert chains[0].reference_answer == "52_8" and chains[0].source_correct


def _build_splits(manifest: Path, suffix: str, out: Path, *extra: str) -> dict[str, list[dict]]:
    """Build a set from its manifest as the command does (`build ... --suffix SUFFIX --out OUT`), and read
    back each split's rows."""
    assert main(["build", "--manifest", str(manifest), "--suffix", suffix, "--out", str(out), *extra]) == 0
    return {
        split: [json.loads(line) for line in (out / f"model_written_{split}{suffix}.jsonl").open()]
        for split in ("dev", "untuned")
    }


CHAMP_FILE = "champ_dataset/dataset_files/v0.json"


def _build_champ(tmp_path: Path, problems: dict, suffix: str, reader: str) -> dict[str, list[dict]]:
    """Write CHAMP's file (under the snapshot path the manifests name) and a one-row manifest reading it
    with `reader`, build set `suffix` from it, and read back each split's rows."""
    file = tmp_path / "YilunZhou+champ-dataset" / "tree" / CHAMP_FILE
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"problems": problems, "concepts": {}, "hints": {}}))
    manifest = tmp_path / f"model_written{suffix}_sources.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        f"YilunZhou/champ-dataset\tc{suffix}\t{CHAMP_FILE}\t4 models\tchamp\t{reader}\n"
    )
    return _build_splits(manifest, suffix, tmp_path / f"out{suffix}")


def _by_champ_key(splits: dict[str, list[dict]]) -> dict[str, dict]:
    """A built CHAMP set's rows by id, less the tag every id of the test manifests starts with."""
    return {
        row["id"].removeprefix("champ-dataset-champ-4-models-"): row
        for rows in splits.values()
        for row in rows
    }


def _chain(cid: str, problem: str = "Q?", **fields: object) -> ModelChain:
    return ModelChain(cid, problem, ("a", "b"), Provenance("r", "c", "f", "m"), **fields)  # type: ignore[arg-type]


def test_build_grades_dedups_and_sets_gold_only_where_the_source_and_the_grade_allow() -> None:
    chains = [
        _chain("right", source_says_right=True),
        _chain("right", source_says_right=True),  # the same original from another class file
        _chain("contradicted", source_says_right=True, reference_answer="wrong"),
        _chain("harness-right", source_correct=True),
        _chain("harness-wrong", source_correct=False),
        _chain("located", label=1, error_class="confidence"),
        _chain("in-processbench", problem="Seen", source_says_right=True),
        _chain("no-reference", problem="Unknown", source_says_right=True),
    ]
    references = {"q?": "3", "seen": "1"}

    def grade(chain: ModelChain, reference: str) -> bool | None:
        return {"right": None, "contradicted": False, "harness-right": True, "harness-wrong": False}.get(
            chain.id, True
        )

    built = {c.id: c for c in build_chains(chains, references, {"seen"}, grade, per_problem=6)}
    assert set(built) == {"right", "contradicted", "harness-right", "harness-wrong", "located"}
    assert built["right"].label == -1 and built["right"].final_answer_correct is None
    assert built["contradicted"].label is None and built["contradicted"].reference_answer == "wrong"
    assert built["harness-right"].label == -1 and built["harness-wrong"].label is None
    assert built["located"].label == 1 and built["located"].reference_answer == "3"


def test_erroneous_copies_are_sampled_per_problem_by_a_stable_hash() -> None:
    copies = [_chain(f"c-{k}", label=0, error_class=k) for k in FALSE_CLAIM_CLASSES]
    kept = build_chains(copies, {"q?": "1"}, set(), lambda c, r: None, per_problem=2)
    again = build_chains(copies, {"q?": "1"}, set(), lambda c, r: None, per_problem=2)
    assert len(kept) == 2 and [c.id for c in kept] == [c.id for c in again]


def test_the_split_is_by_problem_and_rows_are_what_eval_reads(tmp_path: Path) -> None:
    problems = [f"Problem {k}" for k in range(40)]
    assert split_of("Find $x$.") == split_of(" find   $x$. ")
    assert {split_of(p) for p in problems} == {"dev", "untuned"}
    chains = [
        _chain(f"{p}-{k}", problem=p, label=-1, final_answer_correct=True) for p in problems for k in (0, 1)
    ]
    splits = split_rows(chains)
    for split, rows in splits.items():
        assert {split_of(r["problem"]) for r in rows} == {split}
    row = chain_row(_chain("x", label=1, error_class="deception", reference_answer="5"))
    assert row["source"] == {"repo": "r", "commit": "c", "file": "f"} and row["label"] == 1
    assert "label" not in chain_row(_chain("y"))
    path = tmp_path / "model_written_dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in splits["dev"] + [row]))
    read, rejected = read_external_chains(path)
    assert not rejected and read[-1].first_error_label == 1 and read[-1].reference_answer == "5"


def test_math_references_are_each_solutions_last_box() -> None:
    rows = [
        {"problem": "Q?", "solution": "So $\\boxed{1}$, then $\\boxed{\\frac{1}{2}}$."},
        {"problem": "R", "solution": "none"},
    ]
    assert math_references(rows) == {"q?": "\\frac{1}{2}"}


def test_flags_are_listed_where_the_gold_calls_the_step_right_and_tallied_by_reading() -> None:
    rows = [
        {"id": "a", "steps": ["x", "y"], "label": -1},
        {"id": "b", "steps": ["x", "y"], "label": 1},
        {"id": "c", "steps": ["x", "y"]},
    ]
    bad = Verdict("incorrect", "false claim", {"claim": "1 + 1 = 3"}, "closed_arithmetic")
    flags = step_flags(rows, lambda row: [bad, bad])
    # every step of a right chain, the steps before a located first error, nothing of an unlabelled chain
    assert [(f["id"], f["step"], f["kind"], f["text"]) for f in flags] == [
        ("a", 0, "closed_arithmetic", "x"),
        ("a", 1, "closed_arithmetic", "y"),
        ("b", 0, "closed_arithmetic", "x"),
    ]
    assert adjudicated(flags, {("a", 1): "misreading"}) == {
        "closed_arithmetic": {"unread": 2, "misreading": 1}
    }


def test_build_writes_both_splits_from_raw_files(tmp_path: Path) -> None:
    data = tmp_path / "prmbench" / PRMBENCH_DATA
    data.mkdir(parents=True)
    (data / "prm800k_test_p1_4o_confidence.jsonl").write_text(
        json.dumps(_prmbench_row("confidence", [2])) + "\n"
    )
    math = tmp_path / "math.jsonl"
    math.write_text(json.dumps({"problem": PENCILS, "solution": "So $\\boxed{29}$."}) + "\n")
    out = tmp_path / "out"
    args = ["build", "--prmbench", str(tmp_path / "prmbench"), "--math", str(math), "--out", str(out)]
    args += ["--per-problem", "6"]
    assert main(args) == 0
    rows = [
        json.loads(line)
        for name in ("dev", "untuned")
        for line in (out / f"model_written_{name}.jsonl").open()
    ]
    assert {r["id"] for r in rows} == {"prmbench-prm_test_p1_0-original", "prmbench-prm_test_p1_0-confidence"}
    [copy] = [r for r in rows if r.get("error_class") == "confidence"]
    assert copy["label"] == 1 and copy["source"]["file"].endswith("confidence.jsonl")
    assert copy["final_answer_correct"] is False  # 58 cents against the reference 29


@pytest.mark.parametrize(
    ("option", "files", "repo"),
    [("--prime", PRIME_FILES, "PRIME-RL/PRIME"), ("--skythought", SKYTHOUGHT_FILES, "NovaSky-AI/SkyThought")],
)
def test_harness_outputs_of_a_repository_build_a_second_set_named_by_the_suffix(
    tmp_path: Path, option: str, files: dict, repo: str
) -> None:
    tree = tmp_path / "tree"
    for n, file in enumerate(files):
        (tree / file).parent.mkdir(parents=True, exist_ok=True)
        row = {
            "idx": "4",
            "question": PENCILS,
            "gt": "29",
            "code": [f"Try {n}.\n\nSo $\\boxed{{{29 + n}}}$."],
            "score": [n == 0],
        }
        (tree / file).write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    args = ["build", option, str(tree), f"{option}-commit", "c0", "--suffix", "2", "--out", str(out)]
    assert main(args) == 0
    [split] = [name for name in ("dev", "untuned") if (out / f"model_written_{name}2.jsonl").stat().st_size]
    rows = {r["id"]: r for r in map(json.loads, (out / f"model_written_{split}2.jsonl").open())}
    tags = [tag for _, tag in files.values()]
    assert set(rows) == {f"{tag}-4-s0" for tag in tags}
    right, *wrong = (rows[f"{tag}-4-s0"] for tag in tags)
    assert right["label"] == -1 and right["final_answer_correct"] is True
    assert right["source"] == {"repo": repo, "commit": "c0", "file": next(iter(files))}
    # a wrong answer, or the harness and our checker disagreeing, leaves the chain without a gold
    assert all("label" not in r and r["final_answer_correct"] is False for r in wrong)


def test_a_manifest_reads_each_listed_file_by_its_format_with_its_provenance(tmp_path: Path) -> None:
    harness = "eval/outputs/Org/Model-7B/math_eval/amc23/test.jsonl"
    preview = "results/aime24.jsonl"
    for path, row in (
        (
            harness,
            {"idx": 3, "question": PENCILS, "gt": "29", "code": ["A.\n\nSo $\\boxed{29}$."], "score": [True]},
        ),
        (
            preview,
            {
                "id": 7,
                "question": PENCILS,
                "gold_answer": "29",
                "generated_responses": ["B.\n\nSo $\\boxed{30}$."],
                "answers_correctness": [False],
            },
        ),
    ):
        file = tmp_path / "owner+some-repo" / "tree" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(row) + "\n")
    manifest = tmp_path / "SOURCES.tsv"
    lines = [
        "repo\tcommit\tpath\tmodel\tdataset\trows\tformat\tlicence",
        f"owner/some-repo\tc1\t{harness}\tOrg/Model-7B\tamc23\t1\tharness\tMIT",
        f"owner/some-repo\tc2\t{preview}\tR1-Distill-1.5B\taime24\t1\taime-preview\tMIT",
    ]
    manifest.write_text("\n".join(lines) + "\n")
    chains = {c.id: c for c in manifest_chains(manifest)}
    assert set(chains) == {"some-repo-amc23-model-7b-3-s0", "some-repo-aime24-r1-distill-1-5b-7-s0"}
    first = chains["some-repo-amc23-model-7b-3-s0"]
    assert first.provenance == Provenance("owner/some-repo", "c1", harness, "Org/Model-7B")
    assert first.source_correct is True and first.reference_answer == "29" and len(first.steps) == 2
    assert chains["some-repo-aime24-r1-distill-1-5b-7-s0"].source_correct is False
    manifest.write_text("\n".join([*lines[:2], lines[2].replace("aime-preview", "csv")]) + "\n")
    with pytest.raises(ValueError, match="line 3: format 'csv'"):
        manifest_chains(manifest)
    manifest.write_text("repo\tcommit\tpath\n")
    with pytest.raises(ValueError, match="line 1: the header lacks model, dataset, format"):
        manifest_chains(manifest)


def test_theoremqa_outputs_are_right_only_where_the_projects_checker_grades_them_so(tmp_path: Path) -> None:
    path = "outputs/Model_5shots.jsonl"
    file = tmp_path / "TIGER-AI-Lab+TheoremQA" / "tree" / path
    file.parent.mkdir(parents=True)
    rows = [
        {
            "question": PENCILS,
            "correct": ["29", 29],
            "solution": "Two cost 58.\n\nThe answer is 29.",
            "pred": "29",
        },
        {
            "question": PENCILS,
            "correct": ["29", 29],
            "solution": "Two cost 60.\n\nThe answer is 30.",
            "pred": "30",
        },
        {"question": PENCILS, "correct": ["29", 29], "solution": "One paragraph only.", "pred": "29"},
    ]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        f"TIGER-AI-Lab/TheoremQA\tc3\t{path}\tModel, 5-shot\ttheoremqa\ttheoremqa\n"
    )
    out = tmp_path / "out"
    assert main(["build", "--manifest", str(manifest), "--suffix", "3", "--out", str(out)]) == 0
    built = {
        r["id"]: r
        for name in ("dev3", "untuned3")
        for r in map(json.loads, (out / f"model_written_{name}.jsonl").open())
    }
    # a chain a row of two paragraphs or more; no grade in the file, so the checker's `correct` alone is gold
    assert set(built) == {"theoremqa-theoremqa-model-5-shot-0", "theoremqa-theoremqa-model-5-shot-1"}
    right, wrong = built["theoremqa-theoremqa-model-5-shot-0"], built["theoremqa-theoremqa-model-5-shot-1"]
    assert right["label"] == -1 and right["final_answer_correct"] is True and "source_correct" not in right
    assert "label" not in wrong and wrong["final_answer_correct"] is False
    assert right["source"] == {"repo": "TIGER-AI-Lab/TheoremQA", "commit": "c3", "file": path}


def test_summary_counts_real_slips_as_right_and_misread_chains_as_flagged(tmp_path: Path, capsys) -> None:
    rows = [
        {"id": "a", "problem": "P", "steps": ["x", "y"], "label": -1},
        {"id": "b", "problem": "P", "steps": ["x", "y"], "label": 1},
    ]
    flags = [
        {"id": "a", "step": 0, "kind": "closed_arithmetic"},
        {"id": "a", "step": 1, "kind": "closed_arithmetic"},
        {"id": "b", "step": 0, "kind": "equation_step"},
    ]
    reads = [{"id": "a", "step": 0, "read": "real slip"}, {"id": "b", "step": 0, "read": "misreading"}]
    kinds = {"closed_arithmetic": {"right": 1, "wrong": 2}, "equation_step": {"right": 0, "wrong": 1}}
    files = {}
    for name, content in (("set", rows), ("flags", flags), ("adjudication", reads)):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in content))
    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps({"splits": [{"verifier_kinds": kinds}]}))
    args = ["summary", "--figures", str(figures)] + [f"--{k}={v}" for k, v in files.items()]
    assert main(args) == 0
    out = capsys.readouterr().out
    closed = "closed_arithmetic            raw 1 / 3 (33.3 %)   adjudicated 2 / 3 (66.7 %"
    assert f"{closed}; Wilson 95 % 20.8-93.9)" in out
    equation = "equation_step                raw 0 / 1 (0.0 %)   adjudicated 0 / 1 (0.0 %"
    assert f"{equation}; Wilson 95 % 0.0-79.3)" in out
    # chain a is flagged; its one misread flag (step 1 was never read) keeps it flagged when adjudicated
    flagged = "right chains flagged         raw 1 / 1 (100.0 %)   adjudicated 1 / 1 (100.0 %"
    assert f"{flagged}; Wilson 95 % 20.7-100.0)" in out
    assert "3 flags where the gold says right, 1 not read" in out


def test_mrben_solutions_carry_the_annotated_first_error_by_its_step_number(tmp_path: Path) -> None:
    question = {"Question": "Shortest distance from xy = 8 to the origin?", "Options": "A: 4 \nB: 8"}
    solutions = [
        {
            "Sampled_Model": "GPT3.5",
            # a line without a number before the marked step: the error is found by its number, not its place
            "Model_Solution_Steps": [
                "Let d = sqrt(x^2 + y^2).",
                "Step 1: d' = 2x - 16/x^3.",
                "Solution: Choice_A",
            ],
            "Model_Solution_Correctness": "incorrect",
            "Model_Solution_First_Error_Step": "1",
        },
        {
            "Sampled_Model": "Claude2",
            "Model_Solution_Steps": ["Step 1: x = y = 2sqrt(2).", "Step 2: d = 4.", "Solution: Choice A"],
            "Model_Solution_Correctness": "correct",
            "Model_Solution_First_Error_Step": "N/A",
        },
        {
            "Sampled_Model": "mistral-medium",
            "Model_Solution_Steps": ["Step 1: d = 8.", "Solution: None of the choices."],
            "Model_Solution_Correctness": "incorrect",
            "Model_Solution_First_Error_Step": "4",  # names no step: no gold, left out
        },
    ]
    rows = {"q1": [{**question, "Question_UUID": "q1", "Ground_Truth_Answer": "A", **s} for s in solutions]}
    file = tmp_path / "dvlab-research+Mr-Ben" / "tree" / "data" / "math.json"
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps(rows))  # one JSON document: question id -> its solutions
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        "dvlab-research/Mr-Ben\tc4\tdata/math.json\t3 models\tmmlu-math\tmrben\n"
    )
    chains = {c.id: c for c in manifest_chains(manifest)}
    assert set(chains) == {"mr-ben-mmlu-math-3-models-q1-gpt3-5", "mr-ben-mmlu-math-3-models-q1-claude2"}
    wrong, right = (
        chains["mr-ben-mmlu-math-3-models-q1-gpt3-5"],
        chains["mr-ben-mmlu-math-3-models-q1-claude2"],
    )
    assert wrong.steps == ("Let d = sqrt(x^2 + y^2).", "d' = 2x - 16/x^3.", "Solution: Choice_A")
    assert wrong.label == 1 and wrong.source_correct is True  # the right letter after a wrong step
    assert right.label == -1 and right.source_correct is True and right.reference_answer == "A"
    assert right.problem == "Shortest distance from xy = 8 to the origin?\nA: 4 \nB: 8"
    assert right.provenance == Provenance("dvlab-research/Mr-Ben", "c4", "data/math.json", "Claude2")
    # the chosen letter against the key is the final answer's grade (the checker grades values, not letters)
    out = tmp_path / "out"
    assert main(["build", "--manifest", str(manifest), "--suffix", "4", "--out", str(out)]) == 0
    built = [
        json.loads(line)
        for name in ("dev4", "untuned4")
        for line in (out / f"model_written_{name}.jsonl").open()
    ]
    assert sorted((r["label"], r["final_answer_correct"]) for r in built) == [(-1, True), (1, True)]


@pytest.mark.parametrize(
    ("output", "reasoning", "answer"),
    [
        # valid JSON: decoded as JSON
        (
            '```json\n{"reasoning": "A.\\n\\nSo $\\\\frac{1}{2}$.", "answer": "1/2"}\n```',
            "A.\n\nSo $\\frac{1}{2}$.",
            "1/2",
        ),
        # LaTeX unescaped: invalid JSON, read as written, `\neq` kept, the `\n` escapes decoded
        (
            '{"reasoning": "So $x \\neq 1$.\\n\\nThen $\\frac{1}{2}$.", "answer": "\\frac{1}{2}"}',
            "So $x \\neq 1$.\n\nThen $\\frac{1}{2}$.",
            "\\frac{1}{2}",
        ),
        # valid JSON only because `\neq` reads as a newline: read as written instead
        ('{"reasoning": "So $a \\neq 0$.\\n\\nThus 2.", "answer": 2}', "So $a \\neq 0$.\n\nThus 2.", "2"),
        # backslashes doubled but a quote left bare: the escapes decoded
        (
            '{"reasoning": "He said "hi".\\n\\nSo $\\\\sqrt{2}$.", "answer": "\\\\sqrt{2}"}',
            'He said "hi".\n\nSo $\\sqrt{2}$.',
            "\\\\sqrt{2}",
        ),
    ],
)
def test_zeroeval_reasoning_keeps_latex_a_json_decoder_would_misread(
    output: str, reasoning: str, answer: str
) -> None:
    assert zeroeval_reasoning(output) == (reasoning, answer)


def test_zeroeval_outputs_are_paragraph_chains_ending_in_the_models_answer_field(tmp_path: Path) -> None:
    path = "result_dirs/math-l5/Model-7B.json"
    file = tmp_path / "yuchenlin+ZeroEval" / "tree" / path
    file.parent.mkdir(parents=True)
    answer = (
        '```json\n{{"reasoning": "Two pencils cost $0.58$.\\n\\nOne costs {cost} cents.", '
        '"answer": "{cost}"}}\n```'
    )
    rows = [
        {"id": "0", "problem": PENCILS, "answer": "29", "output": [answer.format(cost=29)]},
        {"id": "1", "problem": PENCILS + " ", "answer": "29", "output": [answer.format(cost=30)]},
        {"id": "2", "problem": PENCILS, "answer": "29", "output": ["I cannot answer."]},
    ]
    file.write_text(json.dumps(rows))  # one JSON document: a list of rows
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        f"repo\tcommit\tpath\tmodel\tdataset\tformat\nyuchenlin/ZeroEval\tc5\t{path}\tModel-7B\tmath-l5\tzeroeval\n"
    )
    chains = {c.id: c for c in manifest_chains(manifest)}
    assert set(chains) == {"zeroeval-math-l5-model-7b-0", "zeroeval-math-l5-model-7b-1"}
    chain = chains["zeroeval-math-l5-model-7b-0"]
    assert chain.steps == ("Two pencils cost $0.58$.", "One costs 29 cents.", "Answer: 29")
    assert chain.grade_alone and chain.reference_answer == "29" and chain.source_correct is None
    assert chain.provenance == Provenance("yuchenlin/ZeroEval", "c5", path, "Model-7B")


def test_mmlupro_outputs_are_graded_by_the_harness_letter_and_earlier_sets_questions_are_dropped(
    tmp_path: Path,
) -> None:
    path = "eval_results/gpt4o/math_result.json"
    file = tmp_path / "TIGER-AI-Lab+MMLU-Pro" / "tree" / path
    file.parent.mkdir(parents=True)
    row = {"question": PENCILS, "options": ["29 cents", "58 cents"], "answer": "A", "src": "ori_mmlu"}
    rows = [
        {**row, "question_id": 1, "pred": "A", "response": "$2p = 0.58$.\n\nThe answer is (A)."},
        {
            **row,
            "question_id": 2,
            "question": "Pencils again?",
            "pred": "B",
            "response": "So 58.\n\nAnswer (B).",
        },
        # the harness read no letter (a response cut by the token limit): no grade, no label
        {**row, "question_id": 3, "question": "And erasers?", "pred": None, "model_outputs": "Let\n\n$e ="},
        # one paragraph: no chain
        {**row, "question_id": 4, "question": "Pens?", "pred": "A", "response": "The answer is (A)."},
        # a question an earlier set holds with its options after it (Mr-Ben's form): dropped
        {**row, "question_id": 5, "question": "Shortest distance?", "pred": "A", "response": "d.\n\n(A)."},
    ]
    file.write_text(json.dumps(rows))
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        f"TIGER-AI-Lab/MMLU-Pro\tc6\t{path}\tGPT-4o, T=0\tmath\tmmlu-pro\n"
    )
    chains = {c.id: c for c in manifest_chains(manifest)}
    assert set(chains) == {f"mmlu-pro-math-gpt-4o-t-0-{k}" for k in (1, 2, 3, 5)}
    first = chains["mmlu-pro-math-gpt-4o-t-0-1"]
    assert first.problem == f"{PENCILS}\nOptions:\nA. 29 cents\nB. 58 cents" and first.question == PENCILS
    assert first.steps == ("$2p = 0.58$.", "The answer is (A).") and first.choice_key
    assert first.provenance == Provenance("TIGER-AI-Lab/MMLU-Pro", "c6", path, "GPT-4o, T=0")
    earlier = tmp_path / "model_written_dev4.jsonl"
    earlier.write_text(json.dumps({"problem": "Shortest distance?\nA: 4\nB: 8"}) + "\n")
    out = tmp_path / "out"
    argv = [
        "build",
        "--manifest",
        str(manifest),
        "--exclude-sets",
        str(earlier),
        "--suffix",
        "5",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    built = {
        json.loads(line)["id"].rsplit("-", 1)[1]: json.loads(line)
        for name in ("dev5", "untuned5")
        for line in (out / f"model_written_{name}.jsonl").open()
    }
    assert set(built) == {"1", "2", "3"}
    assert (built["1"]["label"], built["1"]["final_answer_correct"], built["1"]["reference_answer"]) == (
        -1,
        True,
        "A",
    )
    assert "label" not in built["2"] and built["2"]["final_answer_correct"] is False
    assert "label" not in built["3"] and built["3"]["final_answer_correct"] is None


def _abel_prompt(question: str) -> str:
    return (
        f"Question:\n{question} \nYou are provided with the following options for your answer:\n"
        "A. 29 cents \nB. 58 cents \nAnswer:\nLet's think step by step.\n"
    )


def test_abel_outputs_split_at_numbered_steps_and_are_graded_by_the_letter_read(tmp_path: Path) -> None:
    path = "outputs/mathgpt/70b.jsonl"
    file = tmp_path / "GAIR-NLP+abel" / "tree" / path
    file.parent.mkdir(parents=True)
    closing = "\n\nTherefore, the final result is {v}.\nBy problem, the option corresponding to {v} is {x}.\n"
    closing += "So our selection is option {x}. #### {x} "
    right = (
        "1. By problem, $3p+e=1.24$ and $5p+e=1.82$.\n"
        "   - so $2p = 0.58$\n\n"
        "2. [Final solution] Thus $p = 0.29$." + closing.format(v="29 cents", x="A")
    )
    row = {"prompt": _abel_prompt(PENCILS), "gold": "A"}
    rows = [
        {**row, "id": 0, "response": right, "pred": "A", "result": True},
        # the same question and response again (greedy decoding): one chain
        {**row, "id": 1, "response": right, "pred": "A", "result": True},
        {
            **row,
            "id": 2,
            "prompt": _abel_prompt("Pencils again?"),
            "response": "Reformatted Answer:\n1. So $p = 0.58$.\n2. Thus 58." + closing.format(v="58", x="B"),
            "pred": "B",
            "result": False,
        },
        # two letters read: the harness's `result` passes it, the letter against the key does not
        {
            **row,
            "id": 3,
            "prompt": _abel_prompt("And erasers?"),
            "response": "1. Both.\n2. A and B." + closing.format(v="both", x="A,B"),
            "pred": "A,B",
            "result": True,
        },
        # cut while it repeats itself: no letter read, no grade, no label
        {**row, "id": 4, "prompt": _abel_prompt("Pens?"), "response": "1. Let\n2. Let", "pred": ""},
        # one step (the model wrote its newlines as `\n`): no chain
        {
            **row,
            "id": 5,
            "prompt": _abel_prompt("Ink?"),
            "response": "1. So 2.\\n2. So A. #### A",
            "pred": "A",
        },
        # a question an earlier set holds, with other options: dropped
        {**row, "id": 6, "prompt": _abel_prompt("Shortest distance?"), "response": right, "pred": "A"},
    ]
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        f"GAIR-NLP/abel\tc7\t{path}\tGAIRMath-Abel-70B, T=0\tmathgpt\tabel\n"
    )
    chains = {c.id: c for c in manifest_chains(manifest)}
    tag = "abel-mathgpt-gairmath-abel-70b-t-0"
    assert set(chains) == {f"{tag}-{k}" for k in (0, 2, 3, 4, 6)}
    first = chains[f"{tag}-0"]
    assert first.problem == f"{PENCILS}\nOptions:\nA. 29 cents\nB. 58 cents" and first.question == PENCILS
    assert first.steps == (
        "By problem, $3p+e=1.24$ and $5p+e=1.82$.\n   - so $2p = 0.58$",
        "[Final solution] Thus $p = 0.29$.",
        "Therefore, the final result is 29 cents.\nBy problem, the option corresponding to 29 cents is A.\n"
        "So our selection is option A. #### A",
    )
    assert first.choice_key and first.provenance == Provenance(
        "GAIR-NLP/abel", "c7", path, "GAIRMath-Abel-70B, T=0"
    )
    assert chains[f"{tag}-2"].steps[:2] == ("So $p = 0.58$.", "Thus 58.")
    earlier = tmp_path / "model_written_dev5.jsonl"
    earlier.write_text(json.dumps({"problem": "Shortest distance?\nOptions:\nA. 4\nB. 8"}) + "\n")
    out = tmp_path / "out"
    argv = [
        "build",
        "--manifest",
        str(manifest),
        "--exclude-sets",
        str(earlier),
        "--suffix",
        "6",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    built = {
        json.loads(line)["id"].rsplit("-", 1)[1]: json.loads(line)
        for name in ("dev6", "untuned6")
        for line in (out / f"model_written_{name}.jsonl").open()
    }
    assert set(built) == {"0", "2", "3", "4"}
    assert (built["0"]["label"], built["0"]["final_answer_correct"], built["0"]["reference_answer"]) == (
        -1,
        True,
        "A",
    )
    for wrong in ("2", "3"):
        assert "label" not in built[wrong] and built[wrong]["final_answer_correct"] is False
    assert "label" not in built["4"] and built["4"]["final_answer_correct"] is None


def _aqua_question(k: int, question: str) -> dict:
    options = ["A)29 cents", "B)58 cents"]
    return {
        "id": k,
        "question": f"{question}\n# Answer option: {options!r}",
        "options": options,
        "answer": "A",
    }


def test_faithful_cot_outputs_split_at_subquestions_and_are_graded_by_the_letter_read(tmp_path: Path) -> None:
    tree = tmp_path / "veronica320+Faithful-COT" / "tree"
    path, questions = "output_dir/AQUA/test/gpt4_LtM/predictions.jsonl", "data/AQUA/test.jsonl"
    for name in (path, questions):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
    asked = ["Pencils?", "Pencils again?", "And erasers?", "Pens?", "Ink?", "Shortest distance?", "Paper?"]
    (tree / questions).write_text(
        "".join(json.dumps(_aqua_question(k, q)) + "\n" for k, q in enumerate(asked))
    )
    right = (
        "Q1. What is 2p?\n2p = 1.82 - 1.24 = 0.58.\n\n"
        "Q2. What is p?\np = 0.58 / 2 = 0.29.\nQ1. (a sub-question number out of turn stays in its step)\n"
        "Final Answer: What does a pencil cost?\nA pencil costs 29 cents. So the answer is (a)."
    )
    completions = [
        (right, "A"),
        ("Q1. What is p?\np = 0.58.\nFinal Answer: What is it?\n58 cents. So the answer is (b).", "B"),
        # no "answer is": the harness read no letter, so no grade and no label
        ("Q1. What is e?\ne = 1.24 - 3p.\nFinal Answer: What is it?\nIt depends on p.", "[invalid]"),
        # the harness read `N` ("none of these"): wrong, as the harness counts it
        ("Q1. What is it?\nNothing.\nFinal Answer: Which?\nSo the answer is none of these.", "N"),
        # one sub-question and no final answer: one step, no chain
        ("Q1. What is ink?\nSo the answer is (a).", "A"),
        # a question an earlier set holds: dropped
        (right, "A"),
        # no `Final Answer:` line: the sub-questions alone are the steps
        ("Q1. What is 2p?\n2p = 0.58.\nQ2. What is p?\np = 0.29, so the answer is (a).", "A"),
    ]
    rows = [
        {"id": k, "answer": answer, "completion": text, "completions": [text]}
        for k, (text, answer) in enumerate(completions)
    ]
    (tree / path).write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = tmp_path / "SOURCES.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\tquestions\n"
        f"veronica320/Faithful-COT\tc8\t{path}\tgpt-4, T=0\taqua\tfaithful-cot-ltm\t{questions}\n"
    )
    chains = {c.id: c for c in manifest_chains(manifest)}
    tag = "faithful-cot-aqua-gpt-4-t-0"
    assert set(chains) == {f"{tag}-{k}" for k in (0, 1, 2, 3, 5, 6)}
    first = chains[f"{tag}-0"]
    assert first.problem == "Pencils?\nOptions:\nA. 29 cents\nB. 58 cents" and first.question == "Pencils?"
    assert first.steps == (
        "What is 2p?\n2p = 1.82 - 1.24 = 0.58.",
        "What is p?\np = 0.58 / 2 = 0.29.\nQ1. (a sub-question number out of turn stays in its step)",
        "Final Answer: What does a pencil cost?\nA pencil costs 29 cents. So the answer is (a).",
    )
    assert first.choice_key and first.provenance == Provenance(
        "veronica320/Faithful-COT", "c8", path, "gpt-4, T=0"
    )
    assert chains[f"{tag}-6"].steps == (
        "What is 2p?\n2p = 0.58.",
        "What is p?\np = 0.29, so the answer is (a).",
    )
    earlier = tmp_path / "model_written_dev6.jsonl"
    earlier.write_text(json.dumps({"problem": "Shortest distance?\nOptions:\nA. 4\nB. 8"}) + "\n")
    out = tmp_path / "out"
    argv = [
        "build",
        "--manifest",
        str(manifest),
        "--exclude-sets",
        str(earlier),
        "--suffix",
        "7",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    built = {
        json.loads(line)["id"].rsplit("-", 1)[1]: json.loads(line)
        for name in ("dev7", "untuned7")
        for line in (out / f"model_written_{name}.jsonl").open()
    }
    assert set(built) == {"0", "1", "2", "3", "6"}
    for right_chain in ("0", "6"):
        assert (built[right_chain]["label"], built[right_chain]["final_answer_correct"]) == (-1, True)
        assert built[right_chain]["reference_answer"] == "A"
    for wrong in ("1", "3"):
        assert "label" not in built[wrong] and built[wrong]["final_answer_correct"] is False
    assert "label" not in built["2"] and built["2"]["final_answer_correct"] is None


def _faithful_files(tree: Path, dataset: str, model: str, rows: list[tuple[str, object, str, int]]) -> None:
    """`data/DATASET/test.jsonl` and one model's predictions: (question, key, answer read, steps) a row."""
    for name in (f"data/{dataset}/test.jsonl", f"output_dir/{dataset}/test/{model}_LtM/predictions.jsonl"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
    questions, predictions = [], []
    for k, (question, key, read, steps) in enumerate(rows):
        questions.append({"id": k, "question": question, "answer": key})
        parts = [f"Q{n + 1}. Sub-question {n + 1}?\nAnswer {n + 1}." for n in range(steps - 1)]
        text = "\n".join([*parts, f"Final Answer: {question}\nSo the answer is {read}."][-steps:])
        predictions.append({"id": k, "answer": read, "completion": text, "completions": [text]})
    for name, records in (
        (f"data/{dataset}/test.jsonl", questions),
        (f"output_dir/{dataset}/test/{model}_LtM/predictions.jsonl", predictions),
    ):
        (tree / name).write_text("".join(json.dumps(r) + "\n" for r in records))


def test_faithful_cot_numeric_outputs_are_graded_by_the_harness_number_and_capped_by_the_split_hash(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "veronica320+Faithful-COT" / "tree"
    shared = "Sam has 4 boxes. How many boxes?"
    _faithful_files(
        tree,
        "SVAMP",
        "gpt4",
        [
            ("Tom has 2 apples and buys 3. How many?", "#### 5", "5", 3),
            ("A farm sells 1,250 eggs. How many?", "#### 1250", "$1,250", 2),  # `$` and comma dropped
            ("How many fewer pens than pencils?", "#### 5", "-5", 2),  # the harness drops the sign
            ("How many whole pies?", "#### 7", "7.8", 2),  # and the fractional part
            ("How many cars?", "#### 6", "[invalid]", 2),  # no number read: no grade
            ("How many dogs?", "#### 6", "3", 2),  # wrong
            ("How many cats?", "#### 6", "6", 1),  # one step: no chain
        ],
    )
    _faithful_files(
        tree,
        "ASDiv",
        "gpt4",
        [
            ("What are the width and the height?", ["5", "10"], "(10, 5)", 2),  # the same multiset
            ("How long is the rope?", "12", "$12", 2),  # ASDiv reads `$12` as no number: no grade
            ("How many birds?", "4", "4, 4", 2),  # two values against one: wrong
            (shared, "4", "4", 2),
        ],
    )
    _faithful_files(tree, "MultiArith", "gpt4", [(shared, "#### 4", "4", 2)])  # ASDiv's question again
    manifest = tmp_path / "model_written8_sources.tsv"
    lines = ["repo\tcommit\tpath\tmodel\tdataset\tformat\tquestions"]
    for dataset in ("SVAMP", "ASDiv", "MultiArith"):
        path = f"output_dir/{dataset}/test/gpt4_LtM/predictions.jsonl"
        lines.append(
            f"veronica320/Faithful-COT\tc8\t{path}\tgpt-4, T=0\t{dataset.lower()}\tfaithful-cot-ltm-numeric"
            f"\tdata/{dataset}/test.jsonl"
        )
    manifest.write_text("\n".join(lines) + "\n")

    def built(*extra: str) -> dict[str, tuple[str, dict]]:
        splits = _build_splits(manifest, "8", tmp_path / f"out{'-'.join(extra)}", *extra)
        return {
            f"{row['source']['file'].split('/')[1]}-{row['id'].rsplit('-', 1)[1]}": (split, row)
            for split, rows in splits.items()
            for row in rows
        }

    def hashed(problem: str) -> bytes:
        return hashlib.sha256(question_key(problem).encode("utf-8")).digest()

    rows = built()
    grades = {name: (row["final_answer_correct"], row.get("label")) for name, (_, row) in rows.items()}
    assert grades == {
        "SVAMP-0": (True, -1),
        "SVAMP-1": (True, -1),
        "SVAMP-2": (True, -1),
        "SVAMP-3": (True, -1),
        "SVAMP-4": (None, None),
        "SVAMP-5": (False, None),
        "ASDiv-0": (True, -1),
        "ASDiv-1": (None, None),
        "ASDiv-2": (False, None),
        "ASDiv-3": (True, -1),
        "MultiArith-0": (True, -1),
    }
    assert rows["ASDiv-0"][1]["reference_answer"] == "5, 10"
    assert rows["SVAMP-1"][1]["reference_answer"] == "1250"
    assert rows["SVAMP-0"][1]["problem"] == "Tom has 2 apples and buys 3. How many?"
    assert rows["SVAMP-0"][1]["steps"][-1].startswith("Final Answer: Tom has")
    splits = {row["problem"]: split for split, row in rows.values()}
    assert splits == {p: "dev" if hashed(p)[0] % 2 == 0 else "untuned" for p in splits}
    assert set(splits.values()) == {"dev", "untuned"}
    # one chain a problem and model: the question MultiArith shares with ASDiv is ASDiv's (read first)
    assert set(built("--max-problems", "100")) == set(rows) - {"MultiArith-0"}
    # at most two problems a split, the first by the split's hash
    capped = built("--max-problems", "2")
    for split in ("dev", "untuned"):
        ranked = sorted((p for p, s in splits.items() if s == split), key=lambda p: hashed(p).hex())
        assert len(ranked) > 2
        assert {row["problem"] for s, row in capped.values() if s == split} == set(ranked[:2])


def test_promptpg_outputs_are_split_at_literal_newlines_and_graded_by_the_harness_rule(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "lupantech+PromptPG" / "tree"
    table = "Name | Votes\nAnn | 4\nGreg | 7"

    def problem(question: str, answer: str, choices: list[str] | None = None, unit: str = "") -> dict:
        return {
            "table": table,
            "table_title": "Votes",
            "question": question,
            "unit": unit,
            "choices": choices,
            "answer": answer,
            "ques_type": "multi_choice" if choices else "free_text",
        }

    problems = {
        "1": problem("How many votes in all?", "11"),
        "2": problem("How much for both?", "$1,250.00"),  # the harness's number: `$`, comma, `.00` dropped
        "3": problem("Who got more votes?", "Greg", ["Ann", "Greg"]),
        "4": problem("Who got fewer votes?", "Ann", ["Ann", "Greg"]),
        "5": problem("How many more did Greg get?", "3"),
        "6": problem("Is it fair?", "yes", ["yes", "no"]),
        "7": problem("How many votes for Ann?", "4"),
        "8": problem("What fraction voted for Ann?", "4/11"),
        "9": problem("How long?", "5", unit="minutes"),
    }
    outputs = {
        "1": "Add the votes.\\n\\n4 + 7 = 11\\n\\nThe answer is 11.",
        "2": "Add the prices.\\n\\n$500 + $750 = $1,250\\n\\nThe answer is $1,250.",
        "3": "Greg got 7 votes.\\n\\nGreg got more. The answer is Greg.",  # read by the words it shares
        "4": "By the table, Greg got fewer.\\n\\nThe answer is Greg.",  # `By ` reads as the letter B
        "5": "Subtract.\\n\\n7 - 4 = 2\\n\\nThe answer is 2.",  # wrong
        "6": "Look at the table.\\n\\nIt is hard to tell",  # no letter, no word shared: read nothing
        "7": "The answer is 4.",  # one step: no chain
        "8": "Divide.\\n\\n$\\frac{4}{11}$",  # a fraction: 0.364 both
        "99": "A problem the test1k file lacks.\\n\\nThe answer is 1.",
        "9": "Subtract the times.\\n\\nThe answer is 5 minutes.",  # the unit dropped from both
    }
    results = {
        pid: {"answer": "", "output": text, "prediction": "", "true_false": False}
        for pid, text in outputs.items()
    }
    (tree / "results" / "gpt3").mkdir(parents=True)
    (tree / "data" / "tabmwp").mkdir(parents=True)
    path = "results/gpt3/exp4_test_TQ-SA_2_seed_2.json"
    (tree / path).write_text(json.dumps({"acc": 0.0, "args": {"engine": "x"}, "results": results}))
    (tree / "data" / "tabmwp" / "problems_test1k.json").write_text(json.dumps(problems))
    manifest = tmp_path / "model_written9_sources.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\tquestions\n"
        f"lupantech/PromptPG\tc9\t{path}\ttext-davinci-002, T=0\ttabmwp\tpromptpg-tqsa"
        "\tdata/tabmwp/problems_test1k.json\n"
    )
    rows = {
        row["id"].rsplit("-", 1)[1]: row
        for split in _build_splits(manifest, "9", tmp_path / "out").values()
        for row in split
    }
    grades = {pid: (row["final_answer_correct"], row.get("label")) for pid, row in rows.items()}
    assert grades == {
        "1": (True, -1),
        "2": (True, -1),
        "3": (True, -1),
        "4": (False, None),
        "5": (False, None),
        "6": (None, None),
        "8": (True, -1),
        "9": (True, -1),
    }
    assert rows["1"]["steps"] == ["Add the votes.", "4 + 7 = 11", "The answer is 11."]
    assert rows["1"]["problem"] == f"[TITLE]: Votes\n{table}\n\nHow many votes in all?"
    assert rows["3"]["problem"].endswith("\nWho got more votes?\nOptions: (A) Ann (B) Greg")
    assert rows["9"]["problem"].endswith("How long? (Unit: minutes)")
    assert rows["2"]["reference_answer"] == "$1,250.00"


def test_jeebench_responses_split_at_paragraphs_and_graded_by_the_harness_marks_on_the_extract(
    tmp_path: Path,
) -> None:
    def row(index: int, kind: str, gold: str, extract: str, text: str, subject: str = "math") -> dict:
        return {
            "description": "JEE Adv 2099 Paper 1",
            "index": index,
            "subject": subject,
            "type": kind,
            "question": f"Question {index}.\n\n(A) 1 (B) 2 (C) 3 (D) 4",
            "gold": gold,
            "prompt": "",
            "extract": extract,
            "GPT4_CoT_response": {"model": "m", "choices": [{"message": {"content": text}}]},
        }

    two = "First, $1 + 1 = 2$.\n\nSo the answer is it."
    rows = [
        row(1, "MCQ", "B", "B", two),
        row(2, "MCQ(multiple)", "ABD", "DBA", two),  # letters compared as a set
        row(3, "MCQ(multiple)", "ABD", "AB", two),  # partial marks (0.5): not right
        row(4, "Integer", "3", "None", two),  # nothing extracted: no grade
        row(5, "Numeric", "0.5", "0.505", two),  # within 0.01 of the key
        row(6, "Numeric", "0.5", "0.52", two),
        row(7, "MCQ", "A", "A", "One paragraph, the answer is A."),  # one step: no chain
        row(8, "MCQ", "A", "A", two, subject="phy"),  # not mathematics
    ]
    completion = row(9, "Integer", "7", "7", "\n\nAdd 3 and 4.\n\n$3 + 4 = 7$")
    completion["GPT3_normal_response"] = {
        "choices": [{"text": completion.pop("GPT4_CoT_response")["choices"][0]["message"]["content"]}]
    }
    rows.append(completion)
    path = "data/responses/GPT4_CoT_responses/responses.json"
    file = tmp_path / "somethingdevs+cs678-jeebench" / "tree" / path
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps(rows))
    manifest = tmp_path / "model_written10_sources.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\n"
        f"somethingdevs/cs678-jeebench\tc10\t{path}\tgpt-4-0314, T=0\tjeebench\tjeebench\n"
    )
    built = {
        int(row["id"].rsplit("-", 1)[1]): row
        for split in _build_splits(manifest, "10", tmp_path / "out").values()
        for row in split
    }
    grades = {index: (row["final_answer_correct"], row.get("label")) for index, row in built.items()}
    assert grades == {
        1: (True, -1),
        2: (True, -1),
        3: (False, None),
        4: (None, None),
        5: (True, -1),
        6: (False, None),
        9: (True, -1),
    }
    assert built[1]["steps"] == ["First, $1 + 1 = 2$.", "So the answer is it."]
    assert built[9]["steps"] == ["Add 3 and 4.", "$3 + 4 = 7$"]
    assert built[1]["problem"] == "Question 1.\n(A) 1 (B) 2 (C) 3 (D) 4"
    assert built[2]["reference_answer"] == "ABD"
    assert built[1]["id"] == "cs678-jeebench-jeebench-gpt-4-0314-t-0-jee-adv-2099-paper-1-1"
    assert built[1]["source"] == {"repo": "somethingdevs/cs678-jeebench", "commit": "c10", "file": path}


def test_mathodyssey_reasoning_split_into_steps_and_graded_by_the_judge_where_tied_to_the_text(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "mengf1+mathodyssey" / "tree"
    path, questions, grades = "jsonl/m.jsonl", "problems.jsonl", "jsonl/eval/result-m-clean.jsonl"
    (tree / "jsonl" / "eval").mkdir(parents=True)
    texts = {
        # paragraphs of a JSON string, LaTeX written with one backslash (`\frac` would read as a form feed)
        1: '{"reasoning": "Halve: \\frac{8}{2} = 4.\n\nSo it is 4.", "answer": "4"}',
        2: '```json\n{"reasoning": ["Add 2 and 2.", "It is 5."], "answer": "5"}\n```',  # a list of steps
        3: '{"reasoning": {"step_1": "Take 3.", "step_2": "Keep 3."}, "answer": 3}',  # an object of steps
        4: '{"reasoning": "One paragraph only.", "answer": "1"}',  # one step: no chain
        5: '{"reasoning": "A.\n\nB.", "answer": "7"}',  # the judged answer is not in the text: no grade
        6: '{"reasoning": "A.\n\nB = 6.", "answer": "6"}',  # the judge's reply holds its working: no grade
        7: "not JSON at all",  # no chain
    }
    predictions = {1: "4", 2: "5", 3: 3, 4: "1", 5: "9", 6: "6", 7: "x"}
    replies = {1: "1", 2: "0", 3: "1\n1", 4: "1", 5: "1", 6: "The sum 1 + 5 is 6.\n\n1", 7: "1"}
    (tree / path).write_text("".join(json.dumps({f"Problem_{n}": t}) + "\n" for n, t in texts.items()))
    (tree / questions).write_text(
        "".join(
            json.dumps({f"Problem_{n}": {"question": f"Question {n}?", "answer": str(n), "level": "x"}})
            + "\n"
            for n in texts
        )
    )
    (tree / grades).write_text(
        "".join(
            json.dumps(
                {f"Problem_{n}": {"true": str(n), "prediction": predictions[n], "is_correct": replies[n]}}
            )
            + "\n"
            for n in texts
        )
    )
    manifest = tmp_path / "model_written11_sources.tsv"
    manifest.write_text(
        "repo\tcommit\tpath\tmodel\tdataset\tformat\tquestions\tgrades\n"
        f"mengf1/mathodyssey\tc11\t{path}\tgpt-4, T=0\tmathodyssey\tmathodyssey\t{questions}\t{grades}\n"
    )
    built = {
        int(row["id"].rsplit("-", 1)[1]): row
        for split in _build_splits(manifest, "11", tmp_path / "out").values()
        for row in split
    }
    grades_read = {n: (row["final_answer_correct"], row.get("label")) for n, row in built.items()}
    assert grades_read == {1: (True, -1), 2: (False, None), 3: (True, -1), 5: (None, None), 6: (None, None)}
    assert built[1]["steps"] == ["Halve: \\frac{8}{2} = 4.", "So it is 4."]
    assert built[2]["steps"] == ["Add 2 and 2.", "It is 5."]
    assert built[3]["steps"] == ["Take 3.", "Keep 3."]
    assert built[1]["problem"] == "Question 1?"
    assert built[1]["reference_answer"] == "1"
    assert built[1]["id"] == "mathodyssey-mathodyssey-gpt-4-t-0-problem-1"
    assert built[1]["source"] == {"repo": "mengf1/mathodyssey", "commit": "c11", "file": path}


def test_champ_annotated_solutions_split_at_paragraphs_with_the_annotators_first_wrong_step(
    tmp_path: Path,
) -> None:
    def fws(text: str, wrong: str | None, author: str = "GPT-4") -> dict:
        start = None if wrong is None else text.index(wrong)
        return {
            "text": text,
            "start_idx": start,
            "end_idx": None if wrong is None else start + len(wrong),
            "author": author,
        }

    right = "Let $n = 2$.\n\nThen $n^2 = 4$."
    second = "Let $n = 2$.\n\nThen $n^2 = 5$.\n\nSo 5."
    display = "We get\n\n$$n = 2,$$\n\nso $n^2 = 5$.\n\nSo 5."  # the display stays with its sentence
    gap = "Let $n = 2$.\n\nThen $n^3 = 6$."  # the span opens on the blank line before its step
    problems = {
        "P_NT_1": {
            "identifier": "P_NT_1",
            "_text": "Find $n^2$ if $n = 2$.",
            "_answer": "4",
            "fws_annotations": {
                "GPT-4|No C w/o H": fws(right, None),
                "GPT-4|Direct C w/ H": fws(second, "$n^2 = 5$"),
            },
        },
        "P_NT_2": {
            "identifier": "P_NT_2",
            "_text": "Find $n$ if $n - 2 = 0$.",
            "_answer": "2",
            "fws_annotations": {
                "PaLM 2 Medium|No C w/o H": fws(display, "$n^2 = 5$", "PaLM 2 Medium"),
                "PaLM 2 Medium|Direct C w/ H": fws("One paragraph, n = 2.", None, "PaLM 2 Medium"),
            },
        },
        "P_NT_3": {
            "identifier": "P_NT_3",
            "_text": "Find $n^3$ if $n = 2$.",
            "_answer": "8",
            "fws_annotations": {"GPT-3.5|No C w/o H": fws(gap, "\n\nThen", "GPT-3.5")},
        },
    }
    splits = _build_champ(tmp_path, problems, "12", "champ-fws")
    built = _by_champ_key(splits)
    gold = {key: (row.get("label"), row["final_answer_correct"]) for key, row in built.items()}
    assert gold == {
        "p-nt-1-gpt-4-no-c-w-o-h": (-1, True),  # no mistake: every step right
        "p-nt-1-gpt-4-direct-c-w-h": (1, None),  # a located error: the final answer is not graded
        "p-nt-2-palm-2-medium-no-c-w-o-h": (1, None),
        "p-nt-3-gpt-3-5-no-c-w-o-h": (1, None),
    }  # the one-paragraph solution is no chain
    assert built["p-nt-2-palm-2-medium-no-c-w-o-h"]["steps"] == [
        "We get\n\n$$n = 2,$$",
        "so $n^2 = 5$.",
        "So 5.",
    ]
    assert built["p-nt-1-gpt-4-direct-c-w-h"]["problem"] == "Find $n^2$ if $n = 2$."
    assert built["p-nt-1-gpt-4-direct-c-w-h"]["reference_answer"] == "4"
    assert built["p-nt-1-gpt-4-direct-c-w-h"]["generator"] == "GPT-4 (CHAMP prompt Direct C w/ H)"
    assert built["p-nt-1-gpt-4-no-c-w-o-h"]["source"] == {
        "repo": "YilunZhou/champ-dataset",
        "commit": "c12",
        "file": CHAMP_FILE,
    }
    # both prompts' chains of a problem (the statement alone is the problem) fall in one split
    for rows in splits.values():
        assert {row["id"] for row in rows if "p-nt-1-" in row["id"]} in (
            set(),
            {
                f"champ-dataset-champ-4-models-{key}"
                for key in ("p-nt-1-gpt-4-no-c-w-o-h", "p-nt-1-gpt-4-direct-c-w-h")
            },
        )


def test_champ_unannotated_full_solutions_graded_by_the_checker_in_the_annotated_chains_split(
    tmp_path: Path,
) -> None:
    def said(text: str, model: str, error: str | None = None) -> dict:
        summary = None if error else "In one sentence."
        return {
            "messages": [
                {"role": "System", "text": "You are an expert on mathematics.", "error": None},
                {"role": "User", "text": "Solve the following problem.", "error": None},
                {"role": f"Model.{model}", "text": text, "error": error},
                {"role": "User", "text": "Now, summarize the answer above in one sentence.", "error": None},
                {"role": f"Model.{model}", "text": summary, "error": "LENGTH_PREVIOUS" if error else None},
            ]
        }

    right = "Since $n = 2$, $n^2 = 4$.\n\nThe answer is 4."
    problems = {
        "P_NT_1": {
            "identifier": "P_NT_1",
            "_text": "Find $n^2$ if $n = 2$.",
            "_answer": "4",
            # annotated: set 12's chain, not taken again
            "fws_annotations": {
                "GPT-4|No C w/o H": {"text": right, "start_idx": None, "end_idx": None, "author": "GPT-4"}
            },
            "conversations": {
                "GPT-4|No C w/o H": said(right, "GPT-4"),
                "GPT-4|Direct C w/ H": said(right, "GPT-4"),
                "GPT-4|0-Shot": said(right, "GPT-4"),  # the same prompt as `No C w/o H`: not taken
                "GPT-4|1/3 Soln": said(right, "GPT-4"),  # a partial solution in the prompt: not taken
                "GPT-4|No C w/ H": said(right, "GPT-4"),
                "GPT-3.5|No C w/o H": said("So $n^2 = 5$.\n\nThe answer is 5.", "GPT-3.5"),
                "GPT-3.5|Direct C w/ H": said(
                    "We square two.\n\nIt gives four.", "GPT-3.5"
                ),  # no answer read
                "PaLM 2 Medium|No C w/o H": said("One paragraph, n^2 = 4.", "PaLM 2 Medium"),
                "PaLM 2 Medium|Direct C w/ H": said(
                    "Let $n = 2$.\n\nThen", "PaLM 2 Medium", "LENGTH_CURRENT"
                ),
            },
        },
        "P_NT_2": {
            "identifier": "P_NT_2",
            "_text": "Find $n$ if $n - 2 = 0$.",
            "_answer": "2",
            "fws_annotations": {
                "GPT-4 Turbo|Direct C w/ H": {
                    "text": "So $n = 3$.\n\nThe answer is 3.",
                    "start_idx": 0,
                    "end_idx": 9,
                    "author": "GPT-4 Turbo",
                }
            },
            "conversations": {
                "GPT-4 Turbo|Direct C w/ H": said("So $n = 3$.\n\nThe answer is 3.", "GPT-4 Turbo"),
                "GPT-4 Turbo|No C w/o H": said("Add 2.\n\nThe answer is $\\boxed{2}$.", "GPT-4 Turbo"),
            },
        },
    }
    splits = {
        suffix: _build_champ(tmp_path, problems, suffix, reader)
        for suffix, reader in (("12", "champ-fws"), ("13", "champ-conv"))
    }
    built = _by_champ_key(splits["13"])
    gold = {key: (row.get("label"), row["final_answer_correct"]) for key, row in built.items()}
    assert gold == {
        "p-nt-1-gpt-4-direct-c-w-h": (-1, True),  # the checker's `correct` alone makes a chain right
        "p-nt-1-gpt-3-5-no-c-w-o-h": (None, False),  # a wrong answer: no located error
        "p-nt-1-gpt-3-5-direct-c-w-h": (None, None),  # no answer the checker reads
        "p-nt-2-gpt-4-turbo-no-c-w-o-h": (-1, True),
    }  # not taken: the annotated chains, other prompts, one paragraph, a reply cut at the length limit
    chain = built["p-nt-1-gpt-3-5-no-c-w-o-h"]
    assert chain["steps"] == ["So $n^2 = 5$.", "The answer is 5."]
    assert chain["problem"] == "Find $n^2$ if $n = 2$." and chain["reference_answer"] == "4"
    assert chain["generator"] == "GPT-3.5 (CHAMP prompt No C w/o H)" and "source_correct" not in chain
    assert chain["source"] == {"repo": "YilunZhou/champ-dataset", "commit": "c13", "file": CHAMP_FILE}
    # each problem's chains fall in the split its annotated (set 12) chains are in; no chain is in both sets
    where = {
        suffix: {row["problem"]: split for split, rows in by_split.items() for row in rows}
        for suffix, by_split in splits.items()
    }
    assert where["13"] == where["12"] and len(where["13"]) == 2
    ids = {
        suffix: {row["id"] for rows in by_split.values() for row in rows}
        for suffix, by_split in splits.items()
    }
    assert not ids["12"] & ids["13"]


def test_every_committed_adjudication_names_a_step_of_the_set_beside_it() -> None:
    """Each committed adjudication file reads flags of the split file beside it: every row names a chain of
    that split and one of its steps, says `real slip` or `misreading`, and gives the claim and why; a row
    naming a chain or step that is not there (a typo, a rebuilt split) would silently change no figure."""
    data = Path(__file__).resolve().parents[2] / "evaluation" / "data"
    files = sorted(data.glob("*_adjudication.jsonl"))
    assert len(files) >= 20
    for path in files:
        split = path.with_name(path.name.replace("_adjudication", ""))
        steps = {}
        for line in split.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                steps[row["id"]] = len(row["steps"])
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            where = f"{path.name}:{number}"
            assert set(row) >= {"id", "step", "kind", "claim", "read", "why"}, where
            assert row["read"] in ("real slip", "misreading"), where
            assert row["id"] in steps and 0 <= row["step"] < steps[row["id"]], where
            assert row["claim"].strip() and row["why"].strip(), where
