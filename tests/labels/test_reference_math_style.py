"""Reference alignment with a MATH-style worked solution: in a wrong chain only its answer is judged."""

from __future__ import annotations

from fractions import Fraction

from prm_factory.labels.reference import boxed_number, is_math_style, reference_step_labels
from prm_factory.schemas.records import Problem

QUESTION = r"What is the value of $101^{3} - 3 \cdot 101^{2} + 3 \cdot 101 -1$?"
SOLUTION = (
    r"The given expression is the expansion of $(101-1)^3$. Thus the value is $(101-1)^3$; "
    r"we can easily calculate $100^3=\boxed{1000000}$."
)
PROBLEM = Problem("m", "math", "math", QUESTION, "1000000", SOLUTION)


def labels(steps: list[str], outcome: str) -> list[tuple[str, str | None]]:
    return [(v.label, v.evidence.get("rule")) for v in reference_step_labels(PROBLEM, steps, outcome)]


def test_math_style_is_a_boxed_solution_without_gsm8k_marks() -> None:
    assert is_math_style(SOLUTION)
    assert not is_math_style("16 - 3 - 4 = <<16-3-4=9>>9\n#### 9")
    assert not is_math_style(r"So \boxed{9}" + "\n#### 9")
    assert not is_math_style("We get 9.") and not is_math_style(None)


def test_boxed_number_reads_one_number_only() -> None:
    assert boxed_number(r"so $\boxed{10,\!080}$") == 10080
    assert boxed_number(r"$\boxed{-\frac{1}{2}}$") == Fraction(-1, 2)
    assert boxed_number(r"$\boxed{(3, -1)}$") is None and boxed_number(r"$\boxed{\pi - 2}$") is None
    assert boxed_number("no box, 12") is None


def test_a_wrong_answer_is_flagged_where_the_chain_first_writes_it() -> None:
    steps = [
        r"The expression is $(101-1)^3$.",
        r"So the value is $100^2 = 10000$.",
        r"The answer is $\boxed{10000}$.",
    ]
    got = labels(steps, "incorrect")
    assert got[1] == ("incorrect", "final-off-reference")
    assert got[0][0] != "incorrect" and got[2][0] != "incorrect"


def test_an_off_reference_number_on_the_way_is_not_flagged() -> None:
    # another route (1030301 is not in the solution) to a wrong answer that the reference holds (100):
    # only the answer is judged, where the chain first writes it
    steps = [
        r"First $101^3 = 1030301$ and $3 \cdot 101^2 = 30603$.",
        r"Then $1030301 - 30603 = 999698$, so the value is $100$.",
        r"The answer is $\boxed{100}$.",
    ]
    assert [label for label, _ in labels(steps, "incorrect")] == ["unverifiable", "incorrect", "unverifiable"]
    # the same chain ending on an off-reference answer: only where it first writes it
    steps[2] = r"The answer is $\boxed{999698}$."
    assert [label for label, _ in labels(steps, "incorrect")] == ["unverifiable", "incorrect", "unverifiable"]


def test_a_right_chain_is_never_judged_and_a_boxed_reference_quantity_is() -> None:
    right = [r"The expression is $(101-1)^3$.", r"That is $100^3 = 1000000$, so $\boxed{1000000}$."]
    assert all(label != "incorrect" for label, _ in labels(right, "correct"))
    # `(101-1)^3` stands in the worked solution: boxed by a chain graded wrong, a right intermediate was
    # taken for the answer, and the step that concludes with it is the error
    intermediate = [r"The expression is $(101-1)^3$.", r"So the answer is $\boxed{(101-1)^3}$."]
    assert [label for label, _ in labels(intermediate, "incorrect")] == ["incorrect", "unverifiable"]
    unboxed = [r"The expression is $(101-1)^3$.", r"So $100^3 = 1000000$ and the answer is 100."]
    assert all(label != "incorrect" for label, _ in labels(unboxed, "incorrect"))  # 100: any last number


def test_a_wrong_expression_answer_is_flagged_where_the_chain_first_writes_it_alone() -> None:
    steps = [
        r"The expression is $101^3 - 3 \cdot 101^2 + 3 \cdot 101 - 1$.",
        r"Grouping, it is $101^3 - 1 + 3 \cdot 101 (1 - 101)$.",  # inside a larger term: not a writing
        r"We drop the last term: $101^3 - 1$.",
        r"So the answer is $\boxed{101^3 - 1}$.",
    ]
    got = labels(steps, "incorrect")
    assert got[2] == ("incorrect", "final-off-reference")
    assert [label for label, _ in got].count("incorrect") == 1
    assert all(label != "incorrect" for label, _ in labels(steps, "correct"))


def test_an_answer_first_written_far_before_it_is_given_is_not_judged() -> None:
    # three steps or more before the answer the same value is as often a right intermediate
    steps = [
        r"So the value is $100^2 = 10000$.",
        r"Now recount the terms.",
        r"Check the signs again.",
        r"Nothing changes.",
        r"The answer is $\boxed{10000}$.",
    ]
    assert all(label != "incorrect" for label, _ in labels(steps, "incorrect"))
    steps[0] = r"So the value is $100^2$."
    steps[2] = r"Check the signs again: it is $10000$."  # first written two steps before the answer: in reach
    assert [label for label, _ in labels(steps, "incorrect")][:3] == [
        "unverifiable",
        "unverifiable",
        "incorrect",
    ]


def test_a_box_holding_another_answer_is_judged_though_the_last_step_writes_the_reference_one() -> None:
    # the grade read the box; a trailing number equal to the reference answer no longer blocks the flag
    steps = [r"So the value is $100^2 = 10000$.", r"Hence $\boxed{10000}$ (not 1000000)."]
    assert labels(steps, "incorrect")[0] == ("incorrect", "final-off-reference")
    agrees = [r"So the value is $100^2 = 10000$.", r"Hence $\boxed{1000000}$."]
    assert all(label != "incorrect" for label, _ in labels(agrees, "incorrect"))


def test_numbers_of_symbolic_expressions_are_not_quantities() -> None:
    # `2x^2 + 14x` holds no quantity: the step is judged on its variable-free arithmetic only
    steps = [r"Let $f(x) = 2x^2 + 14x$; then $50 - 41 = 9$.", r"The answer is $\boxed{9}$."]
    got = reference_step_labels(PROBLEM, steps, "incorrect")
    assert got[0].label == "incorrect" and got[0].evidence["final_quantity"] == "9"
    assert all(v.evidence.get("math_style") for v in got)


def test_a_number_only_in_the_box_is_first_written_there() -> None:
    steps = [r"The expression is $(101-1)^3$.", r"Counting digits, the value has length \[ \boxed{13}. \]"]
    assert labels(steps, "incorrect")[1] == ("incorrect", "final-off-reference")
    assert all(label != "incorrect" for label, _ in labels(steps, "correct"))
