"""Reference-aligned step labels on hand-made chains: where each kind of error is (and is not) flagged."""

from __future__ import annotations

import json

from prm_factory.labels.reference import REFERENCE_LABELER, REFERENCE_VERSION, reference_step_labels
from prm_factory.schemas.records import Problem

DUCKS = Problem(
    "ducks",
    "gsm8k",
    "math",
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
    "with four. She sells the remainder at the farmers' market daily for $2 per fresh duck egg. "
    "How much does she make every day?",
    reference_answer="18",
    reference_solution="Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
    "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer's market.\n#### 18",
)
CLIPS = Problem(
    "clips",
    "gsm8k",
    "math",
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    reference_answer="72",
    reference_solution="Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
    "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72",
)


def labels(problem: Problem, steps: list[str], outcome: str) -> list[str]:
    return [verdict.label for verdict in reference_step_labels(problem, steps, outcome)]


def first_incorrect(problem: Problem, steps: list[str], outcome: str) -> int:
    return next((i for i, label in enumerate(labels(problem, steps, outcome)) if label == "incorrect"), -1)


def test_identity_is_published() -> None:
    assert REFERENCE_LABELER == "reference-align"
    assert REFERENCE_VERSION.count(".") == 2


def test_on_track_chain_is_all_correct() -> None:
    steps = ["She has 16 - 3 - 4 = 9 eggs left.", "She makes 9 * 2 = $18.", "The answer is 18."]
    assert labels(DUCKS, steps, "correct") == ["correct", "correct", "correct"]


def test_alternative_order_stays_on_track() -> None:
    # 7 = 3 + 4 is not written in the reference but is a partial of its `16 - 3 - 4`
    steps = ["She uses 3 + 4 = 7 eggs.", "She sells 16 - 7 = 9 eggs.", "9 * 2 = 18 dollars."]
    assert labels(DUCKS, steps, "correct") == ["correct", "correct", "correct"]


def test_setup_error_is_the_first_error_even_when_its_arithmetic_is_true() -> None:
    steps = ["She has 16 * 3 = 48 eggs.", "48 - 4 = 44 eggs are sold.", "44 * 2 = 88 dollars."]
    verdicts = reference_step_labels(DUCKS, steps, "incorrect")
    assert verdicts[0].label == "incorrect"
    assert verdicts[0].evidence["rule"] == "off-reference"
    assert verdicts[0].evidence["off_reference"] == ["48"]
    assert len(verdicts[0].evidence["nearest_reference"]) == 3
    json.dumps([v.evidence for v in verdicts])  # evidence is JSON-able


def test_misread_number_is_flagged_where_it_enters() -> None:
    steps = [
        "She starts with 16 eggs and eats 3.",
        "She bakes with 5, so 16 - 3 - 5 = 8 are left.",
        "8 * 2 = 16.",
    ]
    assert first_incorrect(DUCKS, steps, "incorrect") == 1


def test_arithmetic_slip_is_exposed_by_the_reference_too() -> None:
    steps = ["She has 16 - 3 - 4 = 8 eggs left.", "8 * 2 = 16 dollars."]
    assert first_incorrect(DUCKS, steps, "incorrect") == 0


def test_remainder_left_halfway_is_the_first_error() -> None:
    # 13 is a partial of 16 - 3 - 4, but the chain never reaches 9: it forgot the muffins at step 0
    steps = ["After breakfast she has 16 - 3 = 13 eggs to sell.", "13 * 2 = 26 dollars."]
    assert first_incorrect(DUCKS, steps, "incorrect") == 0


def test_completed_remainder_is_not_an_error() -> None:
    steps = ["After breakfast 16 - 3 = 13 eggs.", "After muffins 13 - 4 = 9 eggs.", "9 * 3 = 27 dollars."]
    assert first_incorrect(DUCKS, steps, "incorrect") == 2


