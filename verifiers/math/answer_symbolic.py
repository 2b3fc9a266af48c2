"""The worker side of final-answer equivalence: math-verify's `parse` + `verify`, run only inside a bounded
worker (see `bounded`), one result per pair so the parent can put a deadline on each.

Fail closed, and say which failure it was (the parent maps them to outcome labels):
- `correct` / `incorrect`: math-verify compared the two parsed answers;
- `unparsed`: one side could not be read, or SymPy raised while comparing (a property of the answer);
- `error`: the worker cannot do its job at all: math-verify or its LaTeX parser does not import or does
  not parse a known answer (a missing `antlr4` runtime makes every LaTeX answer parse to nothing, which
  would otherwise pass for `unparsed`). Checked once per worker process, before the first pair.

math-verify's own `signal.alarm` timeouts are switched off (`None`): the worker is killed instead.
Imports are lazy so a broken install is reported as a result, not as a dead worker.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

logging.getLogger("math_verify").setLevel(logging.ERROR)

# plain-text maths as PRM800K writes it (`12*pi`, `2 * 5! * 5!`): the LaTeX grammar reads `pi` as the
# product p*i and math-verify's expression reader stops at `*`, so both become LaTeX first
_PLAIN_WORDS = re.compile(r"\*|\bpi\b|\bsqrt\(")
_PLAIN_SQRT = re.compile(r"\bsqrt\(([^()]*)\)")
_CHECK_LATEX = r"\frac{1}{2}"


class DependencyError(RuntimeError):
    """math-verify or its LaTeX parser cannot do its job in this interpreter."""


@cache
def _library() -> tuple[Callable[..., list[Any]], Callable[..., bool], list[Any], list[Any]]:
    """math-verify's parse and verify with our configs; raises DependencyError when it cannot work."""
    try:
        import sympy
        from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
    except Exception as exc:  # ImportError, or a broken dependency raising at import time
        raise DependencyError(f"math-verify cannot be imported: {type(exc).__name__}: {exc}") from exc
    latex, expr = [LatexExtractionConfig(boxed_match_priority=0)], [ExprExtractionConfig()]
    try:
        parsed = parse(f"${_CHECK_LATEX}$", extraction_config=latex, parsing_timeout=None)
    except Exception as exc:
        raise DependencyError(f"math-verify's LaTeX parser failed: {type(exc).__name__}: {exc}") from exc
    if not parsed or parsed[0] != sympy.Rational(1, 2):
        raise DependencyError(
            f"math-verify's LaTeX parser read ${_CHECK_LATEX}$ as {parsed!r}, not 1/2 "
            "(is the antlr4-python3-runtime that latex2sympy2_extended needs installed?)"
        )
    return parse, verify, latex, expr


def _latex_of_plain(text: str) -> str:
    """PRM800K-style plain maths as LaTeX: `12*pi` -> `12\\cdot \\pi`, `5 sqrt(2)` -> `5 \\sqrt{2}`;
    LaTeX is left alone."""
    if "\\" in text or not _PLAIN_WORDS.search(text):
        return text
    text = _PLAIN_SQRT.sub(lambda m: f"\\sqrt{{{m.group(1)}}}", text)
    return re.sub(r"\bpi\b", r"\\pi ", text).replace("*", r" \cdot ")


def _parse_answer(text: str) -> list[Any]:
    parse, _, latex, expr = _library()
    text = _latex_of_plain(text)
    wrapped = text if ("$" in text or "\\(" in text or "\\[" in text) else f"${text}$"
    for source, config in ((wrapped, latex), (text, expr)):
        parsed = parse(source, extraction_config=config, parsing_timeout=None, fallback_mode="no_fallback")
        if parsed:
            return parsed
    return []


def _real_set(value: Any) -> Any | None:
    """Inequalities in one variable joined by "or" (`x<-2 \\text{ or } x>3`, which math-verify reads as
    a set of relations) as the union of intervals they describe; an interval or union as itself; else
    None. math-verify compares one inequality or an `and` chain with an interval, not an `or`."""
    import sympy

    if isinstance(value, sympy.Interval | sympy.Union):
        return value
    if not isinstance(value, sympy.FiniteSet) or len(value) < 2:
        return None
    relations = list(value)
    if not all(
        isinstance(r, sympy.core.relational.Relational) and not isinstance(r, sympy.Eq | sympy.Ne)
        for r in relations
    ):
        return None
    symbols = set().union(*(r.free_symbols for r in relations))
    if len(symbols) != 1:
        return None
    return sympy.Union(*(r.as_set() for r in relations))


def _same_real_set(target: Any, gold: Any) -> bool:
    """Both sides the same set of reals, at least one of them written as inequalities joined by "or"."""
    import sympy

    if not any(isinstance(v, sympy.FiniteSet) for v in (target, gold)):
        return False
    left, right = _real_set(target), _real_set(gold)
    return left is not None and right is not None and bool(left == right)


def answer_equivalence(pairs: Sequence[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(label, detail) per (predicted, reference) pair; label is correct | incorrect | unparsed | error."""
    try:
        _, verify, _, _ = _library()
    except DependencyError as exc:
        for _ in pairs:
            yield "error", str(exc)
        return
    for predicted, reference in pairs:
        try:
            gold = _parse_answer(reference)
            if not gold:
                yield "unparsed", "reference could not be parsed"
                continue
            target = _parse_answer(predicted)
            if not target:
                yield "unparsed", "answer could not be parsed"
                continue
            same = verify(gold, target, timeout_seconds=None, allow_set_relation_comp=True)
            if not same and _same_real_set(target[0], gold[0]):
                yield "correct", f"the same set of reals: {target[-1]!s} vs {gold[-1]!s}"
                continue
            yield ("correct" if same else "incorrect"), f"math-verify: {target[-1]!s} vs {gold[-1]!s}"
        except Exception as exc:  # fail closed: never a false `correct`
            yield "unparsed", f"{type(exc).__name__} while comparing"


def dependency_check(answers: Sequence[str]) -> Iterator[str]:
    """One line per LaTeX answer: empty when math-verify imports and parses it, else the problem."""
    for answer in answers:
        try:
            _library()
            parsed = _parse_answer(answer)
            yield "" if parsed else f"math-verify parsed nothing from {answer!r}"
        except DependencyError as exc:
            yield str(exc)
        except Exception as exc:
            yield f"{type(exc).__name__} while parsing {answer!r}: {exc}"
