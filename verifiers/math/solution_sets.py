"""The SymPy side of equation steps; runs only inside a bounded worker (see `bounded`, `equation_steps`).

An equation step rewrites the relation before it (`2x + 3 = 7` -> `2x = 4` -> `x = 2`; `x^2 = 9` ->
`x = 3 \\text{ or } x = -3`). It is right when the new relation has the same solution set, or one implied by
the old (squaring may add roots, a stated condition may drop some). It is *certainly* wrong only when
neither set holds the other: a point solves the new relation and not the old, and another point solves
the old and not the new (`x^2 - 3x = 1` -> `(x - 1)(x - 3) = 0`; `4a + 6 = 0` -> `4a = -10`). A dropped
root alone (`x^2 = 9` -> `x = 3`) is never called wrong here: a condition the text states elsewhere may
drop it.

One unknown: both solution sets over the reals, exactly (`solveset`: finite sets and intervals, so
inequalities too). Several unknowns: the same test on slices, every unknown but one fixed at a random
rational, so each witness is a real point of one relation that misses the other. Only plain algebra is
read (rational functions of single-letter names, numbers, `\\sqrt` of numbers; in equation steps `\\pi` as
the constant, judged by one unknown's exact solution sets); anything else is unjudged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal

import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication,
    parse_expr,
    rationalize,
    split_symbols_custom,
    standard_transformations,
)
from sympy.solvers.inequalities import solve_rational_inequalities

from prm_factory.verifiers.math.memo import remembered
from prm_factory.verifiers.math.symbolic import (
    IDENTITY_CHAIN_FALSE,
    false_as_identity,
    identity_chain,
    split_top_level,
)

# relation marks, normalised before splitting (`\\le` never matches `\\left`)
_MARKS = (
    (re.compile(r"\\(?:leq?|leqslant)(?![A-Za-z])"), "<="),
    (re.compile(r"\\(?:geq?|geqslant)(?![A-Za-z])"), ">="),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
    (re.compile(r"\\neq?(?![A-Za-z])"), "!="),
)
_OPS = ("<=", ">=", "!=", "<", ">", "=")
# only the commands of plain algebra; a name applied (`f(x)`), a text, a function: not read
_NOT_PLAIN = re.compile(
    r"[A-Za-z]\s*(?:\^\s*(?:\{[^{}]*\}|\S)\s*)?\(|[A-Z]\s*[A-Z]|\d\s*\\[dt]?frac|\\(?!(?:[dt]?frac|sqrt|cdot|times|left|right|leq?|geq?|lt|gt|pm|quad|qquad"
    r"|[,;:! ])(?![A-Za-z]))[A-Za-z]+|[|!_]|\\[{}]|\.\.\.|[\[\]]"
)
_OR = re.compile(r"\\(?:q?quad\s*)?\\?text\{\s*or\s*\}(?:\s*\\q?quad)?|\\lor(?![A-Za-z])|\bor\b")


_PI = re.compile(r"\\pi(?![A-Za-z])")
_PI_APPLIED = re.compile(r"\\pi\s*(?:\(|\\left(?![A-Za-z]))")  # `\\pi(x)`: the prime-counting function?
_SIZED = re.compile(r"\\(?:left|right)(?![A-Za-z])")


SAME_SOLUTIONS = "equation step: same solution set"  # an equation rewritten, its solutions kept


class Unreadable(Exception):
    """A relation this module does not read with certainty."""


_LETTERS = {c: sympy.Symbol(c) for c in "abcdfghjklmnopqrstuvwxyzABCDFGHJKLMNOPQRSTUVWXYZ"}
_TRANSFORMS = (
    *standard_transformations,
    rationalize,  # `4.47` is 447/100: decimals compared exactly
    split_symbols_custom(lambda name: name not in ("sqrt", "pi")),
    implicit_multiplication,
    convert_xor,
)


def _braced(text: str, at: int) -> tuple[str, int]:
    """The group at `at`: `{...}` (its inside) or one character; and where it ends."""
    while at < len(text) and text[at] == " ":
        at += 1
    if at >= len(text):
        raise Unreadable("a command without its argument")
    if text[at] != "{":
        return text[at], at + 1
    depth = 0
    for i in range(at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[at + 1 : i], i + 1
    raise Unreadable("unbalanced braces")


def to_python(text: str) -> str:
    """Plain-algebra LaTeX as a Python expression: `\\frac{a}{b}` -> `((a)/(b))`, `x^{2}` -> `x**(2)`."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("\\frac", i):
            top, i = _braced(text, i + 5)
            bottom, i = _braced(text, i)
            out.append(f"(({to_python(top)})/({to_python(bottom)}))")
        elif text.startswith("\\sqrt", i):
            inner, i = _braced(text, i + 5)
            out.append(f"sqrt({to_python(inner)})")
        elif text[i] == "^":
            power, i = _braced(text, i + 1)
            out.append(f"**({to_python(power)})")
        elif text[i] == "{":
            inner, i = _braced(text, i)
            out.append(f"({to_python(inner)})")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


