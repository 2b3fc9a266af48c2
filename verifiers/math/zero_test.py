"""A cheap proof that an expression is identically zero, tried before `simplify`.

Most differences the claim checks simplify are identities a model wrote out: a rational function put over
one denominator, `\\tan x = \\frac{\\sin x}{\\cos x}`, a double angle, `\\sin^2 + \\cos^2 = 1`. `simplify`
proves them by trying every rewriting it knows (its trigonometric search alone took 0.3-0.6 s on one
difference), where a fixed short path decides them: tangents and their kin written as sines and cosines,
sums and integer multiples of angles expanded, everything over one denominator, and the numerator reduced
modulo `sin(u)^2 + cos(u)^2 - 1` for each angle `u`. A zero at the end is a proof (each step keeps the
function's values where it is defined); anything else proves nothing and `simplify` decides as before.
"""

from __future__ import annotations

import sympy

# expand_trig writes sin(n u) as a polynomial of degree n: past this multiple the expansion costs more
# than it saves, and such angles are rare in written solutions
_MAX_MULTIPLE = 6
_MAX_ANGLE_TERMS = 3
_RATIOS = {
    sympy.tan: lambda u: sympy.sin(u) / sympy.cos(u),
    sympy.cot: lambda u: sympy.cos(u) / sympy.sin(u),
    sympy.sec: lambda u: 1 / sympy.cos(u),
    sympy.csc: lambda u: 1 / sympy.sin(u),
}
_TRIG = (sympy.sin, sympy.cos, *_RATIOS)


def _small_angle(angle: sympy.Expr) -> bool:
    """An angle whose expansion stays small: at most three terms, each a name or number times a small
    integer."""
    terms = sympy.Add.make_args(angle)
    if len(terms) > _MAX_ANGLE_TERMS:
        return False
    for term in terms:
        coefficient, _ = term.as_coeff_Mul()
        if not coefficient.is_Rational or abs(coefficient.p) > _MAX_MULTIPLE:
            return False
    return True


def proves_zero(expr: sympy.Expr) -> bool:
    """True only where `expr` is certainly zero wherever it is defined; False says nothing.

    >>> x = sympy.Symbol("x")
    >>> proves_zero(sympy.tan(2 * x) - 2 * sympy.tan(x) / (1 - sympy.tan(x) ** 2))
    True
    >>> proves_zero(sympy.sin(x) ** 2 - sympy.cos(x) ** 2)
    False
    """
    try:
        return _proves_zero(expr)
    except Exception:  # a rewriting that cannot run proves nothing (sympy raises on odd shapes)
        return False


def _proves_zero(expr: sympy.Expr) -> bool:
    trig = [node for node in expr.atoms(sympy.Function) if node.func in _TRIG]
    if any(not _small_angle(node.args[0]) for node in trig):
        return False
    rewritten = expr
    if trig:
        rewritten = rewritten.replace(
            lambda node: node.func in _RATIOS, lambda node: _RATIOS[node.func](node.args[0])
        )
        rewritten = sympy.expand_trig(rewritten)
    numerator, _ = sympy.fraction(sympy.together(rewritten))
    numerator = sympy.expand(numerator)
    if numerator == 0:
        return True
    if not trig:
        return False
    angles = {node.args[0] for node in numerator.atoms(sympy.sin, sympy.cos)}
    for angle in sorted(angles, key=sympy.default_sort_key):
        sine, cosine = sympy.sin(angle), sympy.cos(angle)
        if not numerator.has(sine):
            continue
        polynomial = sympy.Poly(numerator, sine)
        numerator = sympy.expand(sympy.rem(polynomial, sympy.Poly(sine**2 + cosine**2 - 1, sine)).as_expr())
        if numerator == 0:
            return True
    return numerator == 0