def test_wrong_chain_of_reference_quantities_fails_where_it_takes_the_other_quantity() -> None:
    # the last step works the other quantity out: that is where the chain goes wrong
    steps = ["She has 16 eggs and eats 3.", "She uses 3 + 4 = 7 eggs."]
    verdicts = reference_step_labels(DUCKS, steps, "incorrect")
    assert [v.label for v in verdicts] == ["correct", "incorrect"]
    assert verdicts[1].evidence["rule"] == "answers-other-quantity"
    # the chain only restates a value worked out before: the step that worked it out took it for the answer
    steps = ["She has 16 - 3 - 4 = 9 eggs left.", "So the answer is 9."]
    verdicts = reference_step_labels(DUCKS, steps, "incorrect")
    assert [v.label for v in verdicts] == ["incorrect", "correct"]
    assert verdicts[0].evidence["rule"] == "answers-other-quantity"
    assert verdicts[0].evidence["concluded_at"] == 1


def test_another_route_in_a_correct_chain_is_never_incorrect() -> None:
    # 32 and 14 are off the reference, but each leads back onto it (32 - 14 = 18)
    steps = ["Eggs are worth 16 * 2 = 32 dollars.", "Eaten and baked: 7 * 2 = 14.", "32 - 14 = 18."]
    result = labels(DUCKS, steps, "correct")
    assert "incorrect" not in result
    assert result[0] == "unverifiable"


def test_right_answer_chain_is_never_judged_by_its_off_reference_numbers() -> None:
    # a right-answer chain with an invented number: another route or a wrong step, the aligner cannot tell
    # (flagging these cost 138 false alarms on 942 correct chains of stronger models), so it abstains
    steps = ["In May she sold 30 clips.", "48 + 30 - 6 = 72 clips in all."]
    assert "incorrect" not in labels(CLIPS, steps, "correct")


def test_unjudged_outcome_flags_nothing() -> None:
    steps = ["She has 16 * 3 = 48 eggs.", "48 * 2 = 96"]
    for outcome in ("unparsed", "timeout", "error"):
        assert "incorrect" not in labels(DUCKS, steps, outcome)


def test_word_numbers_in_the_question_are_givens() -> None:
    steps = ["In May she sold half of 48, which is 24.", "48 + 24 = 72 clips."]
    assert labels(CLIPS, steps, "correct") == ["correct", "correct"]
    wrong = ["In May she sold twice 48, which is 96.", "48 + 96 = 144 clips."]
    assert first_incorrect(CLIPS, wrong, "incorrect") == 0


def test_unused_off_reference_number_is_not_the_first_error() -> None:
    # an aside the chain never uses is no evidence (stronger models write such numbers in correct steps)
    steps = ["Her friends number 50 in all.", "In May she sold 48 / 2 = 24.", "24 * 2 = 48, plus 24 is 70."]
    assert first_incorrect(CLIPS, steps, "incorrect") == 2


def test_plan_naming_the_wrong_operation_is_the_first_error() -> None:
    plan = "To find what she makes, we multiply the eggs she lays by the eggs she eats."
    steps = [plan, "That is 16 * 3 = 48 eggs.", "48 * 2 = 96 dollars."]
    verdicts = reference_step_labels(DUCKS, steps, "incorrect")
    assert [v.label for v in verdicts][:2] == ["incorrect", "incorrect"]
    assert verdicts[0].evidence == {"rule": "plan-carried-out", "operations": ["*"], "carried_out_at": 1}
    # a plan that restates givens is still a plan; a plan two numberless steps back is found too
    restating = "She lays 16 eggs and eats 3, so we multiply them."
    steps = [restating, "Let's compute.", "16 * 3 = 48", "48 * 2 = 96"]
    assert first_incorrect(DUCKS, steps, "incorrect") == 0