@remembered  # the same side comes back across a response's steps (memo)
def _parse_side(text: str, *, pi: bool = False) -> sympy.Expr:
    """One side in plain algebra, read by a small reader of its own (letters are single names, juxtaposed
    factors multiply), never by a general LaTeX parser: fast, and only what it reads with certainty.
    `pi`: `\\pi` is the constant (an equation step in a circle's measures: `6531.2 = r \\cdot 160\\pi`)."""
    if pi:
        text = _PI.sub(" (pi) ", text)
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    text = re.sub(r"\\left|\\right|\\[,;!: ]|\\q?quad", " ", text)
    text = re.sub(r"\\(?:cdot|times)(?![A-Za-z])", "*", text).replace("−", "-")
    text = " ".join(text.split())
    if not text:
        raise Unreadable("empty side")
    # a numeral with leading zeros (AIME's `025`) is the number written after them; Python's tokenizer would
    # cut it into `0` and `25`, and the implicit product make it 0
    python = re.sub(r"(?<![\d.])0+(?=\d)", "", to_python(text))
    if re.search(r"[^A-Za-z0-9+\-*/().\s]", python) or re.search(
        r"[A-Za-z]\s*\(", python.replace("sqrt(", "")
    ):
        raise Unreadable("not plain algebra")
    try:
        local = {**_LETTERS, "pi": sympy.pi} if pi else dict(_LETTERS)
        expr = parse_expr(python, local_dict=local, transformations=_TRANSFORMS, evaluate=True)
    except Exception as exc:
        raise Unreadable(type(exc).__name__) from exc
    if not isinstance(expr, sympy.Expr):
        raise Unreadable("not an expression")
    for name in expr.free_symbols:
        if str(name) not in _LETTERS:
            raise Unreadable(f"name {name}")
    if expr.has(sympy.I, sympy.E, sympy.oo, sympy.zoo, sympy.nan):
        raise Unreadable("not a real value")
    return expr


def _relation(text: str, *, pi: bool = False) -> list[tuple[sympy.Expr, str, sympy.Expr]]:
    """`lhs rel rhs` of one piece with exactly one relation at top level, or the two relations of a double
    inequality (`-2 < m < 19`: both hold)."""
    for mark, op in _MARKS:
        text = mark.sub(f" {op} ", text)
    depth, cuts = 0, []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is not None:
                cuts.append((i, op))
                i += len(op)
                continue
        i += 1
    if len(cuts) == 2 and _same_direction(cuts[0][1], cuts[1][1]):
        (at, op), (at2, op2) = cuts
        middle = _parse_side(text[at + len(op) : at2], pi=pi)
        return [
            (_parse_side(text[:at], pi=pi), op, middle),
            (middle, op2, _parse_side(text[at2 + len(op2) :], pi=pi)),
        ]
    if len(cuts) != 1:
        raise Unreadable("not one relation")
    at, op = cuts[0]
    return [(_parse_side(text[:at], pi=pi), op, _parse_side(text[at + len(op) :], pi=pi))]


