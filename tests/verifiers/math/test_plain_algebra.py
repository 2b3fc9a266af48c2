"""verifiers.math.plain_algebra: what the bounded worker may judge, and a statement's names."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.math.plain_algebra import names, plain_algebra


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        (r"2x + 3 = \frac{7}{2}", True),
        (r"x^2 - 5x + 6 = 0", True),
        (r"\sqrt{x} \cdot y \le 4", True),
        (r"f(x) = 3", False),  # a name applied
        (r"AB = 5", False),  # capitals side by side: a segment
        (r"\sin x = 1", False),  # a command the worker does not read
        (r"x_1 + x_2 = 4", False),  # a subscript
    ],
)
def test_only_plain_algebra_goes_to_the_worker(text: str, plain: bool) -> None:
    assert plain_algebra(text) is plain


def test_names_leave_out_commands_and_text() -> None:
    assert names(r"\frac{a}{b} + \sqrt{c} = 2") == frozenset("abc")
    assert names(r"x = 3 \text{ or } y = 4") == frozenset("xy")