def test_vague_or_other_plans_are_not_blamed() -> None:
    tail = ["16 * 3 = 48 eggs.", "48 * 2 = 96 dollars."]
    assert first_incorrect(DUCKS, ["Let's break it down step by step.", *tail], "incorrect") == 1
    assert first_incorrect(DUCKS, ["First we subtract the eggs she eats.", *tail], "incorrect") == 1
    # a step that computes between the plan and the error ends the plan's run
    steps = ["We multiply the eggs by 3.", "16 - 3 - 4 = 9 eggs are sold.", "9 * 3 = 27 dollars."]
    assert first_incorrect(DUCKS, steps, "incorrect") == 2
    # a plan is not blamed for a slip whose true value is on the reference, nor for a misread operand
    plan = "Then we multiply the eggs she sells by the price."
    assert first_incorrect(DUCKS, [plan, "That is 9 * 2 = 20 dollars."], "incorrect") == 1
    assert first_incorrect(DUCKS, [plan, "She sells 10 eggs: 10 * 2 = 20 dollars."], "incorrect") == 1
    # ... but it is blamed when the step brings in a number of its own that replaces no operand of the
    # solution's operations: the plan chose that combination
    days = "We multiply the eggs by the days she sells."
    assert (
        first_incorrect(DUCKS, [days, "She sells on 6 days: 16 * 6 = 96 eggs.", "96 * 2 = 192"], "incorrect")
        == 0
    )
    # a right-answer chain is never judged by its plans
    assert "incorrect" not in labels(DUCKS, ["We multiply.", "16 - 3 - 4 = 9", "9 * 2 = 18"], "correct")


def test_unit_conversion_is_on_track() -> None:
    problem = Problem(
        "walk",
        "gsm8k",
        "math",
        "Tom walks 2 hours a day. How many minutes does he walk in 3 days?",
        reference_answer="360",
        reference_solution="He walks 2*3 = <<2*3=6>>6 hours.\n"
        "That is 6*60 = <<6*60=360>>360 minutes.\n#### 360",
    )
    steps = ["2 hours is 2 * 60 = 120 minutes.", "In 3 days: 120 * 3 = 360 minutes."]
    assert labels(problem, steps, "correct") == ["correct", "correct"]


def test_no_reference_is_unlabeled_with_a_reason() -> None:
    bare = Problem("bare", "gsm8k", "math", "What is 2 + 2?", reference_answer="4")
    verdicts = reference_step_labels(bare, ["2 + 2 = 5"], "incorrect")
    assert [v.label for v in verdicts] == ["unverifiable"]
    assert "no reference" in verdicts[0].reason
    wordy = Problem("wordy", "gsm8k", "math", "What is 2 + 2?", reference_solution="Add them up.")
    assert reference_step_labels(wordy, ["2 + 2 = 5"], "incorrect")[0].evidence["rule"] == "no-reference"


def test_math_style_solution_without_annotations() -> None:
    problem = Problem(
        "math",
        "math",
        "math",
        "A rectangle has sides 6 and 8. What is its perimeter?",
        reference_answer="28",
        reference_solution="The perimeter is $2(6 + 8) = 2 \\cdot 14 = 28$, so the answer is $\\boxed{28}$.",
    )
    assert labels(problem, ["6 + 8 = 14", "2 * 14 = 28"], "correct") == ["correct", "correct"]
    assert first_incorrect(problem, ["6 * 8 = 48", "The perimeter is 48."], "incorrect") == 0


def test_stated_off_reference_result_is_flagged_even_when_unused() -> None:
    # "= 96" is a claim of the step; an off-reference number merely mentioned ("50 friends") is not
    steps = ["Twice 48 = 96 clips, for comparison.", "In May she sold 48 / 2 = 24.", "48 + 24 = 73 clips."]
    verdicts = reference_step_labels(CLIPS, steps, "incorrect")
    assert verdicts[0].label == "incorrect"
    assert verdicts[0].evidence["off_reference"] == ["96"]