def _same_direction(first: str, second: str) -> bool:
    """`a < x \\le b`, `a > x > b`: a double inequality, both of its marks pointing one way."""
    return {first, second} <= {"<", "<="} or {first, second} <= {">", ">="}


def pieces(statement: str, *, pi: bool = False) -> list[str]:
    """The alternatives of a solution-set statement: `x = 3 \\text{ or } x = -3`, `x = \\pm 3`."""
    if pi and _PI_APPLIED.search(statement):
        raise Unreadable("pi applied like a function")
    checked = _PI.sub(" 1 ", statement) if pi else statement  # `\\pi` read as the constant (`_parse_side`)
    checked = _SIZED.sub(" ", checked)  # `\\left(`, `\\right)`: brackets, never a name applied
    if _NOT_PLAIN.search(_OR.sub(" ", checked).replace("\\pm", "+")):
        raise Unreadable("notation beyond plain algebra")
    out: list[str] = []
    for piece in _OR.split(statement):
        piece = piece.strip().strip(",").strip()
        if not piece:
            raise Unreadable("an empty alternative")
        count = piece.count("\\pm")
        if count > 1 or "\\mp" in piece:
            raise Unreadable("several plus-minus signs")
        if count == 1:
            out += [piece.replace("\\pm", "+"), piece.replace("\\pm", "-")]
        else:
            out.append(piece)
    return out


def read_statement(statement: str, *, pi: bool = False) -> list[tuple[sympy.Expr, str, sympy.Expr]]:
    """The relations of a statement: alternatives for a solution set given with "or" or `\\pm`, or the two
    inequalities of a double inequality, which hold together (only alone: several relations of a
    statement that are not all equations are read as both holding, see `solution_set`)."""
    found = [_relation(piece, pi=pi) for piece in pieces(statement, pi=pi)]
    relations = [relation for parts in found for relation in parts]
    if any(op == "!=" for _, op, _ in relations):
        raise Unreadable("a relation that states no solution")
    if len(relations) > 1 and any(op != "=" for _, op, _ in relations) and len(found) > 1:
        raise Unreadable("alternatives of inequalities")
    return relations


def _solved_form(left: sympy.Expr, op: str, right: sympy.Expr) -> bool:
    """`x = 5`, `5 = x`: a value, not an equation."""
    return op == "=" and (
        (isinstance(left, sympy.Symbol) and not right.free_symbols)
        or (isinstance(right, sympy.Symbol) and not left.free_symbols)
    )


def _bound_form(left: sympy.Expr, op: str, right: sympy.Expr) -> bool:
    """`m \\le 18`, `-2 < m`: a bound on one name, not an inequality still to solve."""
    return op != "=" and (
        (isinstance(left, sympy.Symbol) and not right.free_symbols)
        or (isinstance(right, sympy.Symbol) and not left.free_symbols)
    )


def _names(relations: Sequence[tuple[sympy.Expr, str, sympy.Expr]]) -> set[sympy.Symbol]:
    return set().union(*(left.free_symbols | right.free_symbols for left, _, right in relations))


def _as_relational(left: sympy.Expr, op: str, right: sympy.Expr) -> sympy.Basic:
    return {
        "=": sympy.Eq,
        "<": sympy.Lt,
        ">": sympy.Gt,
        "<=": sympy.Le,
        ">=": sympy.Ge,
    }[op](left, right, evaluate=False)


def solution_set(
    relations: Sequence[tuple[sympy.Expr, str, sympy.Expr]],
    name: sympy.Symbol,
    point: dict,
    domain: sympy.Set = sympy.S.Reals,
) -> sympy.Set:
    """The solutions in `name` (in `domain`) of the alternatives, every other name fixed by `point`; the
    two inequalities of a double inequality (several relations, none an equation) hold together."""
    if len(relations) > 1 and all(op != "=" for _, op, _ in relations):
        both: sympy.Set = domain
        for relation in relations:
            both = sympy.Intersection(both, solution_set([relation], name, point, domain))
        return both
    union: sympy.Set = sympy.S.EmptySet
    for left, op, right in relations:
        left, right = left.subs(point), right.subs(point)
        difference = sympy.together(left - right)
        if difference.free_symbols - {name}:
            raise Unreadable("a name left free")
        if not difference.is_rational_function(name):
            raise Unreadable("not a rational function")
        if op != "=" and domain is sympy.S.Reals:
            union = sympy.Union(union, _inequality_set(difference, op, name))
            continue
        found = sympy.solveset(_as_relational(left, op, right), name, domain)
        if not isinstance(found, (sympy.FiniteSet, sympy.Interval, sympy.Union, type(sympy.S.EmptySet))):
            if found != domain:
                raise Unreadable(f"solution set {type(found).__name__}")
        union = sympy.Union(union, found)
    return union


