"""Exact, bounded arithmetic over the math written in free text.

The step checker's fast path: a small lexer turns a step's text into math runs (`48/2 = 24`,
`0.2 x 50 = $10`, `7 stickers/page * 6 pages = 42 stickers`), and a Pratt parser evaluates each side
with `Fraction`s, in-process and exactly. Nothing here can blow up: powers and intermediate sizes are
capped (`TooLarge`), so `5^(5^(5^5))` is refused in microseconds instead of hanging.

Unknowns are allowed in one variable, linearly (`2x + 5 = 15`), which is what "simple equations in one
variable" in worked solutions look like; anything else is `NotEvaluable` and the claim is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from prm_factory.verifiers.math.numbers import Literal

MAX_EXPONENT = 10_000
MAX_LITERAL_CHARS = 60
MAX_BITS = 14_000  # below CPython's 4,300-digit int printing limit (about 14,284 bits): past it, printing the
# value for the evidence raised ValueError and failed the whole chain's labelling


class NotEvaluable(Exception):
    """The text is not an expression this evaluator can give an exact value to."""


class TooLarge(NotEvaluable):
    """The value would exceed the size guard (a power tower, a huge factorial-like product)."""


@dataclass(frozen=True)
class Token:
    kind: str  # num | op | eq | lp | rp | var | word | sep | latex
    text: str
    start: int
    literal: Literal | None = None


_NUMBER = (
    r"(?:\\?\$\s?)?"  # currency
    r"(?:\d{1,3}(?:,(?:\\!)?\d{3})+(?!\d)|\d{1,3}(?: 000)+(?![\d/])|\d+)"  # 1,000 / 320,\!000 / 18 000 / 42
    r"(?:\.\d+)?(?:[eE][+-]?\d{1,3}(?![\w]))?"  # decimals, scientific notation
    r"(?:\s?\\?%)?"  # percent
)
_LEXER = re.compile(
    r"(?P<bullet>(?m:^)[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+"  # list markers: "- 48/2 = 24", "2) ..."
    r"|\*\*(?=\s*[A-Za-z])|(?<=[A-Za-z:.])\*\*)"  # markdown bold: "**Step 3:**"
    r"|(?P<frac>\\[dt]?frac\{\s*(?P<fnum>\d+)\s*\}\{\s*(?P<fden>\d+)\s*\}(?P<fpct>\s?\\?%)?)"
    r"|(?P<text>\\(?:text|mathrm|textbf|mbox)\{[^{}]*\})"
    r"|(?P<delim>\\[()\[\]]|\$\$)"
    # never a product: a subscripted name (`s_A`, `CDs_at_10`), a function value (`S(2)`), a ratio (`M:F`)
    r"|(?P<ident>[A-Za-z][A-Za-z0-9]*(?:_(?:\{[^{}\s]*\}|[A-Za-z0-9]+))+|[A-Za-z]\(\d+\)|[A-Za-z]+:[A-Za-z]+)"
    r"|(?P<bad>\d{1,2}:[0-5]\d(?![\d/])|\d{1,2}:\d(?![\d/.])|\d+(?:\.\d+)?[A-Z][a-z]+|\d+(?:\.\d+)?-[A-Za-z]+|(?<![\d.])0\d+|\d{1,3},\d{4,}|(?:[A-WYZa-wyz]|[A-Za-z]{2,})\d+)"
    r"|(?P<latexmixed>(?P<lwhole>\d+)\s*\\[dt]?frac\{\s*(?P<lnum>\d+)\s*\}\{\s*(?P<lden>[1-9]\d*)\s*\}(?P<lpct>\s?\\?%)?)"
    rf"|(?P<mixed>(?<![\d.,])\d+ (?:and )?\d+/\d+(?![\d.,/]))"
    rf"|(?P<tight>(?<![\d.,/])\d+/\d+(?![\d.,/]))"
    rf"|(?P<num>{_NUMBER}|\.\d+(?:\s?%)?)"
    r"|(?P<op>\*\*|\\times|\\cdot|\\div|[+\-*/^×÷−⋅·–])"
    r"|(?P<eq>==?|≈|\\approx)"
    r"|(?P<lp>\\left\(|[(\[{])|(?P<rp>\\right\)|[)\]}])"
    r"|(?P<skip>[€£¥]|\\[,;!: ]|\\quad|\\text|\\mathrm|\\left|\\right|\{,\}|\s+)"
    # a logarithm with its base (`\\log_5`, `\\log_{10}`): one command, so the run is not cut at its subscript
    r"|(?P<logb>\\log_(?:\{[^{}\s]*\}|[A-Za-z0-9]))"
    r"|(?P<cmd>\\[A-Za-z]+)"
    r"|(?P<word>[A-Za-z][A-Za-z'’]*(?:-[A-Za-z]+)*)"
    r"|(?P<sep>.)",
    re.DOTALL,
)
_OP_CANON = {
    "×": "*",
    "\\times": "*",
    "\\cdot": "*",
    "⋅": "*",
    "·": "*",
    "÷": "/",
    "\\div": "/",
    "−": "-",
    "–": "-",
    "**": "^",
}
_WORD_OPS = {"times": "*", "plus": "+", "minus": "-", "x": "*", "X": "*"}
_PROSE_LETTERS = {"a", "A", "I"}


def _proper_mixed(raw: str) -> bool:
    """`2 1/2`, `2 and 1/2` are mixed numbers; `24 and 24/2` is a number and a division."""
    num, _, den = raw.replace(" and ", " ").split(" ")[-1].partition("/")
    return int(num) < int(den)


_MIXED_PARTS = re.compile(r"(\d+)( and | )(\d+/\d+)")


def lex(text: str, *, _offset: int = 0) -> list[Token]:
    """Tokens of `text`; spacing, `\\text`, `\\left` and `{,}` are dropped, unknown LaTeX kept as `latex`."""
    tokens: list[Token] = []
    for match in _LEXER.finditer(text):
        kind = match.lastgroup
        raw = match.group()
        if kind == "mixed" and not _proper_mixed(raw):
            parts = _MIXED_PARTS.fullmatch(raw)
            assert parts is not None  # the lexer's mixed group has exactly this shape
            for group in (1, 2, 3):
                tokens.extend(lex(parts.group(group), _offset=_offset + match.start() + parts.start(group)))
            continue
        if len(raw) > MAX_LITERAL_CHARS and kind in ("num", "tight", "mixed", "frac", "latexmixed", "bad"):
            tokens.append(
                Token("sep", raw, (_offset + match.start()))
            )  # no worked step writes a 60-digit number
            continue
        if kind == "skip":
            if raw.startswith("\\") or "{" in raw:
                continue
            if "\n" in raw:
                tokens.append(Token("sep", "\n", (_offset + match.start())))
            continue
        if kind == "bullet":
            tokens.append(Token("sep", raw, (_offset + match.start())))
            continue
        if kind == "latexmixed":  # 3\frac{1}{2}
            whole, num, den = (int(match.group(g)) for g in ("lwhole", "lnum", "lden"))
            lit = Literal(whole + Fraction(num, den), percent=match.group("lpct") is not None)
            tokens.append(Token("num", raw, (_offset + match.start()), lit))
            continue
        if kind == "frac":
            lit = Literal(
                Fraction(int(match.group("fnum")), max(int(match.group("fden")), 1)),
                percent=match.group("fpct") is not None,
                fraction=True,  # \frac{48}{2} = 24 is a division claim, not a restatement
            )
            if int(match.group("fden")) == 0:
                tokens.append(Token("latex", raw, (_offset + match.start())))
                continue
            tokens.append(Token("num", raw, (_offset + match.start()), lit))
        elif kind == "ident":  # a subscripted name, a function value, a ratio of names: never a product
            tokens.append(Token("word", raw, (_offset + match.start())))
        elif kind == "bad":
            tokens.append(Token("sep", raw, (_offset + match.start())))  # a time, an id, a malformed number
        elif kind == "tight":
            num, _, den = raw.partition("/")
            if int(den) == 0:
                tokens.append(Token("sep", raw, (_offset + match.start())))
                continue
            tokens.append(
                Token(
                    "num",
                    raw,
                    (_offset + match.start()),
                    Literal(Fraction(int(num), int(den)), fraction=True),
                )
            )
        elif kind in ("num", "mixed"):
            lit = Literal.parse(raw.replace(" and ", " ").replace("\\!", ""))
            tokens.append(Token("num" if lit else "sep", raw, (_offset + match.start()), lit))
        elif kind == "op":
            tokens.append(Token("op", _OP_CANON.get(raw, raw), (_offset + match.start())))
        elif kind == "text":
            tokens.append(Token("word", raw, (_offset + match.start())))
        elif kind == "delim":
            tokens.append(Token("sep", raw, (_offset + match.start())))
        elif kind in ("cmd", "logb"):
            tokens.append(Token("latex", raw, (_offset + match.start())))
        else:
            tokens.append(Token(kind or "sep", raw, (_offset + match.start())))
    return tokens


# ---------------------------------------------------------------------------------------------------------
# Expressions: an AST of tuples, evaluated to `Linear` (a*v + b in at most one unknown v).


@dataclass(frozen=True)
class Linear:
    """`coef * var + const`, exact; `var` is None for a plain number."""

    const: Fraction
    coef: Fraction = Fraction(0)
    var: str | None = None

    @property
    def is_number(self) -> bool:
        return self.var is None or self.coef == 0


def _num(value: Fraction) -> Linear:
    return Linear(value)


def _guard(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS:
        raise TooLarge("intermediate value too large")
    return value


def _combine_vars(a: Linear, b: Linear) -> str | None:
    if a.var and b.var and a.var != b.var and a.coef and b.coef:
        raise NotEvaluable("more than one unknown")
    return a.var if a.coef else b.var


def _apply(op: str, a: Linear, b: Linear) -> Linear:
    if op in "+-":
        sign = 1 if op == "+" else -1
        return Linear(_guard(a.const + sign * b.const), a.coef + sign * b.coef, _combine_vars(a, b))
    if op == "*":
        if not a.is_number and not b.is_number:
            raise NotEvaluable("non-linear product")
        if a.is_number:
            a, b = b, a
        k = b.const
        return Linear(_guard(a.const * k), a.coef * k, a.var)
    if op == "/":
        if a.var == b.var and a.const == 0 == b.const and b.coef:
            return Linear(a.coef / b.coef)  # "400g / 200g": a unit letter cancels
        if not b.is_number:
            raise NotEvaluable("division by an unknown")
        if b.const == 0:
            raise NotEvaluable("division by zero")
        return Linear(_guard(a.const / b.const), a.coef / b.const, a.var)
    if op == "^":
        if not (a.is_number and b.is_number):
            raise NotEvaluable("power of an unknown")
        base, exponent = a.const, b.const
        if exponent.denominator != 1:
            raise NotEvaluable("non-integer exponent")
        if abs(exponent) > MAX_EXPONENT:
            raise TooLarge("exponent too large")
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(exponent) > MAX_BITS:
            raise TooLarge("power too large")
        if base == 0 and exponent < 0:
            raise NotEvaluable("division by zero")
        return Linear(base**exponent)
    raise NotEvaluable(f"unknown operator {op}")


_BINDING = {"+": 10, "-": 10, "*": 20, "/": 20, "^": 30}


class _Parser:
    """Pratt parser over the tokens of one side of an equation."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def parse(self) -> tuple:
        if not self.tokens:
            raise NotEvaluable("empty side")
        node = self.expression(0)
        if self.pos != len(self.tokens):
            raise NotEvaluable(f"unexpected {self.tokens[self.pos].text!r}")
        return node

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expression(self, min_bp: int) -> tuple:
        left = self.prefix()
        while (tok := self.peek()) is not None:
            if tok.kind == "op":
                op = tok.text
            elif tok.kind in ("var", "lp") or (tok.kind == "num" and left[0] == "var"):
                op = "*"  # implied multiplication: 2x, 3(4 + 1)
            else:
                break
            bp = _BINDING[op]
            if bp < min_bp or (bp == min_bp and op != "^"):
                break
            if tok.kind == "op":
                self.pos += 1
            right = self.expression(bp + (0 if op == "^" else 1))
            left = (op, left, right)
        return left

    def prefix(self) -> tuple:
        tok = self.peek()
        if tok is None:
            raise NotEvaluable("missing operand")
        self.pos += 1
        if tok.kind == "num":
            return ("num", tok.literal)
        if tok.kind == "var":
            return ("var", tok.text)
        if tok.kind == "op" and tok.text in "+-":
            operand = self.expression(25)
            return ("neg", operand) if tok.text == "-" else operand
        if tok.kind == "lp":
            inner = self.expression(0)
            close = self.peek()
            if close is None or close.kind != "rp":
                raise NotEvaluable("unbalanced parenthesis")
            self.pos += 1
            return inner
        raise NotEvaluable(f"unexpected {tok.text!r}")


