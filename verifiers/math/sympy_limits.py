"""What the step checker does not ask SymPy: expressions whose expansion or value is known to blow up.

A claim's LaTeX goes to a bounded SymPy worker (`bounded`), which compares its sides by expanding a
polynomial difference or simplifying the rest. A few shapes make that seconds or hours of work for one
claim, and then a killed worker and a restart (seconds more): a high power of a sum (`(a^2 + b^2)^{2000}`
expands to 2,001 terms of 2,000-bit coefficients), a binomial of a number beside a name
(`\\binom{10^9}{k}` simplifies through a product of its top), a factorial or binomial of numbers whose
value has hundreds of thousands of digits. The exact arithmetic already refuses a power tower before it
computes it (`arithmetic.TooLarge`: an exponent above `MAX_EXPONENT`, a value above `MAX_BITS`); this is
the same rule in front of SymPy, read from the text in microseconds: `too_costly` says why a run is
refused, and the caller makes its claims `unverifiable` (never `incorrect`) without sending it.

The limits are what SymPy 1.14 does within about a third of a second on one core (AVX-512 EPYC, timed
through `symbolic.latex_claims`, 2026-11-29), so a competition response of 30 steps keeps to its second;
ordinary claims (`(a+b)^2 = a^2+2ab+b^2`, `(x-1)^{10}`, `\\binom{10}{3} = 120`, `1000!`) stay well inside.
Powers of numbers are left to the worker's time limit (its tests time one out on purpose).

>>> too_costly(r"4a^2 \\cdot (a^2 + b^2)^{2000} = 1")
'a sum to the power 2000 (limit 300)'
>>> too_costly(r"(a+b)^2 = a^2 + 2ab + b^2") is None, too_costly(r"\\binom{10}{3} = 120") is None
(True, True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction

from prm_factory.verifiers.math.arithmetic import (
    MAX_EXPONENT,
    NotEvaluable,
    TooLarge,
    evaluate,
    lex,
    parse_side,
)

# A power of a sum above this exponent is refused: `2a (a^2 + b^2)^{n} = -1` took 0.08 s at n = 200, 0.13 s
# at 300, 0.38 s at 500, 1.1 s at 1000 and past the worker's 2 s limit at 2000 (its coefficients grow with n).
MAX_SUM_EXPONENT = 300
# A power of a sum whose expansion would have more terms than this (C(m + n - 1, n) for m terms to the nth)
# is refused: `(a + b + c)^{40}` (861 terms) took 0.20 s, `^{60}` (1,891) 0.44 s; `(a + b + c + d)^{15}`
# (816) 0.26 s, `^{20}` (1,771) 0.42 s.
MAX_EXPANSION_TERMS = 1_000
# A power of a name or a product of names (`x^{n}`) is cheap as it is, but its value at a point (the identity
# test puts in rational points; a known value is put in for a name) has n times the point's bits: the
# arithmetic's own exponent limit, `x^{10000}` 0.07 s.
MAX_NAME_EXPONENT = MAX_EXPONENT
# A binomial of a number and a name (`\binom{N}{k}`, `\binom{n}{K}`) is simplified through N factors:
# `\binom{N}{k} = \frac{N}{k}\binom{N}{k-1}` took 0.12 s at N = 10, 0.33 s at 20, 0.57 s at 30, 1.6 s at 100,
# minutes at 10^4 (and past 2 s at 10^9, the case that hit the worker's limit).
MAX_BINOMIAL_BESIDE_NAME = 20
# A factorial or binomial of numbers is refused where its value may have more bits than this (about 30,000
# digits; read as n log2 n for n!, min(k, n - k) log2 n for a binomial, upper bounds): `\binom{10^4}{5000}`
# (66,000 by that reading) took 0.05 s, `1000!` 0.02 s; `\binom{10^5}{5 \cdot 10^4}` (830,000) 0.58 s.
MAX_VALUE_BITS = 100_000
# The scan costs its length times its depth of brackets in pure Python, outside any worker: a run longer or
# deeper than these (no step of ProcessBench's `math` split comes near: 691 characters at most) is not read
# here and is left to the worker's time limit, as before.
MAX_SCANNED_CHARS = 2_000
MAX_SCANNED_DEPTH = 40

_SPACING = re.compile(r"\\[,;:! ]|\\q?quad(?![A-Za-z])|\\displaystyle(?![A-Za-z])")
_SIZED = re.compile(r"\\(?:left|right|bigg?|Bigg?)(?![A-Za-z])\s*\\?")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_PRODUCT = {"cdot", "times"}
_FRACTION = {"frac", "dfrac", "tfrac"}
_BINOMIAL = {"binom", "dbinom", "tbinom"}
# operators whose `^` and `_` are limits, not a power: `\sum_{k=1}^{2016}`
_LIMITS = {"sum", "prod", "coprod", "int", "iint", "iiint", "oint", "lim", "bigcup", "bigcap", "max", "min"}


class _Refused(Exception):
    """Why the text is not sent to SymPy."""


def too_costly(text: str, bindings: Mapping[str, str] | None = None) -> str | None:
    """Why SymPy would blow up on this LaTeX (a run of `=`-joined sides, or one side), or None. `bindings`
    are the names' known values (`{"n": "2000"}`), which SymPy puts in before it compares.
    A text this scan cannot read is never refused: SymPy's own time limit still bounds it."""
    if len(text) > MAX_SCANNED_CHARS or _depth(text) > MAX_SCANNED_DEPTH:
        return None
    values: dict[str, Fraction] = {}
    for name, value in (bindings or {}).items():
        try:
            values[name] = Fraction(value)
        except (ValueError, ZeroDivisionError):
            continue
    try:
        _Scan(values).terms(_SIZED.sub("", _SPACING.sub(" ", text)))
    except _Refused as refused:
        return str(refused)
    except (IndexError, ValueError, RecursionError):
        return None
    return None


