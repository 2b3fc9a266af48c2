"""The SymPy side of the step-claim checker; runs only inside a bounded worker (see `bounded`).

`latex_claims` is a generator, one result per input item, so the parent can put a deadline on each: each
`=`-joined LaTeX run (`\\sqrt{16} = 4`) parsed with latex2sympy2_extended, known variable values
substituted, consecutive sides compared. Final answers are compared in `answer_symbolic`.
"""

from __future__ import annotations

import cmath
import random
import re
from collections.abc import Iterator, Sequence
from fractions import Fraction

import sympy
from sympy.core.numbers import ImaginaryUnit

from prm_factory.verifiers.math.competition import ORDER_RELATION
from prm_factory.verifiers.math.latex_parse import parse_latex
from prm_factory.verifiers.math.numbers import Literal, matches_written
from prm_factory.verifiers.math.zero_test import proves_zero


def split_top_level(text: str, separators: tuple[str, ...] = ("=", "\\approx")) -> list[str]:
    """Split LaTeX at `=` outside braces and parentheses: `f(x{=}1) = 2` keeps its inner `=`."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            for sep in separators:
                if text.startswith(sep, i) and not text.startswith("==", i):
                    parts.append(text[start:i])
                    i += len(sep)
                    start = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


# `30^\\circ`, `30^{\\circ}`, `30°`: degrees, read as radians times pi/180 before parsing
# (a brace ends the mark only where one opened it: in `\\frac{1 - \\cos 45^\\circ}{2}` it ends the `\\frac`)
_MARK = r"(?:\^\s*(?:\{\s*\\circ\s*\}|\\circ)|°)"
_DEGREE = re.compile(r"(\d+(?:\.\d+)?|[A-Za-z])\s*" + _MARK)
# `\\tan^2 20^\\circ` is `(\\tan 20^\\circ)^2`, not `\\tan^2` times a bracket
_TRIG_POWER = re.compile(r"\\(sin|cos|tan|cot|sec|csc)\s*\^\s*(\d|\{\d\})\s*(\d+(?:\.\d+)?\s*" + _MARK + ")")
IDENTITY_FALSE = "false as an identity"  # competition.IDENTITY_FALSE (this module runs in the worker)
IDENTITY_CHAIN_FALSE = "false as an identity in a chain of expressions"  # competition.IDENTITY_CHAIN_FALSE
_IDENTITY_POINTS = 3
# only names and the commands of plain algebra: `f(x)`, `\log`, `\sum` have readings an identity test
# would get wrong
_NOT_ALGEBRA = re.compile(
    r"[A-Za-z]\s*\(|\\(?!(?:[dt]?frac|sqrt|cdot|times|left|right)(?![A-Za-z]))[A-Za-z]+"
)


# `6 \\left(\\frac{1}{7}\\right)`, `6(2)`, `(0)(2)`: a number or a bracket before a bracket multiplies it
# (never a mixed number, never a function applied); a logarithm's base (`\\log_2 (2^8)`) is no such number
_NUMBER_BEFORE_BRACKET = re.compile(r"((?<!\\log_)\d|\)|\\right\))\s*(\\left\(|\()")


# `\\frac12`, `\\frac1{x}`, `\\frac{1}2`: single-digit arguments without braces, as TeX reads them
_BARE_FRAC = re.compile(r"\\([dt]?frac)\s*(\d|\{(?:[^{}]|\{[^{}]*\})*\})\s*(\d|\{(?:[^{}]|\{[^{}]*\})*\})")
# `\\sqrt6` is `\\sqrt{6}` (one digit, as TeX reads it; `\\sqrt64` is left unread: sqrt(6)4 or sqrt(64)?)
_BARE_SQRT = re.compile(r"\\sqrt\s*(\d)(?![\d.])")


def _bare_fraction(match: re.Match[str]) -> str:
    top, bottom = (g if g.startswith("{") else f"{{{g}}}" for g in match.group(2, 3))
    return f"\\{match.group(1)}{top}{bottom}"


# `\\binom{6}{3}\\binom{11}{5}`: side by side, binomials multiply (the LaTeX parser adds them)
_BINOM_BEFORE_FACTOR = re.compile(r"(\\[dt]?binom\s*\{[^{}]*\}\s*\{[^{}]*\})\s*(?=\\[dt]?binom|\\left\(|\()")


# `\\pi (1.5)^2`, `\\pi(r)^2`: pi before a bracket raised to a power is a product (the parser applies a
# function named pi to the bracket); a bare `\\pi(10)` may be the prime-counting function, and stays unread
_PI_BEFORE_POWER = re.compile(r"(\\pi)(?![A-Za-z])\s*(?=(?:\\left\(|\()[^()]*(?:\\right\)|\))\s*\^)")


def _explicit_products(side: str) -> str:
    side = _BARE_SQRT.sub(r"\\sqrt{\1}", _BARE_FRAC.sub(_bare_fraction, side)).replace("\\bmod", "\\mod")
    side = _BINOM_BEFORE_FACTOR.sub(r"\1 \\cdot ", side)
    side = _PI_BEFORE_POWER.sub(r"\1 \\cdot ", side)
    return _NUMBER_BEFORE_BRACKET.sub(r"\1 \\cdot \2", side)


_BRACKET_DEGREE = re.compile(r"(\)|\\right\))\s*" + _MARK)


def in_degrees(side: str) -> str:
    """`\\sin 30^\\circ` -> `\\sin (\\frac{30 \\pi}{180})`: a degree mark means degrees; a mark left
    unread (after anything but a number, a letter or a bracket) makes the side unreadable."""
    side = _TRIG_POWER.sub(
        lambda m: f"\\left(\\{m.group(1)} {m.group(3)}\\right)^{{{m.group(2).strip('{}')}}}", side
    )
    side = _DEGREE.sub(lambda m: f"\\left(\\frac{{{m.group(1)} \\pi}}{{180}}\\right)", side)
    side = _BRACKET_DEGREE.sub(lambda m: f"{m.group(1)} \\cdot \\frac{{\\pi}}{{180}}", side)
    if "\\circ" in side or "°" in side:
        raise ValueError("a degree mark that could not be read")
    return side


def _simplified(expr: sympy.Expr) -> sympy.Expr:
    """A difference simplified: a polynomial's expansion settles it (and is far cheaper than `simplify`,
    which may run past the worker's limit on a cold start); a zero `zero_test` proves is zero (a rational
    function, a trigonometric identity: a fraction of `simplify`'s search); anything else goes to
    `simplify`."""
    names = sorted(expr.free_symbols, key=str)
    if names and expr.is_polynomial(*names):
        return sympy.expand(expr)
    if proves_zero(expr):
        return sympy.Integer(0)
    return sympy.simplify(expr)


def false_as_identity(left: sympy.Expr, right: sympy.Expr) -> bool:
    """Is `left = right`, in free variables, false as an identity? Both opinions must agree: exact values
    at random rational points differ at every point tried, and SymPy's simplification of the difference
    is not zero."""
    names = sorted(left.free_symbols | right.free_symbols, key=str)
    if not names:
        return False
    rng = random.Random(1729)
    differing = 0
    for _ in range(_IDENTITY_POINTS):
        point = {n: sympy.Rational(rng.randint(-97, 97), rng.randint(1, 13)) for n in names}
        try:
            value = (left - right).subs(point)
        except Exception:
            return False
        if not value.is_Rational:
            return False  # not plain algebra at this point (a pole, a root): no opinion
        differing += value != 0
    return differing == _IDENTITY_POINTS and _simplified(left - right) != 0


# a bracket raised to a power or multiplied (`(x+1)^2`, `2(x - 3)`, `(a+b)(a-b)`)
_UNEXPANDED = re.compile(r"\)\s*(?:\^|\(|\\left\(|[A-Za-z0-9])|[A-Za-z0-9]\s*(?:\(|\\left\()")


def _expansion_pair(left_text: str, right_text: str, left: sympy.Expr, right: sympy.Expr) -> bool:
    """An expansion written out: plain algebra in the same names, one side a product or power of sums
    and the other side already expanded (`(x+1)^2 = x^2 + 2x + 1`)."""
    if _NOT_ALGEBRA.search(left_text) or _NOT_ALGEBRA.search(right_text):
        return False
    if not left.free_symbols or left.free_symbols != right.free_symbols:
        return False
    if isinstance(left, sympy.Symbol) or isinstance(right, sympy.Symbol):
        return False
    names = sorted(left.free_symbols, key=str)
    if not (left.is_polynomial(*names) and right.is_polynomial(*names)):
        return False
    bracketed_left, bracketed_right = "(" in left_text, "(" in right_text
    unexpanded = _UNEXPANDED.search(left_text) or _UNEXPANDED.search(right_text)
    return bool(unexpanded) and bracketed_left != bracketed_right


# juxtaposed capitals are segment names (`AB + BC`), not products; `e`, `i` are constants; a number before
# a fraction may be a mixed number (`1\\frac16`)
_NAMES_NOT_ALGEBRA = re.compile(r"[A-Z]\s*[A-Z]|(?<![A-Za-z\\])[ei](?![A-Za-z])|\d\s*\\[dt]?frac")


def identity_chain(side_texts: Sequence[str], exprs: Sequence[object]) -> set[int]:
    """Pairs (k, k + 1) of a chain `A = B = C ...` (three sides or more) that claim an identity: both sides
    plain algebra in the same names, within a stretch of at least two such sides (`\\frac{x+y+w}{z} =
    \\frac{36}{175}w + w = \\frac{211}{175}w`). A side in other names or none (the name defined) ends the
    stretch; a chain that ends on a value (`A = B = 0`) sets each side to it and claims no identity."""
    if len(side_texts) < 3:
        return set()
    last = exprs[-1]
    if isinstance(last, sympy.Expr) and not last.free_symbols:
        return set()  # `-a + b - 1 = a + b - 5 = 0`: each side is set to the value, not to the other
    keys: list[frozenset | None] = []
    for text, expr in zip(side_texts, exprs, strict=True):
        plain = (
            isinstance(expr, sympy.Expr)
            and not isinstance(expr, sympy.Symbol)
            and bool(expr.free_symbols)
            and not _NOT_ALGEBRA.search(text)
            and not _NAMES_NOT_ALGEBRA.search(text)
        )
        keys.append(frozenset(expr.free_symbols) if plain else None)  # type: ignore[union-attr]
    return {
        k
        for k in range(len(keys) - 1)
        if keys[k] is not None and keys[k] == keys[k + 1] and _same_terms(exprs[k], exprs[k + 1])  # type: ignore[arg-type]
    }


def _same_terms(left: sympy.Expr, right: sympy.Expr) -> bool:
    """Do both sides, cross-multiplied, hold the same monomials in their names? A side where a part was
    replaced by its value (`(a+b+c)^2 = a^2 + b^2 + c^2 + 2(-11)`, with `ab + bc + ca = -11` known) loses
    monomials: that is a substitution, not an identity, and is not judged as one."""
    try:
        left_top, left_bottom = sympy.together(left).as_numer_denom()
        right_top, right_bottom = sympy.together(right).as_numer_denom()
        names = sorted(left.free_symbols | right.free_symbols, key=str)
        one = sympy.Poly(sympy.expand(left_top * right_bottom), *names)
        other = sympy.Poly(sympy.expand(right_top * left_bottom), *names)
    except Exception:
        return False
    constant = (0,) * len(names)
    return {m for m in one.monoms() if m != constant} == {m for m in other.monoms() if m != constant}


# `\\approx` promises closeness, not every digit: within 1 % it is not called false
APPROXIMATION_TOLERANCE = 0.01


def _approximate_pairs(text: str, n_sides: int) -> list[bool]:
    """For each pair of adjacent sides, was it joined by `\\approx` (rather than `=`)?"""
    marks = split_top_level(text.replace("\\approx", "=\\approx"), ("=",))
    flags = [part.startswith("\\approx") for part in marks[1:]]
    return flags if len(flags) == n_sides - 1 else [False] * (n_sides - 1)


def _within(left: sympy.Expr, right: sympy.Expr, tolerance: float) -> bool:
    try:
        a, b = complex(left.evalf(20)), complex(right.evalf(20))
    except (TypeError, ValueError):
        return False
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def _shown(value: sympy.Expr) -> str:
    value = value.doit()
    return str(value) if value.is_Rational else str(value.evalf(10))


def _overflows(expr: sympy.Expr, value: complex) -> bool:
    """A value past a float's range (`2^{2000}`, `1000!`): its float is inf, which is within any tolerance
    of inf or of 5, so the floats cannot compare it. (A value SymPy knows is infinite, `\\frac{1}{0}`, keeps
    its float.)"""
    return cmath.isinf(value) and expr.is_finite is not False


def _numerically_equal(left: sympy.Expr, right: sympy.Expr) -> bool:
    """Two closed forms equal to 30 digits (`\\tan 105^\\circ` and `-\\cot 15^\\circ`): far cheaper than
    simplifying trigonometry, which may run past the worker's limit."""
    try:
        a, b = complex(left.evalf(30)), complex(right.evalf(30))
    except (TypeError, ValueError):
        return False
    if _overflows(left, a) or _overflows(right, b):
        return False
    return abs(a - b) <= 1e-20 * max(abs(a), abs(b), 1.0)  # unevaluated forms leave ~1e-70 residues