def _inequality_set(difference: sympy.Expr, op: str, name: sympy.Symbol) -> sympy.Set:
    """`difference op 0` over the reals, for a rational function: by the signs between its real zeros
    and poles (SymPy's rational-inequality solver, far faster than `solveset`)."""
    numerator, denominator = sympy.cancel(difference).as_numer_denom()
    try:
        fraction = (sympy.Poly(numerator, name), sympy.Poly(denominator, name))
    except sympy.PolynomialError as exc:
        raise Unreadable("not a rational function") from exc
    return solve_rational_inequalities([[(fraction, op)]])


def _nonempty(found: sympy.Set) -> bool:
    """Decidedly non-empty (a set SymPy cannot decide counts as empty: no witness)."""
    if isinstance(found, sympy.FiniteSet):
        return len(found) > 0
    return found.is_empty is False


def judge_step(before: str, after: str, rewrite: bool = False) -> tuple[bool | None, str]:
    """Does the relation `after` follow from `before`? False only when neither solution set holds the
    other; or, for a rewrite said in words (`rewrite`: simplifying, rearranging, factoring) of one unknown
    that is not yet a solved value, when the sets differ at all (`m^2 - 4(2)(8) > 0` -> `m^2 - 32 > 0`)."""
    try:
        old, new = read_statement(before, pi=True), read_statement(after, pi=True)
    except Unreadable as exc:
        return None, f"not read: {exc}"
    old_names, new_names = _names(old), _names(new)
    if not new_names or not old_names:
        return None, "no unknown"
    if not new_names <= old_names or (len(old_names) > 1 and new_names != old_names):
        return None, "other unknowns"
    if len(old_names) > 1 and not rewrite:
        if _collected_to_another_value(before, old, new):
            return False, "equation step: the same expression collected to another value"
        return None, "several unknowns, and no rewrite said"
    # a value or a bound (`m \\le 18`): rounding to whole numbers may narrow a bound, never a rewrite
    solved = all(_solved_form(left, op, right) or _bound_form(left, op, right) for left, op, right in new)
    if all(_solved_form(left, op, right) for left, op, right in old):
        return None, "a value is used, not rewritten (a new value of the name is another claim)"
    if len(old) == 2 and all(_bound_form(left, op, right) for left, op, right in old):
        # `2 \\le x \\le 3` "becomes" `1 \\le x \\le \\frac{3}{2}` under a compression: an interval
        # given is a set that a step may map, not an inequality to solve
        return None, "an interval of a name is given, not solved (a step may map it)"
    strict = rewrite and len(old_names) == 1 and not solved and not _common_factor(old)
    names = sorted(old_names, key=str)
    verdict = _decide(old, new, names, strict)
    if verdict[0] is False and len(names) == 1 and rounded_alike(before, after, names[0], strict=strict):
        return None, ROUNDED_ALIKE
    return verdict