def test_distributing_a_reference_product_stays_on_track() -> None:
    problem = Problem(
        "pens",
        "gsm8k",
        "math",
        "Pens cost $5. Ann buys 3 red pens and 4 blue pens. How much does she pay?",
        reference_answer="35",
        reference_solution="She pays 5 * (3 + 4) = <<5*(3+4)=35>>35 dollars.\n#### 35",
    )
    steps = ["Red pens cost 5 * 3 = 15 dollars.", "Blue pens cost 5 * 4 = 20 dollars.", "15 + 20 = 35."]
    assert labels(problem, steps, "correct") == ["correct", "correct", "correct"]
    wrong = ["Red pens cost 5 * 3 = 15 dollars.", "Blue pens cost 5 * 4 = 20 dollars.", "15 + 20 = 45."]
    assert first_incorrect(problem, wrong, "incorrect") == 2


def test_bare_unit_factor_is_neutral_only_next_to_its_unit() -> None:
    # "per day" in the question makes 24 a conversion factor, not a quantity of this problem
    assert first_incorrect(DUCKS, ["She has 24 eggs to sell.", "24 * 2 = 48 dollars."], "incorrect") == 0
    assert labels(DUCKS, ["A day has 24 hours.", "She sells 16 - 3 - 4 = 9 eggs."], "correct")[0] == "correct"


BASKETS = Problem(
    "baskets",
    "gsm8k",
    "math",
    "Each basket was worth 3 points. Matthew scored 9 points. Shawn scored 6 points. Each basket costs "
    "the team $2 in balls. How much did the team pay for the baskets made?",
    reference_answer="10",
    reference_solution="Matthew made 9 / 3 = <<9/3=3>>3 baskets.\nShawn made 6 / 3 = <<6/3=2>>2 baskets.\n"
    "They made 3 + 2 = <<3+2=5>>5 baskets.\nThey paid 5 * 2 = $<<5*2=10>>10.\n#### 10",
)


def test_another_route_back_onto_the_reference_is_not_the_first_error() -> None:
    # 15 (total points) is not in the reference, but 15 / 3 = 5 leads back to it; the error is the last step
    steps = ["Together they scored 9 + 6 = 15 points.", "That is 15 / 3 = 5 baskets.", "5 * 3 = $15."]
    verdicts = reference_step_labels(BASKETS, steps, "incorrect")
    assert verdicts[0].label == "unverifiable"
    assert verdicts[0].evidence["rule"] == "rejoins-reference"
    assert [v.label for v in verdicts[1:]] == ["correct", "incorrect"]


def test_an_invented_number_does_not_count_as_a_route_back() -> None:
    # 12 is no operation on what the chain has; reaching 5 after it by chance does not excuse it
    steps = ["They scored 12 points in all.", "12 - 7 = 5 baskets.", "5 * 3 = $15."]
    assert first_incorrect(BASKETS, steps, "incorrect") == 0


def test_fraction_words_and_growth_factors_are_givens() -> None:
    mangoes = Problem(
        "mangoes",
        "gsm8k",
        "math",
        "Jordan picked 54 mangoes. One-third were ripe while the other two-thirds were not yet ripe. "
        "He sold them 25% above cost.",
        reference_answer="36",
        reference_solution="54/3 = <<54/3=18>>18 ripe.\n54 - 18 = <<54-18=36>>36 unripe.\n#### 36",
    )
    steps = ["Two-thirds of 54 is 2/3 * 54 = 36 unripe mangoes.", "Prices were 1.25 times the cost."]
    assert labels(mangoes, steps, "incorrect")[0] == "correct"
    assert reference_step_labels(mangoes, steps, "incorrect")[1].label != "incorrect"