# what `_varies` evaluates: sums, products and powers of names and numbers, and these functions
_ELEMENTARY = frozenset(
    {sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc, sympy.exp, sympy.log}
)
_PLAIN = (sympy.Add, sympy.Mul, sympy.Pow, sympy.Symbol, sympy.Number, sympy.NumberSymbol, ImaginaryUnit)
_VARIES_DIGITS = 30
_VARIES_MARGIN = 1e-9  # two values apart by this much of their size are apart (each is good to 30 digits)


def _point(names: Sequence[sympy.Symbol], shift: int) -> dict[sympy.Symbol, sympy.Rational] | None:
    """Distinct rationals in (0, 1] for the names (none where a name's assumptions refuse one)."""
    point, modulus = {}, 97 + 4 * shift
    for k, name in enumerate(names):
        value = sympy.Rational((37 * k + 11 + 13 * shift) % modulus + 1, modulus + 1)
        if any(getattr(value, f"is_{key}") is not held for key, held in name.assumptions0.items()):
            return None
        point[name] = value
    return point


def _varies(difference: sympy.Expr) -> bool:
    """Is this difference, outside plain polynomials (whose expansion is cheap and decides), certainly not a
    constant? Its values at two rational points, each to 30 digits (`evalf(strict=True)` raises rather than
    give fewer), differ. Then `simplify`, which keeps values, can give neither 0 nor a number, only an
    expression in names: the verdict it would lead to (no opinion) without its cost (a quarter of a
    competition response's SymPy time, on trigonometry it cannot settle). Only elementary functions of
    names and numbers are evaluated; anything else, a pole, an error or values too close: False, and
    `simplify` decides as before."""
    names = sorted(difference.free_symbols, key=str)
    if not names or difference.is_polynomial(*names):
        return False
    for node in sympy.preorder_traversal(difference):
        if not isinstance(node, _PLAIN) and getattr(node, "func", None) not in _ELEMENTARY:
            return False
    values = []
    for shift in (0, 1):
        try:
            point = _point(names, shift)
            if point is None:
                return False
            value = complex(difference.evalf(_VARIES_DIGITS, subs=point, strict=True))
        except Exception:  # a pole, an accuracy evalf cannot promise, a value past a float
            return False
        if not cmath.isfinite(value):
            return False
        values.append(value)
    a, b = values
    return abs(a - b) > _VARIES_MARGIN * max(abs(a), abs(b), 1.0)


