"""Reading kinds of the math checker's verdicts (issue 38): which reader judged a claim, the order that names
an `incorrect` step, and the kinds a consensus may take as final."""

from __future__ import annotations

from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.reading_kinds import (
    CLOSED_ARITHMETIC,
    EQUATION_STEP,
    FINAL_KINDS,
    FINAL_MIN_FLAGS,
    FINAL_PRECISION,
    IDENTITY,
    KIND_PRECISION,
    NOTATION_RULE,
    READING_KINDS,
    SEVERAL,
    SUBSTITUTED_ARITHMETIC,
    SYSTEM_RESULT,
    WORD_PROBLEM_ARITHMETIC,
    KindPrecision,
    final_kinds,
    first_failed,
    held_kind,
    reading_kind,
)


def _kind(claim: str, reason: str = "", rule: str = "", competition: bool = True) -> str:
    return reading_kind(ClaimResult(claim, False, None, reason, rule=rule), competition=competition)


def test_each_reader_names_its_kind() -> None:
    assert _kind("3 + 4 = 8", "arithmetic does not hold") == CLOSED_ARITHMETIC
    assert _kind(r"\log_2 8 = 4", "symbolic") == NOTATION_RULE
    assert _kind("5! = 100") == NOTATION_RULE
    assert _kind("2 s = 3", rule="names bound once") == SUBSTITUTED_ARITHMETIC
    assert _kind("x + 1 = 2 => x = 3", "equation step: neither solution set holds the other") == EQUATION_STEP
    assert _kind("(a+b)^2 = a^2 + b^2", "false as an identity (simplification)", "identity") == IDENTITY
    assert _kind("a = 1", "the result of solving a system holds at none", "system result") == SYSTEM_RESULT
    assert _kind("3 + 4 = 8", competition=False) == WORD_PROBLEM_ARITHMETIC


def test_the_most_certain_failed_claim_names_the_step() -> None:
    equation = ClaimResult(
        "x = 1 => x = 2", False, None, "equation step: neither solution set holds the other"
    )
    arithmetic = ClaimResult("2 + 2 = 5", False, "4", "arithmetic does not hold")
    claim, kind = first_failed([equation, arithmetic], competition=True)
    assert claim is arithmetic and kind == CLOSED_ARITHMETIC
    assert READING_KINDS.index(CLOSED_ARITHMETIC) < READING_KINDS.index(EQUATION_STEP)


def test_a_correct_step_names_one_kind_or_several() -> None:
    one = [ClaimResult("2 + 2 = 4", True, "4", rule="exact")] * 2
    assert held_kind(one, competition=True) == CLOSED_ARITHMETIC
    mixed = [*one, ClaimResult(r"\sin 30^\circ = 0.5", True, "0.5")]
    assert held_kind(mixed, competition=True) == SEVERAL
    assert held_kind([], competition=True) is None


def test_final_kinds_need_the_precision_on_enough_flags() -> None:
    table = {"a": KindPrecision(FINAL_MIN_FLAGS, 0), "b": KindPrecision(FINAL_MIN_FLAGS - 1, 0)}
    assert final_kinds(table) == {"a"}
    assert KindPrecision(99, 1).precision == FINAL_PRECISION
    assert FINAL_KINDS == final_kinds(KIND_PRECISION)
    assert all(kind in READING_KINDS for kind in KIND_PRECISION)
    assert KindPrecision(0, 0).precision is None