def _decide(
    old: Sequence[tuple[sympy.Expr, str, sympy.Expr]],
    new: Sequence[tuple[sympy.Expr, str, sympy.Expr]],
    names: list[sympy.Symbol],
    strict: bool,
) -> tuple[bool | None, str]:
    """The verdict on the exact solution sets (decimals read as exact values)."""
    # with `\\pi` the coefficients are no rationals: only one unknown's solution sets, exactly
    constant_pi = any(side.has(sympy.pi) for left, _, right in [*old, *new] for side in (left, right))
    if constant_pi and any(op != "=" for _, op, _ in [*old, *new]):
        return None, "an inequality with pi"
    try:
        if all(op == "=" for _, op, _ in [*old, *new]) and not constant_pi:
            polys = _polynomial(old, names), _polynomial(new, names)
            if polys[0] is not None and polys[1] is not None:
                return _compare_polynomials(*polys, strict)
        if len(names) > 1:
            return None, "several unknowns with an inequality or a denominator"
        return _compare_sets(old, new, names[0], strict)
    except Unreadable as exc:
        return None, f"not read: {exc}"


ROUNDED_ALIKE = "equation step: the same solutions to the places its decimals are written"
# a decimal of two places or more (`0.062`, `36.70`), possibly rounded, as `equation_steps` takes them (one
# place, `2.1`, is read as exact data); not part of a longer number or a version-like run (`1.2.3`)
_DECIMAL = re.compile(r"(?<![\d.])\d+\.\d{2,}(?![\d.])")
_MAX_DECIMALS = 8  # decimals in one pair whose rounding is followed (two readings each)


def _nudged(texts: Sequence[str], which: int, sign: int) -> list[str]:
    """The texts with their `which`-th decimal (counted across all of them) moved by half a unit of its
    last place (`0.062` -> `0.0625` or `0.0615`): the ends of the values that round to it."""
    out, seen = [], 0
    for text in texts:
        pieces, last = [], 0
        for match in _DECIMAL.finditer(text):
            if seen == which:
                places = len(match.group().split(".")[1])
                moved = Decimal(match.group()) + sign * Decimal(5).scaleb(-(places + 1))
                pieces += [text[last : match.start()], format(moved, "f")]
                last = match.end()
            seen += 1
        out.append("".join(pieces) + text[last:])
    return out


def _real_roots(statement: str, name: sympy.Symbol) -> list[float]:
    """The real zeros of a statement's equations in one unknown (the numerators', as `_polynomial` reads
    them); Unreadable where it is no such statement."""
    relations = read_statement(statement, pi=True)
    if any(op != "=" for _, op, _ in relations) or _names(relations) != {name}:
        raise Unreadable("not equations in the one unknown")
    return [float(root) for root in _polynomial(relations, [name]).real_roots()]


def _apart(these: Sequence[float], those: Sequence[float]) -> float:
    """How far the farthest of `these` lies from the nearest of `those`."""
    return max((min(abs(a - b) for b in those) for a in these), default=0.0)


def rounded_alike(before: str, after: str, name: sympy.Symbol, *, strict: bool = False) -> bool:
    """Are two equations in one unknown the same to the precision of the decimals written in them? Model
    text rounds as it goes (`\\frac{1.362}{2.18} \\times 10^{-1} = \\frac{1}{n^2}` ->
    `0.62 \\times 10^{-1} = \\frac{1}{n^2}`; `t^2 = \\frac{2 \\cdot 180}{9.81}` -> `t^2 = 36.70`), and a
    decimal of two places or more stands for any value that rounds to it. So a step whose new solutions each
    lie within what rounding can move them (each decimal moved by half a unit of its last place, one at a
    time, the moves of the solutions added) of an old solution is not certainly wrong; with `strict`, the
    old solutions must lie as close to new ones too. False where there is no decimal, no real solution, or
    anything unread: the verdict stands.

    >>> n = sympy.Symbol("n")
    >>> rounded_alike("n^2 = \\\\frac{1}{0.062}", "n^2 = 16", n)
    True
    >>> rounded_alike("x^2 + x^2 = 5.999", "x^2 = 5.999", sympy.Symbol("x"))
    False
    >>> rounded_alike("6.3 = 3h + 2.1 - 2.1h", "6.3 = h + 2.1", sympy.Symbol("h"))  # one place: exact
    False
    """
    texts = [before, after]
    count = sum(len(_DECIMAL.findall(text)) for text in texts)
    if count == 0 or count > _MAX_DECIMALS:
        return False
    try:
        old, new = _real_roots(before, name), _real_roots(after, name)
        if not old or not new:
            return False
        reach = 0.0
        for which in range(count):
            moves = []
            for sign in (1, -1):
                moved_before, moved_after = _nudged(texts, which, sign)
                moved_old, moved_new = _real_roots(moved_before, name), _real_roots(moved_after, name)
                if not moved_old or not moved_new:
                    return False
                moves.append(max(_apart(old, moved_old), _apart(moved_old, old)))
                moves.append(max(_apart(new, moved_new), _apart(moved_new, new)))
            reach += max(moves)
    except Exception:  # unread, or a reading SymPy cannot finish: the verdict stands
        return False
    slack = reach + 1e-12 * max(1.0, *(abs(value) for value in [*old, *new]))
    return _apart(new, old) <= slack and (not strict or _apart(old, new) <= slack)


