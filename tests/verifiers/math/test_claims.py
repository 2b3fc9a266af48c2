"""Step-claim checking, one row per claim form issue 3 names."""

from __future__ import annotations

import pytest

from verifiers.math.claims import check_steps


def labels(steps: list[str]) -> list[str]:
    return [v.label for v in check_steps(steps, hard_checker=lambda items: {})]


@pytest.mark.parametrize(
    ("step", "label"),
    [
        ("Natalia sold 48/2 = 24 clips in May.", "correct"),
        ("Natalia sold 48/2 = 25 clips in May.", "incorrect"),
        ("She has 16 - 3 - 4 = 9 eggs left.", "correct"),  # chained arithmetic
        ("She has 16 - 3 - 4 = 8 eggs left.", "incorrect"),
        ("She makes 9 * 2 = $18 every day.", "correct"),  # currency
        ("She makes 9 * 2 = $19 every day.", "incorrect"),
        ("Weng earns 12/60 = $0.2 per minute.", "correct"),
        ("she earned 0.2 x 50 = $10.", "correct"),  # x as times
        ("It holds 1,000 x 3 = 3,000 litres.", "correct"),  # comma numbers
        ("It holds 1,000 x 3 = 300 litres.", "incorrect"),
        ("20% of 50 = 10 students", "correct"),  # percent
        ("0.2 * 100 = 20%", "correct"),
        ("0.2 * 100 = 25%", "incorrect"),
        ("Each costs 10/3 = $3.33", "correct"),  # written at shown precision
        ("Each costs 10/3 = $3.34", "incorrect"),
        ("So 2.50 + 2.5 = 5.00", "correct"),
        ("1/2 + 1/4 = 0.75", "correct"),
        ("She used 3 1/2 + 1 1/2 = 5 cups.", "correct"),  # mixed numbers
        ("7 stickers/page * 6 pages = 42 stickers", "correct"),  # units and rates
        ("12 pages x 2 = 25 pages", "incorrect"),
        ("3 large stickers + 42 stickers = 45 stickers", "correct"),
        ("2 hours = 120 minutes", "unverifiable"),  # a conversion, not arithmetic
        ("5 + 3 = 8 * 2 = 16", "correct"),  # running total
        ("She is happy with her garden.", "unverifiable"),  # no claims
        ("Total = 5 + 3 = 8", "correct"),
        ("4 subjects = 186 + 62 = 248", "correct"),  # a label before the math
        ("1.5e3 / 3 = 500", "correct"),  # scientific notation
        ("8 - 10 = -2", "correct"),
        (r"\( 48 \div 2 = 24 \)", "correct"),  # simple LaTeX stays on the fast path
        (r"\( \frac{48}{2} \times 3 = 73 \)", "incorrect"),
        ("Calculator: <<48/2=24>> so 24 clips", "correct"),  # annotations
        ("2 * 3 times 2 = 12", "correct"),
        ("5^(5^(5^5)) = 3", "unverifiable"),  # guarded, instantly
    ],
)
def test_single_step(step: str, label: str) -> None:
    assert labels([step]) == [label]


def test_incorrect_evidence_names_claim_and_expected_value() -> None:
    verdict = check_steps(["Natalia sold 48/2 = 25 clips."])[0]
    assert verdict.label == "incorrect"
    assert verdict.evidence["failed_claim"] == "48/2 = 25"
    assert verdict.evidence["expected"] == "24"


def test_wrong_but_consistent_later_steps_stay_correct() -> None:
    steps = [
        "She sold 48/2 = 26 clips in May.",  # the error
        "Altogether 48 + 26 = 74 clips.",  # right arithmetic on the wrong number
        "#### 74",
    ]
    assert labels(steps) == ["incorrect", "correct", "unverifiable"]


def test_assignments_carry_forward() -> None:
    assert labels(["Let x = 12.", "Then x + 5 = 17.", "So 2x = 24."]) == [
        "unverifiable",
        "correct",
        "correct",
    ]
    assert labels(["Let x = 12.", "Then x + 5 = 18."]) == ["unverifiable", "incorrect"]


def test_equations_in_one_variable_are_solved_then_checked() -> None:
    steps = ["3x + 4 = 40", "3x = 36", "x = 12"]
    assert labels(steps) == ["unverifiable", "correct", "correct"]
    assert labels(["3x + 4 = 40", "x = 13"]) == ["unverifiable", "incorrect"]


def test_rewrites_in_one_unknown() -> None:
    assert labels(["71 + P - 3 = 68 + P"]) == ["correct"]
    assert labels(["71 + P - 3 = 34 + P"]) == ["incorrect"]


def test_unit_letters_compare_the_numbers() -> None:
    assert labels(["200g + 100g + 100g = 400g"]) == ["correct"]
    assert labels(["200g + 100g + 100g = 440g"]) == ["incorrect"]


@pytest.mark.parametrize(
    "step",
    [
        "He arrived at 6:00 + 18 hours = 00:00 on Tuesday.",  # times
        "Week 1 + Week 2 = 35 + 35 = 70 hours",  # labels with numbers
        "h = b/6 and t = b/2",  # two assignments, not b/6 = b/2
        "She has 5 apples and 3 = 7 things",  # words join the clauses
    ],
)
def test_prose_never_makes_a_false_claim(step: str) -> None:
    assert labels([step]) != ["incorrect"]


@pytest.mark.parametrize(
    ("step", "label"),
    [
        ("- 48 / 2 = 24", "correct"),  # markdown bullet, not a minus
        ("* 48 / 2 = 25", "incorrect"),
        ("2) 48 + 24 = 72", "correct"),  # numbered list
        ("**Step 3:** $48 \\div 2 = 24$", "correct"),  # markdown bold
        ("Step 1: 14 - 15 = 0", "incorrect"),
        (r"\[ \frac{48}{2} = 24 \]", "correct"),  # display math
        ("-5 + 3 = -2", "correct"),  # a real leading minus
        ("Day 3:70-21-15=34 crickets", "correct"),  # 3:70 is no clock time
    ],
)
def test_model_output_formatting(step: str, label: str) -> None:
    assert labels([step]) == [label]


@pytest.mark.parametrize(
    "step",
    [
        "(" * 3000 + "1" + ")" * 3000 + " = 1",
        "1 + " * 5000 + "1 = 5001",
        "9" * 5000 + " * 9 = 1",
        "1," * 5000,
    ],
)
def test_pathological_text_is_unverifiable_not_a_crash(step: str) -> None:
    assert labels([step]) == ["unverifiable"]