def _compare(left: sympy.Expr, right: sympy.Expr, right_text: str) -> tuple[bool | None, str]:
    if not (left.free_symbols or right.free_symbols) and _numerically_equal(left, right):
        return True, _shown(left)
    if left.free_symbols or right.free_symbols:
        if _varies(left - right):
            return None, ""  # what `simplify` would lead to below, certainly: its result keeps names
        difference = _simplified(left - right)
        if difference == 0:
            return True, _shown(left)
        # names whose difference is another expression, or a constant other than zero (`(x + 1)(x + 2)` and
        # `x^2 + 3x + 3`): no value of written numbers to compare; the identity readings decide
        return None, ""
    left_value = sympy.nsimplify(left) if left.is_Float else left
    if left_value.is_Rational:
        written = Literal.parse(right_text.replace("{,}", ","))
        if written is not None:
            exact = Fraction(int(left_value.p), int(left_value.q))
            return matches_written(exact, written), str(left_value)
    left_num, right_num = complex(left.evalf(30)), complex(right.evalf(30))
    if _overflows(left, left_num) or _overflows(right, right_num):
        return None, ""  # not an exact number written out, and its float says nothing
    if abs(left_num - right_num) <= 1e-6 * max(abs(left_num), abs(right_num)):
        return True, _shown(left)
    written = Literal.parse(right_text)
    if written is not None and written.decimals and not left_num.imag:
        return matches_written(Fraction(left_num.real).limit_denominator(10**12), written), _shown(left)
    return False, _shown(left)


