"""Step-claim checking, one row per claim form issue 3 names."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.math.claims import ClaimResult, check_steps


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
        ("5 + 3 = 8 * 2 = 16", "unverifiable"),  # a running total, or a false equation: not judged
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


# --- fail-closed verdicts (issue 11): each case names the rule it pins -----------------------------------


@pytest.mark.parametrize(
    "step",
    [
        "5 + 3 = 8 + 1",  # a running total needs the chain to go on
        "20% * 50 = 1000",  # a percent inside an expression is p/100, never p
        "0.2 * 50 = 10%",  # a decimal product is not percentage points
        "The remaining is 50 - 41 = 10",  # "remaining" excuses nothing
        "10/3 = 3",  # rounding only where the claim says so
        "5 + 3 = 8, + 1 = 10",  # a continued total is judged too
        "13 / 6 = 3 full cycles",  # a whole quotient is the floor, not any number
    ],
)
def test_false_claims_are_never_correct(step):
    assert check_steps([step])[0].label == "incorrect"


@pytest.mark.parametrize(
    ("step", "rule"),
    [
        ("5 + 3 = 8, + 1 = 9", "running total"),
        ("15/60 * 100 = 25%", "percent as number"),
        ("There were 100 - 53 = 47% voting for Marty.", "percent as number"),
        ("about 10/3 = 3", "approximate"),
        ("10/3 = 3.33", "rounded decimal"),
        ("In 13 hours 13 / 6 = 2 full cycles fit, with a remainder of 1 hour", "quotient with remainder"),
        ("4 * 25 = 100 cents", "cents"),
    ],
)
def test_lenient_readings_only_in_their_form_and_named(step, rule):
    verdict = check_steps([step])[0]
    assert verdict.label == "correct"
    assert rule in verdict.evidence["rules"]


def test_a_running_total_without_its_comma_is_not_judged_either_way():
    """`5 + 3 = 8 + 1 = 9` is a running total or the false `5 + 3 = 8 + 1`: neither correct nor incorrect."""
    verdict = check_steps(["5 + 3 = 8 + 1 = 9"])[0]
    assert verdict.label == "unverifiable"
    assert "ambiguous" in verdict.reason or verdict.evidence["unjudged"] == 1
    assert check_steps(["5 + 3 = 8 + 1 = 10"])[0].label == "incorrect"  # false either way


def test_chained_bare_numbers_are_judged_but_conversions_and_labels_are_not():
    assert check_steps(["The total is 20 * 15 = 300 = 200 pots"])[0].label == "incorrect"
    assert check_steps(["2 hours = 120 minutes"])[0].label == "unverifiable"
    assert check_steps(["So he pays for lessons 13,15,17&19 = 4 lessons."])[0].label == "unverifiable"


def test_which_is_states_an_equality():
    assert check_steps(["We take 1/4 of 240, which is 16."])[0].label == "incorrect"
    assert check_steps(["We take 1/4 of 240, which is 60 dollars."])[0].label == "correct"
    assert check_steps(["5 + 3 = 8, which is 2 more than 6."])[0].label == "correct"


def test_a_short_decimal_is_not_rounded_without_saying_so():
    assert check_steps(["0.4 * 0.4 = 0.2"])[0].label == "incorrect"
    assert check_steps(["0.4 * 0.4 is about 0.2: 0.4 * 0.4 ≈ 0.2"])[0].label == "correct"
    assert check_steps(["10/3 = 3.33"])[0].label == "correct"


def test_a_step_with_an_unjudged_claim_is_unverifiable_not_correct():
    verdict = check_steps(["3 * 4 = 12 and x^2 = 2^(10^10)"])[0]
    assert verdict.label == "unverifiable"
    assert (verdict.evidence["judged"], verdict.evidence["held"], verdict.evidence["unjudged"]) == (1, 1, 1)


def test_a_hard_claim_that_times_out_makes_the_step_unverifiable():
    def timed_out(items):
        return {index: [ClaimResult(text, None, reason="timed out (limit 3 s)")] for index, text, _ in items}

    verdict = check_steps([r"3 * 4 = 12 and \sqrt{16} = 4"], hard_checker=timed_out)[0]
    assert verdict.label == "unverifiable"
    assert verdict.evidence["unjudged"] == 1


def test_a_number_and_a_division_are_not_a_mixed_number():
    assert check_steps(["48/2 = 24 and 24/2 = 12"])[0].label == "correct"
    assert check_steps(["2 and 1/2 = 5/2"])[0].label == "correct"


def test_solving_for_an_unknown_is_a_definition_not_an_unjudged_claim():
    verdict = check_steps(["3x = 36, so x = 12"])[0]
    assert verdict.label == "correct"
    assert verdict.evidence["unjudged"] == 0


def test_the_number_written_after_an_annotation_is_judged_too():
    """`= $<<40000*50000=2000000000>>200,000`: the annotation holds, the number the text gives does not."""
    assert check_steps(["owes her 40*50,000 = $<<40000*50000=2000000000>>200,000"])[0].label == "incorrect"
    assert check_steps(["She sold 48/2 = <<48/2=24>>24 clips."])[0].label == "correct"


def test_an_equality_in_words_after_math_is_a_claim():
    assert check_steps(["120 minutes / 3600 minutes is approximately 0.21875."])[0].label == "incorrect"
    assert check_steps(["120 minutes / 3600 minutes is approximately 0.033."])[0].label == "correct"
    assert check_steps(["5 + 3 is 9."])[0].label == "incorrect"
    assert check_steps(["Day 2 is 5."])[0].label == "unverifiable"  # a label, not arithmetic


def test_a_share_is_not_a_division_claim():
    assert check_steps(["Since 3/8 is equal to $375, 1/8 is worth $375/3 = $125."])[0].label == "correct"
    assert check_steps(["3/8 = 0.4"])[0].label == "incorrect"


def test_latex_thin_space_thousands():
    assert check_steps([r"$512\cdot 625 = 320,\!000$"])[0].label == "correct"


def test_a_number_said_equal_to_an_expression_in_words_is_a_claim():
    assert check_steps(["Remember that 20 is indeed 2 * 2 = 4."])[0].label == "incorrect"
    assert check_steps(["So, 400 hours is equal to 400 * 20 = 8000 hours."])[0].label == "incorrect"
    assert check_steps(["So, 400 hours is equal to 20 * 20 = 400 hours."])[0].label == "correct"
    # a conversion into another unit, or a share, is not such a claim
    assert check_steps(["18 inches is equal to 18/12 = 1.5 feet."])[0].label == "correct"
    assert check_steps(["Since $133 is 7%, then 1% is equal to $133/7 = $19."])[0].label == "correct"


@pytest.mark.parametrize(
    ("step", "label"),
    [
        # "10 plus" joins prose to a symbolic sum that holds on its own: ambiguous, not a false claim
        ("She has her own 10 plus 5 + 12 + 9 = 26 from her sisters, so 10 + 26 = 36 pieces.", "unverifiable"),
        # false under both readings: still false
        ("He has 10 plus 5 + 12 = 18 apples.", "incorrect"),
        # holds as a whole: the arithmetic reading stands
        ("3 times 4 + 1 = 13", "correct"),
        ("3 times 4 + 1 = 14", "incorrect"),
        ("10 plus 5 = 16", "incorrect"),
    ],
)
def test_spelled_operator_before_symbolic_math(step: str, label: str) -> None:
    assert check_steps([step])[0].label == label


@pytest.mark.parametrize(
    ("steps", "label"),
    [
        # false alarms found on correct chains of stronger models (Phi-3.5, GPT-5.1, GSM8K train): each class
        # is read as the writer meant it or left unjudged, and a false claim written the same way stays false
        (["Total animals = Anthony’s 12 + Leonel’s (4 + 11) = 12 + 15 = 27."], "unverifiable"),
        (["1 pan (16 pieces) + 75% of 2nd pan (0.75 * 16) = 16 + 12 = 28 pieces."], "unverifiable"),
        (["She paid (5 * 2) = 11 dollars."], "incorrect"),
        (["1/3 weight of rice = (1/3) * 30 kg = 10 kg"], "correct"),
        (["1/3 of 30 = (1/3) * 30 = 12"], "incorrect"),
        (["Convert the cost to dollars: 900 cents / 100 = 9 dollars."], "correct"),
        (["900 cents / 100 = 8 dollars."], "incorrect"),
        (["The shop is open 10 pm - 10 am = 12 hours."], "unverifiable"),
        (["The tank will be filled at 6 + 4 = 30pm."], "incorrect"),
        (["(4 hours * 60 minutes/hour) / 30 minutes/5 articles = 40 articles/day."], "unverifiable"),
        (["4 hours * (60 minutes/hour) / (15 minutes/2 widgets) = 16 widgets"], "incorrect"),
        (["60 miles / 30 miles/hour = 5 hours"], "incorrect"),
        (["1. s_A = 5", "2. s_B = 9", "Length difference = s_B - s_A = 9 - 5 = 4"], "correct"),
        (["S(1) = 3", "S(2) = S(1) + 2 = 3 + 2 = 5", "S(3) = S(2) + 2 = 5 + 2 = 7"], "correct"),
        (["CDs_at_10 = 0.4 * 200 = 80"], "correct"),
        (["M:F = 3:2, so F = (2/5) * 1000 = 400"], "correct"),
        (["R = 4Ro + Mi + 4", "Simplifying, we have R = 5Ro + 2."], "unverifiable"),
        # "c plus" is cut off before the run `3c = 280`: no binding c = 280/3 to trip the next step
        (["The total is c plus 3c equals 280.", "Then 4c equals 280 so c equals 70."], "unverifiable"),
        (["A = 15", "T = 1/3 * A", "T = 1/3 * 15 = 5"], "correct"),
        # false sums of stronger models that the checker used to skip: a fused answer mark, word labels
        (["Total cost = (7 * 4) + (12 * 10) + (7 * 5) = 28 + 120 + 35 = ####283"], "incorrect"),
        (["So 7 + 16 = ####23"], "correct"),
        (["$15,000 (widgets cost) + $10,000 (rent) + $2,500 (worker 1) = $32,500."], "incorrect"),
        (["Total = $100 (meat) + $60 (fruits and vegetables) = $160"], "correct"),
        (["At 7:50 + 30 minutes = 8:20 a.m. he arrived."], "unverifiable"),
        # a rewrite of the equation that solved a letter, across a connecting sentence, is judged with it
        (["4V + V + (V/2) = 1100", "Combining like terms, we get:", "9V/2 = 1100"], "incorrect"),
        (["4V + V + (V/2) = 1100", "Combining like terms, we get:", "11V/2 = 1100"], "correct"),
        # ... but not once a sentence names the letter again (a new unknown under an old name)
        (["3x = 36, so x = 12.", "Now for the oranges, let x be their number.", "2x = 10"], "unverifiable"),
        # a sentence saying what to solve for is still connecting prose; a letter next to `=` on the same
        # side as a number is no new definition
        (["63 - 7 + 15 + x - 3 = 84", "Now, solve for x:", "66 + x = 84"], "incorrect"),
        (["63 - 7 + 15 + x - 3 = 84", "Now, solve for x:", "68 + x = 84"], "correct"),
        # the chain goes on through a rewrite that still holds
        (["100 - x + 40 - 30 = 60", "100 - x + 10 = 60", "90 - x = 60"], "incorrect"),
        (["100 - x + 40 - 30 = 60", "100 - x + 10 = 60", "110 - x = 60"], "correct"),
        # ... but not after other math between: the letter may name something new by then
        (["x + 3 = 10", "y = 2x + 1", "2 * 7 = 14", "x + 5 = 10"], "unverifiable"),
    ],
)
def test_stronger_model_notation(steps: list[str], label: str) -> None:
    assert check_steps(steps)[-1].label == label