def test_a_computed_result_equal_only_to_a_given_is_off_reference() -> None:
    singer = Problem(
        "singer",
        "gsm8k",
        "math",
        "Mark hires a singer for 3 hours at $15 an hour. He then tips the singer 20%. How much did he pay?",
        reference_answer="54",
        reference_solution="The cost was 15*3=$<<15*3=45>>45\nSo the tip was 45*.2=$<<45*.2=9>>9\n"
        "So in total, he paid 45+9=$<<45+9=54>>54\n#### 54",
    )
    # the tip taken on the hourly rate: 3 is a given (3 hours), not a quantity the solution works out
    steps = ["The singer costs 3 * 15 = $45.", "The tip is 0.2 * 15 = $3.", "He paid 45 + 3 = $48."]
    assert first_incorrect(singer, steps, "incorrect") == 1
    # a given restated, not computed, stays on the reference
    assert labels(singer, ["He hires the singer for 3 hours.", "3 * 15 = 45"], "correct") == [
        "correct",
        "correct",
    ]


def test_coin_values_are_givens_in_a_question_about_coins() -> None:
    coins = Problem(
        "coins",
        "gsm8k",
        "math",
        "Mac trades 3 dimes for a quarter. He trades for 20 quarters. How many dollars did he lose?",
        reference_answer="1",
        reference_solution="3 x .1 = <<3*.1=.3>>.3\n.3 - .25 = <<.3-.25=.05>>.05\n"
        "20 x .05 = <<20*.05=1>>1\n#### 1",
    )
    steps = ["A quarter is worth 25 cents and a dime 10 cents.", "3 dimes are 3 * 10 = 30 cents."]
    assert labels(coins, steps, "incorrect")[0] == "correct"
    # "a quarter of the pie" is a fraction, not a coin: 25 is then no given
    pie = Problem(
        "pie",
        "gsm8k",
        "math",
        "She ate a quarter of the 8 slices. How many slices are left?",
        reference_answer="6",
        reference_solution="8 / 4 = <<8/4=2>>2\n8 - 2 = <<8-2=6>>6\n#### 6",
    )
    assert labels(pie, ["She ate 25 slices.", "25 - 8 = 17 slices."], "incorrect")[0] == "incorrect"


SHOPPING = Problem(
    "shopping",
    "gsm8k",
    "math",
    "Lisa spends $40 on t-shirts, half of this on jeans and twice this on coats. Carly spends 3 times "
    "as much as Lisa on jeans. How much did Carly spend on jeans?",
    reference_answer="60",
    reference_solution="Lisa spends 40/2 = $<<40/2=20>>20 on jeans and 40*2 = $<<40*2=80>>80 on coats.\n"
    "Lisa spends 40 + 20 + 80 = $<<40+20+80=140>>140 in all.\n"
    "Carly spends 20 * 3 = $<<20*3=60>>60 on jeans.\n#### 60",
)


def test_a_partial_hit_by_chance_is_off_reference() -> None:
    # 120 is only the partial 40 + 80 of the reference's 40 + 20 + 80: 40 * 3 reaches it by chance
    steps = ["Lisa spends $20 on jeans.", "Carly spends 40 * 3 = $120 on jeans."]
    verdicts = reference_step_labels(SHOPPING, steps, "incorrect")
    assert [v.label for v in verdicts] == ["correct", "incorrect"]
    assert verdicts[1].evidence["off_reference"] == ["120"]
    # the same partial from that expression's own numbers is on track
    steps = ["Shirts and coats cost 40 + 80 = $120.", "Carly spends 20 * 3 = $60 on jeans."]
    assert labels(SHOPPING, steps, "correct") == ["correct", "correct"]


ROOMS = Problem(
    "rooms",
    "gsm8k",
    "math",
    "A house has 5 rooms of equal size and a living room 3 times that size. The whole house is 160 "
    "square feet. How big is the living room?",
    reference_answer="60",
    reference_solution="Let x be one room. 5x + 3x = 160\n8x = 160\nx = <<160/8=20>>20\n"
    "The living room is 3 * 20 = <<3*20=60>>60 square feet.\n#### 60",
)