# a number standing alone as a term (`+ 25`, `= 13`): constants the step may collect
_CONSTANT_TERM = re.compile(r"(?:^|[-+=])\s*\d+(?:\.\d+)?\s*(?=[-+=]|$)")


def _collected_to_another_value(
    before: str,
    old: Sequence[tuple[sympy.Expr, str, sympy.Expr]],
    new: Sequence[tuple[sympy.Expr, str, sympy.Expr]],
) -> bool:
    """`x^2 - 10x + 25 + y^2 - 14y + 49 = 13` -> `x^2 + y^2 - 10x - 14y + 74 = 0`: an equation whose
    constants are still to collect, followed by one with the same terms in the unknowns (up to a factor)
    but another constant. No point solves both, so the second cannot come from the first; and since the
    first has terms to collect, it is no second equation of a system (two parallel lines, two circles about
    one centre are written collected)."""
    if len(old) != 1 or len(new) != 1 or old[0][1] != "=" or new[0][1] != "=":
        return False
    if len(_CONSTANT_TERM.findall(before.replace(" ", ""))) < 2:
        return False
    try:
        parts = []
        for left, _, right in (old[0], new[0]):
            top, bottom = sympy.cancel(sympy.together(left - right)).as_numer_denom()
            if bottom.free_symbols:
                return False
            top = sympy.expand(top / bottom)
            constant = top.as_coeff_add()[0]
            parts.append((top - constant, constant))
        (terms, constant), (new_terms, new_constant) = parts
        if terms == 0 or new_terms == 0:
            return False
        ratio = sympy.cancel(new_terms / terms)
        if ratio.free_symbols or ratio == 0:
            return False
        return sympy.simplify(new_constant - ratio * constant) != 0
    except Exception:
        return False


def _common_factor(relations: Sequence[tuple[sympy.Expr, str, sympy.Expr]]) -> bool:
    """Do both sides of one equation share a factor in the unknown (`\\frac{4}{3}\\pi r^3 = 4\\pi r^2`)? Then
    dividing it out ("divide both sides by r^2") drops its zeros, which the text may have excluded: a
    narrower set is no certain error there. True when it cannot tell."""
    if len(relations) != 1 or relations[0][1] != "=":
        return False
    left, _, right = relations[0]
    try:
        top_left, _ = sympy.together(left).as_numer_denom()
        top_right, _ = sympy.together(right).as_numer_denom()
        if top_left == 0 or top_right == 0:
            return False
        return bool(sympy.gcd(top_left, top_right).free_symbols)
    except Exception:
        return True


def _polynomial(relations: Sequence[tuple[sympy.Expr, str, sympy.Expr]], names: list) -> sympy.Poly | None:
    """The polynomial whose zeros are the alternatives' solutions (each relation's numerator, in lowest
    terms)."""
    product = sympy.Integer(1)
    for left, _, right in relations:
        numerator, _ = sympy.cancel(sympy.together(left - right)).as_numer_denom()
        product *= numerator  # coprime to its denominator: no zero of it is a pole
    try:
        poly = sympy.Poly(sympy.expand(product), *names, domain="QQ")
    except (sympy.PolynomialError, sympy.CoercionFailed) as exc:
        raise Unreadable("not a polynomial with rational coefficients") from exc
    if poly.total_degree() > 12:
        raise Unreadable("degree too high")
    return poly


