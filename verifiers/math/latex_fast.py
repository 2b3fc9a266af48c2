"""A fast, exact reading of the common LaTeX subset: `latex2sympy`'s answer without its ANTLR parser.

Most sides the step checker parses are polynomials and fractions (`x^2 - 2x - 3`, `\\frac{x^2}{8}`,
`\\sqrt{x^2 + 64}`), and the pure-Python ANTLR parser spends milliseconds on each (an `x^2` fails the SLL
parse and pays a full LL parse). `fast_parse` reads that subset with a small recursive-descent parser and
builds the expression with the converter's own rules (`add_flat`, `mul_flat`, integer fractions as
`Rational`, mixed fractions, unary minus folding into numbers, `evaluate=False` throughout), so a text it
accepts gives the srepr `latex2sympy` gives, but for factors side by side, read as `latex_parse`'s
converter reads them (`side_by_side`: a mixed number only as written). What it is unsure of, it refuses
(`None`), and the caller runs the ANTLR parse: a different expression would change a verdict, a refusal
only costs time.

The text is normalized by the library's own `normalize_latex` and split into tokens by the library's own
lexer (about 0.1 ms), so keywords inside letter runs (`tr`, `floor`), differentials (`dx`), `E`,
percent and e-notation numbers reach this parser as the token types the grammar sees, and only
the accepted ones are read: numbers, letters but `I`, Greek commands, `+ - * / \\cdot \\times \\div`,
`^`, groups in `( ) { } [ ]`, `\\frac` (and `\\dfrac`, `\\tfrac`), `\\sqrt` and `\\sqrt[n]`, `\\sin \\cos
\\tan \\csc \\sec \\cot \\log \\ln \\exp` with an optional power (`\\sin^2 x`, `\\sin^{-1}` is arcsin) or
base (`\\log_2 8`), and `e` (`e^x` is `exp(x)`, evaluated as the converter does).

Refused because the grammar reads them another way or ambiguously:
- a letter or Greek command (with or without an exponent) followed by a group whose content is a single
  atom (`x(y)`, `x^2(3)`, `\\pi(2)`) or by `{(` / `{[`: the grammar reads a function call `x(y)`;
- a second `^` in a row (`2^x^2` is `2^(x^2)`: the exponent's letter takes its own exponent);
- `I` (the converter returns `sympy.I` and drops an exponent it carries);
- a whole text that is one `{...}` group, also inside whole `(...)` or `[...]` (a set, `FiniteSet`), and
  empty input.

Not read here (the ANTLR parse reads them): subscripts but a logarithm's base (`x_1`), arc and hyperbolic
functions, relations, sets and tuples, `\\pm`, percent, `!`, `|x|`, `\\binom`, text and accents.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import sympy
import sympy.functions.elementary.trigonometric as sympy_trig
from antlr4 import InputStream
from antlr4.error.ErrorListener import ErrorListener
from latex2sympy2_extended.antlr_parser import PSLexer
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, NormalizationConfig, _Latex2Sympy
from latex2sympy2_extended.math_normalization import normalize_latex
from latex2sympy2_extended.symbols import get_symbol

_NORMALIZATION = NormalizationConfig()
# add_flat and mul_flat read no converter state: one instance serves every thread
_FLAT = _Latex2Sympy(None, None, False, config=ConversionConfig())

_NUMBER = PSLexer.NUMBER
_LETTER = PSLexer.LETTER_NO_E
_GREEK = PSLexer.GREEK_CMD
_CARET = PSLexer.CARET
_UNDERSCORE = PSLexer.UNDERSCORE
_ADD, _SUB = PSLexer.ADD, PSLexer.SUB
_MUL_OPS = frozenset({PSLexer.MUL, PSLexer.CMD_TIMES, PSLexer.CMD_CDOT})
_DIV_OPS = frozenset({PSLexer.DIV, PSLexer.CMD_DIV})
_L_PAREN, _L_BRACE, _L_BRACKET = PSLexer.L_PAREN, PSLexer.L_BRACE, PSLexer.L_BRACKET
_R_PAREN, _R_BRACE, _R_BRACKET = PSLexer.R_PAREN, PSLexer.R_BRACE, PSLexer.R_BRACKET
_CLOSE = {_L_PAREN: _R_PAREN, _L_BRACE: _R_BRACE, _L_BRACKET: _R_BRACKET}
_FRAC, _SQRT = PSLexer.CMD_FRAC, PSLexer.FUNC_SQRT
_EXP_E = PSLexer.EXP_E
_TRIG = frozenset(
    {
        PSLexer.FUNC_SIN,
        PSLexer.FUNC_COS,
        PSLexer.FUNC_TAN,
        PSLexer.FUNC_CSC,
        PSLexer.FUNC_SEC,
        PSLexer.FUNC_COT,
    }
)
_NAMED = _TRIG | {PSLexer.FUNC_LOG, PSLexer.FUNC_LN, PSLexer.FUNC_EXP}
_FUNCS = _NAMED | {_SQRT, _EXP_E}
_ATOMS = frozenset({_NUMBER, _LETTER, _GREEK})
_NAMES = frozenset({_LETTER, _GREEK})
_POSTFIX_START = frozenset({_NUMBER, _LETTER, _GREEK, _L_PAREN, _L_BRACE, _L_BRACKET, _FRAC}) | _FUNCS
_NOFUNC_START = _POSTFIX_START - _FUNCS
_ACCEPTED = (
    _POSTFIX_START | _MUL_OPS | _DIV_OPS | {_ADD, _SUB, _CARET, _UNDERSCORE, _R_PAREN, _R_BRACE, _R_BRACKET}
)
_END = -1


class _Refused(Exception):
    """Outside the subset read here with certainty."""


class _Unlexable(_Refused):
    """The lexer refused a character (at `column`): the grammar's start rule ends at EOF, so a parse lexes
    every character, and with a refused one no parse of the text can succeed, in any prediction mode."""

    def __init__(self, column: int, message: str) -> None:
        super().__init__(message)
        self.column = column


class _RaiseOnError(ErrorListener):
    def syntaxError(
        self, recognizer: Any, offendingSymbol: Any, line: Any, column: Any, msg: Any, e: Any
    ) -> None:
        raise _Unlexable(int(column), msg)


def _tokens(text: str) -> list[tuple[int, str]]:
    lexer = PSLexer(InputStream(text))
    lexer.removeErrorListeners()
    lexer.addErrorListener(_RaiseOnError())
    return [(token.type, token.text) for token in lexer.getAllTokens()]


def _number(text: str) -> Any:
    """The converter's `parse_number` (leading zeros of an integer dropped, then `sympy.Number`), whose
    `parse_expr` costs a millisecond: an integer is built directly (`parse_expr` gives `Integer` too), a
    decimal once per text."""
    if text.isdigit():
        return sympy.Integer(int(text))
    return _decimal(text)


@functools.lru_cache(maxsize=4096)
def _decimal(text: str) -> Any:
    return sympy.Number(text)


def _negate(value: Any) -> Any:
    """Unary and binary minus alike: a number is negated, anything else becomes `-1 * value`."""
    if value.func.is_Number:
        return -value
    return _FLAT.mul_flat(-1, value)


class _Reader:
    """Recursive descent over the grammar's rules for the subset; the converter's rule at each node."""

    def __init__(self, tokens: list[tuple[int, str]]) -> None:
        self.types = [kind for kind, _ in tokens] + [_END]
        self.texts = [text for _, text in tokens] + [""]
        self.at = 0

    def peek(self, offset: int = 0) -> int:
        return self.types[min(self.at + offset, len(self.types) - 1)]

    def expect(self, kind: int) -> None:
        if self.peek() != kind:
            raise _Refused(f"expected token {kind}")
        self.at += 1

    def closing(self, start: int) -> int:
        """The index of the bracket that closes the one at `start`."""
        depth = 0
        for index in range(start, len(self.types) - 1):
            kind = self.types[index]
            if kind in _CLOSE:
                depth += 1
            elif kind in (_R_PAREN, _R_BRACE, _R_BRACKET):
                depth -= 1
                if depth == 0:
                    return index
        raise _Refused("unbalanced")

    def expr(self) -> Any:
        # additive: left-associative; `a - b` adds `-b` (a number negated, else -1 * b), flattened
        value = self.mp()
        while self.peek() in (_ADD, _SUB):
            negative = self.peek() == _SUB
            self.at += 1
            right = self.mp()
            value = _FLAT.add_flat(value, _negate(right) if negative else right)
        return value

    def mp(self, nofunc: bool = False) -> Any:
        value = self.unary(nofunc)
        while self.peek() in _MUL_OPS or self.peek() in _DIV_OPS:
            divide = self.peek() in _DIV_OPS
            self.at += 1
            right = self.unary(nofunc)
            if not divide:
                value = _FLAT.mul_flat(value, right)
            elif value.is_Integer and right.is_Integer:
                value = sympy.Rational(value, right)
            else:
                value = sympy.Mul(value, sympy.Pow(right, -1, evaluate=False), evaluate=False)
        return value

    def unary(self, nofunc: bool = False) -> Any:
        """`nofunc`: the grammar's `unary_nofunc` (a function's argument without parentheses), whose
        factors after the first are no function calls: `\\cos x \\sin x` is cos(x) sin(x)."""
        if self.peek() == _ADD:
            self.at += 1
            return self.unary(nofunc)
        if self.peek() == _SUB:
            self.at += 1
            return _negate(self.unary(nofunc))
        factors, written = [], []
        while not factors or self.peek() in (_NOFUNC_START if nofunc else _POSTFIX_START):
            start = self.at
            factors.append(self.postfix())
            written.append("".join(self.texts[start : self.at]))
        return _juxtaposed(factors, written)

    def postfix(self) -> Any:
        base = self.comp()
        if self.peek() != _CARET:
            return base
        exponent = self.superscript()
        if self.peek() == _CARET:
            raise _Refused("a second exponent: the grammar is ambiguous there")
        return sympy.Pow(base, exponent, evaluate=False)

    def superscript(self) -> Any:
        """`^` and an atom or a braced expression."""
        self.expect(_CARET)
        if self.peek() in _ATOMS:
            return self.atom()
        if self.peek() == _L_BRACE:
            return self.group()
        raise _Refused("exponent")

    def function(self) -> Any:
        """`\\sin`, `\\log`, ... with an optional power, then `(expr)` (the grammar's first choice) or the
        argument without parentheses, which takes products and quotients: `\\cos x / 2` is cos(x/2)."""
        name = self.texts[self.at][1:]
        self.at += 1
        base = None
        if self.peek() == _UNDERSCORE and name in ("log", "ln"):  # \\log_2 8: a base, then no power
            self.at += 1
            base = self.group() if self.peek() == _L_BRACE else self.atom()
            if self.peek() == _CARET:
                raise _Refused("a power after a base: `\\log_x^2` is ambiguous")
        power = self.superscript() if self.peek() == _CARET else None
        argument = self.group() if self.peek() == _L_PAREN else self.mp(nofunc=True)
        if name in ("log", "ln"):
            default = 10 if name == "log" else sympy.E
            value = sympy.log(argument, default if base is None else base, evaluate=False)
        elif name == "exp":
            value = sympy.exp(argument, evaluate=False)
        else:
            if power == -1:  # \\sin^{-1} is arcsin
                name, power = "a" + name, None
            value = getattr(sympy_trig, name)(argument, evaluate=False)
        if power:  # the converter's test: a power of 0 is dropped
            value = sympy.Pow(value, power, evaluate=False)
        return value

    def comp(self) -> Any:
        kind = self.peek()
        if kind in _CLOSE:
            return self.group()
        if kind == _FRAC:
            self.at += 1
            upper = self.braced()
            lower = self.braced()
            if upper.is_Integer and lower.is_Integer:
                return sympy.Rational(upper, lower)
            return sympy.Mul(upper, sympy.Pow(lower, -1, evaluate=False), evaluate=False)
        if kind in _NAMED:
            return self.function()
        if kind == _EXP_E:
            self.at += 1
            exponent = self.superscript() if self.peek() == _CARET else 1
            if self.peek() == _CARET:
                raise _Refused("a second exponent")
            return sympy.exp(exponent)  # the converter's handle_exp, evaluated
        if kind == _SQRT:
            self.at += 1
            root = self.group() if self.peek() == _L_BRACKET else None
            radicand = self.braced()
            return sympy.Pow(radicand, sympy.S.Half if root is None else 1 / root, evaluate=False)
        if kind in _NAMES:
            self.refuse_function_call()
        return self.atom()

    def atom(self) -> Any:
        kind, text = self.peek(), self.texts[self.at]
        if kind == _NUMBER:
            self.at += 1
            return _number(text)
        if kind in _NAMES and text != "I":
            self.at += 1
            return get_symbol(text.strip(), None, True)
        raise _Refused("atom")

    def group(self) -> Any:
        opening = self.peek()
        self.at += 1
        value = self.expr()
        self.expect(_CLOSE[opening])
        return value

    def braced(self) -> Any:
        if self.peek() != _L_BRACE:
            raise _Refused("expected {")
        return self.group()

    def refuse_function_call(self) -> None:
        """The grammar reads `x(y)`, `x^2(3)`, `x[y]`, `x{(y)}` as calls of a function `x`."""
        after = self.at + 1
        if self.types[after] == _CARET:
            after += 2 if self.types[after + 1] != _L_BRACE else self.closing(after + 1) - after + 1
        kind = self.types[after]
        if kind == _L_BRACE and self.types[after + 1] in (_L_PAREN, _L_BRACKET):
            raise _Refused("a function call")
        if kind in (_L_PAREN, _L_BRACKET):
            content = self.types[after + 1 : self.closing(after)]
            if (len(content) == 1 and content[0] in _ATOMS) or (
                len(content) > 1 and content[0] in _NAMES and content[1] == _CARET
            ):
                raise _Refused("a function call")


# A fraction written in digits (`\\frac{1}{2}`, `\\frac12`): the only right half of a mixed number
_WRITTEN_FRACTION = re.compile(r"\\[dt]?frac(?:\{(\d+)\}|(\d))(?:\{(\d+)\}|(\d))")


def side_by_side(left: Any, right: Any, left_text: str, right_text: str, right_is_last: bool) -> str:
    """How two factors written side by side are read: `product`, `mixed` (a mixed number) or `refused`.

    latex2sympy2_extended reads any integer value before a positive rational one as a mixed number
    (`convert_postfix_list`), whatever wrote them: `4 \\binom{15}{10}` is 3,007, `(2) 3` is 5,
    `\\frac{6}{3}\\frac{1}{2}` is 5/2, so a true `3\\binom{4}{2} = 18` was judged false. A mixed number
    is read only as written: digits, then a proper fraction in digits ending the run (`2\\frac{1}{2}`);
    digits before an improper one (`2\\frac{3}{2}`: a mixed number or a product) and two digit runs
    side by side (`2 3`: a product, a number with a space, or a typo) are refused; anything else
    multiplies.

    >>> two, half, half_text = sympy.Integer(2), sympy.Rational(1, 2), "\\\\frac{1}{2}"
    >>> side_by_side(two, half, "2", half_text, True), side_by_side(two, half, "(2)", half_text, True)
    ('mixed', 'product')
    >>> six = sympy.Integer(6)
    >>> side_by_side(two, six, "4", "\\\\binom{4}{2}", True), side_by_side(two, two, "2", "2", True)
    ('product', 'refused')
    """
    if left_text.isdigit() and right_text.isdigit():
        return "refused"
    if not (left.is_Integer and right.is_Rational and right.p > 0 and right.q > 0):
        return "product"
    written = _WRITTEN_FRACTION.fullmatch(right_text)
    if not left_text.isdigit() or written is None or not right_is_last:
        return "product"
    numerator, denominator = (int(a or b) for a, b in (written.group(1, 2), written.group(3, 4)))
    return "mixed" if 0 < numerator < denominator else "refused"


def mixed_number(whole: Any, fraction: Any) -> Any:
    """The converter's mixed number: `2\\frac{1}{2}` is 5/2 (a negative whole takes the fraction away)."""
    if whole < 0:
        return sympy.Rational(whole * fraction.q - fraction.p, fraction.q)
    return sympy.Rational(whole * fraction.q + fraction.p, fraction.q)


def _juxtaposed(factors: list[Any], written: list[str]) -> Any:
    """The converter's postfix list, right to left, read by `side_by_side`: a mixed number only as written
    (`2\\frac{1}{2}` is 5/2), anything else multiplies (flattened), `2 3` refused."""
    value = factors[-1]
    for index in range(len(factors) - 2, -1, -1):
        left = factors[index]
        reading = side_by_side(left, value, written[index], written[index + 1], index == len(factors) - 2)
        if reading == "refused":
            raise _Refused("side by side: " + written[index] + " " + written[index + 1])
        value = mixed_number(left, value) if reading == "mixed" else _FLAT.mul_flat(left, value)
    return value


def _braced_whole(reader: _Reader) -> bool:
    """The whole text is `{...}`, alone or inside whole `(...)` / `[...]`: to the grammar a set (`({0})` is
    a tuple of one element, that element the set {0})."""
    first, last = 0, len(reader.types) - 2
    while reader.types[first] in (_L_PAREN, _L_BRACKET) and reader.closing(first) == last:
        first, last = first + 1, last - 1
    return reader.types[first] == _L_BRACE and reader.closing(first) == last


@dataclass(frozen=True)
class FastReading:
    """What `fast_read` found: the value (None where this reader is not certain), the normalized text the
    ANTLR parsers read next, and where the lexer refused a character (None: it read them all)."""

    value: sympy.Basic | None
    normalized: str
    unlexable_at: int | None


def fast_read(text: str) -> FastReading:
    """`fast_parse`, with the normalized text and the lexer's refusal the parse after it needs (the text is
    normalized and lexed once).

    >>> fast_read("x + \\\\dots").unlexable_at, fast_read("x + 1").value
    (4, x + 1)
    """
    normalized = normalize_latex(text, _NORMALIZATION)
    try:
        tokens = _tokens(normalized)
    except _Unlexable as refused:
        return FastReading(None, normalized, refused.column)
    return FastReading(_value(tokens), normalized, None)


def fast_parse(text: str) -> sympy.Basic | None:
    """`latex2sympy(text)` for the common subset, or `None` where this reader is not certain.

    >>> fast_parse("2\\\\frac{1}{2} + x^2")
    x**2 + 5/2
    >>> fast_parse("x_1") is None
    True
    """
    return fast_read(text).value


def _value(tokens: list[tuple[int, str]]) -> sympy.Basic | None:
    try:
        if not tokens or any(kind not in _ACCEPTED for kind, _ in tokens):
            return None
        reader = _Reader(tokens)
        if _braced_whole(reader):
            return None
        value = reader.expr()
        if reader.peek() != _END:
            return None
        return value
    except _Refused:
        return None
    except Exception:  # sympy raised building it (`0/0 * 0`), as the library's own conversion does: refused
        return None
