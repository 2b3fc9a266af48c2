"""The quantities of a worked reference solution: what a chain on track may bring in.

A reference solution fixes which numbers a correct chain needs: the givens of the question (digits and
number words: "twice", "half", "a dozen", "three"), every intermediate value the solution computes, and
what is exactly derivable from those without a new modelling decision: the partial results of each
computation under re-bracketing (`16 - 3 - 4` also yields 13, 12 and 7; `3 * 4 * 5` yields 12, 20, 15)
and the percent readings of a percentage (20 % is 20, 1/5, and its complement 80, 4/5). All values are
exact `Fraction`s.

A step that combines the givens in a way the reference never does (`16 * 3` where the solution takes
`16 - 3 - 4`) brings in a quantity outside this set; that is what the aligner looks for.

>>> solution = "She has 16 - 3 = <<16-3=13>>13 left.\\n#### 13"
>>> ref = reference_quantities("Janet has 16 eggs and eats 3.", solution)
>>> sorted(int(v) for v in ref.values if v.denominator == 1 and v > 1)
[3, 13, 16]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations

from prm_factory.verifiers.math.public import Literal, NotEvaluable, Token, evaluate, lex, parse_side

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
_FINAL_MARK = re.compile(r"^\s*####\s*(.+?)\s*$", re.MULTILINE)
_STEP_MARKER = re.compile(r"^\s*(?:\*\*|#+\s*)?(?:step|part)\s*\d+\s*[:.)]?(?:\*\*)?", re.IGNORECASE)
MAX_TERMS = 8  # re-bracketing enumerates subsets of one flat sum / product: 2^8 at most

# Number words of the question that are quantities. "half" gives both 1/2 and 2 (halving is a division by 2).
_WORD_VALUES: dict[str, tuple[Fraction, ...]] = {
    "zero": (Fraction(0),),
    "one": (Fraction(1),),
    "two": (Fraction(2),),
    "three": (Fraction(3),),
    "four": (Fraction(4),),
    "five": (Fraction(5),),
    "six": (Fraction(6),),
    "seven": (Fraction(7),),
    "eight": (Fraction(8),),
    "nine": (Fraction(9),),
    "ten": (Fraction(10),),
    "eleven": (Fraction(11),),
    "twelve": (Fraction(12),),
    "thirteen": (Fraction(13),),
    "fourteen": (Fraction(14),),
    "fifteen": (Fraction(15),),
    "sixteen": (Fraction(16),),
    "seventeen": (Fraction(17),),
    "eighteen": (Fraction(18),),
    "nineteen": (Fraction(19),),
    "twenty": (Fraction(20),),
    "thirty": (Fraction(30),),
    "forty": (Fraction(40),),
    "fifty": (Fraction(50),),
    "sixty": (Fraction(60),),
    "seventy": (Fraction(70),),
    "eighty": (Fraction(80),),
    "ninety": (Fraction(90),),
    "hundred": (Fraction(100),),
    "thousand": (Fraction(1000),),
    "million": (Fraction(10**6),),
    "dozen": (Fraction(12),),
    "dozens": (Fraction(12),),
    "half": (Fraction(1, 2), Fraction(2)),
    "halves": (Fraction(1, 2), Fraction(2)),
    "twice": (Fraction(2),),
    "double": (Fraction(2),),
    "doubled": (Fraction(2),),
    "triple": (Fraction(3),),
    "tripled": (Fraction(3),),
    "thrice": (Fraction(3),),
    "quadruple": (Fraction(4),),
    "third": (Fraction(1, 3), Fraction(3)),
    "thirds": (Fraction(1, 3), Fraction(3)),
    "quarter": (Fraction(1, 4), Fraction(4)),
    "quarters": (Fraction(1, 4), Fraction(4)),
    "fourth": (Fraction(1, 4), Fraction(4)),
    "fifth": (Fraction(1, 5), Fraction(5)),
    "tenth": (Fraction(1, 10), Fraction(10)),
    "pair": (Fraction(2),),
    "pairs": (Fraction(2),),
}


# Unit words: the conversion factor they imply ("hours" -> 60) may scale a reference quantity without a new
# modelling decision (2 hours = 120 minutes). They are not quantities by themselves.
_UNIT_WORDS: dict[str, tuple[Fraction, ...]] = {
    "week": (Fraction(7),),
    "weeks": (Fraction(7),),
    "hour": (Fraction(60),),
    "hours": (Fraction(60),),
    "minute": (Fraction(60),),
    "minutes": (Fraction(60),),
    "day": (Fraction(24),),
    "days": (Fraction(24),),
    "year": (Fraction(12), Fraction(52), Fraction(365)),
    "years": (Fraction(12), Fraction(52), Fraction(365)),
    "month": (Fraction(30),),
    "months": (Fraction(30),),
    "cents": (Fraction(100),),
    "cent": (Fraction(100),),
    "percent": (Fraction(100),),
    "feet": (Fraction(12),),
    "foot": (Fraction(12),),
    "yard": (Fraction(3),),
    "yards": (Fraction(3),),
    "dollar": (Fraction(100),),
    "dollars": (Fraction(100),),
    "inches": (Fraction(12),),
    "inch": (Fraction(12),),
    "seconds": (Fraction(60),),
    "second": (Fraction(60),),
    "%": (Fraction(100),),
}


@dataclass(frozen=True)
class ReferenceQuantities:
    """`values` maps each exact reference quantity to where it comes from (for evidence)."""

    values: dict[Fraction, str]
    givens: frozenset[Fraction]
    answer: Fraction | None
    unit_factors: frozenset[Fraction] = frozenset()
    # partial remainders (`16 - 3` of `16 - 3 - 4`) -> the full values a chain must go on to reach
    incomplete: dict[Fraction, frozenset[Fraction]] = field(default_factory=dict)
    # what the solution itself works out (its computations, the numbers it writes, the answer), signed:
    # a chain's computed result should be one of these, not merely equal to a given
    worked: frozenset[Fraction] = frozenset()
    # what the solution states outright (numbers it writes, the value of each whole expression, the answer):
    # the rest of `values` are partials of one expression, which a chain reaches only from that expression
    stated: frozenset[Fraction] = frozenset()
    # each expression side's values (whole, partials, operands): the family a partial belongs to
    families: tuple[frozenset[Fraction], ...] = ()
    # the solution's written binary operations (`9 * 2` as ("*", 9, 2)): what a misread operand replaces
    operations: frozenset[tuple[str, Fraction, Fraction]] = frozenset()

    def supports(self, value: Fraction, operands: Sequence[tuple[Fraction, ...]]) -> bool:
        """Is `value` stated by the solution, or a partial of one of its expressions computed from that
        expression's own numbers (each operand given as its readings)?

        A chain that writes `40 * 3 = 120` where the reference's 120 is only `40 + 80` inside
        `40 + 20 + 80` has hit that partial by chance: 3 is no number of that expression.
        """
        if value in self.stated or -value in self.stated:
            return True
        for family in self.families:
            if value not in family and -value not in family:
                continue
            members = {abs(v) for v in family}
            if all(any(abs(r) in members or r in (0, 1) for r in readings) for readings in operands):
                return True
        return False

    def nearest(self, value: Fraction, k: int = 3) -> list[str]:
        """The k reference quantities closest to `value` (relative distance), as `number (origin)` strings."""

        def distance(ref: Fraction) -> Fraction:
            return abs(ref - value) / max(abs(ref), abs(value), Fraction(1))

        ranked = sorted(self.values, key=lambda ref: (distance(ref), ref))
        return [f"{format_quantity(ref)} ({self.values[ref]})" for ref in ranked[:k]]


def format_quantity(value: Fraction) -> str:
    """`13`, `2.5`, or `1/3` when a short decimal would not be exact."""
    if value.denominator == 1:
        return str(value.numerator)
    for places in range(1, 5):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return f"{float(value):.{places}f}"
    return f"{value.numerator}/{value.denominator}"


def literal_readings(lit: Literal) -> tuple[Fraction, ...]:
    """A written number's readings: `25%` is 25 and 1/4; anything else its value."""
    if lit.percent:
        return (lit.value, lit.value / 100)
    return (lit.value,)


