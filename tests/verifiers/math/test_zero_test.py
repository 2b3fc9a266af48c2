"""`zero_test.proves_zero` (issue 49): a cheap proof of an identity tried before `simplify`. It must never
call a non-zero expression zero (that would make a false claim `correct`); where it proves nothing,
`simplify` decides as before."""

from __future__ import annotations

import random

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from latex2sympy2_extended import latex2sympy

from prm_factory.verifiers.math import symbolic
from prm_factory.verifiers.math.zero_test import proves_zero

x, y, t = sympy.symbols("x y theta")

IDENTITIES = [
    "\\tan(a + b) - \\frac{\\sin(a + b)}{\\cos(a + b)}",
    "\\frac{(x - 3)(x + 1)}{5(x - 4)(x + 2)} - \\frac{x^2 - 2x - 3}{5(x^2 - 2x - 8)}",
    "\\tan 3\\theta - \\frac{3\\tan \\theta - \\tan^3 \\theta}{1 - 3\\tan^2 \\theta}",
    "\\sin^2 \\theta - \\frac{1 - \\cos 2\\theta}{2}",
    "\\cos 2\\theta - \\frac{\\cos^2 \\theta - \\sin^2 \\theta}{\\sin^2 \\theta + \\cos^2 \\theta}",
    "\\sec^2 x - \\tan^2 x - 1",
    "\\cot x - \\frac{1}{\\tan x}",
    "\\left(\\omega^{2k} + \\frac{1}{\\omega^{2k}}\\right)^2 - 2 - \\omega^{4k} - \\frac{1}{\\omega^{4k}}",
]
NOT_ZERO = [
    "\\sin^2 x - \\cos^2 x",
    "\\sin^2 x + \\cos^2 x",  # 1, a constant: `simplify` says which
    "\\tan 2x - \\frac{2\\tan x}{1 + \\tan^2 x}",
    "\\frac{x^2 - 1}{x - 1} - x",
    "\\sin(2x) - \\sin x \\cos x",
    "\\sqrt{x^2} - x",
    "\\sin \\frac{x}{2} - \\sin x",
]


@pytest.mark.parametrize("text", IDENTITIES)
def test_identities_written_out_are_proved(text):
    assert proves_zero(latex2sympy(text))


@pytest.mark.parametrize("text", NOT_ZERO)
def test_what_is_not_zero_is_never_proved(text):
    assert not proves_zero(latex2sympy(text))


def test_large_multiple_angles_are_left_to_simplify():
    # sin 20x expanded is a polynomial of degree 20: refused, not proved (simplify decides)
    assert not proves_zero(sympy.sin(20 * x) - 2 * sympy.sin(10 * x) * sympy.cos(10 * x))


def test_an_identity_simplify_misses_is_a_correct_claim(monkeypatch):
    """`tan 3θ` written as its rational function of `tan θ`: `simplify` leaves names in the difference
    (no opinion); the proof makes the claim hold."""
    left = latex2sympy("\\tan 3\\theta")
    right = latex2sympy("\\frac{3\\tan \\theta - \\tan^3 \\theta}{1 - 3\\tan^2 \\theta}")
    assert sympy.simplify(left - right) != 0
    assert symbolic._compare(left, right, "x")[0] is True
    monkeypatch.setattr(symbolic, "proves_zero", lambda expr: False)
    assert symbolic._compare(left, right, "x")[0] is None


# ------------------------------------------------------------------ generated


def _leaf(draw) -> sympy.Expr:
    kind = draw(st.sampled_from(["x", "y", "n", "trig"]))
    if kind == "x":
        return x
    if kind == "y":
        return y
    if kind == "n":
        return sympy.Rational(draw(st.integers(-5, 5)), draw(st.integers(1, 3)))
    function = draw(st.sampled_from([sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc]))
    angle = draw(st.sampled_from([x, 2 * x, 3 * x, x + y, x - y, 2 * y, x / 2]))
    return function(angle)


@st.composite
def expressions(draw, depth: int = 3) -> sympy.Expr:
    if depth == 0 or draw(st.booleans()):
        return _leaf(draw)
    a, b = draw(expressions(depth - 1)), draw(expressions(depth - 1))
    operation = draw(st.sampled_from(["+", "-", "*", "/", "^"]))
    if operation == "+":
        return a + b
    if operation == "-":
        return a - b
    if operation == "*":
        return a * b
    if operation == "/":
        return a / b if b != 0 else a
    return a ** draw(st.integers(2, 3))


def _value(expr: sympy.Expr, rng: random.Random) -> complex | None:
    point = {x: sympy.Rational(rng.randint(1, 97), 53), y: sympy.Rational(rng.randint(1, 97), 59)}
    try:
        value = complex(expr.evalf(30, subs=point))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return value if abs(value) < 1e12 else None


@settings(max_examples=150, deadline=None)
@given(expressions(), st.integers(0, 10**6))
def test_a_proof_is_zero_at_every_point(expr, seed):
    """Soundness: whatever it proves zero is zero wherever it is defined (three random points)."""
    if not proves_zero(expr):
        return
    rng = random.Random(seed)
    for _ in range(3):
        value = _value(expr, rng)
        assert value is None or abs(value) < 1e-8


def _rewritten(expr: sympy.Expr) -> sympy.Expr:
    """The same function written another way: tangents as ratios, double angles expanded, over one
    denominator (what a model writes out)."""
    expr = expr.replace(lambda n: n.func == sympy.tan, lambda n: sympy.sin(n.args[0]) / sympy.cos(n.args[0]))
    return sympy.together(sympy.expand_trig(expr))


@settings(max_examples=100, deadline=None)
@given(expressions(depth=2))
def test_an_expression_and_its_rewriting_are_proved_equal(expr):
    rewritten = _rewritten(expr)
    assert proves_zero(expr - rewritten) or sympy.simplify(expr - rewritten) != 0


@settings(max_examples=100, deadline=None)
@given(expressions(depth=2), st.sampled_from([sympy.Rational(1, 7), x / 11, sympy.sin(x) / 5]))
def test_a_rewriting_off_by_a_term_is_not_proved(expr, offset):
    assert not proves_zero(expr - _rewritten(expr) - offset)
