"""Find the checkable claims in a step's free text.

A claim is a run of math joined by `=` signs, as worked solutions write it: `16 - 3 - 4 = 9`,
`0.2 x 50 = $10`, `7 stickers/page * 6 pages = 42 stickers`, `x = 12`, `20% of 50 = 10`. Words are
allowed inside a run only where they read as units (after a number, before an operator) or as spelled
operators (`times`, `plus`, `minus`, `x` between numbers, `of` after a percent or a fraction); any other
word, a comma or a full stop ends the run. That keeps precision: `He has 5 apples and 3 = ...` never
becomes the claim `5 and 3`.

A run that contains LaTeX this module cannot evaluate (`\\sqrt`, `\\pi`, ...) is returned as `hard`,
with its source text, for the symbolic checker in the bounded worker.
`<<48/2=24>>` calculator annotations are claims too. Equality written in words is read as `=` where it
has the shape of a claim: `1/4 of 240, which is 16.`, `120 / 3600 is approximately 0.03.` (but not after a
bare number: `3/8 is equal to $375` states a share, not arithmetic).
Token offsets (and so `Run.start` / `Run.end`) are positions in the text given, annotations included.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from prm_factory.verifiers.math.arithmetic import Token, lex
from prm_factory.verifiers.math.numbers import Literal

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
_DOLLAR_ANNOTATION = re.compile(r"(\\?\$?)<<[^<>]*>>")
# "= ####283": a GSM8K answer mark fused to the result of the last claim; the mark is not part of it
_FUSED_ANSWER_MARK = re.compile(r"(?<==)[ \t]*#{2,}(?=[ \t]*\$?\d)")
# "$15,000 (widgets cost) + $2,500 (worker 1) = ...": a bracketed label that starts with a word and holds
# no operator names what a number counts; it is no operand (a bracket with math, `(x - 3)`, is kept)
# (separators and word characters are disjoint classes, so the match stays linear on hostile text)
_WORD_LABEL = re.compile(r"\([ \t]*[A-Za-z][A-Za-z'’]+(?:[ \t,.-]+[A-Za-z0-9'’]+)*[ \t]*\)")
# ", which is 16." / "that equals $12 total." : the number must close its clause (up to two unit words)
_WHICH_IS = re.compile(
    r",?[ \t]*\b(?:which|that)[ \t]+(?:is|equals)\b"
    r"(?=[ \t]*\$?\d[\d,.]*%?(?:[ \t]+[A-Za-z]+){0,2}[ \t]*(?:[.,;!?)]|$))",
    re.MULTILINE,
)
# "120 / 3600 is approximately 0.0333." / "5 + 3 is 8 apples.": an equality in words right after math (a
# digit, `)` or `%`), whose right side is a number closing its clause. A run starting with a bare number
# ("Day 2 is 5") is a label and stays unjudged (claims._check_run).
_IS_NUMBER = re.compile(
    r"[ \t]+(?:is|are|was|equals|gives(?:[ \t]+us)?)"
    r"(?:[ \t]+(?:approximately|about|roughly|around|exactly|equal[ \t]+to|indeed))?\b"
    r"(?=[ \t]*\$?\d[\d,.]*%?(?:[ \t]+[A-Za-z]+){0,2}[ \t]*(?:[.,;!?)]|$))",
    re.MULTILINE,
)


# what must stand right before such an "is": math (`5 + 3 is 8`), or an operation whose last operand carries
# unit words (`120 minutes / 3600 minutes is about 0.03`); a lone number with units (`400 hours is`) is not
_AFTER_MATH = re.compile(r"[\d)%]$")
_AFTER_UNITS = re.compile(r"[+\-*/×÷][ \t]*\$?\d[\d,.]*%?(?:[ \t]+[A-Za-z]+){1,2}$")


# "400 hours is equal to 400 * 20", "20 is indeed 2 * 2": a number stated equal, in words, to an expression.
# Written as `==` (EXPLICIT_EQUALS), which the label rules ("Week 2 = 35 + 35") leave alone: the words say
# it is a claim. The expression must follow (a number and an operator), so "3/8 is equal to $375" is not one.
EXPLICIT_EQUALS = "=="
_IS_EQUAL_TO = re.compile(
    r"[ \t]+(?:is|are|was|were)[ \t]+(?:equal[ \t]+to|indeed|exactly)\b"
    r"(?=[ \t]*\$?\d[\d,.]*(?:[ \t]+[A-Za-z]+)?[ \t]*(?:[+*/×÷-]|\\times|\\cdot))"
)
_NUMBER_BEFORE = re.compile(r"\d[\d,.]*(?P<units>(?:[ \t]+[A-Za-z]+){0,2})$")
_VALUE_AND_UNIT = re.compile(r"\d[\d,.]*[ \t]+([A-Za-z]+)")


def _unit(word: str) -> str:
    return word.lower().removesuffix("s")


def _explicit_equals(text: str) -> Callable[[re.Match[str]], str]:
    """`20 is indeed 2 * 2`; with units only when the chain ends in the same unit (`400 hours is equal to
    400 * 20 = 8000 hours`): `18 inches is equal to 18/12 = 1.5 feet` is a conversion, not a claim."""

    def replace(match: re.Match[str]) -> str:
        before = _NUMBER_BEFORE.search(text[max(0, match.start() - 48) : match.start()])
        if before is None:
            return match.group()
        units = before.group("units").split()
        if units:
            clause = _SENTENCE.split(text[match.end() : match.end() + 120])[0]
            ends = _VALUE_AND_UNIT.findall(clause)
            if not ends or _unit(ends[-1]) != _unit(units[0]):
                return match.group()
        return EXPLICIT_EQUALS.ljust(len(match.group()))

    return replace


_SENTENCE = re.compile(r"[.!?;]\s|\n|, (?:so|then|and)\b")


# a name's value as the object of a preposition right before "is" ("the probability corresponding to z = 1.55
# is around 0.939"): the subject of "is" is the phrase that holds it, not the value
_VALUE_AS_OBJECT = re.compile(
    r"\b(?:to|for|at|when|with|where|given|of)[ \t]+\$?[A-Za-z](?:_\w+)?"
    r"[ \t]*=[ \t]*-?\$?\d[\d,.]*%?\$?[ \t]*$",
    re.IGNORECASE,
)


# a relation in names set equal to a number right before "is" ("the number of triples such that a + b + c = 99
# is 5050"): a condition inside the subject's phrase; "is" gives the phrase's value, not the number's
_CONDITION_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])[A-Za-z][ \t]*[-+*/^]|[-+*/^][ \t]*[A-Za-z](?![A-Za-z]))[^=.;:!?]*"
    r"=[ \t]*-?\$?\d[\d,.]*%?\$?[ \t]*$"
)


def _is_as_equals(text: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        before = text[max(0, match.start() - 48) : match.start()]
        if _VALUE_AS_OBJECT.search(before) or _CONDITION_BEFORE.search(before):
            return match.group()
        if _AFTER_MATH.search(before) or _AFTER_UNITS.search(before):
            return _as_equals(match)
        return match.group()

    return replace


def _as_equals(match: re.Match[str]) -> str:
    """The words of an equality as `=`, padded to the same length so offsets stay those of the text."""
    return "=".ljust(len(match.group()))


_UNIT_WORD_LIMIT = 8
_PROSE_LETTERS = {"a", "A", "I"}
_MATH_WORDS = {"times": "*", "plus": "+", "minus": "-"}
# Words that join clauses, never units: "h = b/6 and t = b/2" is two runs, not "b/6 = b/2".
_CONNECTIVES = {
    "and",
    "or",
    "then",
    "so",
    "is",
    "are",
    "was",
    "were",
    "to",
    "if",
    "which",
    "that",
    "we",
    "get",
    "gives",
    "the",
    "but",
    "because",
    "since",
    "thus",
    "hence",
    "therefore",
    "with",
    "than",
    "while",
    "when",
    "where",
    "it",
    "this",
    "he",
    "she",
    "they",
    "i",
    "you",
    "be",
    "will",
    "would",
    "has",
    "have",
}


@dataclass(frozen=True)
class Run:
    """Tokens of one `=`-joined stretch of math; `hard` when it holds LaTeX the fast path cannot read."""

    tokens: tuple[Token, ...]
    text: str
    hard: bool = False
    after_word: bool = (
        False  # the run starts right after a word ("Week 2 = 35 + 35"): a bare first side is a label
    )

    @property
    def start(self) -> int:
        return self.tokens[0].start

    @property
    def end(self) -> int:
        last = self.tokens[-1]
        return last.start + len(last.text)


def extract_runs(text: str) -> list[Run]:
    """Every claim-bearing run in `text`, annotations first (they are the most explicit claims)."""
    runs: list[Run] = []
    for match in _ANNOTATION.finditer(text):
        runs.extend(_runs_from_tokens(lex(match.group(1), _offset=match.start(1)), text))
    # an annotation becomes blanks: "48/2 = <<48/2=24>>24 clips" reads "48/2 = 24 clips", as written, and
    # "= $<<40000*50000=2000000000>>200,000" keeps its "$" next to the number it was written for
    plain = _DOLLAR_ANNOTATION.sub(lambda m: " " * (len(m.group()) - len(m.group(1))) + m.group(1), text)
    plain = _FUSED_ANSWER_MARK.sub(lambda m: " " * len(m.group()), plain)
    plain = _WORD_LABEL.sub(lambda m: " " * len(m.group()), plain)
    plain = _WHICH_IS.sub(_as_equals, plain)
    plain = _IS_EQUAL_TO.sub(_explicit_equals(plain), plain)
    plain = _IS_NUMBER.sub(_is_as_equals(plain), plain)
    runs.extend(_runs_from_tokens(lex(plain), plain))
    return runs


# Spelled operators that, right before a run, mean its first side is only the end of a longer expression.
_SPELLED_OPERATORS = {"plus": "+", "minus": "-", "times": "*"}
# Function names that, right before a run (`cos 4x = 0`, `ln x = 1/2`), make its first side their argument:
# the side is `cos 4x`, not `4x`, and gives the name no value
_FUNCTION_NAMES = {
    *("sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh"),
    *("ln", "log", "lg", "exp", "sqrt", "abs", "det", "gcd", "lcm", "max", "min", "floor", "ceil"),
}


def _operator_before_word(earlier: list[Token]) -> bool:
    """Is the run's first number, after `earlier` (the last few tokens before it), right after a short word (a
    currency or unit, `Rs.`) that itself follows an operator (`225 / Rs. 450 * 100% = 50%`)? Then the side
    began before the word: `450 * 100%` is its end."""
    earlier = list(earlier)
    while earlier and earlier[-1].kind == "sep" and earlier[-1].text == ".":
        earlier.pop()
    return (
        len(earlier) >= 2
        and earlier[-1].kind == "word"
        and len(earlier[-1].text) <= 3
        and earlier[-2].kind == "op"
    )


def _function_before(before: Token | None, first: Token) -> bool:
    """Does the run's first side stand as a function's argument: after a function name (`cos 4x = 0`), or
    a bracket glued to a word (`f(x) = 2`, `f'(x) = 0`, `P(A) = 0.3`, `C(T) = 0.02`)?"""
    if before is None or before.kind != "word":
        return False
    return before.text.lower() in _FUNCTION_NAMES or (first.kind == "lp" and _attached(before, first))


def _numberish(tok: Token | None) -> bool:
    return tok is not None and tok.kind in ("num", "rp", "var")


def _attached(prev: Token | None, tok: Token) -> bool:
    return prev is not None and prev.start + len(prev.text) == tok.start


def _applied(tokens: list[Token], j: int) -> bool:
    """Is token `j` a name of several letters glued to an opening bracket (`sqrt(4)`, `exp(0.02)`): a
    function applied, which this reader does not evaluate (never a unit: `4 / sqrt(4)` is no rate)?"""
    tok = tokens[j]
    following = tokens[j + 1] if j + 1 < len(tokens) else None
    return (
        tok.kind == "word"
        and len(tok.text) > 1
        and following is not None
        and following.kind == "lp"
        and _attached(tok, following)
    )


# a letter with a subscript (`r_1`, `a_{10}`): a name, as a factor of the side it stands beside
_SUBSCRIPTED_NAME = re.compile(r"[A-Za-z]_\{?\w+\}?")


def _runs_on_unread(tokens: list[Token], i: int, current: list[Token]) -> bool:
    """Does token `i`, right after a relation's last operand, carry that side on into a factor the reader
    does not read: a bar opening on an operand (`120 = \\frac{1}{2} |3ay_1|`, an absolute value), or a name
    with a subscript that ends the side (`49\\pi = \\pi r_1^2` written without delimiters)?"""
    tok = tokens[i]
    if not current or current[-1].kind not in ("num", "rp", "latex", "var"):
        return False  # (the side's last token as the run holds it, a name the reader made included)
    if not any(t.kind == "eq" for t in current):
        return False
    if tok.text == "|":
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        return nxt is not None and nxt.kind in ("num", "word", "lp") and nxt.start == tok.start + 1
    return (
        tok.kind == "word"
        and bool(_SUBSCRIPTED_NAME.fullmatch(tok.text))
        and _ends_a_side(tokens, i, current)
    )


def _ends_a_side(tokens: list[Token], i: int, current: list[Token]) -> bool:
    """Does token `i` (a name) stand as the last factor of a side: outside every bracket the run opened,
    followed (after a power) by the end, a punctuation mark, a relation or a word?"""
    if sum(t.kind == "lp" for t in current) != sum(t.kind == "rp" for t in current):
        return False
    j = i + 2 if i + 1 < len(tokens) and tokens[i + 1].text == "^" else i
    after = tokens[j + 1] if j + 1 < len(tokens) else None
    return (
        after is None
        or (after.kind == "sep" and after.text in ".,;:")
        or after.kind == "eq"
        or (after.kind == "word" and len(after.text) > 1)
    )


def _runs_from_tokens(tokens: list[Token], source: str) -> list[Run]:
    runs: list[Run] = []
    current: list[Token] = []
    hard = False

    def flush() -> None:
        nonlocal current, hard
        cut_end = False
        while current and current[-1].kind == "op":
            current.pop()  # "A = 1/3 * Class C": the last side was cut off by words
            cut_end = True
        if cut_end and current and current[-1].kind != "eq" and any(t.kind == "eq" for t in current):
            current.append(Token("eq", "=", current[-1].start))
            current.append(Token("sep", "…", current[-1].start))  # an unparseable last side
        if any(t.kind == "eq" for t in current):
            start = current[0].start
            last = current[-1]
            # the tokens before the run, found by place (a name the reader made from a word is a new token)
            placed = bisect.bisect_right(ends, start)
            before = tokens[placed - 1] if placed else None
            after_word = before is not None and before.kind == "word"
            if after_word and before is not None and before.text.lower() in _SPELLED_OPERATORS:
                # "c plus 3c equals 280": the sum began before the run; its first side is cut off
                current.insert(0, Token("op", _SPELLED_OPERATORS[before.text.lower()], before.start))
            elif not hard and (
                _function_before(before, current[0])
                or _operator_before_word(tokens[max(0, placed - 3) : placed])
            ):
                # `cos 4x = 0`, `f(x) = 2`: the first side is a function's argument, cut out of its call (a
                # LaTeX run keeps its own reading: the worker judges `f(x) = A = B` without its cut side)
                current.insert(0, Token("op", "*", current[0].start))  # (the run still starts where written)
            explicit = next(t for t in current if t.kind == "eq").text == EXPLICIT_EQUALS
            after_word = after_word and not explicit
            runs.append(Run(tuple(current), source[start : last.start + len(last.text)], hard, after_word))
        current, hard = [], False

    ends = [tok.start + len(tok.text) for tok in tokens]  # in order: tokens neither overlap nor go back
    n = len(tokens)
    i = 0
    while i < n:
        tok = tokens[i]
        prev = current[-1] if current else None
        nxt = tokens[i + 1] if i + 1 < n else None
        kind = tok.kind
        if kind in ("num", "eq", "lp", "rp"):
            current.append(tok)
        elif kind == "op":
            if (
                tok.text == "/"
                and _numberish(prev)
                and nxt is not None
                and nxt.kind == "word"
                and len(nxt.text) > 1
                and not _applied(tokens, i + 1)
            ):
                i += 2  # a rate unit: "7 stickers/page", "$5/hour"
                continue
            current.append(tok)
        elif kind == "latex":
            current.append(tok)
            hard = True
        elif kind == "word" and current and _applied(tokens, i):
            # `4 / sqrt(4) = 2`: the side holding the function is kept unreadable, never read without it
            current.append(Token("sep", tok.text, tok.start))
        elif _runs_on_unread(tokens, i, current):
            # the last side goes on into a factor the reader does not read: kept unreadable, never read
            # without it
            current.append(Token("sep", tok.text, tok.start))
            flush()
        elif kind == "word":
            consumed = _word(tokens, i, current, prev, nxt)
            if consumed == 0:
                flush()
                i += 1
                continue
            i += consumed
            continue
        else:
            flush()
        i += 1
    flush()
    return runs


def _word(tokens: list[Token], i: int, current: list[Token], prev: Token | None, nxt: Token | None) -> int:
    """Place word token `i` into the run; returns how many tokens it used, 0 to end the run."""
    tok = tokens[i]
    word = tok.text
    lower = word.lower()
    next_is_operand = nxt is not None and nxt.kind in ("num", "lp")
    next_is_letter = nxt is not None and nxt.kind == "word" and len(nxt.text) == 1
    if word in ("x", "X") and _numberish(prev) and (next_is_operand or next_is_letter):
        current.append(Token("op", "*", tok.start))
        return 1
    if word in ("x", "X") and _numberish(prev) and nxt is not None and nxt.kind == "word":
        # `46 = 4 + 3 x son's age`: a product that runs on into words; the side is read only in part
        current.append(Token("op", "*", tok.start))
        return 1
    if lower in _MATH_WORDS and _numberish(prev) and next_is_operand:
        current.append(Token("op", _MATH_WORDS[lower], tok.start))
        return 1
    if lower in ("divided", "multiplied") and nxt is not None and nxt.text.lower() == "by":
        current.append(Token("op", "/" if lower == "divided" else "*", tok.start))
        return 2
    if lower == "equals":
        current.append(Token("eq", "=", tok.start))
        return 1
    if lower == "of" and prev is not None and next_is_operand and _is_rate(current):
        current.append(Token("op", "*", tok.start))
        return 1
    if len(word) == 1 and word.isalpha():
        if _attached(prev, tok) and prev is not None and prev.kind in ("num", "rp"):
            current.append(Token("var", word, tok.start))  # 2x; "200g" too: see claims._judge on units
            return 1
        near_math = (nxt is not None and nxt.kind in ("eq", "op")) or (
            prev is not None and prev.kind in ("eq", "op", "lp")
        )
        if word in _PROSE_LETTERS:
            near_math = nxt is not None and nxt.kind in ("eq", "op") and (prev is None or prev.kind != "word")
        if near_math and not (_numberish(prev) and not _attached(prev, tok)):
            current.append(Token("var", word, tok.start))
            return 1
    if _numberish(prev):
        if (
            lower in ("cent", "cents")
            and prev is not None
            and prev.kind == "num"
            and prev.literal is not None
        ):
            lit = prev.literal  # "$2.50 - $2.24 = 26 cents": read as 0.26 or as 26, like a percent
            current[-1] = Token(
                "num", prev.text, prev.start, Literal(lit.value, lit.decimals, True, True, lit.fraction)
            )
        return _unit_words(tokens, i, label_position=_standalone(current))
    return 0


def _standalone(current: list[Token]) -> bool:
    """Is the run so far a lone number (`5 friends = ...` is then a label, not a value)?"""
    last = current[-1]
    if last.kind != "num" or (last.literal is not None and last.literal.fraction):
        return False
    return len(current) == 1 or current[-2].kind == "eq"


def _is_rate(current: list[Token]) -> bool:
    """`of` multiplies after a percent (`20% of 50`) or a fraction (`1/2 of 50`)."""
    last = current[-1]
    if last.kind == "num" and last.literal is not None and (last.literal.percent or last.literal.fraction):
        return True  # "20% of 50", "1/4 of 240"
    return len(current) >= 3 and last.kind == "num" and current[-2].text == "/" and current[-3].kind == "num"


def _unit_words(tokens: list[Token], i: int, *, label_position: bool) -> int:
    """Skip up to a few unit words after a number when math continues after them ("9 eggs * 2")."""
    j = i
    while j < len(tokens) and j - i < _UNIT_WORD_LIMIT:
        tok = tokens[j]
        if (
            tok.kind == "word"
            and not (
                tok.text.lower() in _MATH_WORDS
                and j + 1 < len(tokens)
                and tokens[j + 1].kind in ("num", "lp")
            )
            and tok.text.lower() not in _CONNECTIVES
            and tok.text not in ("x", "X")
            and (len(tok.text) > 1 or j == i)
        ):
            j += 1
        elif (
            tok.kind == "op"
            and tok.text == "/"
            and j + 1 < len(tokens)
            and tokens[j + 1].kind == "word"
            and len(tokens[j + 1].text) > 1
        ):
            j += 2
        else:
            break
    if label_position and j < len(tokens) and tokens[j].kind == "eq" and tokens[j].text != EXPLICIT_EQUALS:
        return 0  # "4 subjects = 186 + 62 = 248": the number was part of a label
    if (
        j < len(tokens)
        and tokens[j].kind in ("op", "eq", "rp")
        or (j < len(tokens) and tokens[j].kind == "word" and tokens[j].text in ("x", "X", "times"))
    ):
        return j - i
    return 0