def strip_step_marker(text: str) -> str:
    """`Step 3: 16 - 3 = 13` -> `16 - 3 = 13`, so the step index is not read as a quantity."""
    return _STEP_MARKER.sub(" ", text, count=1)


def text_numbers(text: str) -> list[tuple[Fraction, ...]]:
    """Readings of every number written in `text` (digits via the project's lexer), in order."""
    return [
        literal_readings(tok.literal) for tok in lex(text) if tok.kind == "num" and tok.literal is not None
    ]


_ORDINAL_DENOMINATORS = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
    "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7,
    "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10,
}  # fmt: skip
_FRACTION_WORD = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|a)[- ](" + "|".join(_ORDINAL_DENOMINATORS) + r")\b",
    re.IGNORECASE,
)


def word_numbers(text: str) -> list[tuple[str, Fraction]]:
    """Number words of a question as (word, value) pairs: "twice" -> 2, "half" -> 1/2 and 2,
    "two-thirds" -> 2/3 (besides 2, 1/3 and 3 from its parts)."""
    found: list[tuple[str, Fraction]] = []
    for word in re.findall(r"[A-Za-z]+", text):
        for value in _WORD_VALUES.get(word.lower(), ()):
            found.append((word.lower(), value))
    for match in _FRACTION_WORD.finditer(text):
        count, ordinal = match.group(1).lower(), match.group(2).lower()
        numerator = 1 if count == "a" else int(_WORD_VALUES[count][0])
        found.append((match.group().lower(), Fraction(numerator, _ORDINAL_DENOMINATORS[ordinal])))
    return found


