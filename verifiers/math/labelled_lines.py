"""Labelled lines that carry one quantity's working across steps: `Total cost = 27000 + 43200 - 1200`,
then `Total cost = 69200 - 1200`.

Stronger models often write a quantity's working one line per step, repeating its label. The label stands
for the value the previous line left open, so the next line claims that value; an arithmetic slip between
two such lines (27000 + 43200 written as 69200) is a false claim that no single step shows.

Only where the reading is safe: the earlier line ends in an expression it does not work out (a line that
ends in a number may give the label to the next item: `Cost = 15`, `Cost = 2 * 4`), the later line has the
same label and starts with a number or shares a number with that expression, both sides are plain
arithmetic (no words, no letters), and only steps without math stand between them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from prm_factory.verifiers.math.arithmetic import (
    NotEvaluable,
    Token,
    bare_literal,
    evaluate,
    lex,
    literals,
    parse_side,
)
from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.numbers import format_value, match_rule

_ANSWER_LINE = re.compile(r"^\s*(?:#+|final answer\s*:?\s*#*)\s*(\$?-?[\d,]*\.?\d+)\s*$", re.IGNORECASE)
_LABELLED = re.compile(r"^\s*(?:\d+[.)]\s+|[-*•]\s+)?([A-Za-z][A-Za-z_' ]{0,48}?)\s*=\s*(\S.*?)\s*$")
_HAS_DIGIT = re.compile(r"\d")
_ANSWER_LABEL = "the answer"  # an unlabelled line of open arithmetic, and the answer line after it


@dataclass(frozen=True)
class _Line:
    label: str
    first: tuple  # the first side after the label, parsed
    last: tuple  # the last side
    first_value: Fraction
    last_value: Fraction
    open_literals: tuple[Fraction, ...]  # the numbers written on the last side


def _sides(text: str) -> list[list[Token]] | None:
    sides: list[list[Token]] = [[]]
    for tok in lex(text):
        if tok.kind == "skip":
            continue
        if tok.kind in ("word", "sep"):
            return None  # words or a second clause: not a plain line of arithmetic
        if tok.kind == "eq":
            sides.append([])
            continue
        sides[-1].append(tok)
    return sides if all(sides) else None


def _read(step: str) -> _Line | None:
    if "\n" in step.strip():
        return None
    answer = _ANSWER_LINE.match(step)
    if answer:  # "#### 38000.40" after an open expression states its value
        return _parse_line(_ANSWER_LABEL, answer.group(1))
    bare = _sides(step)
    if bare is not None and len(bare) == 1 and len(bare[0]) > 1:  # a whole step of open arithmetic
        return _parse_line(_ANSWER_LABEL, step)
    match = _LABELLED.match(step)
    if not match or not _HAS_DIGIT.search(match.group(2)):
        return None
    label = " ".join(match.group(1).lower().split())
    if len(label) <= 2:
        return None  # a letter: the claim checker carries its value (`T = 10 + 14`, then `T = 24`)
    return _parse_line(label, match.group(2))


def _parse_line(label: str, text: str) -> _Line | None:
    sides = _sides(text)
    if sides is None:
        return None
    try:
        first, last = parse_side(sides[0]), parse_side(sides[-1])
        first_value, last_value = evaluate(first, {}), evaluate(last, {})
    except (NotEvaluable, ZeroDivisionError, OverflowError):
        return None
    if not (first_value.is_number and last_value.is_number):
        return None
    open_literals = tuple(lit.value for lit in literals(last))
    return _Line(label, first, last, first_value.const, last_value.const, open_literals)


def _carries_on(line: _Line, before: _Line) -> bool:
    """Is `line` the next form of the expression `before` left open? A bare number states its value; an
    expression must work part of it out: fewer numbers, some of them kept (`27000 + 43200 - 1200`, then
    `69200 - 1200`). More numbers extend it (`5 + 3`, then `5 + 3 + 2` after a tax): not a claim."""
    if line.label != before.label:
        return False
    if bare_literal(line.first) is not None:
        return True
    if line.label == _ANSWER_LABEL:
        return False  # two unlabelled lines of arithmetic may be two computations
    numbers = [lit.value for lit in literals(line.first)]
    return len(numbers) < len(before.open_literals) and bool(set(numbers) & set(before.open_literals))


def labelled_line_claims(steps: Sequence[str], math_steps: set[int]) -> dict[int, ClaimResult]:
    """Claims that a labelled line's first side equals the value the previous line of that label left open.

    `math_steps` are the steps that wrote any math run: only steps outside it may stand between the two.
    """
    found: dict[int, ClaimResult] = {}
    before: _Line | None = None  # the last line that left an expression open
    for index, step in enumerate(steps):
        line = _read(step)
        if line is None:
            if index in math_steps:
                before = None
            continue
        if before is not None and _carries_on(line, before):
            found[index] = _claim(before, line)
        before = line if bare_literal(line.last) is None else None
    return found


def _claim(before: _Line, line: _Line) -> ClaimResult:
    claim = (
        f"{line.label} = {format_value(before.last_value)}, carried on as {format_value(line.first_value)}"
    )
    literal = bare_literal(line.first)
    if literal is not None:
        rule = match_rule(before.last_value, literal)
        holds = rule is not None
    else:
        holds = before.last_value == line.first_value
        rule = "exact" if holds else None
    expected = format_value(before.last_value)
    if holds:
        return ClaimResult(claim, True, expected, rule=f"labelled line ({rule})")
    return ClaimResult(claim, False, expected, "the line does not carry on the value its label had")
