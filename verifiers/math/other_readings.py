"""Does a failed claim in written numbers hold under another usual reading of what is written?

Models write `=` where they mean more than equality of exact values. A claim that fails read exactly but
holds read one of these ways is no certain error (the gate, `certainty`, leaves it unjudged):

- **an integer quotient**: `253/2 = 126` beside "rem 1", Legendre's `42/5 + 42/25 = 8 + 1` under a floor:
  every quotient of two whole numbers read as its integer part makes it true, and the text nearby speaks of
  remainders, quotients, floors, integer parts or a base (`INTEGER_DIVISION`);
- **a rounded value**: `200 / 0.4536 = 441`, `\\frac{1}{3} = 0.33`: the exact value needs more places than the
  right side writes, and rounding it to the right side's places gives the right side, which keeps at least
  two significant figures; only where an operand is a decimal, the right side has decimals, or the text
  says it approximates (`APPROXIMATE`), or where the right side is money or a percent whose exact value has
  no finite decimal form (`$20,000 / 30 = $667`, `(3200 - 4800) / 4800 * 100 = -33%`: both are written
  rounded by custom); a whole number rounded from a quotient of whole numbers (`7/2 = 4`) and a value cut
  to one figure (`0.4 * 0.4 = 0.2`) are still judged;
- **operands written rounded**: `13 - 2.83^2 = 13 - 8`, `85.33 * 3.14159 ≈ 268.08`: decimals of three
  figures or more read as any value that rounds to them, the left side worked at every corner of those
  intervals, and the right side read as every value that rounds to it (two figures at least; a right side of
  one figure stands for itself alone, where it writes no more places than the operands: `(0.231 - 0.192) /
  0.192 = 0.2`, `0.231` and `0.192` being `6/26` and `5/26` rounded);
- **a repeating decimal written rounded**: `42 \\times \\frac{5}{3} = 42 \\times 1.6667`,
  `0.1111 m/s * 90 s = 10`: a decimal of two places or more that is not exact but is a fraction of a small
  denominator (at most `_DENOMINATOR`, with a factor other than 2 and 5: its decimals repeat) rounded to the
  places written; the claim holds with each such decimal read as that fraction (units after numbers set
  aside);
- **numerals in another base**: `101 = 5` where the text says "in base 2" (or binary, octal, or writes a
  numeral with its base as a subscript, `31_8`): the claim holds with the numerals of one side, or of both,
  read in that base;

Only claims whose sides are written numbers joined by `+ - * / ^`, brackets, `\\frac`, `\\times`, `\\cdot`,
`\\div` are read here; anything else is for the other gates.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence
from fractions import Fraction

from prm_factory.verifiers.math.numbers import terminates

# the text speaks of whole-number division (a marker anywhere in the claim's step, the steps just before it
# or the problem): remainders, quotients, floors, integer parts, a base or binary digits
INTEGER_DIVISION = re.compile(
    r"\brem(?:ainders?)?(?![A-Za-z])|\bR\s*\d|\\text\s*\{\s*R\s*\}|\bquotients?\b|\bfloor\b|\\[lr]floor"
    r"|\binteger\s+(?:part|division|quotient)|\bgreatest\s+integer\b|\bbase[\s-]*\d|\bbinary\b|\bLegendre\b"
    # counting multiples (Legendre's formula said in words): "every 25th number", "trailing zeros"
    r"|\bmultiples?\s+of\b|\bevery\s+\d+(?:st|nd|rd|th)\b|\btrailing\s+zeros?\b|\bzeros?\s+at\s+the\s+end\b"
    # long division said in words: "33 goes into 70 two times"
    r"|\bgo(?:es)?\s+into\b",
    re.IGNORECASE,
)
# the text says the value is approximate or rounded
APPROXIMATE = re.compile(
    r"\bapprox\w*|\baround\b|\babout\b|\broughly\b|\bnearest\b|\brounded\b|\bround(?:ing)?\b|\bestimat\w*",
    re.IGNORECASE,
)
_FIGURES = 2  # a rounded value keeps at least two significant figures
# a base the text names: "base 8", "base-2", binary, octal, a numeral with its base as a subscript
_BASE_NAMED = re.compile(r"\bbase[\s-]*\{?\s*(\d{1,2})\b|(?<![\\A-Za-z_{])\d+\s*_\s*\{?\s*(\d{1,2})\b", re.I)
_BASE_WORDS = {"binary": 2, "octal": 8}
_INTEGER = re.compile(r"(?<![\d.])\d+(?![\d.])")
_REACH = 3  # steps before the claim's that may speak of integer division
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_BOXED = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_LITERAL_QUOTIENT = re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")
_DECIMAL = re.compile(r"\d\.\d")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _python(side: str) -> str | None:
    """The side as a Python expression in numbers, or None where anything else is written."""
    text = side.replace("$", "").replace("\\left", "").replace("\\right", "").replace("{,}", "")
    text = _BOXED.sub(r"(\1)", text)
    for _ in range(3):
        text = _FRAC.sub(r"((\1)/(\2))", text)
    text = re.sub(r"\\(?:times|cdot)(?![A-Za-z])|[×·]", "*", text)
    text = re.sub(r"\\div(?![A-Za-z])|÷", "/", text)
    text = re.sub(r"\\[,;:! ]|\s+", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)  # thousands separators
    text = text.replace("−", "-").replace("–", "-").replace("{", "(").replace("}", ")").replace("^", "**")
    text = text.rstrip(".,;")
    if not text or not re.fullmatch(r"[\d.+\-*/()]+", text):
        return None
    return text


def _value(expression: str | None) -> Fraction | None:
    """The exact value of a Python expression in numbers (`//` a floor), or None where it cannot be read."""
    if expression is None:
        return None
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    try:
        return _evaluate(tree.body)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None


def _evaluate(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        if isinstance(node.op, ast.FloorDiv):
            return Fraction(left // right)
        if isinstance(node.op, ast.Pow) and right.denominator == 1 and abs(right) <= 64:
            return left ** int(right)
    raise ValueError("not a number expression")


def _sides(claim: str) -> tuple[str, str] | None:
    sides = re.split(r"(?<![<>!\\])=", claim)
    return (sides[0], sides[1]) if len(sides) == 2 else None


def _number_sides(claim: str) -> tuple[str, str] | None:
    """The claim's two sides as Python expressions in numbers (`_python`), or None where it has not two sides
    or either holds anything but written numbers."""
    sides = _sides(claim)
    if sides is None:
        return None
    left, right = (_python(side) for side in sides)
    return (left, right) if left is not None and right is not None else None


def _floored(left: str) -> Fraction | None:
    """The value of a side with every quotient of two whole numbers read as its integer part."""
    return _value(_LITERAL_QUOTIENT.sub(r"(\1//\2)", left))


def _ceiled(left: str) -> Fraction | None:
    """The value of a side with every quotient of two whole numbers rounded up to a whole number."""
    return _value(_LITERAL_QUOTIENT.sub(r"(-(-\1//\2))", left))


def _places(number: str) -> int:
    return len(number.split(".")[1]) if "." in number else 0


def _rounded(exact: Fraction, places: int) -> set[Fraction]:
    """`exact` rounded to `places` decimals, half up and half to even."""
    scaled = exact * 10**places
    half_up = Fraction((scaled + Fraction(1, 2)).__floor__(), 10**places)
    return {half_up, Fraction(round(scaled), 10**places)}


def integer_quotient(claim: str, texts: Sequence[str]) -> bool:
    """Does the claim hold with every quotient of two whole numbers read as its integer part, where
    `texts` (its step, the steps before, the problem) speak of whole-number division?

    >>> integer_quotient("253/2 = 126", ["253/2=126, rem 1"])
    True
    >>> integer_quotient("253/2 = 126", ["So 253/2 = 126."])
    False
    """
    if not any(INTEGER_DIVISION.search(text) for text in texts):
        return False
    sides = _number_sides(claim)
    if sides is None or not _LITERAL_QUOTIENT.search(sides[0]):
        return False
    floored = _floored(sides[0])
    return floored is not None and floored == _value(sides[1])


def floored_quotient(claim: str) -> bool:
    """Does the claim hold with every quotient of two whole numbers read as its integer part, and only so,
    its right side a whole number (`17/7 = 2`, `94 - 8*(94/8) = 6`)? (`certainty` asks in addition that a
    count of things follows it.)

    >>> floored_quotient("17/7 = 2"), floored_quotient("17/7 = 3"), floored_quotient("14/7 = 2")
    (True, False, False)
    """
    sides = _number_sides(claim)
    if sides is None or not sides[1].isdigit() or not _LITERAL_QUOTIENT.search(sides[0]):
        return False
    floored = _floored(sides[0])
    return floored is not None and floored == int(sides[1]) and _value(sides[0]) != floored


def ceiled_quotient(claim: str) -> bool:
    """Is the claim one quotient of two whole numbers put equal to that quotient rounded up, a whole number
    (`462/9 = 52` flash drives needed)? Only a lone quotient: `17/8 + 15/8 = 5` rounds nothing a count
    needs. (`certainty` asks in addition that a count of things follows it and that the sentence says it
    is needed.)

    >>> ceiled_quotient("462/9 = 52"), ceiled_quotient("462/9 = 51"), ceiled_quotient("14/7 = 2")
    (True, False, False)
    >>> ceiled_quotient("17/8 + 15/8 = 5")
    False
    """
    sides = _number_sides(claim)
    if sides is None or not sides[1].isdigit() or not _LITERAL_QUOTIENT.fullmatch(sides[0].strip()):
        return False
    ceiled = _ceiled(sides[0])
    return ceiled is not None and ceiled == int(sides[1]) and _value(sides[0]) != ceiled


# a right side written as an amount of money: a currency sign before its number (`= $667`, `= Rs. 450`)
_MONEY_RIGHT = re.compile(r"=\s*(?:\\?\$|€|£|₹|Rs\.?)\s*[\d,]+(?:\.\d+)?\s*$")
# a right side that is a percent alone (`= -33%`, `= 66.7\\%`): the number before the sign
_PERCENT_RIGHT = re.compile(r"=\s*(-?\d+(?:\.\d+)?)\s*\\?%\s*$")


def rounded_value(claim: str, sentence: str) -> bool:
    """Is the right side the left side's exact value rounded to the places it writes, the exact value
    needing more, where an operand is a decimal, the right side has decimals, `sentence` says it
    approximates, or the right side is an amount of money or a percent whose exact value has no finite
    decimal form (`$20,000 / 30 = $667`, `... * 100 = -33%`: money is written to the cent or the whole
    unit and a percent to the places a reader needs, so they are rounded; elsewhere `1529 ÷ 6 = 255`
    stays a claim, a wrong quotient beside its remainder)?

    >>> rounded_value("200 / 0.4536 = 441", "So 200 / 0.4536 = 441 pounds.")
    True
    >>> rounded_value("7/2 = 4", "So 7/2 = 4.")
    False
    >>> rounded_value("$20,000 / 30 = $667", ""), rounded_value("20000 / 30 = 667", "")
    (True, False)
    >>> [rounded_value(f"(3200 - 4800) / 4800 * 100 = {p}%", "") for p in (-33, -34)]
    [True, False]
    """
    percent = _PERCENT_RIGHT.search(claim)
    # (the reader takes `= 25%` as 25 only after a side that computes a percentage: the number is read alone)
    sides = _number_sides(claim if percent is None else claim[: percent.start(1)] + percent.group(1))
    if sides is None or not _NUMBER.fullmatch(sides[1]):
        return False
    left, right = sides
    exact, written = _value(left), Fraction(right)
    if exact is None:
        return False
    places = _places(right)
    if (exact * 10**places).denominator == 1:
        return False  # the exact value fits the places written: nothing was rounded
    if len(right.lstrip("-").replace(".", "").lstrip("0")) < _FIGURES:
        return False  # `0.4 * 0.4 = 0.2`: one figure kept is no rounding a chain goes on with
    # money and percents are written rounded by custom where their exact value has no finite decimal form
    customary = (bool(_MONEY_RIGHT.search(claim)) or percent is not None) and not terminates(exact)
    if not (_DECIMAL.search(left) or places > 0 or APPROXIMATE.search(sentence) or customary):
        return False
    return written in _rounded(exact, places)


# a decimal operand read as a rounded value keeps at least three significant figures (`2.83`, `0.0634`), so
# `0.4 * 0.4 = 0.2` is still judged; at most this many such operands are widened at once
_ROUNDED_OPERAND = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
_OPERAND_FIGURES = 3
_MAX_ROUNDED_OPERANDS = 4
_APPROX = re.compile(r"≈|\\approx(?![A-Za-z])")


def _figures(number: str) -> int:
    return len(number.lstrip("-").replace(".", "").lstrip("0"))


def _written_interval(right: str, approximate: bool) -> tuple[Fraction, Fraction] | None:
    """What a right side stands for: a number, every value that rounds to it at the places it writes (with
    `≈`, an integer's trailing zeros are no places: `≈ 490` is two figures), or itself alone where it keeps
    fewer than two figures (`= 0.2`, `= 5`: one figure is no rounding a chain goes on with, but the
    operands' rounding may still reach it); an expression of whole numbers, its exact value. None where it
    holds decimals in an expression."""
    if re.fullmatch(r"-?\d+(?:\.\d+)?", right):
        value = Fraction(right)
        digits = right.lstrip("-")
        zeros = len(digits) - len(digits.rstrip("0")) if approximate and "." not in digits else 0
        zeros = min(zeros, len(digits) - 1)
        if _figures(digits) - zeros < _FIGURES:
            return value, value
        half = Fraction(10**zeros, 2) if zeros else Fraction(1, 2 * 10 ** _places(digits))
        return value - half, value + half
    if "." in right:
        return None
    value = _value(right)
    return None if value is None else (value, value)


def carried_rounded(text: str, given: str = "") -> list[re.Match[str]]:
    """The decimals of `text` that may be values carried rounded: three figures or more (`2.83`, `0.435`;
    `0.15` is too short to be read so), and none that the problem `given` writes (its decimals are exact).

    >>> [m.group(0) for m in carried_rounded("0.435 = x/28.75 + 0.15", "shadows of 40.25 and 28.75")]
    ['0.435']
    """
    stated = set(_ROUNDED_OPERAND.findall(given.replace(",", "")))
    return [
        m
        for m in _ROUNDED_OPERAND.finditer(text)
        if _figures(m.group(0)) >= _OPERAND_FIGURES and m.group(0) not in stated
    ]


def exact_but_carried(text: str, given: str = "") -> str | None:
    """`text` with every decimal but those `carried_rounded` writes as an exact fraction (`28.75` ->
    `(115/4)`), so a rounding rule moves only those; None where `text` carries none.

    >>> exact_but_carried("0.435 = x/28.75", "shadows of 40.25 and 28.75")
    '0.435 = x/(115/4)'
    >>> exact_but_carried("1500 + 0.15x = 6000") is None
    True
    """
    carried = {m.start() for m in carried_rounded(text, given)}
    if not carried:
        return None

    def exact(m: re.Match[str]) -> str:
        value = Fraction(m.group(0))
        return m.group(0) if m.start() in carried else f"({value.numerator}/{value.denominator})"

    return _ROUNDED_OPERAND.sub(exact, text)


def rounded_operands(claim: str, sentence: str, given: str = "") -> bool:
    """Does the claim hold with its decimals of three figures or more read as values rounded to the places
    they write? Models carry rounded values (`2.83` for `2\\sqrt2`, `85.33` for `256/3`) and then write
    the exact result of the value they meant: `13 - 2.83^2 = 13 - 8`, `85.33 * 3.14159 ≈ 268.08`. The
    claim's left side is worked at every corner of its operands' rounding intervals; it holds when that
    range meets what the right side stands for (`_written_interval`). A decimal the problem `given` writes
    (a `$1.25` tip, a rate of `5.18`) is exact: `20 * 1.25 = 25.05` stays judged.

    >>> rounded_operands("13 - 2.83^2 = 13 - 8", "F = 13 - 2.83^2 = 13 - 8 = 5")
    True
    >>> rounded_operands("31/0.0634 ≈ 490", "there are 31/0.0634 ≈ 490 cycles")
    True
    >>> rounded_operands("13 - 2.83^2 = 13 - 9", "F = 13 - 2.83^2 = 13 - 9")
    False
    >>> rounded_operands("0.4 * 0.4 = 0.2", "So 0.4 * 0.4 = 0.2.")
    False
    >>> [rounded_operands(f"(0.231 - 0.192) / 0.192 = {r}", "") for r in ("0.2", "0.3")]
    [True, False]
    >>> rounded_operands("4.00 - 4.00 = 0.00000000000001", "")  # one figure finer than the operands: exact
    False
    >>> rounded_operands("20*1.25 = 25.05", "20*1.25 = $25.05", "they all leave her a $1.25 tip")
    False
    """
    text = _UNIT.sub("", claim)
    approximate = bool(_APPROX.search(text) or APPROXIMATE.search(sentence))
    parts = re.split(r"(?<![<>!\\])=|≈|\\approx(?![A-Za-z])", text)
    if len(parts) != 2:
        return False
    left, right = (_python(part) for part in parts)
    if left is None or right is None:
        return False
    rounded = carried_rounded(left, given)
    stands_for = _written_interval(right, approximate)
    if not rounded or len(rounded) > _MAX_ROUNDED_OPERANDS or stands_for is None:
        return False
    if stands_for[0] == stands_for[1] and _places(right) > max(_places(m.group(0)) for m in rounded):
        return False  # one figure written finer than the operands (`4.00 - 4.00 = 0.00000000000001`): exact
    values = []
    for corner in itertools.product((-1, 1), repeat=len(rounded)):
        pieces, at = [], 0
        for sign, match in zip(corner, rounded, strict=True):
            half = Fraction(1, 2 * 10 ** _places(match.group(0)))
            bound = Fraction(match.group(0)) + sign * half
            pieces += [left[at : match.start()], f"({bound.numerator}/{bound.denominator})"]
            at = match.end()
        value = _value("".join(pieces) + left[at:])
        if value is None:
            return False
        values.append(value)
    low, high = stands_for
    return max(values) >= low and min(values) <= high


_DENOMINATOR = 99  # a repeating decimal read back as a fraction has a denominator of at most two digits
_DECIMAL_NUMBER = re.compile(r"(?<![\d.])\d+\.\d{2,}(?![\d.])")
# a unit written after a number (`0.1111 meters/second`, `42 \\text{ baps}`): set aside to read the numbers
_UNIT = re.compile(r"(?<=[\d})])\s*(?:\\text\s*\{[^{}]*\}|[A-Za-z]{2,}(?:\s*/\s*[A-Za-z]{2,})?)")


def _repeating(number: str) -> Fraction | None:
    """The fraction of small denominator whose repeating decimals `number` writes rounded, or None.

    >>> _repeating("1.6667"), _repeating("0.5714"), _repeating("0.25"), _repeating("0.6248")
    (Fraction(5, 3), Fraction(4, 7), None, None)
    """
    written = Fraction(number)
    near = written.limit_denominator(_DENOMINATOR)
    denominator = near.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if near == written or denominator == 1:
        return None  # exact, or a terminating decimal: nothing was rounded
    return near if written in _rounded(near, _places(number)) else None


def repeating_decimal(claim: str) -> bool:
    """Does the claim hold with every decimal that writes a repeating one rounded read as its fraction?

    >>> repeating_decimal("42 \\\\times \\\\frac{5}{3} = 42 \\\\times 1.6667")
    True
    >>> repeating_decimal("0.1111 meters/second * 90 seconds = 10")
    True
    >>> repeating_decimal("42 \\\\times 1.6667 = 71")
    False
    """
    sides = _sides(_UNIT.sub("", claim))
    if sides is None:
        return False
    read = []
    for side in sides:
        found = False

        def exact(match: re.Match[str]) -> str:
            nonlocal found
            fraction = _repeating(match.group(0))
            if fraction is None:
                return match.group(0)
            found = True
            return f"({fraction.numerator}/{fraction.denominator})"

        python = _python(side)
        read.append((_value(_DECIMAL_NUMBER.sub(exact, python)) if python is not None else None, found))
    (left, left_found), (right, right_found) = read
    return (left_found or right_found) and left is not None and left == right


def _bases(texts: Sequence[str]) -> set[int]:
    found = {int(a or b) for text in texts for a, b in _BASE_NAMED.findall(text)}
    found |= {
        base for text in texts for word, base in _BASE_WORDS.items() if re.search(rf"\b{word}\b", text, re.I)
    }
    return {base for base in found if 2 <= base <= 10}


def _in_base(expression: str, base: int) -> str | None:
    """`expression` with every whole numeral read in `base`, or None where a digit does not fit it."""
    numerals = _INTEGER.findall(expression)
    if any(int(digit) >= base for numeral in numerals for digit in numeral):
        return None
    return _INTEGER.sub(lambda m: str(int(m.group(0), base)), expression)


def numerals_in_base(claim: str, texts: Sequence[str]) -> bool:
    """Does the claim hold with the numerals of one side, or of both, read in a base the claim or `texts`
    name?

    >>> numerals_in_base("101 = 5", ["In base 2, we have 101 = 5."])
    True
    >>> numerals_in_base("101 = 6", ["In base 2, we have 101 = 6."])
    False
    """
    sides = _number_sides(re.sub(r"_\s*\{?\s*\d{1,2}\s*\}?", "", claim))
    if sides is None:
        return False
    left, right = sides
    for base in _bases([claim, *texts]):
        readings = ((_in_base(left, base), right), (left, _in_base(right, base)))
        for one, other in (*readings, (_in_base(left, base), _in_base(right, base))):
            value = _value(one)
            if other is not None and value is not None and value == _value(other):
                return True
    return False


# a side whose exact value is irrational: a constant or a function that gives one (`\\pi`, `√2`, `\\ln 3`)
_IRRATIONAL = re.compile(
    r"\\pi(?![A-Za-z])|π|\\sqrt(?![A-Za-z])|√|\\(?:ln|log|sin|cos|tan|exp)(?![A-Za-z])|(?<![A-Za-z\\])e\s*\^"
)


def irrational_rounded(claim: str, expected: str | None) -> bool:
    """Is an irrational side (π, a root, a logarithm) put equal to a written number of three figures or
    more, within half a unit of its last written digit of the value found (`expected`)? An irrational
    value is only ever written rounded: `\\pi \\times 250^2 = 196350` (196349.54) says `≈`.

    >>> irrational_rounded(r"\\pi \\times 250^2 = 196350", "196349.5408")
    True
    >>> irrational_rounded(r"\\pi \\times 250^2 = 196000", "196349.5408")
    False
    >>> irrational_rounded(r"\\sqrt{2} = 1", "1.414213562")
    False
    """
    sides = re.split(r"(?<![<>!\\])=", claim)
    if len(sides) != 2 or expected is None or not _IRRATIONAL.search(sides[0]):
        return False
    written = _python(sides[1])
    if written is None or not _NUMBER.fullmatch(written) or _figures(written) < _OPERAND_FIGURES:
        return False
    try:
        value = Fraction(expected)
    except (ValueError, ZeroDivisionError):
        return False
    # (the value found is itself a decimal of ten figures: its own last place is slack too)
    slack = Fraction(1, 2 * 10 ** _places(written)) + abs(value) / 10**9
    return abs(value - Fraction(written)) <= slack


_BULLET_LINE = re.compile(r"^[ \t]*-(?=\d)", re.MULTILINE)


def bullet_minus(claim: str, step: str) -> bool:
    """Is the claim written at the start of a line with a minus glued to its first number, in a step of two
    such lines or more (`   -1 = (-1)^2`, `   -4 = (-2)^2`: a list's bullets), and does it hold without it?

    >>> bullet_minus("-1 = (-1)^2", "squares:\\n   -1 = (-1)^2\\n   -4 = (-2)^2")
    True
    >>> bullet_minus("-1 = (-1)^2", "So -1 = (-1)^2.")
    False
    """
    text = claim.strip()
    if not text.startswith("-") or len(_BULLET_LINE.findall(step)) < 2:
        return False
    if not re.search(r"^[ \t]*" + re.escape(text), step, re.MULTILINE):
        return False
    sides = _number_sides(text[1:])
    if sides is None:
        return False
    left, right = (_value(side) for side in sides)
    return left is not None and left == right


# a slash followed by a product of written numbers (`10*9*8*7*6/5*4*3*2*1`) or by a quotient of two whole
# numbers (`10 miles/1/4 inch`): the product or the quotient may be a denominator
_SLASH_PRODUCT = re.compile(r"/(\d+(?:\.\d+)?(?:\*\d+(?:\.\d+)?)+|\d+/\d+(?![\d.]))")


def slash_before_product(claim: str) -> bool:
    """Does the claim hold with each product of numbers, or quotient of two whole numbers, right after a
    slash read as the denominator (`10*9*8*7*6/5*4*3*2*1 = 252`, a binomial written without its brackets;
    `20 inches * 10 miles/1/4 inch = 800`, a scale of 10 miles to a quarter inch)? Units after numbers
    are set aside.

    >>> slash_before_product("10*9*8*7*6/5*4*3*2*1 = 252")
    True
    >>> slash_before_product("10*9/2*3 = 135")
    False
    >>> slash_before_product("20 inches * 10 miles/1/4 inch = 800"), slash_before_product("12/3/2 = 2")
    (True, False)
    """
    sides = _number_sides(_UNIT.sub("", claim))
    if sides is None or not _SLASH_PRODUCT.search(sides[0]):
        return False
    value, written = _value(_SLASH_PRODUCT.sub(r"/(\1)", sides[0])), _value(sides[1])
    return value is not None and value == written


def other_reading(
    claim: str,
    index: int,
    chain: Sequence[str],
    problem_text: str | None,
    sentence: str,
    expected: str | None = None,
) -> str | None:
    """Why the failed claim of step `index` may hold under another reading of what is written, or None."""
    if irrational_rounded(claim, expected):
        return "an irrational value put equal to a number written to its last digit: rounded (`=` for `≈`)"
    if bullet_minus(claim, chain[index]):
        return "a minus at the start of a line of a list (`-1 = (-1)^2`): a bullet, and without it it holds"
    if slash_before_product(claim):
        return "it holds with the product or quotient after a slash read as the denominator (`10*9*8/3*2*1`)"
    texts = [problem_text or "", *chain[max(0, index - _REACH) : index + 1]]
    if integer_quotient(claim, texts):
        return (
            "it holds with its quotients read as integer parts, and the text speaks of remainders or floors"
        )
    if rounded_value(claim, sentence):
        return "its right side is the exact value rounded to the places written (`=` for `≈`)"
    if rounded_operands(claim, sentence, problem_text or ""):
        return "it holds with its decimals read as values rounded to the places written (`2.83` for `2√2`)"
    if repeating_decimal(claim):
        return "it holds with a repeating decimal written rounded read as its fraction (`1.6667` for `5/3`)"
    if numerals_in_base(claim, texts):
        return "it holds with numerals read in the base the text names"
    return None
