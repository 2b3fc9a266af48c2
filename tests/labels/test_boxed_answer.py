"""Where a chain first writes its boxed expression: only standing alone, never inside a larger term."""

from __future__ import annotations

import pytest

from prm_factory.labels.boxed_answer import first_writing, is_expression, last_box, writes


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (r"so $x = 2 \sqrt{5}$.", r"2\sqrt{5}"),
        (r"\(x = -2t + 4\)", "-2t + 4"),
        (r"the answer is $3a - 2$ here", "3a-2"),
        (r"the area is 27\sqrt{3} square units", r"27\sqrt{3}"),
        (r"$y = \dfrac{1}{2}\sqrt{3}$", r"\frac{1}{2}\sqrt{3}"),
        (r"$\boxed{\left(1, 2\right)}$", "(1,2)"),
    ],
)
def test_an_answer_standing_alone_is_written(text: str, answer: str) -> None:
    assert writes(text, answer)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (r"$x + 2\sqrt{5}$", r"2\sqrt{5}"),  # a term of a sum
        (r"$\frac{2\sqrt{5}}{3}$", r"2\sqrt{5}"),  # a numerator
        (r"$(2\sqrt{5})^2$", r"2\sqrt{5}"),  # in brackets, raised to a power
        (r"$-2\sqrt{5}$", r"2\sqrt{5}"),  # another sign
        (r"gives $3a-2b$", "3a-2"),  # a longer expression
        (r"$= \frac{1}{2}\sqrt{3} \cdot 2$", r"\frac{1}{2}\sqrt{3}"),  # a factor
        (r"$x = 27\sqrt{3}x$", r"27\sqrt{3}"),
        (r"$2.54$", "2.5"),
    ],
)
def test_an_answer_inside_a_larger_term_is_not_written(text: str, answer: str) -> None:
    assert not writes(text, answer)


def test_first_writing_and_the_box() -> None:
    steps = [r"So $x = 27\sqrt{3}+1$.", r"Then $y = 27 \sqrt{3}$.", r"$\boxed{27\sqrt{3}}$"]
    assert first_writing(steps, r"27\sqrt{3}") == 1
    assert first_writing(steps[:1], r"27\sqrt{3}") is None
    assert last_box(steps) == (2, r"27\sqrt{3}") and last_box(steps[:2]) is None
    assert last_box([r"$\boxed{1}$", "Final Answer: see above."]) == (0, "1")


def test_which_answers_are_looked_for() -> None:
    assert is_expression(r"2\sqrt{5}") and is_expression("3a-2") and is_expression(r"130 \text{ m}")
    assert not is_expression("EKM") and not is_expression("x") and not is_expression(r"\text{odd}")
    assert not is_expression("1" * 81)  # too long to be matched with certainty