def test_a_setup_error_written_as_an_equation_is_flagged_where_it_is_written() -> None:
    # the equation leaves out four of the rooms: the x = 40 it forces is off the reference
    steps = ["Let x be one room.", "3x + x = 160", "4x = 160", "x = 40", "The living room is 3 * 40 = 120."]
    verdicts = reference_step_labels(ROOMS, steps, "incorrect")
    assert [v.label for v in verdicts][:2] == ["unverifiable", "incorrect"]
    assert verdicts[1].evidence["off_reference"] == ["40"]
    # the right equation forces the reference's x and stays on track
    right = ["Let x be one room.", "5x + 3x = 160", "8x = 160", "x = 20", "3 * 20 = 60"]
    assert labels(ROOMS, right, "correct")[1:] == ["correct"] * 4


def test_latex_notation_is_read_as_math_not_as_words() -> None:
    # `\times` names no operation in a plan, and a `\text{}` gloss does not end the computation
    from prm_factory.labels.reference import named_operations, performed_operations

    assert named_operations(r"\( 12 \text{ acres} \times 112 = 1344 \)") == set()
    assert performed_operations(r"\( 12 \text{ acres} \times 112 \text{ bales} = 1344 \)") == {"*"}
    assert performed_operations(r"\[ \frac{48}{8} = 6 \]") == {"/"}
    steps = [r"She has \( 16 - 3 - 4 = 9 \text{ eggs} \).", r"\( 9 \text{ eggs} \times 2 = 18 \)"]
    assert labels(DUCKS, steps, "correct") == ["correct", "correct"]


BEES = Problem(
    "bees",
    "gsm8k",
    "math",
    "3000 bees hatch from the queen's eggs every day. If a queen loses 900 bees every day, how many "
    "bees are in the hive at the end of 7 days if at the beginning the queen had 12500 bees?",
    reference_answer="27200",
    reference_solution="In 7 days there will be 3000*7=<<3000*7=21000>>21000 new bees\n"
    "In 7 days there will be 900*7=<<900*7=6300>>6300 fewer bees\n"
    "Before the losses there are 12500+21000=<<12500+21000=33500>>33500 bees\n"
    "She will have 33500-6300=<<33500-6300=27200>>27200 bees\n#### 27200",
)


def test_a_route_through_several_intermediates_back_onto_the_reference_is_not_the_first_error() -> None:
    # net change per day, then per week, then the reference total: 2100 and 14700 are both off the
    # reference, each one operation on what the chain has; the error is the last step
    steps = [
        "The net change per day is 3000 - 900 = 2100 bees.",
        "Over 7 days that is 2100 * 7 = 14700 bees.",
        "So there are 12500 + 14700 = 27200 bees.",
        "Adding the 2 drones gives 27202 bees.",
    ]
    verdicts = reference_step_labels(BEES, steps, "incorrect")
    assert [v.evidence["rule"] for v in verdicts[:2]] == ["rejoins-reference", "rejoins-reference"]
    assert [v.label for v in verdicts] == ["unverifiable", "unverifiable", "correct", "incorrect"]


def test_a_route_that_never_reaches_the_reference_is_still_flagged() -> None:
    steps = [
        "The net change per day is 3000 - 900 = 2100 bees.",
        "Over 7 days that is 2100 * 8 = 16800 bees.",
    ]
    assert first_incorrect(BEES, steps, "incorrect") == 0


def test_a_latex_gloss_before_the_numbers_computes_nothing() -> None:
    # `(\text{New}) - (\text{Lost}) = 3000` restates a given: only 2100 is brought in
    steps = [
        r"\[ \text{Net} = (\text{New bees}) - (\text{Bees lost}) = 3000 - 900 = 2100 \]",
        r"\[ 2100 \times 7 = 14700 \]",
        r"\[ 12500 + 14700 = 27200 \]",
    ]
    verdicts = reference_step_labels(BEES, steps, "correct")
    assert verdicts[0].evidence == {"rule": "rejoins-reference", "quantities": ["2100"]}