_COINS = {"quarter": 25, "dime": 10, "nickel": 5, "penny": 1}
_COIN_WORDS = re.compile(r"\b(quarters?|dimes?|nickels?|penny|pennies)\b", re.IGNORECASE)


def coin_values(text: str) -> list[tuple[str, Fraction]]:
    """A question about coins gives their values: "7 nickels" carries 5 cents (0.05 dollars) each.

    "quarter" alone is a fraction ("a quarter of the pie"); it is a coin only next to other coins or cents.
    """
    words = {m.group(1).lower().rstrip("s").replace("pennie", "penny") for m in _COIN_WORDS.finditer(text)}
    coins_talk = bool(words - {"quarter"}) or bool(re.search(r"\b(?:cents?|coins?)\b", text, re.IGNORECASE))
    if not coins_talk:
        return []
    found: list[tuple[str, Fraction]] = []
    for word in sorted(words):
        cents = Fraction(_COINS[word])
        found += [(word, cents), (word, cents / 100)]
    return found


def unit_factors(text: str) -> set[Fraction]:
    """Conversion factors the unit words of `text` imply: "hours" -> 60, "weeks" -> 7."""
    found: set[Fraction] = set()
    for word in re.findall(r"[A-Za-z]+|%", text):
        found.update(_UNIT_WORDS.get(word.lower(), ()))
    return found


def _flatten(node: tuple, op_group: str) -> list[tuple[bool, tuple]] | None:
    """Flat operands of a +/- chain (sign) or a * and / chain (True = divide), None when not that group."""
    kind = node[0]
    if op_group == "add" and kind in ("+", "-"):
        left = _flatten(node[1], op_group) or [(False, node[1])]
        right = _flatten(node[2], op_group) or [(False, node[2])]
        if kind == "-":
            right = [(not neg, sub) for neg, sub in right]
        return left + right
    if op_group == "mul" and kind in ("*", "/"):
        left = _flatten(node[1], op_group) or [(False, node[1])]
        right = _flatten(node[2], op_group) or [(False, node[2])]
        if kind == "/":
            right = [(not inv, sub) for inv, sub in right]
        return left + right
    return None


def _value(node: tuple) -> Fraction | None:
    try:
        result = evaluate(node, {})
    except (NotEvaluable, ZeroDivisionError, OverflowError):
        return None
    return result.const if result.is_number else None