PLUS_MINUS = "both branches of \\pm"  # competition.PLUS_MINUS (this module runs in the worker)
IMAGINARY = "with i the imaginary unit"  # competition.IMAGINARY (this module runs in the worker)
_I = sympy.Symbol("i")
_DECIMAL = re.compile(r"\d\.\d")


def plus_minus_branches(left_text: str, right_text: str) -> tuple[bool | None, str, str] | None:
    """`\\frac{1 \\pm \\sqrt{7753}}{6} = \\frac{1 \\pm 88}{6}`: a `\\pm` on each side claims two equalities,
    the `+` branches and the `-` branches, each read as numbers; the claim holds when both do and fails
    when either fails (with a decimal written in the pair, only beyond 1 %: it was rounded). None when
    the pair is not of this form (one `\\pm` a side, no `\\mp`)."""
    if "\\mp" in left_text + right_text or left_text.count("\\pm") != 1 or right_text.count("\\pm") != 1:
        return None
    verdicts, shown = [], []
    decimal = bool(_DECIMAL.search(left_text + " " + right_text))
    for sign in ("+", "-"):
        try:
            left = parse_latex(_explicit_products(in_degrees(left_text.replace("\\pm", sign))))
            right_branch = right_text.replace("\\pm", sign)
            right = parse_latex(_explicit_products(in_degrees(right_branch)))
        except Exception:
            return None, "", "side could not be parsed"
        if not isinstance(left, sympy.Expr) or not isinstance(right, sympy.Expr):
            return None, "", "side could not be parsed"
        if left.free_symbols or right.free_symbols:
            return None, "", f"{PLUS_MINUS}: names in a branch"
        holds, expected = _compare(left, right, right_branch)
        if holds is False and decimal and _within(left, right, APPROXIMATION_TOLERANCE):
            holds = None  # `\\sqrt{42068}` written `205.1` inside the branch: rounded, not wrong
        verdicts.append(holds)
        shown.append(expected)
    expected = f"{shown[0]} and {shown[1]}"
    if False in verdicts:
        return False, expected, PLUS_MINUS
    if verdicts == [True, True]:
        return True, expected, PLUS_MINUS
    return None, expected, PLUS_MINUS