def _real_zero(factor: sympy.Poly) -> bool:
    """Has this irreducible factor a real zero? (One unknown: Sturm's count; several: unknown, False.)"""
    return len(factor.gens) == 1 and factor.count_roots() > 0


def _compare_polynomials(old: sympy.Poly, new: sympy.Poly, strict: bool) -> tuple[bool | None, str]:
    """Irreducible factors over the rationals: a factor of one polynomial that does not divide the other
    has zeros (complex ones at least) that solve the one relation and not the other; two irreducible
    factors share no zero unless they are the same factor."""
    if old.is_zero or new.is_zero:
        return None, "an identity"
    old_factors = [f for f, _ in old.factor_list()[1] if f.total_degree() > 0]
    new_factors = [f for f, _ in new.factor_list()[1] if f.total_degree() > 0]
    gained = [f for f in new_factors if not old.rem(f).is_zero]
    lost = [f for f in old_factors if not new.rem(f).is_zero]
    univariate = len(old.gens) == 1
    if univariate:
        gained, lost = [f for f in gained if _real_zero(f)], [f for f in lost if _real_zero(f)]
        if not gained and not lost:
            return True, SAME_SOLUTIONS
        if not lost:
            return True, "equation step: implied solution set"
    where = "" if univariate else " (complex solutions)"
    if gained and lost:
        return False, f"equation step: neither solution set holds the other{where}"
    if strict and univariate:
        return False, "equation step: a rewrite that changes the solution set"
    return None, "equation step: not decided"


def _compare_sets(old: list, new: list, name: sympy.Symbol, strict: bool) -> tuple[bool | None, str]:
    """One unknown, with inequalities or denominators: the real solution sets, exactly."""
    old_set, new_set = solution_set(old, name, {}), solution_set(new, name, {})
    gained, lost = sympy.Complement(new_set, old_set), sympy.Complement(old_set, new_set)
    extra_new, extra_old = _nonempty(gained), _nonempty(lost)
    if (extra_new and extra_old) or (strict and (extra_new or extra_old)):
        inequality = any(op != "=" for _, op, _ in [*old, *new])
        if inequality and _same_on_a_half(old_set, new_set):
            return None, "equation step: may rest on a sign of the unknown the text states"
    if extra_new and extra_old:
        return False, "equation step: neither solution set holds the other"
    if strict and (extra_new or extra_old):
        return False, "equation step: a rewrite that changes the solution set"
    if lost.is_empty is True:
        same = gained.is_empty is True
        return True, SAME_SOLUTIONS if same else "equation step: implied solution set"
    return None, "equation step: not decided"


def _same_on_a_half(old_set: sympy.Set, new_set: sympy.Set) -> bool:
    """Do the two sets agree for every positive value of the unknown, or for every negative one? An
    inequality multiplied or divided by the unknown keeps its set only on the side where the text says the
    unknown lies (`r^2 < 10` -> `r/10 < 1/r` "dividing by 10r", with `r > 0`): no certain error there.
    Only a half that holds solutions counts (two empty halves agree on nothing). True when it cannot tell."""
    for half in (sympy.Interval.open(0, sympy.oo), sympy.Interval.open(-sympy.oo, 0)):
        try:
            old_half, new_half = sympy.Intersection(old_set, half), sympy.Intersection(new_set, half)
            gained, lost = sympy.Complement(new_half, old_half), sympy.Complement(old_half, new_half)
            decided = (old_half.is_empty, gained.is_empty, lost.is_empty)
        except Exception:
            return True
        if None in decided or decided == (False, True, True):
            return True
    return False


def equation_steps(items: Sequence[tuple[str, str, bool]]) -> Iterator[tuple[bool | None, str]]:
    """Per (before, after, rewrite) pair of relations: (holds, reason)."""
    for before, after, rewrite in items:
        try:
            yield judge_step(before, after, rewrite)
        except Exception as exc:  # a bad pair is unjudged, never a crash
            yield None, f"not read: {type(exc).__name__}"


