"""ProcessBench-style figures per split and averaged over splits, per label source, worked out by hand."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from prm_factory.evaluation.processbench import (
    Split,
    average_over_splits,
    chain_outcome,
    chain_problem,
    evaluate_split,
    group_splits,
    label_sources,
    report_json,
    source_figures,
)
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.verifiers.protocol import Verdict


class MarkedVerifier:
    """A stand-in verifier: a step is `incorrect` when its text says WRONG, else `correct`."""

    name = "marked"
    version = "0"

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        return [Verdict("incorrect" if "WRONG" in s else "correct", "marked") for s in steps]

    def grade(self, problem: Problem, text: str) -> Verdict:
        return Verdict(
            "correct" if problem.reference_answer and problem.reference_answer in text else "incorrect", ""
        )


def chain(
    cid: str, split: str, gold: int, flagged: Sequence[int], n: int = 3, line: int = 1
) -> ExternalChain:
    steps = tuple(f"step {i}" + (" WRONG" if i in flagged else "") for i in range(n))
    return ExternalChain(
        cid, "p", steps, first_error_label=gold, line=line, file=f"{split}.json", split=split
    )


# split a: 4 chains. Correct chains: a1 clean, a3 flagged at 0 -> acc. correct 1/2, 1 of 2 flagged.
# Erroneous: a2 gold 1 flagged at 1 (exact), a4 gold 0 flagged at 1 (missed) -> acc. erroneous 1/2; F1 1/2.
# Steps up to the first error: a2 step 1 TP; a3 step 0 FP; a4 step 0 FN (its step 1 is after the first
# error, unlabelled) -> precision 1/2, recall 1/2.
SPLIT_A = [
    chain("a1", "a", -1, [], line=1),
    chain("a2", "a", 1, [1], line=2),
    chain("a3", "a", -1, [0], line=3),
    chain("a4", "a", 0, [1], line=4),
]
# split b: b1 correct and clean, b2 gold 2 flagged at 2 -> every figure 1, nothing flagged on correct chains.
SPLIT_B = [chain("b1", "b", -1, [], line=1), chain("b2", "b", 2, [2], line=2)]


def test_per_split_and_averaged_figures_by_hand() -> None:
    verifier = MarkedVerifier()
    splits = group_splits(SPLIT_A + SPLIT_B, [])
    assert [s.name for s in splits] == ["a", "b"]
    reports = [evaluate_split(s, verifier) for s in splits]
    assert all(list(r.sources) == ["verifier"] for r in reports)  # no worked solution: no reference source
    a = source_figures(reports[0].sources["verifier"])
    assert (a.f1, a.accuracy_erroneous, a.accuracy_correct) == (0.5, 0.5, 0.5)
    assert (a.correct_flagged, a.incorrect_precision, a.incorrect_recall) == (0.5, 0.5, 0.5)
    b = source_figures(reports[1].sources["verifier"])
    assert (b.f1, b.accuracy_erroneous, b.accuracy_correct, b.correct_flagged) == (1.0, 1.0, 1.0, 0.0)
    assert (b.incorrect_precision, b.incorrect_recall) == (1.0, 1.0)
    mean = average_over_splits(reports)["verifier"]
    assert mean.n_splits == 2
    assert mean.f1 == pytest.approx(0.75)  # the mean of the splits' F1, not the pooled chains' (2/3)
    assert (mean.accuracy_erroneous, mean.accuracy_correct, mean.correct_flagged) == (0.75, 0.75, 0.25)
    assert (mean.incorrect_precision, mean.incorrect_recall) == (0.75, 0.75)
    figures = report_json("in", reports)
    assert figures["average"]["verifier"]["first_error_f1"] == pytest.approx(0.75)
    a_json = figures["splits"][0]
    assert (a_json["split"], a_json["chains"], a_json["erroneous"], a_json["correct"]) == ("a", 4, 2, 2)
    assert a_json["sources"]["verifier"]["counts"] == {
        "correct_chains_flagged": 1,
        "incorrect_true_positive": 1,
        "incorrect_false_positive": 1,
        "incorrect_false_negative": 1,
    }


def test_undefined_figures_are_none_and_left_out_of_the_mean() -> None:
    only_correct = [chain("c1", "c", -1, []), chain("c2", "c", -1, [], line=2)]
    reports = [evaluate_split(s, MarkedVerifier()) for s in group_splits(SPLIT_B + only_correct, [])]
    c = source_figures(reports[1].sources["verifier"])
    assert (c.f1, c.accuracy_erroneous, c.incorrect_precision, c.incorrect_recall) == (None, None, None, None)
    assert (c.accuracy_correct, c.correct_flagged) == (1.0, 0.0)
    mean = average_over_splits(reports)["verifier"]
    assert (mean.f1, mean.accuracy_erroneous, mean.accuracy_correct) == (1.0, 1.0, 1.0)


def test_limit_keeps_the_first_rows_of_each_split_bad_rows_included() -> None:
    bad = RejectedRow("a.json", 2, "label", "label out of range")
    chains = [SPLIT_A[0], SPLIT_A[2], SPLIT_A[3], *SPLIT_B]  # items 1, 3, 4 of a; item 2 was rejected
    a, b = group_splits(chains, [bad], limit=2)
    assert [c.id for c in a.chains] == ["a1"] and a.rejected == (bad,)
    assert [c.id for c in b.chains] == ["b1", "b2"] and b.files == ("b.json",)
    [whole] = group_splits([], [RejectedRow("broken.json", 1, "<line>", "invalid JSON")])
    assert (whole.name, whole.chains, len(whole.rejected)) == ("broken", (), 1)


JANET = (
    "Janet's ducks lay 16 eggs. She eats 3 and bakes with 4. She sells the rest at $2 each. "
    "How much does she make?"
)
JANET_SOLUTION = "16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n9 * 2 = <<9*2=18>>18\n#### 18"


def test_reference_source_runs_where_a_solution_is_attached_and_uses_the_graded_outcome() -> None:
    wrong = ExternalChain(
        "w",
        JANET,
        ("She has 16 - 3 = 13 eggs.", "13 * 2 = 26", "The answer is 26."),
        first_error_label=0,
        final_answer_correct=False,
        reference_answer="18",
        reference_solution=JANET_SOLUTION,
    )
    bare = ExternalChain("b", "Another problem", ("1 + 1 = 2",), first_error_label=-1)
    labelled = label_sources([wrong, bare], MarkedVerifier())
    assert list(labelled) == ["verifier", "reference", "combined"]
    assert labelled["reference"] == [["incorrect", "incorrect", "unverifiable"], ["unverifiable"]]
    assert labelled["combined"][0][:2] == ["incorrect", "incorrect"]  # the reference alone, measured
    report = evaluate_split(Split("s", ("s.json",), (wrong, bare), ()), MarkedVerifier())
    assert report.n_with_solution == 1
    assert source_figures(report.sources["reference"]).f1 == 1.0
    assert source_figures(report.sources["verifier"]).accuracy_erroneous == 0.0


class KindVerifier(MarkedVerifier):
    """MarkedVerifier naming a reading kind: a step marked WRONG is an `equation_step` flag (not final),
    one marked FALSE a `closed_arithmetic` flag (final)."""

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        def one(step: str) -> Verdict:
            if "FALSE" in step:
                return Verdict("incorrect", "marked", kind="closed_arithmetic")
            return Verdict("incorrect" if "WRONG" in step else "correct", "marked", kind="equation_step")

        return [one(step) for step in steps]


def test_combined_is_the_consensus_a_flag_of_a_kind_not_final_gives_way_to_the_reference() -> None:
    right = ExternalChain(
        "r",
        JANET,
        ("She has 16 - 3 - 4 = 9 eggs. WRONG", "9 * 2 = 18", "The answer is 18. FALSE"),
        first_error_label=-1,
        final_answer_correct=True,
        reference_answer="18",
        reference_solution=JANET_SOLUTION,
    )
    bare = ExternalChain("b", "Another problem", ("1 + 1 = 3 WRONG",), first_error_label=0)
    labelled = label_sources([right, bare], KindVerifier())
    assert labelled["verifier"] == [["incorrect", "correct", "incorrect"], ["incorrect"]]
    assert labelled["reference"] == [["correct", "correct", "correct"], ["unverifiable"]]
    # `combined` is the consensus of the shipped tables: a flag is weighed by its kind's measured precision
    from prm_factory.evaluation.real_errors import consensus_step_labels
    from prm_factory.labels.consensus import domains_of

    problem = chain_problem(right)
    checked = KindVerifier().check_steps(problem, list(right.steps))
    aligned = [Verdict("correct")] * 3
    domains = domains_of(problem.domain, problem.source, problem.text)  # read where `label` reads them
    assert labelled["combined"][0] == consensus_step_labels(checked, aligned, None, domains)
    assert labelled["combined"][0][1] != "incorrect"


def test_the_outcome_is_the_sources_grade_else_graded_against_the_reference_answer() -> None:
    verifier = MarkedVerifier()
    given = ExternalChain("g", "p", ("x = 3",), final_answer_correct=True, reference_answer="4")
    graded = ExternalChain("r", "p", ("so 4",), reference_answer="4")
    none = ExternalChain("n", "p", ("so 4",))
    assert [chain_outcome(c, chain_problem(c), verifier) for c in (given, graded, none)] == [
        "correct",
        "correct",
        "unparsed",
    ]
    assert chain_outcome(graded, chain_problem(graded), verifier) == "correct"
    assert (
        chain_outcome(
            ExternalChain("f", "p", ("x",), final_answer_correct=False),
            Problem("f", "e", "math", "p"),
            verifier,
        )
        == "incorrect"
    )
