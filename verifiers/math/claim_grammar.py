"""Does a reading account for every character of a claim? The grammar of what the math readers read.

A claim is judged only where every character of it is read by a rule of this grammar, and where it is
not cut out of a longer expression in its step. A character no rule reads (`√` written as a sign, a
subfactorial `!5`, `\\overline{3}`, a remark in words, `\\ldots`, a prime) means the reader skipped or
guessed something: the claim is left unjudged, with that span named (`Unread`). This closes the class of
notation the readers do not know by construction, instead of by a list of notations.

The grammar (`WRITTEN_NUMBERS`, the kinds that read written numbers only):
- numbers: digits with a decimal point, thousands separators (`1,000`, `1{,}000`) and leading zeros;
- operators `+ - – − * / × · ÷ ^`, `\\cdot`, `\\times`, `\\div`, `\\pm`, `\\mp`; a factorial `!` right after a
  number or a bracket; `%` and `\\%`; a money sign before a number (`$336`);
- relations `= < > ≤ ≥ ≠ ≈`, `\\le(q)`, `\\ge(q)`, `\\neq`, `\\approx`, `\\equiv`, `\\lt`, `\\gt`;
- brackets `( ) [ ] { }`, `\\left`, `\\right`, `\\{ \\}`;
- `\\frac`, `\\dfrac`, `\\tfrac`, `\\sqrt` (with an index in digits), `\\binom`; `\\pi`; degrees
  (`^\\circ`, `°`);
- the notations of `notation_rule`: `\\sin \\cos \\tan \\cot \\sec \\csc` (their argument read as the rule
  says), `\\log`, `\\ln`, `\\lfloor \\rfloor \\lceil \\rceil`, `\\mod \\bmod \\pmod`, `i` the imaginary unit;
- layout with no meaning: spacing (`\\,` `\\;` `\\quad`), `&`, `\\displaystyle`, `\\boxed`.

`NAMES` adds single letters (names, a product of names written side by side) with subscripts in digits or
letters, for the kinds that read names (`identity`, `equation_step`, `system_result`,
`substituted_arithmetic`). `WORDS` adds the word-problem reader's units and money (`5 apples`, `$12`) for
`word_problem_arithmetic`; it reads no more notation than the others.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_LAYOUT = (
    r"\s+|\\[,;:! ]|~|&|\\q?quad(?![A-Za-z])"
    r"|\\(?:displaystyle|textstyle|boxed|left|right|big|Big|bigg|Bigg)(?![A-Za-z])"
)
_NUMBER = r"\d+(?:(?:\{,\}|,)\d{3})*(?:\.\d+)?|\.\d+"
_OPERATOR = r"[-+*/×·÷^–−]|\\(?:cdot|times|div|pm|mp)(?![A-Za-z])|\\?%|\\?\$(?=\s*\d)"
_RELATION = r"[=<>≤≥≠≈]|\\(?:leqslant|geqslant|leq?|geq?|neq?|approx|equiv|lt|gt)(?![A-Za-z])"
_BRACKET = r"[()\[\]{}]|\\[{}]"
_COMMAND = (
    r"\\(?:[dt]?frac|sqrt|[dt]?binom|pi|circ|sin|cos|tan|cot|sec|csc|log|ln|[lr]floor|[lr]ceil|b?mod|pmod)"
    r"(?![A-Za-z])|°|_\s*(?:\d|\{\s*\d+\s*\})(?=\s*(?:\\left)?\s*[\d({])"  # a log's base in digits
)
_FACTORIAL = r"(?<=[\d)}])\s*!"
_IMAGINARY = r"(?<![A-Za-z\\])i(?![A-Za-z])"
_NAME = r"(?<!\\)[A-Za-z](?:\s*_\s*(?:\{[A-Za-z0-9]+\}|[A-Za-z0-9]))?|(?<=[A-Za-z}])'"
_WORD = r"(?<!\\)[A-Za-z]+|[$€£¢]|,(?=\s)|\."


@dataclass(frozen=True)
class Grammar:
    """A set of token rules; a claim is read whole when they cover every character of it."""

    name: str
    token: re.Pattern[str]


def _grammar(name: str, *parts: str) -> Grammar:
    return Grammar(name, re.compile("|".join(f"(?:{p})" for p in parts)))


WRITTEN_NUMBERS = _grammar(
    "written numbers", _LAYOUT, _NUMBER, _OPERATOR, _RELATION, _BRACKET, _COMMAND, _FACTORIAL, _IMAGINARY
)
NAMES = _grammar("names", _LAYOUT, _NUMBER, _OPERATOR, _RELATION, _BRACKET, _COMMAND, _FACTORIAL, _NAME)
WORDS = _grammar(
    "word problem", _LAYOUT, _NUMBER, _OPERATOR, _RELATION, _BRACKET, _COMMAND, _FACTORIAL, _WORD, r"[xX×:]"
)


@dataclass(frozen=True)
class Unread:
    """The first stretch of a claim no rule of the grammar reads: its offsets in the claim and its text."""

    start: int
    end: int
    text: str

    def evidence(self) -> str:
        return f"{self.text!r} at {self.start}-{self.end}"


_DELIMITERS = re.compile(r"\s*(?:\$|\\\(|\\\[)?(.*?)(?:\$|\\\)|\\\])?[\s.,;]*", re.DOTALL)
_COMMAND_WORD = re.compile(r"\\[A-Za-z]+")


def unread_span(claim: str, grammar: Grammar) -> Unread | None:
    """The first part of `claim` that `grammar` does not read, or None when it reads every character.

    >>> unread_span("\\\\frac{1}{2} \\\\times 6 = 3", WRITTEN_NUMBERS) is None
    True
    >>> unread_span("√16 = 4", WRITTEN_NUMBERS).text
    '√'
    >>> unread_span("!4 = 9", WRITTEN_NUMBERS).text
    '!'
    >>> unread_span("\\\\overline{3} = 1/3", WRITTEN_NUMBERS).text
    '\\\\overline'
    """
    at = 0
    delimited = _DELIMITERS.fullmatch(claim)  # `$2 \\cdot 3 = 6`: the math delimiters a run kept are layout
    if delimited:
        at, stop = delimited.start(1), delimited.end(1)
        claim = claim[:stop]
    while at < len(claim):
        match = grammar.token.match(claim, at)
        if match and match.end() > at:
            at = match.end()
            continue
        command = _COMMAND_WORD.match(claim, at)
        end = command.end() if command else at + 1
        return Unread(at, end, claim[at:end])
    return None


# A sign of Unicode's mathematical blocks (operators, technical: `√`, `∛`, `∑`, `∫`, `⌈ ⌉`, `∞`) that the
# grammar does not read: glued to a claim on either side, it continues the claim (`4√2 / 2 = 2√2` is not
# `2 / 2 = 2`). The relations and operators the readers split claims on or read are left out.
_READ_SIGNS = frozenset("−∓∔∕∗∘∙∣∤∴∵∶∷∼∽≃≅≈≠≡≤≥≦≧≪≫∈∉∋∌⊂⊃⊆⊇∝⋅⋯")
_GLUED_SIGN = "".join(
    sorted(
        chr(c)
        for c in range(0x2200, 0x2400)
        if unicodedata.category(chr(c)) in ("Sm", "So", "Ps", "Pe") and chr(c) not in _READ_SIGNS
    )
)
_SIGN_CLASS = re.escape(_GLUED_SIGN)

# Inside math, right before a claim: what would make it the tail of a longer expression (a factor, an
# operand, a function's argument, a ratio's first term and its colon: `\frac{3}{3} : \frac{9}{3} = 1 : 3`);
# right after it: what would continue its last side (decimals, `= 7.968` read as `= 7`; a ratio's colon).
_CUT_BEFORE = re.compile(rf"(?:[\w)}}\]!'|{_SIGN_CLASS}]|\\(?:cdot|times|div)|[-+−^*/×·÷]|[\d}}]\s*:)\s*$")
_NOT_A_FACTOR_BEFORE = re.compile(
    r"\\(?:geqslant|leqslant|geq?|leq?|neq?|approx|sim|simeq|equiv|lt|gt|to|in|implies|iff|Rightarrow"
    r"|Longrightarrow|Leftrightarrow|therefore|because|q?quad|left|right|[,;:! ]|\\)\s*$"
    r"|\\(?:text|mathrm|textbf|operatorname)\s*\{[^{}]*\}\s*$|\\begin\{[^{}]*\}\s*$|&\s*$"
)
_CUT_AFTER = re.compile(
    rf"^\s*(?:[\w(\[{{!^'{_SIGN_CLASS}]|\.\d|:\s*[\d\\]"
    r"|\\(?!(?:[,;:! \])]|\\|(?:q?quad|text|right|end|Rightarrow|implies|iff"
    r"|Longrightarrow|approx|leq?|geq?|neq?|lt|gt|mathrm|textbf|tag|label|nonumber|notag|hline)(?![A-Za-z]))))"
)


def _inside_math(step: str, position: int) -> bool:
    before = step[:position].replace("$$", "\x00")
    dollars = len(re.findall(r"(?<!\\)\$", before)) + before.count("\x00")
    opened = len(re.findall(r"\\[(\[]|\\begin\{", before)) > len(re.findall(r"\\[)\]]|\\end\{", before))
    return opened or dollars % 2 == 1


def cut_from_source(claim: str, step: str, offsets: list[int]) -> Unread | None:
    """Where the claim is written whole inside math, is it cut out of a longer expression? The neighbour
    that continues it (`a` of `a\\sqrt{b} = c`, a `^` after it), as an `Unread` at the step's offsets; None
    when every place it is written is whole (or it is not written as such: the readers' own checks hold)."""
    length = written_length(claim, step, offsets)
    cuts = []
    for at in offsets:
        end = at + length.get(at, 0)
        if not length.get(at) or not _inside_math(step, at):
            return None
        before = step[max(0, at - 16) : at]
        if _CUT_BEFORE.search(before) and not _NOT_A_FACTOR_BEFORE.search(before):
            cuts.append(Unread(at - 1, at, before.rstrip()[-1:]))
            continue
        if _CUT_AFTER.match(step[end : end + 16]):
            cuts.append(Unread(end, end + 1, step[end : end + 16].strip()[:1]))
            continue
        return None
    return cuts[0] if cuts else None


# Outside math, in prose: a character glued to the claim that continues it (`log_5(5^5)=5` read from
# `(5^5)`, `12=5x`), or an operator said in words right before it ("10 times 9 over 2 times 1 = 45")
# (a letter of any script counts: `(4/3)π(6)^3 = (1/2)π(6)^2` is not `(6)^3 = (1/2)`; a word problem's unit
# glued after a number is a Latin word, `120kg`)
_GLUED_BEFORE = re.compile(rf"[\w)\]}}^'.!{_SIGN_CLASS}]$")
_GLUED_AFTER = re.compile(rf"^[\w(\[^{_SIGN_CLASS}]")
_GLUED_AFTER_DIGIT = re.compile(rf"^(?:[0-9(\[_^{_SIGN_CLASS}]|(?![A-Za-z])[^\W\d_])")
# a ratio's colon and second term right after the claim's last number (`3/6 = 1:2`, `= 59 : 91`): the side
# read (`1`) is the ratio's first term, cut from it
_RATIO_AFTER = re.compile(r"^\s?:\s?\d")
_WORD_OPERATOR = r"\b(?:times|over|plus|minus|(?:divided|multiplied)\s+by)"
_WORD_OPERATOR_BEFORE = re.compile(_WORD_OPERATOR + r"\s*$", re.IGNORECASE)


def cut_in_prose(claim: str, step: str, offsets: list[int], *, units_after: bool = False) -> Unread | None:
    """Where the claim is written whole outside math, is it cut out of a longer expression there? The
    character glued to it (no space between) or the operator word before it, as an `Unread` at the step's
    offsets; None when one place it is written stands whole, or it is not written as such. With
    `units_after` (word problems: `120kg`, `30pm`) a letter glued after the claim is its unit, not a cut.

    >>> step = "If x=5, then log_5(5^5)=5, which is not 10."
    >>> cut_in_prose("(5^5)=5", step, [step.index("(5^5)")]).text
    '5'
    >>> cut_in_prose("2+3=5", "So 2+3=5 apples.", [3]) is None
    True
    >>> cut_in_prose("3/6 = 1", "So the ratio is 3/6 = 1:2.", [16]).text
    ':'
    """
    length = written_length(claim, step, offsets)
    if offsets and not length:
        return _head_cut_in_prose(claim, step, offsets)
    cuts = []
    for at in offsets:
        if not length.get(at) or _inside_math(step, at):
            return None
        end = at + length[at]
        if _pi_on_both_ends(step, at, end):
            return None
        glued_after = _GLUED_AFTER_DIGIT if units_after else _GLUED_AFTER
        if _GLUED_BEFORE.search(step[:at]) or _WORD_OPERATOR_BEFORE.search(step[max(0, at - 24) : at]):
            cuts.append(Unread(at - 1, at, step[max(0, at - 1) : at]))
        elif glued_after.match(step[end:]) or _RATIO_AFTER.match(step[end:]):
            cuts.append(Unread(end, end + 1, step[end : end + 1]))
        else:
            return None
    return cuts[0] if cuts else None


# before a claim's first side, what makes it an operand of something longer: an operator, in signs or words,
# or a share or multiple of it (`half of 6 times 4, which is 12`; not `the result of 12 times 1`, which names
# it); and the phrase a bare number can end (`11111111 in base 2`): another number, then words, in the same
# clause
_OPERAND_BEFORE = re.compile(
    r"(?:[-+*/×÷^]|\\times|\\cdot|"
    + _WORD_OPERATOR
    + r"|(?:\b(?:half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?"
    r"|twice|double|triple|percent)|\d%?|\d\s*/\s*\d+)\s+of)\s*$",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.!?;:](?:\s|$)|,\s|\n")
_NUMBER_THEN_WORDS = re.compile(r"\d[^\d]*[A-Za-z]{2,}[^\d]*$")
_BARE_NUMBER = re.compile(r"\$?-?\d[\d,.]*%?")


def _head_cut_in_prose(claim: str, step: str, offsets: list[int]) -> Unread | None:
    """For a claim said in words (`X is equal to Y`, `X, which is Y`: not written whole), is its first side,
    at every place `offsets` finds it outside math, cut out of a longer expression: glued to what stands
    before it (`31_8`) or after it (`P(Ben)` read as `P`), an operand of an operator or of `of` before it
    (`half of 6 times 4`), or a bare number ending a phrase that names another number (`11111111 in base
    2`)? None where one place stands whole.

    >>> step = "That is, 11111111 in base 2 is equal to 1 + 2 + 4 in base 10."
    >>> _head_cut_in_prose("2 = 1 + 2 + 4", step, [m.start() for m in re.finditer("2", step)]).text
    ' '
    >>> step = "So the area is half of 6 times 4, which is 12."
    >>> _head_cut_in_prose("6 times 4 = 12", step, [step.index("6")]) is not None
    True
    >>> step = "Add 1 to the result of 12 times 1, which is 14."
    >>> _head_cut_in_prose("12 times 1 = 14", step, [step.index("12")]) is None
    True
    >>> step = "So 400 hours is equal to 400 * 20."
    >>> _head_cut_in_prose("400 = 400 * 20", step, [3, step.index("400 *")]) is None
    True
    """
    head = re.split(r"=|\\approx|≈", claim, maxsplit=1)[0].strip()
    cuts = []
    for at in offsets:
        if _inside_math(step, at):
            return None
        before = step[:at]
        clause = _CLAUSE_BREAK.split(before)[-1]
        if (
            _GLUED_BEFORE.search(before)
            or _OPERAND_BEFORE.search(before[-24:])
            or (_BARE_NUMBER.fullmatch(head) and _NUMBER_THEN_WORDS.search(clause))
        ):
            cuts.append(Unread(max(0, at - 1), at, step[max(0, at - 1) : at]))
            continue
        end = at + len(head)
        if _GLUED_AFTER.match(step[end:]):  # the head goes on: `P` of `P(Oil Change only) = 0.6 - 0.1`
            cuts.append(Unread(end, end + 1, step[end : end + 1]))
            continue
        return None
    return cuts[0] if cuts else None


def _pi_on_both_ends(step: str, at: int, end: int) -> bool:
    """Is the claim written between two `π` that nothing else is glued to (`= π(6)^2(12) = 216π cubic`)?
    Then the step says `π·A = B·π`, and π, the one letter the grammar reads as a number (never 0), cancels:
    the claim `A = B` read without it has the same truth."""
    return (
        step[at - 1 : at] == "π"
        and step[end : end + 1] == "π"
        and not _GLUED_BEFORE.search(step[: at - 1])
        and not _GLUED_AFTER.match(step[end + 1 :])
    )


def written_length(claim: str, step: str, offsets: list[int]) -> dict[int, int]:
    """For each offset, how many characters of the step the claim spans (its text, spacing aside)."""
    wanted = re.sub(r"\s+", "", claim)
    out = {}
    for at in offsets:
        seen, i = 0, at
        while i < len(step) and seen < len(wanted):
            if not step[i].isspace():
                if step[i] != wanted[seen]:
                    break
                seen += 1
            i += 1
        if seen == len(wanted):
            out[at] = i - at
    return out
