"""The SymPy side of system results (see `systems`); runs only inside a bounded worker.

The equations before a result are read back from the latest; the shortest such run that fixes its unknowns
(finitely many solutions, every one a number) and holds the result's unknowns is the system. A result that
holds at none of its solutions is false; one that holds at some, or a system that is not read, solved or
finite, is no verdict. Solutions are exact (SymPy's `solve` on polynomials of degree two or less in three
unknowns at most: a rational equation contributes its numerator, whose zeros hold every solution), and a
result is called off a solution only when its value there is clearly not zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sympy

from prm_factory.verifiers.math.memo import remembered
from prm_factory.verifiers.math.solution_sets import Unreadable, read_statement

_MAX_UNKNOWNS = 3
_MAX_DEGREE = 2
_OFF = 1e-9  # |value| at a solution above this (relative to the result's scale): clearly not zero


@remembered  # each result re-reads the equations before it (memo)
def _equation(text: str) -> sympy.Expr:
    """`lhs = rhs` as the numerator of `lhs - rhs` (zero at every solution)."""
    relations = read_statement(text)
    if len(relations) != 1 or relations[0][1] != "=":
        raise Unreadable("not one equation")
    left, _, right = relations[0]
    numerator, _ = sympy.cancel(sympy.together(left - right)).as_numer_denom()
    return sympy.expand(numerator)


def _finite_solutions(equations: Sequence[sympy.Expr], unknowns: list[sympy.Symbol]) -> list[dict] | None:
    """Every solution of the system, each a number per unknown; None when not finite or not read."""
    for equation in equations:
        if not equation.is_polynomial(*unknowns):
            return None
        if sympy.Poly(equation, *unknowns).total_degree() > _MAX_DEGREE:
            return None
    # simplify=False: a solution is judged by its value, and `solve`'s simplification of every solution was
    # a quarter of this module's time (618 systems of ProcessBench `math` and the model-written dev
    # chains: the same verdicts and shown solutions either way)
    found = sympy.solve(list(equations), unknowns, dict=True, simplify=False)
    if not found:
        raise Unreadable("no solution: not one system (alternatives, a retraction?)")
    for solution in found:
        if set(solution) != set(unknowns) or any(value.free_symbols for value in solution.values()):
            return None
    return found


def _value(equation: sympy.Expr) -> bool:
    """`x - 5` (from `x = 5`): a value given to one name."""
    free = list(equation.free_symbols)
    return len(free) == 1 and equation.is_polynomial(*free) and sympy.Poly(equation, *free).degree() == 1


def _off(value: sympy.Expr, scale: float) -> bool:
    number = complex(sympy.N(value, 30))
    return abs(number) > _OFF * max(1.0, scale)


def judge_result(claim: str, system: Sequence[str]) -> tuple[bool | None, str]:
    """Does `claim` hold at some solution of the shortest latest run of `system` that fixes its unknowns?
    (False, the solutions) when it holds at none."""
    try:
        result = _equation(claim)
    except Unreadable as exc:
        return None, f"not read: {exc}"
    wanted = result.free_symbols
    if not wanted:
        return None, "no unknown"
    equations: list[sympy.Expr] = []
    solving = False  # an equation still to solve among them, not only values given
    for text in system:
        try:
            equations.append(_equation(text))
        except Unreadable:
            continue  # an equation not read leaves fewer equations, never a wrong one
        solving = solving or not _value(equations[-1])
        if not solving:
            continue
        unknowns = sorted(set().union(*(e.free_symbols for e in equations)), key=str)
        if len(unknowns) > _MAX_UNKNOWNS:
            return None, "too many unknowns"
        if not wanted <= set(unknowns) or len(equations) < len(unknowns):
            continue
        try:
            solutions = _finite_solutions(equations, unknowns)
        except Unreadable as exc:
            return None, str(exc)
        if solutions is None:
            continue
        scale = max(float(abs(c)) for c in sympy.Poly(result, *sorted(wanted, key=str)).coeffs())
        if all(_off(result.subs(solution), scale) for solution in solutions):
            shown = "; ".join(
                ", ".join(f"{k} = {sympy.sstr(v)}" for k, v in sorted(s.items(), key=lambda kv: str(kv[0])))
                for s in solutions
            )
            return False, shown
        return True, "holds at a solution"
    return None, "no finite system"


def system_results(items: Sequence[tuple[str, Sequence[str]]]) -> Iterator[tuple[bool | None, str]]:
    """Per (result, equations latest first): (holds, the solutions or a reason)."""
    for claim, system in items:
        try:
            yield judge_result(claim, system)
        except Unreadable as exc:
            yield None, f"not read: {exc}"
        except Exception as exc:  # a bad item is unjudged, never a crash
            yield None, f"not read: {type(exc).__name__}"
