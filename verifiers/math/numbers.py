"""Exact number literals and the tolerance rules every math check shares.

Numbers are kept as `Fraction`s from the literal text on, so `0.1 + 0.2 = 0.3` holds exactly and a
decimal result is compared at the precision it was written with.

Tolerance rules (the only places a claim or answer may be "close enough"):
- integers and fractions: exact.
- a decimal written with d places: equal to the exact value, or to it rounded (half up) or truncated to
  d places (`10/3 = 3.33` holds, `10/3 = 3.34` fails), or within relative 1e-6; rounding a value that has
  a short exact decimal to fewer than 2 places needs an approximation word (`0.4 * 0.4 = 0.2` is false).
- an integer written for a non-integer value: only when the claim itself says it rounds ("about", "≈",
  "rounded", ...), then rounding, floor or ceiling are accepted (`about 3` for 10/3).
- a percent `p%` is p/100 (`20% * 50 = 10`); it is read as p only where the caller says the text has the
  percent form (`15/60 * 100 = 25%`), so `20% * 50 = 1000` is false.
- `p cents` after dollars is a unit: read as p/100 dollars or as p cents (`$2.50 - $2.24 = 26 cents`).

`match_rule` names the rule that accepted a value, so a label's evidence says how lenient it was.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

RELATIVE_TOLERANCE = Fraction(1, 10**6)


@dataclass(frozen=True)
class Literal:
    """A number as written: its exact value, how many decimals were shown, and its decorations.

    >>> Literal.parse("$1,234.50")
    Literal(value=Fraction(2469, 2), decimals=2, percent=False, currency=True, fraction=False)
    """

    value: Fraction
    decimals: int = 0
    percent: bool = False  # `p%`, or `p cents` in a dollar context: read as p/100 or as p
    currency: bool = False
    fraction: bool = False  # written as a tight fraction `1/3`: an operation, read as one value

    @staticmethod
    def parse(text: str) -> Literal | None:
        """Parse a bare literal (`-3`, `1,000`, `2.50`, `$5`, `25%`, `1.5e3`, `3 1/2`); None otherwise."""
        s = text.strip()
        currency = percent = False
        if s.startswith(("\\$", "$")):
            currency, s = True, s.lstrip("\\$").strip()
        sign = 1
        if s[:1] in "-−":
            sign, s = -1, s[1:].strip()
        if s.startswith(("\\$", "$")):
            currency, s = True, s.lstrip("\\$").strip()
        if s.endswith(("\\%", "%")):
            percent, s = True, s.rstrip("%").rstrip("\\").strip()
        if len(s) > 60:
            return None  # also keeps int() below its digit limit
        parsed = parse_unsigned(s)
        if parsed is None:
            return None
        value, decimals = parsed
        return Literal(sign * value, decimals, percent, currency)


def parse_unsigned(s: str) -> tuple[Fraction, int] | None:
    """Value and shown decimals of an unsigned literal: `1,000`, `2.50`, `.5`, `1.5e3`, `3 1/2`, `1/2`."""
    if not s:
        return None
    if " 000" in s and "/" not in s:  # "18 000": a space as thousands separator
        s = s.replace(" ", "")
    if " " in s:  # mixed number "3 1/2"
        whole, _, frac = s.partition(" ")
        w, f = parse_unsigned(whole), parse_unsigned(frac.strip())
        if w is None or f is None or w[1] or "/" not in frac:
            return None
        return w[0] + f[0], 0
    if "/" in s:
        num, _, den = s.partition("/")
        if not (num.isdigit() and den.isdigit()) or int(den) == 0:
            return None
        return Fraction(int(num), int(den)), 0
    mantissa, exponent = s, 0
    for marker in ("e", "E"):
        if marker in s:
            mantissa, _, exp_text = s.partition(marker)
            if not exp_text.lstrip("+-").isdigit() or len(exp_text) > 4:
                return None
            exponent = int(exp_text)
    if "," in mantissa and not _valid_thousands(mantissa):
        return None
    digits = mantissa.replace(",", "")
    whole, dot, frac = digits.partition(".")
    if not (whole.isdigit() or (not whole and frac)) or (dot and not frac.isdigit()):
        return None
    value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    if exponent:
        value *= Fraction(10) ** exponent
        return value, max(len(frac) - exponent, 0)
    return value, len(frac)


def _valid_thousands(s: str) -> bool:
    whole = s.partition(".")[0]
    groups = whole.split(",")
    return (
        1 <= len(groups[0]) <= 3
        and groups[0].isdigit()
        and all(len(g) == 3 and g.isdigit() for g in groups[1:])
    )


def round_half_up(value: Fraction, places: int) -> Fraction:
    scale = 10**places
    return Fraction(math.floor(value * scale + Fraction(1, 2)), scale)


def truncate(value: Fraction, places: int) -> Fraction:
    scale = 10**places
    return Fraction(math.trunc(value * scale), scale)


def match_rule(
    value: Fraction, written: Literal, *, approximate: bool = False, percent_as_number: bool = False
) -> str | None:
    """The rule under which the exact `value` agrees with the number written as `written`, or None.

    Rules, strictest first: "exact", "percent as number" (only with `percent_as_number`), "cents",
    "rounded decimal" (a decimal shown to d places), "approximate" (only with `approximate`).

    >>> match_rule(Fraction(10, 3), Literal.parse("3.33"))
    'rounded decimal'
    >>> match_rule(Fraction(1000), Literal.parse("10%")) is None
    True
    >>> match_rule(Fraction(25), Literal.parse("25%"), percent_as_number=True)
    'percent as number'
    >>> match_rule(Fraction(16, 81), Literal.parse("19.75%"), approximate=True)
    'rounded decimal'
    """
    readings = _readings(written, percent_as_number)
    for candidate, rule in readings:
        if candidate == value:
            return rule
    may_round = approximate or written.decimals >= 2 or not terminates(value)
    for candidate, rule in readings:
        # (a percent's places are hundredths of its value: `19.75%` is 0.1975, four places)
        places = written.decimals + (2 if written.percent and rule == "exact" else 0)
        if (
            written.decimals
            and may_round
            and (
                round_half_up(value, places) == candidate
                or truncate(value, places) == candidate
                or abs(value - candidate) <= RELATIVE_TOLERANCE * max(abs(value), abs(candidate))
            )
        ):
            return "rounded decimal" if rule == "exact" else f"{rule}, rounded decimal"
    for candidate, rule in readings:
        if approximate and candidate.denominator == 1 and value.denominator != 1:
            if candidate in (math.floor(value), math.ceil(value), round_half_up(value, 0)):
                return "approximate" if rule == "exact" else f"{rule}, approximate"
    return None


def terminates(value: Fraction) -> bool:
    """Has the value a finite decimal expansion (its denominator has no prime factor but 2 and 5)?"""
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    return den == 1


def matches_written(
    value: Fraction, written: Literal, *, approximate: bool = False, percent_as_number: bool = False
) -> bool:
    """Does the exact `value` agree with a number written as `written`, under the module's rules?"""
    return (
        match_rule(value, written, approximate=approximate, percent_as_number=percent_as_number) is not None
    )


def _readings(written: Literal, percent_as_number: bool) -> tuple[tuple[Fraction, str], ...]:
    if written.percent and written.currency:  # "26 cents": a unit, either way round
        return (written.value / 100, "exact"), (written.value, "cents")
    if written.percent:
        scaled = ((written.value, "percent as number"),) if percent_as_number else ()
        return ((written.value / 100, "exact"), *scaled)
    return ((written.value, "exact"),)


def format_value(value: Fraction) -> str:
    """Shortest exact text: `24`, `0.2`, `-3.25`, or `10/3` for non-terminating values.

    >>> format_value(Fraction(10, 3)), format_value(Fraction(1, 5))
    ('10/3', '0.2')
    """
    if value.denominator == 1:
        return str(value.numerator)
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    scaled = abs(value) * 10**places
    text = str(scaled.numerator).rjust(places + 1, "0")
    sign = "-" if value < 0 else ""
    return f"{sign}{text[:-places]}.{text[-places:]}"
