"""A quantity's working written one labelled line per step: the label carries the value left open."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.math.claims import check_steps
from prm_factory.verifiers.math.labelled_lines import labelled_line_claims


@pytest.mark.parametrize(
    ("steps", "label"),
    [
        # 27000 + 43200 written as 69200 on the next line: false only across the two steps
        (["Total owed = $27,000 + $43,200 - $1,200", "Total owed = $69,200 - $1,200"], "incorrect"),
        (["Total owed = $27,000 + $43,200 - $1,200", "Total owed = $70,200 - $1,200"], "correct"),
        # a sentence without math may stand between them
        (["Total_bars = 10 + 14 + 18 + 22 + 26 + 30", "Now add them up:", "Total_bars = 110"], "incorrect"),
        (["Total_bars = 10 + 14 + 18 + 22 + 26 + 30", "Now add them up:", "Total_bars = 120"], "correct"),
        # a rounded decimal carries the value it rounds
        (["Cost per item = 2 / 3", "Cost per item = 0.67"], "correct"),
        # a step of open arithmetic, then the answer line
        (["Final calculation:", "(4 * 15 * 25) + (2 * 20 * 25) * 1.1", "#### 2600"], "correct"),
        (["Final calculation:", "(4 * 15 * 25) + (2 * 20 * 25) * 1.1", "#### 2500"], "incorrect"),
    ],
)
def test_a_labelled_line_claims_the_value_its_label_left_open(steps: list[str], label: str) -> None:
    assert check_steps(steps)[-1].label == label


@pytest.mark.parametrize(
    "steps",
    [
        # the earlier line worked its value out: the label may go to the next item
        ["Cost = 5 * 3 = 15", "Cost = 2 * 4"],
        ["Cost = 15", "Cost = 8"],
        # a new expression sharing no number with the open one is another item
        ["Cost = 5 * 3", "Cost = 2 * 4"],
        # more numbers extend the expression (a tax added) rather than work it out
        ["Total cost = 5 + 3", "Add the tax:", "Total cost = 5 + 3 + 2"],
        # two unlabelled lines of arithmetic may be two computations
        ["(4 * 15) + (2 * 20)", "Then the tax:", "(4 * 15) + (2 * 20) + 10"],
        # other math between the two lines
        ["Total = 10 + 14", "The shirts cost 3 * 4 = 12.", "Total = 30"],
        # other labels, words on a side, letters (left to the claim checker)
        ["Apples = 3 + 4", "Pears = 9"],
        ["Total = 3 + 4 apples", "Total = 9"],
        ["T = 3 + 4", "T = 9"],
    ],
)
def test_no_claim_where_the_label_may_name_something_else(steps: list[str]) -> None:
    math_steps = {i for i, step in enumerate(steps) if any(ch.isdigit() for ch in step)}
    assert labelled_line_claims(steps, math_steps) == {}
