"""Step truth on hand-made chains for known synthetic problems (evaluation/step_truth.py)."""

from dataclasses import replace

import pytest

from prm_factory.evaluation.step_truth import chain_truth, first_error, step_truth, true_values
from prm_factory.schemas.synthetic import SyntheticSpec, SyntheticSpecError, synthetic_problem

# Jonas has 15 plums; keeps one of 3 equal shares (15/3 = 5); gives 4 to Tara (5-4 = 1). Answer 1.
PLUMS = synthetic_problem(SyntheticSpec(seed=3, steps=2), 0)


def test_the_problem_is_the_one_the_chains_were_written_for():
    assert PLUMS.problem.text.startswith("Jonas has 15 plums.")
    assert PLUMS.intermediate_values == (5, 1)


def test_a_correct_chain_has_no_error():
    steps = [
        "Jonas keeps one of 3 shares: 15 / 3 = 5 plums.",
        "Then 5 - 4 = 1 plum is left.",
        "The answer is 1.",
    ]
    truth = chain_truth(PLUMS, steps, "correct")
    assert truth.labels == ("correct", "correct", "correct")
    assert truth.first_error == -1


def test_false_arithmetic_is_wrong():
    truth = step_truth("He keeps 15 / 3 = 6 plums.", true_values(PLUMS))
    assert truth.label == "incorrect"
    assert truth.reason.startswith("false arithmetic")


def test_true_arithmetic_on_a_misread_number_is_wrong_where_the_result_is_stated():
    steps = ["Jonas gives away 3 plums.", "So he has 15 - 3 = 12 plums.", "The answer is 12."]
    truth = chain_truth(PLUMS, steps, "incorrect")
    # the first step states no result: its mistake is judged by what follows
    assert truth.labels == ("correct", "incorrect", "incorrect")
    assert truth.steps[0].reason == "no stated result"
    assert truth.steps[1].reason == "not a true value: 12"
    assert truth.first_error == 1


def test_given_numbers_and_true_values_may_be_restated_anywhere():
    values = true_values(PLUMS)
    assert step_truth("Jonas has 15 plums and 3 people share them.", values).label == "correct"
    assert step_truth("Now Jonas has 5 plums.", values).label == "correct"
    assert step_truth("Now Jonas has 6 plums.", values).label == "incorrect"


def test_worded_results_boxed_and_hashes_are_read():
    values = true_values(PLUMS)
    for text in ("The answer is \\boxed{2}.", "#### 2", "Answer: 2", "So the total is 2 plums."):
        truth = step_truth(text, values)
        assert truth.label == "incorrect", text
        assert 2 in truth.stated
    assert step_truth("The answer is \\boxed{1}.", values).label == "correct"


def test_a_non_integer_result_is_never_a_true_value():
    assert step_truth("15 / 4 = 3.75 plums each.", true_values(PLUMS)).label == "incorrect"


def test_calculator_annotations_are_checked():
    values = true_values(PLUMS)
    assert step_truth("He has 15/3 = <<15/3=5>>5 plums.", values).label == "correct"
    assert step_truth("He has 15/3 = <<15/3=6>>6 plums.", values).label == "incorrect"


def test_distractor_numbers_count_as_given():
    problem = synthetic_problem(SyntheticSpec(seed=1, steps=1, distractors=2), 0)
    values = true_values(problem)
    for value in problem.distractor_values:
        assert step_truth(f"There are {value} other things.", values).label == "correct"


def test_a_failed_final_answer_after_no_wrong_step_marks_the_last_step():
    steps = ["15 / 3 = 5 plums.", "Jonas has 5 plums left."]  # stops after the first operation
    truth = chain_truth(PLUMS, steps, "incorrect")
    assert truth.labels == ("correct", "incorrect")
    assert truth.first_error == 1
    assert chain_truth(PLUMS, steps, "unparsed").first_error == 1
    # a grader time-out says nothing about the answer: nothing is marked
    assert chain_truth(PLUMS, steps, "timeout").first_error == -1


def test_a_stored_problem_row_is_rebuilt_and_a_tampered_one_refused():
    steps = ["15 / 3 = 5 plums.", "5 - 4 = 1."]
    assert chain_truth(PLUMS.problem, steps, "correct").first_error == -1
    tampered = replace(PLUMS.problem, problem_id="not-the-spec's-id")
    with pytest.raises(SyntheticSpecError):
        chain_truth(tampered, steps, "correct")


def test_first_error_is_the_first_incorrect_label():
    assert first_error(["correct", "correct", "incorrect", "incorrect"]) == 2
    assert first_error([]) == -1