class _Scan:
    """A reading of LaTeX just deep enough to find powers, binomials and factorials and their arguments."""

    def __init__(self, values: Mapping[str, Fraction]) -> None:
        self.values = values

    def terms(self, text: str) -> int:
        """An upper bound on the terms of `text` once each power of a sum in it is expanded (sums add, the
        factors of a product keep their own count); raises `_Refused` at the first shape past a limit."""
        return sum(self._summand(part) for part in _summands(text)) or 1

    def _summand(self, text: str) -> int:
        count = 0  # terms of the factor just read (the base of a `^` after it), 0 before any
        kind = ""  # number | name | sum, of that factor
        base = ""  # its text
        most = 1
        i = 0
        while i < len(text):
            char = text[i]
            if char in _CLOSE:
                end = _closing(text, i)
                base = text[i + 1 : end]
                count, kind = self._group(base)
                i = end + 1
            elif char == "\\":
                match = _COMMAND.match(text, i)
                name = match.group(1) if match else ""
                i = match.end() if match else i + 1
                if name in _PRODUCT or not name:
                    continue
                if name in _FRACTION or name in _BINOMIAL:
                    top, i = _argument(text, i)
                    bottom, i = _argument(text, i)
                    if name in _BINOMIAL:
                        self._binomial(top, bottom)
                        count, kind, base = 1, "name", ""
                    else:
                        self.terms(bottom)
                        count, kind = self._group(top)
                        base = top
                    continue
                if name == "sqrt":
                    if i < len(text) and text[i] == "[":
                        _, i = _argument(text, i)
                    inner, i = _argument(text, i)
                    self.terms(inner)
                count, kind, base = 1, "" if name in _LIMITS else "name", ""
            elif char == "_":  # a subscript names the thing before it: `x_k^{2}` is a power of `x_k`
                _, i = _argument(text, i + 1)
            elif char == "^":
                exponent, i = _argument(text, i + 1)
                self.terms(exponent)
                count = self._power(count, kind, base, exponent)
                kind = "name" if kind != "number" else kind
            elif char == "!":
                self._factorial(base if kind != "name" else "")
                i += 1
            elif char.isdigit():
                match = _NUMBER.match(text, i)
                assert match is not None  # a digit starts a number
                count, kind, base = 1, "number", match.group()
                i = match.end()
            elif char.isalpha():
                count, kind, base = 1, "name", char
                i += 1
            else:
                i += 1
            most = max(most, count)
        return most

    def _group(self, inner: str) -> tuple[int, str]:
        count = self.terms(inner)
        if not re.search(r"[A-Za-z]", _COMMAND.sub("", inner)):
            return count, "number"
        return count, "sum" if count > 1 else "name"  # `((a + b))` is a sum in two brackets

    def _power(self, count: int, kind: str, base: str, exponent: str) -> int:
        """The terms of `base^exponent` expanded; `_Refused` past a limit. A number's power is left alone."""
        if kind in ("", "number"):
            return count
        try:
            n = self._integer(exponent)
        except TooLarge:
            raise _Refused(f"{'a sum' if kind == 'sum' else 'a name'} to a power tower") from None
        if n is None:
            return count
        n = abs(n)
        power = f"the power {n}" if n < 10**12 else "a power of more than 12 digits"
        if kind == "sum" and n > MAX_SUM_EXPONENT:
            raise _Refused(f"a sum to {power} (limit {MAX_SUM_EXPONENT})")
        if kind != "sum" and n > MAX_NAME_EXPONENT:
            raise _Refused(f"a name to {power} (limit {MAX_NAME_EXPONENT})")
        if kind != "sum" or n < 2:
            return count
        expanded = math.comb(count + n - 1, n)
        if expanded > MAX_EXPANSION_TERMS:
            raise _Refused(
                f"a sum of {count} terms to the power {n}: {expanded:,} terms expanded "
                f"(limit {MAX_EXPANSION_TERMS:,})"
            )
        return expanded

    def _binomial(self, top: str, bottom: str) -> None:
        self.terms(top)
        self.terms(bottom)
        try:
            n, k = self._integer(top), self._integer(bottom)
        except TooLarge:
            raise _Refused("a binomial of a huge number") from None
        if (n is None) != (k is None):
            number = n if n is not None else k
            assert number is not None  # one of the two is a number
            if abs(number) > MAX_BINOMIAL_BESIDE_NAME:
                raise _Refused(f"a binomial of {number} and a name (limit {MAX_BINOMIAL_BESIDE_NAME})")
        elif n is not None and k is not None and 0 <= k <= n:
            smaller = min(k, n - k)
            if smaller * math.log2(max(n, 2)) > MAX_VALUE_BITS:
                raise _Refused(f"a binomial of {n} and {k}: above {MAX_VALUE_BITS:,} bits")

    def _factorial(self, argument: str) -> None:
        if not argument:
            return
        try:
            n = self._integer(argument)
        except TooLarge:
            raise _Refused("a factorial of a huge number") from None
        if n is not None and n > 2 and n * math.log2(n) > MAX_VALUE_BITS:
            raise _Refused(f"{n}!: above {MAX_VALUE_BITS:,} bits")

    def _integer(self, text: str) -> int | None:
        """The text's value where it is a whole number in numbers and known names (the exact arithmetic,
        its size limits included: TooLarge for a tower), else None."""
        name = text.strip()
        if name in self.values:  # a bare known name (the arithmetic reads names only beside numbers)
            value = self.values[name]
            return int(value) if value.denominator == 1 else None
        try:
            value = evaluate(parse_side(lex(text)), self.values)
        except TooLarge:
            raise
        except (NotEvaluable, ZeroDivisionError, ValueError, IndexError):
            return None
        if not value.is_number or value.const.denominator != 1:
            return None
        return int(value.const)


def _depth(text: str) -> int:
    """How deep the text's brackets nest."""
    depth = deepest = 0
    for char in text:
        if char in _CLOSE:
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def _closing(text: str, start: int) -> int:
    """The index of the bracket that closes the one at `start` (any kind closes: LaTeX writes `[0, 1)`)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in _CLOSE:
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unclosed bracket")


def _argument(text: str, i: int) -> tuple[str, int]:
    """A command's or a `^`'s argument at `i` (spaces skipped): a braced group's inside, else one character
    (TeX's reading of `x^23` is `x^2 3`)."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        raise IndexError("no argument")
    if text[i] in _CLOSE:
        end = _closing(text, i)
        return text[i + 1 : end], end + 1
    if text[i] == "\\":
        match = _COMMAND.match(text, i)
        if match:
            return match.group(), match.end()
    return text[i], i + 1


def _summands(text: str) -> list[str]:
    """The parts of `text` between its top-level `+`, `-` and relation signs (empty parts dropped)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in _CLOSE:
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and char in "+-=<>":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]
