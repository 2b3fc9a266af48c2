"""Final-answer extraction from long MATH-style outputs: which marker wins, and what is cut out of it."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.math.final_answer import extract_answer, stated_answer


@pytest.mark.parametrize(
    ("text", "expected", "method"),
    [
        # a "Final Answer:" sentence is cut down to the value it states
        ("so $n \\le 34$.\nFinal Answer: The largest $n$ is 34.", "34", "final_answer"),
        ("Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", "120", "final_answer"),
        ("Final Answer: The 8th grade should have 10 representatives.", "10", "final_answer"),
        # Minerva: the value between "The final answer is" and "I hope it is correct"
        (
            "Final Answer: The final answer is $\\frac{7}{12}$. I hope it is correct.",
            "$\\frac{7}{12}$",
            "final_answer",
        ),
        ("Final Answer: The final answer is $2{,}5$. I hope it is correct.", "$2{,}5$", "final_answer"),
        # PRM800K's "# Answer" block
        ("I check: 8 + 8 + 15 = 31.\n# Answer\n\n31", "31", "prm800k"),
        ("# Answer\n\n-$\\pi/6$", "-$\\pi/6$", "prm800k"),
        ("# Answer\n\nHillary has 7 nickels.", "7", "prm800k"),
        ("# Answer\n\nNavin", "Navin", "prm800k"),
        # the marker that starts last wins
        ("is $\\boxed{5}$ cm.\n#### 5", "5", "hashes"),
        ("#### 41\nThen I check again: $\\boxed{42}$", "42", "boxed"),
        ("The roots are $\\boxed{2}$ and $\\boxed{3}$.\n\nThe answer is: 2.", "2", "the_answer_is"),
        ("The answer is: 40 daps.", "40 daps", "the_answer_is"),
        ("The answer is: no solution", "no solution", "the_answer_is"),
        # several boxes: one answer when they share the last sentence, else the last box
        ("The solutions are $\\boxed{2}$ and $\\boxed{-3}$.", "2, -3", "boxed_several"),
        ("so $x = \\boxed{1}$, $\\boxed{2}$, or $\\boxed{2}$.", "1, 2", "boxed_several"),
        ("First $\\boxed{12}$ edges... wait, we need faces. There are $\\boxed{6}$ faces.", "6", "boxed"),
        ("$\\boxed{\\boxed{5}}$", "\\boxed{5}", "boxed"),
        # boxes joined by `\quad \text{and} \quad`, or each after the same `x =`, are one answer
        ("\\[ \\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}. \\]", "-2, 1", "boxed_several"),
        ("The solutions are $x = \\boxed{-3}$ and $x = \\boxed{5}$.", "-3, 5", "boxed_several"),
        # boxes apart only by spacing on one line are one list; a new paragraph is not spacing
        ("$\\boxed{2}$ $\\boxed{5}$", "2, 5", "boxed_several"),
        ("\\boxed{2} \\quad \\boxed{5}", "2, 5", "boxed_several"),
        ("so $\\boxed{12}$.\n\n$\\boxed{6}$", "6", "boxed"),
        ("So $a = \\boxed{2}$ $b = \\boxed{7}$.", "7", "boxed"),
        # ... but `a = ...` and `b = ...` are two quantities: the last box stands alone
        ("So $a = \\boxed{2}$ and $b = \\boxed{7}$.", "7", "boxed"),
        ("So $a = \\boxed{2}$ and $b = \\boxed{7}$, giving $a + b = \\boxed{9}$.", "9", "boxed"),
        # the Minerva prefix anywhere after "Final Answer:", and the value is not cut at an `=` in maths
        (
            "Work.\nFinal Answer: The final answer is $y = 2x - 3$. I hope it is correct.",
            "$y = 2x - 3$",
            "final_answer",
        ),
        ("Final Answer: The equation of the line is $y = 2x - 3$.", "$y = 2x - 3$", "final_answer"),
        # notes after the Minerva line, on the same line, are not the answer
        (
            "Final Answer: The final answer is $28 \\%$. I hope it is correct. Note: The approach is:",
            "$28 \\%$",
            "final_answer",
        ),
        ("Final Answer: The largest $n$ is 34. Note that $n = 35$ fails.", "34", "final_answer"),
        # a chat-template token that opens the output is no new turn
        ("<|im_start|>assistant\nWork. The answer is $\\boxed{5}$.", "5", "boxed"),
        # a few-shot continuation with a new problem after the answer is not part of it
        (
            "Final Answer: The final answer is $5$. I hope it is correct.\n\nProblem: Find $x$.\n"
            "Solution: $x = 7$.\nFinal Answer: The final answer is $7$. I hope it is correct.",
            "$5$",
            "final_answer",
        ),
        # a Markdown heading `#### Verification` with text below is no GSM8K answer line; `#### Navin` is
        ("The answer is $\\boxed{5}$.\n\n#### Verification\nWe check that it works.", "5", "boxed"),
        ("Work.\n#### Navin", "Navin", "hashes"),
        # Markdown bold around the marker or the value
        ("Work.\n**Answer:** 12", "12", "the_answer_is"),
        ("Work.\n**Final Answer:** The largest $n$ is **34**.", "34", "final_answer"),
        # a new chat turn after the answer is not part of it
        ("The answer is $\\boxed{7}$.<|im_end|>\n<|im_start|>user\nThe answer is 9.", "7", "boxed"),
    ],
)
def test_extract_answer_from_math_outputs(text: str, expected: str, method: str) -> None:
    answer = extract_answer(text, last_number_fallback=False)
    assert answer is not None
    assert (answer.text, answer.method) == (expected, method)


def test_the_span_points_at_the_answer() -> None:
    text = "Work.\nFinal Answer: The largest $n$ is 34."
    answer = extract_answer(text)
    assert answer is not None
    assert text[answer.start : answer.end] == "34"


def test_a_sentence_without_a_value_states_no_answer() -> None:
    text = "Final Answer: the product of the ways to arrange the blocks and the senators"
    assert extract_answer(text, last_number_fallback=False) is None


@pytest.mark.parametrize(
    ("text", "expected", "method"),
    [
        # without any marker: a last sentence that states a maths value, else the last number
        (
            "So, the ordered pair $(x, y)$ that solves the system is $(7, 6)$. <|im_start|>user",
            "(7, 6)",
            "last_sentence",
        ),
        ("Hence the roots are \\(1 \\pm \\sqrt{2}\\).", "1 \\pm \\sqrt{2}", "last_sentence"),
        ("Therefore, the probability that Alice wins is 2/3. <|im_start|>user", "2/3", "last_number"),
        ("The pair $(7, 6)$ works, and we check 3 more cases.", "3", "last_number"),
    ],
)
def test_fallback_without_a_marker(text: str, expected: str, method: str) -> None:
    answer = extract_answer(text)
    assert answer is not None
    assert (answer.text, answer.method) == (expected, method)
    assert text[answer.start : answer.end] == expected
    assert extract_answer(text, last_number_fallback=False) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Final Answer: The largest $n$ is 34.", "34"),
        ("The largest $n$ is 34.", "34"),
        ("$x$ is 9", "9"),
        ("Final Answer: The largest $n$ is: 34.", "34"),
        (r"$\boxed{2}$, $\boxed{5}$", "2, 5"),
        (r"\boxed{1,\!000}", r"1,\!000"),
        ("#### 5", "5"),
        # bare answers stay as they are
        ("34", "34"),
        ("x = 5", "x = 5"),
        ("y = 2x + 1", "y = 2x + 1"),
        (r"\text{Navin}", r"\text{Navin}"),
        ("Monday and Friday", "Monday and Friday"),
        ("all real numbers except 3", "all real numbers except 3"),
        (r"2 \text{ or } 3", r"2 \text{ or } 3"),
        ("Final Answer: $x = 3$ and $y = 4$.", "$x = 3$ and $y = 4$"),  # judged whole, as a system
        # two stated values, or a marker stating nothing: no single answer
        ("The sum is 5 and the product is 6.", None),
        ("The sum is $5$ and the product is $-5$.", None),
        # ... but one value stated twice is one value
        (r"Final Answer: $k$ is $-\frac{1}{2}$, so the answer is $-\frac{1}{2}$.", r"$-\frac{1}{2}$"),
        ("x = 2 and y = 3", None),
        ("Final Answer: the product of the ways", None),
    ],
)
def test_stated_answer(text: str, expected: str | None) -> None:
    assert stated_answer(text) == expected


def test_the_last_number_keeps_latex_thousands_separators() -> None:
    for text, expected in (("It costs $1,\\!000$ in all", "$1,\\!000"), ("It is $3{,}600$ m", "$3{,}600")):
        answer = extract_answer(text)
        assert answer is not None and answer.text == expected


def test_a_sentence_stating_two_values_states_no_answer() -> None:
    assert (
        extract_answer("Final Answer: The sum is 5 and the product is 6.", last_number_fallback=False) is None
    )
    text = "Final Answer: The largest $n$ is 34 and the smallest $n$ is 2."
    assert extract_answer(text, last_number_fallback=False) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [(r"$\frac{1}{2}$", r"\frac{1}{2}"), (r"\(x = 5\).", "x = 5"), (r"$1,\!000$", r"1,\!000")],
)
def test_an_output_that_is_one_maths_span_is_its_answer(text: str, expected: str) -> None:
    answer = extract_answer(text)
    assert answer is not None and (answer.text, answer.method) == (expected, "whole_math")
    assert extract_answer("$a$ and $b$") is None  # two spans, no number: no answer


# --- issue 38: a value said to be the answer after it, a remark after the answer's maths ---------------


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (r"so $y \geq 3$ is the answer.", r"y \geq 3"),
        (r"Therefore $x < 5$ is the solution.", "x < 5"),
        (r"Hence $a \geq 4$ is our final answer.", r"a \geq 4"),
        (r"It follows that \(-1 < x < 2\) is the solution set.", "-1 < x < 2"),
    ],
)
def test_a_value_said_to_be_the_answer_after_it(text: str, answer: str) -> None:
    assert stated_answer(text) == answer
    found = extract_answer(f"Some work first.\n{text}")
    assert found is not None and found.text == answer and found.method == "is_the_answer"


def test_a_remark_after_the_answers_maths_is_left_out() -> None:
    assert stated_answer(r"So the answer is $x > 3$, since $x = 3$ fails.") == "$x > 3$"
    assert stated_answer(r"Thus the answer is $7$, because $7$ is the only prime that works.") == "$7$"
    # without a clause word the sentence states two values: no single answer
    assert stated_answer(r"The sum is $5$ and the product is $6$.") is None