# the rule of a relation other than `=` (`competition.ORDER_RELATION`) between two sides in numbers, one of
# the statements `competition.relation_pieces` reads alone: `162 - 108 - 6 \\neq 0`
RELATION = "a relation in numbers"
_LESS = {"<", "\\lt"}
_LESS_EQUAL = {"\\le", "\\leq", "\\leqslant", "≤"}
_GREATER = {">", "\\gt"}
_GREATER_EQUAL = {"\\ge", "\\geq", "\\geqslant", "≥"}


def _order_relation(text: str) -> re.Match[str] | None:
    """The one relation other than `=` that stands outside brackets in `text`, if there is exactly one and no
    `=` beside it."""
    found, depth = [], 0
    for i, ch in enumerate(text):
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            if ch == "=":
                return None
            match = ORDER_RELATION.match(text, i)
            if match:
                found.append(match)
    return found[0] if len(found) == 1 else None


def relation_claim(text: str) -> tuple[str, bool | None, str, str] | None:
    """`A \\neq B`, `A \\le B`, `A < B` between two sides in numbers: judged on their values (an order
    within 1 % with a decimal written is not judged: it may be rounded). None when `text` is no such relation.

    >>> relation_claim("162 - 108 - 45 - 6 - 3 \\\\neq 0")[1], relation_claim("\\\\sqrt{2} \\\\le 1.5")[1]
    (False, True)
    """
    match = _order_relation(text)
    if match is None:
        return None
    relation = match.group()
    left_text, right_text = text[: match.start()].strip(), text[match.end() :].strip()
    try:
        left = parse_latex(_explicit_products(in_degrees(left_text)))
        right = parse_latex(_explicit_products(in_degrees(right_text)))
    except Exception:
        return text, None, "", "side could not be parsed"
    if not isinstance(left, sympy.Expr) or not isinstance(right, sympy.Expr):
        return text, None, "", "side could not be parsed"
    if left.free_symbols or right.free_symbols:
        return text, None, "", f"{RELATION}: names in a side"
    try:
        a, b = complex(left.evalf(30)), complex(right.evalf(30))
    except (TypeError, ValueError):
        return text, None, "", f"{RELATION}: no value"
    equal = _numerically_equal(left, right)
    if relation in ("\\ne", "\\neq", "≠"):
        return text, not equal, _shown(left), RELATION
    if a.imag or b.imag:
        return text, None, _shown(left), f"{RELATION}: a complex value"
    if _DECIMAL.search(text) and abs(a.real - b.real) <= APPROXIMATION_TOLERANCE * max(abs(a), abs(b)):
        return text, None, _shown(left), f"{RELATION}: close, with a decimal written"
    x, y = a.real, b.real
    if relation in _LESS:
        holds = x < y and not equal
    elif relation in _LESS_EQUAL:
        holds = x < y or equal
    elif relation in _GREATER:
        holds = x > y and not equal
    elif relation in _GREATER_EQUAL:
        holds = x > y or equal
    else:
        return text, None, "", RELATION
    return text, holds, _shown(left), RELATION


