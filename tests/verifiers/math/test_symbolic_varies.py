"""`symbolic._varies` (issue 49): a difference whose values at two rational points certainly differ is no
constant, so `simplify` could only have left names in it; `_compare` then says what it said after
`simplify` (no opinion) without running it. Where the certificate fails (an identity, a polynomial, a
function it does not evaluate, a name whose assumptions refuse the points) `simplify` decides as before."""

from __future__ import annotations

import pytest
import sympy
from latex2sympy2_extended import latex2sympy

from prm_factory.verifiers.math import symbolic
from prm_factory.verifiers.math.symbolic import _compare, _point, _varies

NOT_CONSTANT = [
    "\\cos \\theta - \\cos (\\theta + 360k)",
    "\\tan^2 3\\theta - \\frac{(3\\tan \\theta - \\tan^3 \\theta)^2}{(1 - 2\\tan^2 \\theta)^2}",
    "\\frac{1}{\\sin^2 \\theta} - \\frac{1}{\\cos^2 \\theta} - 3",
    "\\frac{1}{x} + \\frac{1}{2y} - \\frac{x + 2y}{4}",
    "e^{i\\theta} + b^2 e^{i\\theta} - 1",
    "\\sqrt{x} + \\log(y) - 2",
]
CONSTANT_OR_UNREAD = [
    "\\tan(a + b) - \\frac{\\sin(a + b)}{\\cos(a + b)}",  # an identity: simplify decides (0)
    "\\sin^2 x + \\cos^2 x",  # a constant, 1
    "\\tan^2 3\\theta - \\frac{(3\\tan \\theta - \\tan^3 \\theta)^2}{(1 - 3\\tan^2 \\theta)^2} + 1",  # 1
    "\\frac{x^2 - 1}{x - 1} - x",  # 1 where defined
    "x^2 - 2x + 1",  # a polynomial: its expansion decides, cheaply
    "f(x) - 1",  # a function it does not evaluate
    "\\sum_{k=1}^{n} k - 3",
    "\\sqrt{x^2} - x",  # 0 at positive points: no certificate
]


@pytest.mark.parametrize("text", NOT_CONSTANT)
def test_a_certified_difference_is_one_simplify_leaves_names_in(text):
    difference = latex2sympy(text)
    assert _varies(difference)
    assert sympy.simplify(difference).free_symbols  # what the certificate promises


@pytest.mark.parametrize("text", CONSTANT_OR_UNREAD)
def test_no_certificate_where_it_could_be_constant_or_is_not_read(text):
    assert not _varies(latex2sympy(text))


def test_compare_skips_simplify_only_where_certified(monkeypatch):
    theta, k = sympy.symbols("theta k")

    def refuse(expr):
        raise AssertionError("simplify ran")

    monkeypatch.setattr(symbolic, "_simplified", refuse)
    assert _compare(sympy.cos(theta), sympy.cos(theta + 360 * k), "\\cos(\\theta + 360k)") == (None, "")
    with pytest.raises(AssertionError, match="simplify ran"):  # an identity still goes to simplify
        _compare(sympy.tan(theta), sympy.sin(theta) / sympy.cos(theta), "x")


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("\\cos \\theta", "\\cos (\\theta + 360k)"),
        ("\\tan (A + B)", "\\frac{\\sin (A + B)}{\\cos (A + B)}"),
        ("\\frac{1}{x} + \\frac{1}{2y}", "\\frac{2y + x}{2xy}"),
        ("\\frac{1}{x} + \\frac{1}{2y}", "\\frac{2y + x}{xy}"),
        ("\\sin^2 t + \\cos^2 t", "1"),
        ("(x+1)^2", "x^2 + 2x + 1"),
    ],
)
def test_compare_says_what_it_said_with_simplify(monkeypatch, left, right):
    left_expr, right_expr = latex2sympy(left), latex2sympy(right)
    now = _compare(left_expr, right_expr, right)
    monkeypatch.setattr(symbolic, "_varies", lambda difference: False)
    assert now == _compare(left_expr, right_expr, right)


def test_points_respect_assumptions():
    n = sympy.Symbol("n", negative=True)
    assert _point([n], 0) is None and not _varies(sympy.sin(n) + n)
    x, y = sympy.symbols("x y", positive=True)
    first, second = _point([x, y], 0), _point([x, y], 1)
    assert first is not None and second is not None
    assert all(0 < v <= 1 for v in [*first.values(), *second.values()])
    assert first[x] != first[y] and first != second