def identity_chains(texts: Sequence[str]) -> Iterator[list[tuple[str, str]]]:
    """Per chain of `=`-joined expressions: the (claim, reason) of each `=` between two expressions in the
    same names that is false as an identity (both SymPy's simplification and rational points say so)."""
    for text in texts:
        failed: list[tuple[str, str]] = []
        try:
            sides = split_top_level(text, ("=",))
            exprs: list[object] = []
            for side in sides:
                try:
                    exprs.append(_parse_side(side))
                except Unreadable:
                    exprs.append(None)
            for k in sorted(identity_chain(sides, exprs)):
                left, right = exprs[k], exprs[k + 1]
                assert isinstance(left, sympy.Expr) and isinstance(right, sympy.Expr)
                if false_as_identity(left, right):
                    failed.append(
                        (
                            f"{sides[k]} = {sides[k + 1]}",
                            f"{IDENTITY_CHAIN_FALSE} (simplification and points)",
                        )
                    )
        except Exception:
            failed = []
        yield failed


def equal_values(items: Sequence[tuple[str, str]]) -> Iterator[bool | None]:
    """Per (side, side) in written numbers (plain algebra, no names): True where both are read and equal,
    False where they differ, None where either is not read (a name, notation the reader does not read)."""
    for first, second in items:
        try:
            one, other = _parse_side(first), _parse_side(second)
            if one.free_symbols or other.free_symbols:
                yield None
            else:
                yield bool(sympy.simplify(one - other) == 0)
        except Exception:  # unread: the caller keeps its verdict
            yield None


def identity_at_values(items: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> Iterator[bool | None]:
    """Per (left, right, pins) of a relation false as an identity and the chain's `expression = number`
    statements in its names: True where the relation holds at every value the pins give (an equation the
    chain solves, not a false identity); False where it fails at one of them; None where no pin (or the
    relation) is read."""
    for left, right, pins in items:
        try:
            yield _identity_at_values(left, right, pins)
        except Exception:  # unread: the caller keeps what the identity check said
            yield None


def _identity_at_values(left: str, right: str, pins: Sequence[tuple[str, str]]) -> bool | None:
    try:
        difference = _parse_side(left) - _parse_side(right)
    except Unreadable:
        return None
    read = False
    for expression, number in pins:
        try:
            pinned, value = _parse_side(expression), _parse_side(number)
        except Unreadable:
            continue
        if not pinned.free_symbols or value.free_symbols:
            continue
        for solution in _real_solutions(pinned - value):
            rest = sympy.cancel(
                sympy.together(difference.subs(solution))
            )  # a rational function's names cancel
            if rest.free_symbols:
                continue  # names left open: not decided by this value
            try:
                number_left = complex(rest.evalf(30))
            except (TypeError, ValueError):
                continue  # not defined there (a zero denominator)
            if number_left != number_left:  # nan
                continue
            if abs(number_left) >= 1e-9:
                return False  # fails at a value the chain finds: false there too
            read = True
    return True if read else None


def _real_solutions(expression: sympy.Expr) -> list[dict[sympy.Symbol, sympy.Expr]]:
    """Real values of `expression = 0` for one of its names: numeric roots where it is one name's rational
    function (no radicals to simplify), else SymPy's solution for its first name."""
    names = sorted(expression.free_symbols, key=str)
    if len(names) == 1:
        (name,) = names
        numerator, denominator = sympy.fraction(sympy.together(expression))
        if numerator.is_polynomial(name) and denominator.is_polynomial(name):
            roots = sympy.Poly(numerator, name).nroots(n=30) if sympy.degree(numerator, name) > 0 else []
            found = []
            for root in roots:
                if abs(sympy.im(root)) > 1e-12:
                    continue
                real = sympy.re(root)
                if abs(complex(denominator.subs(name, real).evalf(30))) < 1e-12:
                    continue
                found.append({name: real})
            return found
    return [
        s
        for s in sympy.solve(sympy.Eq(expression, 0), names[0], dict=True)
        if all(v.is_real is not False for v in s.values())
    ]