def latex_claims(
    items: Sequence[tuple[str, dict[str, str]]],
) -> Iterator[list[tuple[str, bool | None, str, str]]]:
    """Per LaTeX run: a list of (claim, holds, expected, reason) for each pair of adjacent sides."""
    learned: dict[sympy.Symbol, sympy.Expr] = {}  # `x = \sqrt{9}` in an earlier run of this batch
    for text, bindings in items:
        try:
            relation = relation_claim(text) if ORDER_RELATION.search(text) else None
        except Exception as exc:  # a bad relation is unverifiable, never a crash
            relation = (text, None, "", f"{type(exc).__name__}")
        if relation is not None:
            yield [relation]
            continue
        results: list[tuple[str, bool | None, str, str]] = []
        try:
            sides = split_top_level(text)
            approximations = _approximate_pairs(text, len(sides))
            values = {
                **learned,
                **{sympy.Symbol(name): sympy.Rational(value) for name, value in bindings.items()},
            }
            parsed, raw = [], []
            for side in sides:
                try:
                    expr = parse_latex(_explicit_products(in_degrees(side))) if side else None
                    if isinstance(expr, sympy.Expr) and expr.has(sympy.Mod):
                        expr = expr.doit()  # `195 \mod 19` is its remainder, 5
                except Exception:
                    expr = None
                raw.append(expr)
                parsed.append(expr.subs(values) if isinstance(expr, sympy.Expr) else None)
            start = 0
            first = parsed[0]
            if len(sides) > 1 and isinstance(first, sympy.Symbol) and first not in values:
                if isinstance(parsed[1], sympy.Expr) and not parsed[1].free_symbols:
                    learned[first] = parsed[1]
                start = 1
            chained = identity_chain(sides, raw)
            for k in range(start, len(sides) - 1):
                left, right = parsed[k], parsed[k + 1]
                approximate = approximations[k]
                relation = "\\approx" if approximate else "="
                claim = f"{sides[k]} {relation} {sides[k + 1]}"
                branches = None if approximate else plus_minus_branches(sides[k], sides[k + 1])
                if branches is not None:
                    results.append((claim, *branches))
                    continue
                if not isinstance(left, sympy.Expr) or not isinstance(right, sympy.Expr):
                    results.append((claim, None, "", "side could not be parsed"))
                    continue
                holds, expected = _compare(left, right, sides[k + 1])
                reason = "symbolic"
                if holds is None and (left.free_symbols | right.free_symbols) == {_I}:
                    # `150 + 384 + 240i - 240i = 534 + 240i`: with `i` the imaginary unit (whether it is, the
                    # parent decides from the step: `competition.imaginary_said`)
                    holds, expected = _compare(left.subs(_I, sympy.I), right.subs(_I, sympy.I), sides[k + 1])
                    reason = IMAGINARY
                if holds is False and approximate and _within(left, right, APPROXIMATION_TOLERANCE):
                    holds, reason = None, "an approximation, close but not to every digit written"
                raw_left, raw_right = raw[k], raw[k + 1]
                substituted = bool(
                    (getattr(raw[k], "free_symbols", set()) | getattr(raw[k + 1], "free_symbols", set()))
                    & set(values)
                )
                if (
                    holds is not True
                    and k in chained
                    and not approximate
                    and not substituted  # values put in for names keep their own verdict
                    and false_as_identity(raw[k], raw[k + 1])  # type: ignore[arg-type]
                ):
                    reason = f"{IDENTITY_CHAIN_FALSE} (simplification and {_IDENTITY_POINTS} rational points)"
                elif (
                    holds is not True
                    and isinstance(raw_left, sympy.Expr)
                    and isinstance(raw_right, sympy.Expr)
                    and _expansion_pair(sides[k], sides[k + 1], raw_left, raw_right)
                    and false_as_identity(raw_left, raw_right)
                ):
                    reason = f"{IDENTITY_FALSE} (simplification and {_IDENTITY_POINTS} rational points)"
                results.append((claim, holds, expected, reason))
        except Exception as exc:  # a bad run is unverifiable, never a crash
            results.append((text, None, "", f"{type(exc).__name__}"))
        yield results