def subexpression_values(
    node: tuple, remainders: dict[Fraction, set[Fraction]] | None = None
) -> set[Fraction]:
    """Every value the expression yields on the way, in any bracketing of its flat sums and products.

    `remainders`, when given, collects the partial sums that mix signs (`16 - 3` inside `16 - 3 - 4`) with
    the full value they fall short of: such a partial is on track only if the chain goes on to complete it.

    >>> node = parse_side([t for t in lex("16-3-4") if t.kind != "skip"])
    >>> sorted(int(v) for v in subexpression_values(node) if v > 0)
    [3, 4, 7, 9, 12, 13, 16]
    """
    found: set[Fraction] = set()
    whole = _value(node)
    if whole is not None:
        found.add(whole)
    if node[0] == "num":
        found.update(literal_readings(node[1]))
        return found
    if node[0] == "neg":
        return found | subexpression_values(node[1], remainders)
    group = "add" if node[0] in ("+", "-") else "mul" if node[0] in ("*", "/") else None
    flat = _flatten(node, group) if group else None
    if not flat:
        for child in node[1:]:
            if isinstance(child, tuple):
                found |= subexpression_values(child, remainders)
        return found
    operands: list[tuple[bool, Fraction]] = []
    for inverted, sub in flat:
        found |= subexpression_values(sub, remainders)
        sub_value = _value(sub)
        if sub_value is None:
            return found
        operands.append((inverted, sub_value))
    if len(operands) > MAX_TERMS:
        return found
    if group == "mul":
        found |= _distributed_terms(flat, operands)
    for size in range(2, len(operands)):
        for subset in combinations(operands, size):
            if group == "add":
                total = sum((-v if neg else v for neg, v in subset), Fraction(0))
                found.update({total, -total})
                signs = {neg for neg, v in subset if v}
                if remainders is not None and len(signs) == 2 and whole is not None:
                    remainders.setdefault(abs(total), set()).add(abs(whole))
            else:
                product = Fraction(1)
                for inverted, v in subset:
                    if inverted and v == 0:
                        break
                    product = product / v if inverted else product * v
                else:
                    found.add(product)
                    if product != 0:
                        found.add(1 / product)
    return found


def _distributed_terms(
    flat: list[tuple[bool, tuple]], operands: list[tuple[bool, Fraction]]
) -> set[Fraction]:
    """`5 * (3 + 4)` also yields 15 and 20: a chain may distribute a product over a sum."""
    found: set[Fraction] = set()
    for position, (inverted, sub) in enumerate(flat):
        terms = _flatten(sub, "add")
        if inverted or not terms or len(terms) > MAX_TERMS:
            continue
        rest = Fraction(1)
        for other, (other_inverted, value) in enumerate(operands):
            if other != position:
                if other_inverted and value == 0:
                    break
                rest = rest / value if other_inverted else rest * value
        else:
            for _, term in terms:
                term_value = _value(term)
                if term_value is not None:
                    found.update({rest * term_value, -rest * term_value})
    return found


def _expression_values(
    text: str,
    remainders: dict[Fraction, set[Fraction]],
    families: list[frozenset[Fraction]] | None = None,
    wholes: set[Fraction] | None = None,
) -> set[Fraction]:
    """Values of every side of every `=` in `text` and their subexpressions; unreadable sides are skipped.

    `families` collects each side's values, `wholes` each side's own value, when given."""
    found: set[Fraction] = set()
    tokens = [tok for tok in lex(text) if tok.kind != "skip"]
    side: list[Token] = []
    for tok in [*tokens, None]:
        if tok is None or tok.kind in ("eq", "sep", "word"):
            if side:
                try:
                    node = parse_side(side)
                    values = subexpression_values(node, remainders)
                except NotEvaluable:
                    values = set()
                    node = None
                found |= values
                if families is not None and values:
                    families.append(frozenset(values))
                whole = _value(node) if node is not None else None
                if wholes is not None and whole is not None:
                    wholes.add(whole)
            side = []
            continue
        side.append(tok)
    return found


def written_operations(text: str) -> set[tuple[str, Fraction, Fraction]]:
    """Each `number op number` written in `text`, as (op, left, right): `9 * 2 = 18` gives ("*", 9, 2)."""
    tokens = [tok for tok in lex(text) if tok.kind != "skip"]
    found: set[tuple[str, Fraction, Fraction]] = set()
    for left, op, right in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if left.kind == "num" and op.kind == "op" and right.kind == "num" and left.literal and right.literal:
            found.add((op.text, left.literal.value, right.literal.value))
    return found


def with_sign(text: str, value: Fraction) -> Fraction:
    """`value`, read from `text` without its sign, negated where `text` opens on a minus."""
    return -value if text.lstrip().startswith("-") and value > 0 else value


def reference_answer_value(answer: str | None, solution: str) -> Fraction | None:
    """The reference's final number: `reference_answer`, else the `#### N` line of a GSM8K solution.

    >>> reference_answer_value("-\\dfrac{2}{3}", ""), reference_answer_value(None, "so 5 - 2 = 3\\n#### 3")
    (Fraction(-2, 3), Fraction(3, 1))
    """
    candidates = [answer] if answer else []
    candidates += _FINAL_MARK.findall(solution)
    for text in candidates:
        numbers = text_numbers(text)
        if len(numbers) == 1:
            return with_sign(text, numbers[0][0])  # `-\dfrac{2}{3}`: the reading of one number drops its sign
        if numbers:
            return numbers[-1][0]
    return None