MAX_SIDE_TOKENS = 200


def parse_side(tokens: list[Token]) -> tuple:
    """AST of one side of an equation, or NotEvaluable (also for sides too long to be a worked step)."""
    if len(tokens) > MAX_SIDE_TOKENS:
        raise NotEvaluable("side too long")
    try:
        return _Parser(tokens).parse()
    except RecursionError as exc:
        raise NotEvaluable("nested too deeply") from exc


def evaluate(node: tuple, bindings: Mapping[str, Fraction], *, percent_as_fraction: bool = True) -> Linear:
    """Exact value of an AST; `p%` reads as p/100 or as p; an unbound variable stays symbolic."""
    kind = node[0]
    if kind == "num":
        lit: Literal = node[1]
        return _num(lit.value / 100 if lit.percent and percent_as_fraction else lit.value)
    if kind == "var":
        name = node[1]
        if name in bindings:
            return _num(bindings[name])
        return Linear(Fraction(0), Fraction(1), name)
    if kind == "neg":
        inner = evaluate(node[1], bindings, percent_as_fraction=percent_as_fraction)
        return Linear(-inner.const, -inner.coef, inner.var)
    a = evaluate(node[1], bindings, percent_as_fraction=percent_as_fraction)
    b = evaluate(node[2], bindings, percent_as_fraction=percent_as_fraction)
    return _apply(kind, a, b)


def has_percent(node: tuple) -> bool:
    if node[0] == "num":
        return node[1].percent
    if node[0] == "var":
        return False
    return any(has_percent(child) for child in node[1:])


def bare_literal(node: tuple) -> Literal | None:
    """The literal when a side is just a number (`24`, `-3`, `$5`), else None."""
    if node[0] == "num":
        return None if node[1].fraction else node[1]
    if node[0] == "neg" and node[1][0] == "num" and not node[1][1].fraction:
        lit = node[1][1]
        return Literal(-lit.value, lit.decimals, lit.percent, lit.currency)
    return None


def literals(node: tuple) -> list[Literal]:
    """Every number written in a parsed side, left to right (`2 * (3 + x)` gives 2 and 3)."""
    if node[0] == "num":
        return [node[1]]
    if node[0] == "var":
        return []
    return [lit for child in node[1:] for lit in literals(child)]


def leading_literal(node: tuple) -> Literal | None:
    """Leftmost literal of a binary expression: `24` in `24 * 3` (for running totals `a + b = 24 * 3`)."""
    if node[0] not in _BINDING:
        return None
    while node[0] in _BINDING:
        node = node[1]
    return node[1] if node[0] == "num" and not node[1].fraction else None
