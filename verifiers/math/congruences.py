"""Congruences between whole numbers: `327 \\equiv 8 \\pmod{17}`, `2^8 = 256 \\equiv 1 \\pmod 5`.

A math segment that is only integers (digits, powers, products, sums, brackets) joined by `=` and
`\\equiv`, closed by one modulus (`\\pmod{m}`, `\\mod m`, `(\\text{mod } m)`), is a claim that every side is
congruent modulo m. It is read with certainty: each side is a whole expression between two relation
marks, and nothing but integers is left. A sloppy `=` (`2^{10} = 4 \\pmod{17}`) is read as the congruence
it means, so only a pair that differs modulo m is false. Plain Python integers, exponents kept small.
"""

from __future__ import annotations

import re

from prm_factory.verifiers.math.claim_result import ClaimResult

_SEGMENT = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]|\$\$(.*?)\$\$|\$([^$]*?)\$", re.DOTALL)
_MODULUS = re.compile(
    r"(?:\\pmod\s*\{?\s*(\d+)\s*\}?|\(\s*\\?(?:text\{\s*)?mod\s*\}?\s*\{?\s*(\d+)\s*\}?\s*\)|\\bmod\s*\{?\s*(\d+)\s*\}?"
    r"|\\mod\s*\{?\s*(\d+)\s*\}?)\s*[.,;]?\s*$"
)
_SIDE = re.compile(r"^[\d\s^{}()+\-*]+$")
_MAX_EXPONENT = 1000


def _normalise(text: str) -> str:
    text = re.sub(r"\\(?:cdot|times)(?![A-Za-z])", "*", text)
    text = re.sub(r"\\left|\\right|\\[,;!: ]|\\quad|\\qquad", " ", text)
    return text


def _value(side: str) -> int | None:
    """An integer expression's value, or None when it is anything else or too large."""
    side = side.strip()
    if not side or not _SIDE.match(side) or re.search(r"\d\s+\d", side):
        return None
    expression = re.sub(r"\^\s*\{\s*([^{}]*)\s*\}", r"**(\1)", side)
    expression = re.sub(r"\^\s*(\d)", r"**\1", expression)
    if "^" in expression or "{" in expression or "}" in expression:
        return None
    if re.search(r"\*\*\([^()]*\*\*", expression):
        return None  # a tower of powers
    for exponent in re.findall(r"\*\*\(?\s*(\d+)", expression):
        if int(exponent) > _MAX_EXPONENT:
            return None
    if re.search(r"\d\s*\(|\)\s*[\d(]", expression):
        return None  # juxtaposed brackets: a product or a mixed notation, not read here
    try:
        value = eval(expression, {"__builtins__": {}}, {})  # digits and + - * ** ( ) only (checked above)
    except (SyntaxError, ZeroDivisionError, ValueError, TypeError, MemoryError):
        return None
    return value if isinstance(value, int) else None


def congruence_claims(step: str) -> list[ClaimResult]:
    """Each congruence segment of the step as one claim (rule `congruence`)."""
    results = []
    for match in _SEGMENT.finditer(step):
        body = _normalise(next(g for g in match.groups() if g is not None))
        modulus_match = _MODULUS.search(body)
        if not modulus_match or "\\equiv" not in body:
            continue
        modulus = int(next(g for g in modulus_match.groups() if g is not None))
        chain = body[: modulus_match.start()]
        sides = re.split(r"\\equiv(?![A-Za-z])|=", chain)
        values = [_value(side) for side in sides]
        if modulus < 2 or len(sides) < 2 or any(v is None for v in values):
            continue
        claim = " ".join(body.split())
        wrong = [
            (a, b)
            for a, b in zip(values, values[1:], strict=False)
            if a is not None and b is not None and (a - b) % modulus
        ]
        if wrong:
            a, b = wrong[0]
            results.append(
                ClaimResult(
                    claim, False, str(a % modulus), f"not congruent modulo {modulus}", rule="congruence"
                )
            )
        else:
            results.append(ClaimResult(claim, True, str(values[-1]), "congruent", rule="congruence"))
    return results