def reference_quantities(
    question: str, solution: str | None, answer: str | None = None
) -> ReferenceQuantities | None:
    """The reference's quantities, or None when the solution is missing or has no number to read."""
    if not solution or not solution.strip():
        return None
    values: dict[Fraction, str] = {}

    worked: set[Fraction] = set()

    def add(value: Fraction, origin: str) -> None:
        values.setdefault(value, origin)
        if not origin.startswith(("given", "complement", "a given")):
            worked.add(value)

    givens: set[Fraction] = set()
    for readings in text_numbers(question):
        for value in readings:
            givens.add(value)
            add(value, "given")
            if readings[0] != value:  # a percentage: its complement and growth factor are no new decision
                add(1 - value, "complement of a given percentage")
                add(100 - readings[0], "complement of a given percentage")
                add(1 + value, "a given percentage as a growth factor")
                add(100 + readings[0], "a given percentage as a growth factor")
            elif 0 < value < 1:
                add(1 - value, "complement of a given fraction")
    for word, value in coin_values(question):
        givens.add(value)
        add(value, f"given (a {word} is worth {format_quantity(value)})")
    for word, value in word_numbers(question):
        givens.add(value)
        add(value, f"given ({word})")
        if 0 < value < 1:
            add(1 - value, f"complement of a given fraction ({word})")
    solution_numbers = 0
    remainders: dict[Fraction, set[Fraction]] = {}
    families: list[frozenset[Fraction]] = []
    wholes: set[Fraction] = set()
    operations: set[tuple[str, Fraction, Fraction]] = set()
    for expression in _ANNOTATION.findall(solution):
        operations |= written_operations(expression)
        for value in _expression_values(expression, remainders, families, wholes):
            add(value, f"reference computation <<{expression}>>")
            solution_numbers += 1
    plain = _ANNOTATION.sub(" ", solution)
    operations |= written_operations(plain)
    for line in plain.splitlines():
        for value in _expression_values(line, remainders, families, wholes):
            add(value, f"reference line: {line.strip()[:60]}")
            solution_numbers += 1
        for readings in text_numbers(line):
            for value in readings:
                add(value, f"reference line: {line.strip()[:60]}")
                solution_numbers += 1
    final = reference_answer_value(answer, solution)
    if final is not None:
        add(final, "reference answer")
    if solution_numbers == 0 and final is None:
        return None
    for value in list(values):  # signs: "lost 5" and "-5" are one quantity
        add(-value, values[value])
    units = unit_factors(question) | unit_factors(solution)
    firm = givens | ({final} if final is not None else set())
    incomplete = {
        value: frozenset(targets)
        for value, targets in remainders.items()
        if value not in firm and value not in _stated_results(solution)
    }
    # a given is worked out only where the solution computes it (`<<9/3=3>>`), not where it restates it
    worked = {value for value in worked if value not in givens} | _equation_results(solution)
    if final is not None:
        worked.add(final)
    worked |= {-value for value in worked}
    stated = wholes | _stated_results(solution) | _equation_results(solution) | firm
    stated |= {-value for value in stated}
    return ReferenceQuantities(
        operations=frozenset(operations),
        stated=frozenset(stated),
        families=tuple(families),
        worked=frozenset(worked),
        values=values,
        givens=frozenset(givens),
        answer=final,
        unit_factors=frozenset(units),
        incomplete=incomplete,
    )


_AFTER_EQUALS = re.compile(r"=\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?(?:/\d+)?)")


def _equation_results(solution: str) -> set[Fraction]:
    """Values the solution writes right of an `=` (annotation results included): what it computes."""
    found: set[Fraction] = set()
    for match in _AFTER_EQUALS.finditer(solution):
        for readings in text_numbers(match.group(1)):
            found.update(readings[:1])
    return found


def _stated_results(solution: str) -> set[Fraction]:
    """Numbers the reference writes down (annotation results, any number in its text): never partials."""
    found = {readings[0] for readings in text_numbers(_ANNOTATION.sub(" ", solution))}
    for annotation in _ANNOTATION.findall(solution):
        if "=" in annotation:
            found |= {readings[0] for readings in text_numbers(annotation.rsplit("=", 1)[1])}
    return found
