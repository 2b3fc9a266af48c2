"""The last gate of a competition chain's `incorrect`: is the reading of the failed claim certain there?

The readers (`claims`, `symbolic`, `equation_steps`, `systems`) each find claims of their kind; this module
holds what makes any of them uncertain, for every kind at once, so a class of misreading is closed once and
not per reader. A failed claim is left unjudged (never `incorrect`) when:

- its step marks a statement false or rejects it ("(False)", "this does not work", "is impossible"), it is
  put as a question ("we need to verify if: ...", a sentence ending on `?`), or its step reaches a
  contradiction from an assumption (a proof by contradiction);
  or it tries a value ("let's try $n = 3$", "by trial") and the claim reads more than written numbers:
  the claim is no statement of the chain (arithmetic in written numbers worked for a trial is);
- it stands on the heading line of a case (`Case 2: a = 2, b = 1`): values assumed, not derived;
- it is a number put equal to a number in a chain that works modulo a number (`\\pmod`, "modulo",
  `\\mathbb Z/289\\mathbb Z`) and it may hold modulo it (`-\\frac12 = 144` modulo 289);
- it holds notation with a second reading: `√` written as a character, a subfactorial `!n`, a remark in words
  inside brackets, square brackets where the chain writes the integer part (`[x]`), or a factor right
  before it that the reader did not see (`PU \\cos 30^\\circ = 2 \\cdot ...`, read from `\\cos`);
  or a side made only of numbers in brackets joined by operators (`\\frac{(4)}{(5)}`, `(1) - (2)`): equation
  numbers combined, as olympiad solutions refer to their tagged equations, not arithmetic;
- an equation step pairs relations of different kinds, in different unknowns, or in several unknowns where
  the text lays out or names a system and the step says no rewrite ("expanding", "moving all terms"): one
  equation and the next are no rewrite of each other; or two values of one name (`t = c`, then `t = -c`:
  branches of a case split);
- an identity's sides are in different names (`2x + 3 = 7`): an equation to solve, not an identity; or
  the step introduces that very relation as an equation ("the quadratic equation: ..."); or it holds at
  every value the chain finds for its names (its statements putting an expression in them equal to a number:
  `x + y = \\frac{1190}{11}`, `r = \\frac{192}{5}`): an equation the chain solves, true at its solution (a
  rewrite slip fails there too, and stays an error).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from prm_factory.verifiers.math.arithmetic import NotEvaluable, TooLarge, evaluate, lex, parse_side
from prm_factory.verifiers.math.assertion import (
    UNEQUAL,
    claim_offsets,
    frame_of,
    introduced_by_a_test,
    sentences,
)
from prm_factory.verifiers.math.claim_extraction import extract_runs
from prm_factory.verifiers.math.claim_grammar import (
    NAMES,
    WORDS,
    WRITTEN_NUMBERS,
    Grammar,
    cut_from_source,
    cut_in_prose,
    unread_span,
    written_length,
)
from prm_factory.verifiers.math.competition import IDENTITY_CUE
from prm_factory.verifiers.math.other_readings import (
    ceiled_quotient,
    exact_but_carried,
    floored_quotient,
    other_reading,
)
from prm_factory.verifiers.math.reading_kinds import (
    CLOSED_ARITHMETIC,
    CONGRUENCE,
    DIVISIBILITY,
    EQUATION_STEP,
    IDENTITY,
    LABELLED_LINE,
    NOTATION_RULE,
    SUBSTITUTED_ARITHMETIC,
    SYSTEM_RESULT,
    WORD_PROBLEM_ARITHMETIC,
)

if TYPE_CHECKING:
    import pint

# kinds that read written numbers only: a trial's arithmetic in them is still asserted
WRITTEN_NUMBER_KINDS = frozenset({CLOSED_ARITHMETIC, NOTATION_RULE, CONGRUENCE, DIVISIBILITY})

# a value tried ("let's try $n = 3$", "testing \\(x = -3\\)", "by trial"): what is derived from it is no
# statement of the chain, though arithmetic in written numbers worked for the trial is still asserted
_VALUE_TRIAL = re.compile(
    r"\b(?:let'?s|let us|we|I)\s+(?:try|test|guess)\s+(?:with\s+|for\s+)?[$\\(\s]*[A-Za-z]\s*=(?!=)"
    r"|\b(?:trying|testing|try|test)\s+(?:with\s+)?[$\\(\s]*[A-Za-z]\s*=(?!=)"
    r"|\btrial and error\b|\bby trial\b",
    re.IGNORECASE,
)
# a statement marked false or rejected: no claim at all ("(False)", "does not work", "is impossible")
_REJECTED = re.compile(
    r"\(\s*(?:false|not\s+\w+|no)\s*\)|\b(?:does|do|did)\s*n[o']t\s+work\b|\bnot\s+a\s+solution\b"
    r"|\b(?:is|are)\s+(?:invalid|impossible|not\s+(?:valid|possible))\b|\breject\w*",
    re.IGNORECASE,
)
# a relation put as a question: after "verify if" / "check whether" in the same sentence (and the display
# its colon opens), or in a sentence that ends on `?`
_ASKS = re.compile(
    r"\b(?:check|checking|verify|verifying|see|determine)\s+(?:if|whether)\b|\bwhether\b", re.I
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n")
_DISPLAY_END = re.compile(r"\\\]|\$\$")
# a system of equations said in words or laid out (`\\begin{cases}`, "the second equation", "both equations")
_SYSTEM = re.compile(
    r"\bsystems?\s+of\b|\bthe\s+system\b|\b(?:both|two|three|these|those|the)\s+equations\b"
    r"|\b(?:first|second|third|other)\s+equation\b|\bequations?\s*\(\d\)|\\begin\{(?:cases|array)\}",
    re.IGNORECASE,
)
# the step says it rewrites one equation ("expanding", "simplifies to", "moving all terms to one side")
_REWRITE_SAID = re.compile(
    IDENTITY_CUE.pattern + r"|\brearrang\w*|\bmov(?:e|es|ing)\b|\bboth sides\b|\blike terms\b|\bcollect\w*",
    re.IGNORECASE,
)
# a contradiction reached on purpose: the chain assumed what it refutes
_CONTRADICTION = re.compile(r"\bcontradict\w*|\babsurd\b", re.IGNORECASE)
_ASSUMED = re.compile(r"\b(?:assume|assuming|suppose|supposing|for the sake of)\b", re.IGNORECASE)
# the heading of a case, on its own line (`Case 2: a = 2, b = 1`, `**Subcase (ii).**`)
_CASE_HEADING = re.compile(r"^[\W\d]*(?:sub)?case\s*[\w()]{0,6}\s*[:.)]", re.IGNORECASE | re.MULTILINE)
# arithmetic modulo a number
_MODULAR = re.compile(
    r"\\[pb]?mod(?![A-Za-z])|\bmod(?:ulo)?\b|\\equiv(?![A-Za-z])|≡|\\mathbb\s*\{?\s*Z\s*\}?\s*/|\bresidues?\b"
    r"|(?-i:(?<![A-Za-z\\])(?:\\mathbb\s*\{?\s*)?Z\s*\}?\s*_\s*\{?\s*\d|\bGF\s*\(\s*\d)",
    re.IGNORECASE,
)
_MODULAR_REACH = 3  # steps before the claim's that may set the modulus
# the modulus said: `\pmod{21}`, `\mod 13`, "modulo 7", `\mathbb Z/289\mathbb Z`
# (and the ring or field named: `Z_11`, `\\mathbb{Z}_{11}`, `GF(7)`)
_MODULUS = re.compile(
    r"(?:\\[pb]?mod\s*\{?\s*|\bmod(?:ulo)?\s+|\\mathbb\s*\{?\s*Z\s*\}?\s*/\s*\{?\s*"
    r"|(?-i:(?<![A-Za-z\\])(?:\\mathbb\s*\{?\s*)?Z\s*\}?\s*_\s*\{?\s*|\bGF\s*\(\s*))(\d+)",
    re.IGNORECASE,
)
# digits grouped in threes by single spaces (`9 132 500`): a thousands separator, or numbers side by side
_SPACED_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d.,])")
# what a relation's text is compared by when it is looked for in the problem: no spacing, math delimiters or
# product signs
_QUOTE_NOISE = re.compile(r"[\s$]+|\\[()\[\]]|\\,")
_PRODUCT_SIGN = re.compile(r"\\times|\\cdot|[×·]")


# a count right after a result: a word naming things (`2 croissants`, `49 full boxes`), not a rate ("12 cups
# per chair", "5 km/h") nor a word of the sentence ("= 5, so")
_COUNT_AFTER = re.compile(
    r"\s*(?:\\text\s*\{\s*)?(?!(?:per|and|or|is|are|was|so|which|that|the|an?|of|to|in|for|with|by|as|at|then"
    r"|but|if|when|since|because|r|rem|remainder)\b)[A-Za-z][A-Za-z'-]+(?![A-Za-z'-])(?!\s*(?:per\b|/))",
    re.IGNORECASE,
)


def _count_follows(claim: str, step: str) -> bool:
    """Is the claim, wherever the step writes it whole, followed by a word naming the things counted?

    >>> _count_follows("17/7 = 2", "Each will have 17/7 = 2 croissants.")
    True
    >>> _count_follows("128 / 10 = 12", "That is 128 / 10 = 12 cups per chair.")
    False
    """
    lengths = written_length(claim, step, claim_offsets(claim, step))
    return bool(lengths) and all(_COUNT_AFTER.match(step, at + length) for at, length in lengths.items())


def _quoted_from(claim: str, problem_text: str) -> bool:
    """Does the problem itself write the relation (`D. 7 + 1 × 3 = 24` among the options of "which is
    false?")? A chain that writes it again quotes it to judge it; whether it asserts it is not read.

    >>> _quoted_from("7 + 1 * 3 = 24", "Which is false? A. 2 + 2 = 4 D. $7 + 1 \\\\times 3 = 24$")
    True
    >>> _quoted_from("7 + 1 * 3 = 24", "What is 7 + 1 * 3?")
    False
    """

    def flat(text: str) -> str:
        return _QUOTE_NOISE.sub("", _PRODUCT_SIGN.sub("*", text))

    quoted = flat(claim)
    return len(quoted) >= 5 and "=" in quoted and quoted in flat(problem_text)


# a hyphen glued between a word of two letters or more and a number (`base-6`, `COVID-19`): no minus
_WORD_HYPHEN = re.compile(r"(?<![A-Za-z])[A-Za-z]{2,}-\d")
# a word of relation left inside a word problem's claim (`multiplied by 4 equals 36 = 9`, from "the number
# that multiplied by 4 equals 36 is 9"): the claim joins two relations, and the reader took words for units
_RELATION_WORD = re.compile(r"\b(?:equals?|equal\s+to|is|are|was|were|gives|yields)\b", re.IGNORECASE)
# a whole number and "and" right before a claim that opens with a fraction (`3 \\text{ and } \\frac{1}{8}`):
# a mixed number said in words, of which the claim reader kept the fraction alone
_AND_BEFORE = re.compile(r"(?<![\d.])\d+\s*(?:\\text\s*\{\s*and\s*\}|\band)\s*\$?\s*$")
_OPENS_WITH_FRACTION = re.compile(r"\s*\$?\s*(?:\\[dt]?frac\s*\{\s*\d+\s*\}|\d+\s*/\s*\d)")
# a lone letter of a claim (`P` in `0.72 = 0.6 + P - 0.18`), and the same letter applied to words in the step
# (`P(Ben)`: the claim reader drops a bracket of words as a label, so a function's value is read as a name)
_LONE_LETTER = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
# notation with a second reading: `√` as a character, a subfactorial `!n`, a remark in words in brackets
# (two words, the first may be a number's suffix: `(7th grade)`, `(the base)`)
# (or the same value restated as a percent in brackets: `0.80 (80%)`)
_SECOND_READING = re.compile(
    r"√|(?:^|[^\w)}\]!])\s*!\s*[\w({]|\([^()]*?[A-Za-z]{2,}\s+[A-Za-z]{2,}\b"
    r"|\(\s*-?\d[\d.,]*\s*(?:\\?%|percent)\s*\)"
)
# a slash before a product written side by side (`4/3\\pi`, `1/2(6)`, `1/2x`): (4/3)π or 4/(3π), two readings
_SLASH_BEFORE_PRODUCT = re.compile(
    r"\d\s*/\s*\d+(?:\.\d+)?(?:\s*(?:\\pi(?![A-Za-z])|π|\\sqrt(?![A-Za-z]))|\(|[A-Za-z](?![A-Za-z]))"
)
# square brackets as the integer part: said in words, or `[x]` written around a name
_INTEGER_PART = re.compile(
    r"\b(?:integer|fractional)\s+part\b|\bgreatest\s+integer\b|(?<![\\A-Za-z])\[\s*-?\d*[a-z]\s*\]"
)
_COMMAND = re.compile(r"\\[A-Za-z]+")
# a side that is only bracketed numbers joined by operators: equation numbers (`\frac{(4)}{(5)}`, `(1)-(2)`)
_TAG = r"\(\s*\d{1,2}\s*\)"
_EQUATION_NUMBERS = re.compile(
    rf"^\s*(?:\\[dt]?frac\s*\{{\s*{_TAG}\s*\}}\s*\{{\s*{_TAG}\s*\}}"
    rf"|{_TAG}(?:\s*(?:[-+/]|\\(?:div|times|cdot)(?![A-Za-z]))\s*{_TAG})+)\s*$"
)
# right before a claim inside math: a factor the reader did not see (a name, a closing bracket, `\\cdot`, a
# function's prime: `f'(16) = ...` read from `(16)`);
# a relation or spacing command before it (`\\geq`, `\\approx`, `\\quad`) is no factor
_FACTOR_BEFORE = re.compile(r"(?:[A-Za-z0-9)}\]']|\\(?:cdot|times|div|prime))\s*$")
_NO_FACTOR_COMMAND = re.compile(
    r"\\(?:geqslant|leqslant|geq?|leq?|neq?|approx|sim|simeq|equiv|lt|gt|to|in|implies|iff|Rightarrow"
    r"|Longrightarrow|Leftrightarrow|therefore|because|q?quad|text\s*\{[^{}]*\}|left|right|[,;:! ])\s*$"
)
_TEXT_BLOCK = re.compile(r"\\(?:text|mathrm|operatorname|textbf)\s*\{[^{}]*\}")
_TEXT_WORDS = re.compile(r"\\(?:text|mathrm|operatorname|textbf)\s*\{([^{}]*)\}")
_RELATION = re.compile(r"\\(?:geqslant|leqslant|geq?|leq?|neq?|lt|gt)(?![A-Za-z])|[<>≤≥≠]|=")
# a claim that is only a name and a written number (`n = 4`, `$x=2$`): the chain gives the name a value
# (again, or for another use: "the same formula with n = 4"); read against an earlier value, no arithmetic
_VALUE_GIVEN = re.compile(
    r"[\s$]*(?:(?P<name>[A-Za-z])\s*=\s*(?P<value>-?\d[\d.,]*)|(?P<value2>-?\d[\d.,]*)\s*=\s*(?P<name2>[A-Za-z]))"
    r"[\s$.]*"
)


# a step that puts something to the test: a check or a trial said as a verb ("to verify", "let's try",
# "checking"), not a noun ("the third test")
_TESTED = re.compile(
    r"\b(?:to|let'?s|let\s+us|we|I|we'll|I'll|now)\s+(?:first\s+|also\s+)?(?:check|verify|confirm|ensure"
    r"|make\s+sure|double[- ]check|try|test)\b|\b(?:checking|verifying|confirming|ensuring|trying|testing)\b"
    r"|(?:^|[.:!]\s+)(?:check|verify|confirm|try|test)\b|\bsee\s+(?:if|whether)\b",
    re.IGNORECASE | re.MULTILINE,
)


def _inside_brackets(step: str, position: int) -> bool:
    """Is `position` inside `\\(...\\)` or `\\[...\\]` (math in any chain, money signs aside)?"""
    before = step[:position]
    return len(re.findall(r"\\[(\[]", before)) > len(re.findall(r"\\[)\]]", before))


def _sentence_of(claim: str, step: str) -> str:
    """The sentence of `step` the claim is written in (the whole step where it is not found)."""
    offsets = claim_offsets(claim, step)
    if not offsets:
        return step
    return next((step[a:b] for a, b in sentences(step) if a <= offsets[0] < b), step)


def _both_sides_worked(claim: str) -> bool:
    """Are both sides of the claim expressions (an operator in each), not a side that is a lone number?"""
    unmarked = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|°", "", claim)
    sides = [side.strip(" $.") for side in re.split(r"(?<![<>!\\])=", unmarked)]
    lone = re.compile(r"\\boxed\s*\{[^{}]*\}|[-+]?\(?\s*[\d.,]+\s*\)?")
    return len(sides) == 2 and all(side and not lone.fullmatch(side) for side in sides)


# a unit word: a word right after a number (`12 inches`, `250 grams`), and short words pint would read as
# units that in prose are none (`in`, `at`, `a`)
_UNIT_AFTER_NUMBER = re.compile(r"\d\s*([A-Za-z]{2,})\b")
_WORD_NEXT = re.compile(r"\s*([A-Za-z]{2,})\b")
_NO_UNIT = frozenset("a an and are as at by for from if in is it of on or per so than the to".split())


@functools.cache
def _units() -> pint.UnitRegistry:
    """pint's registry, imported on first use: pint imports dask where it is installed, about half a second
    that every process importing the claim checker paid, most of them never reading a unit word."""
    import pint

    return pint.UnitRegistry(cache_folder=None)


@functools.cache
def _dimension(word: str) -> tuple[str, str] | None:
    """A physical unit word's (name, dimension) as pint reads it (`feet` -> foot, [length]); None for a word
    that names no unit with a dimension (`birds`, `percent`, `in`)."""
    if word.lower() in _NO_UNIT:
        return None
    try:
        unit = _units().parse_units(word.lower())
    except Exception:  # pint raises its own errors and others on words it cannot parse
        return None
    dimension = str(unit.dimensionality)
    return (str(unit), dimension) if unit.dimensionality else None


# "4 daps = 7 yaps", "$3$ wallops are equal to $5$ ballops": a problem that sets amounts of two words equal
# defines them as units of one made-up quantity (the lexicon: `=`, "equals", "is/are equal to", "is/are
# equivalent to", "is/are the same as", "is/are worth")
_DEFINED_UNITS = re.compile(
    r"\d\s*([A-Za-z]{2,})\s*(?:=|equals?\b|(?:is|are)\s+(?:equal\s+to|equivalent\s+to|the\s+same\s+as|worth)\b)"
    r"\s*\d[\d.,/]*\s*([A-Za-z]{2,})\b",
    re.I,
)


def _singular(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@functools.cache
def _defined_units(problem_text: str) -> dict[str, str]:
    """The made-up units a problem defines, each mapped to its quantity (words linked through the
    problem's equalities share one): `If 4 daps = 7 yaps, and 5 yaps = 3 baps` -> dap, yap, bap, one
    quantity. Words pint reads as units, or that are no unit in prose, are left to `_dimension`.

    >>> sorted(_defined_units("If 4 daps = 7 yaps, and 5 yaps = 3 baps, how many daps are 42 baps?").items())
    [('bap', 'bap'), ('dap', 'bap'), ('yap', 'bap')]
    >>> _defined_units("Tom has 3 apples and 4 pears.")
    {}
    """
    text = re.sub(r"\$|\\[()]", "", problem_text)
    parent: dict[str, str] = {}

    def root(word: str) -> str:
        while parent[word] != word:
            word = parent[word]
        return word

    for match in _DEFINED_UNITS.finditer(text):
        one, other = (_singular(word) for word in match.groups())
        if one == other or {one, other} & _NO_UNIT or _dimension(one) or _dimension(other):
            continue
        for word in (one, other):
            parent.setdefault(word, word)
        first, second = sorted((root(one), root(other)))
        parent[second] = first
    return {word: root(word) for word in parent}


def _unit_of(word: str, defined: dict[str, str]) -> tuple[str, str] | None:
    """A unit word's (name, quantity): a unit the problem defines, else a physical one (`_dimension`)."""
    name = _singular(word)
    return (name, f"defined: {defined[name]}") if name in defined else _dimension(word)


def _converted_units(claim: str, step: str, problem_text: str | None = None) -> bool:
    """Is a word problem's claim a unit conversion (`3 * 12 inches = 3 feet`, `2 * 60 minutes = 2 hours`)?
    Its left side counts a physical unit (a word right after one of its numbers) and its right side another
    unit of the same dimension (a word after one of its numbers, or right after the claim where the step
    writes it): the numbers differ by the factor between the units, which the claim does not state, so
    there is no arithmetic to judge. Words that are no physical unit (`35 birds + 25 birds = 60 different
    birds`, `60 miles / 30 miles/hour = 2 hours`: a length then a time) make no conversion; pint
    (a well-kept units library) says which words are units and of what dimension. Units the problem
    defines by an equality of amounts (`4 daps = 7 yaps`: `42 * 20/21 daps = 42 baps`) are one quantity."""
    left, sep, right = claim.partition("=")
    if not sep:
        return False
    defined = _defined_units(problem_text) if problem_text else {}
    units_left = {d for word in _UNIT_AFTER_NUMBER.findall(left) if (d := _unit_of(word, defined))}
    if not units_left:
        return False
    units_right = {d for word in _UNIT_AFTER_NUMBER.findall(right) if (d := _unit_of(word, defined))}
    if right.rstrip()[-1:].isdigit():
        for at, length in written_length(claim, step, claim_offsets(claim, step)).items():
            following = _WORD_NEXT.match(step, at + length)
            unit = _unit_of(following.group(1), defined) if following else None
            if unit:
                units_right.add(unit)
    return (
        any(
            name_l != name_r and dim_l == dim_r
            for name_l, dim_l in units_left
            for name_r, dim_r in units_right
        )
        and not units_left & units_right
    )


# the word reader's rewrite in one unknown (`71 + P - 3 = 34 + P`): the name cancels, the numbers are judged
_REWRITE_READ = "rewrite in one unknown"
_LONE_NAME = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")
_ALONE_NAME = re.compile(r"(?<![A-Za-z\\0-9.])[A-Za-z](?![A-Za-z])")


def _unknown_on_both_sides(claim: str) -> bool:
    """Does one name (a letter standing alone, not a unit word) stand on two sides of the claim's `=`, and
    somewhere not glued to a number (`820g` is grams)?"""
    sides = [_TEXT_BLOCK.sub(" ", side) for side in re.split(r"(?<![<>!\\])=", claim)]
    found = [set(_LONE_NAME.findall(side)) for side in sides]
    alone = set().union(*(_ALONE_NAME.findall(side) for side in sides)) if sides else set()
    return any(a & b & alone for k, a in enumerate(found) for b in found[k + 1 :])


_SHOWN_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]|\\(?:cdot|times)|[-+*/^()×·]")
_SHOWN_VALUE = r"-?\d+(?:\.\d+)?"
_SHOWN_TIMES = r"(?:\*|\\cdot|\\times|×|·)"


def _substitution_shown(claim: str, step: str, earlier: Sequence[str] = ()) -> bool:
    """Is one side of the claim the side before it with a number put in for each of its one-letter names
    (`3x + y = 3*0 + 1`, `2(a) - b = 2(4) - 1`), at a point the step names before it (`At (0, 1), ...`,
    `for x = 0 and y = 1, ...`), or at the values the text last gave those names in the steps `earlier`
    (`l = 21 and w = 203`, then `2(l + w) = 2(21 + 203)`)? Then the claim shows a substitution whose values
    are the step's own, whatever values the chain bound those names to before; the arithmetic after it
    (`3*0 + 1 = 1`) is a claim of its own. Without a point named or a value last given, a substitution is
    judged against the names' values (a value copied wrong, `A - B = 71 - 17` for B = 18, is an error). A
    product written by juxtaposition needs a sign or brackets around the value put in, so `2x = 25` is no
    substitution of x = 5.

    >>> _substitution_shown("3x + y = 3*0 + 1", "At (0, 1), 3x + y = 3*0 + 1 = 1")
    True
    >>> _substitution_shown("3x + y = 3(2) + 0", "For x = 2 and y = 0: 3x + y = 3(2) + 0 = 6")
    True
    >>> _substitution_shown("3x + y = 3*0 + 1", "So 3x + y = 3*0 + 1 = 1")
    False
    >>> _substitution_shown("2x = 25", "At (5), 2x = 25")
    False
    >>> _substitution_shown("m = 1000", "At (1000), m = 1000")
    False
    >>> _substitution_shown("2(l + w) = 2(21 + 3)", "So 2(l + w) = 2(21 + 3)", ["l = 11, w = 3", "l = 21"])
    True
    >>> _substitution_shown("2(l + w) = 2(21 + 3)", "So 2(l + w) = 2(21 + 3)", ["l = 21, w = 3", "l = 11"])
    False
    """
    at = claim_offsets(claim, step)
    before = step[: at[0]] if at else step
    sides = [re.sub(r"\s+", "", side) for side in claim.split("=")]
    for left, right in zip(sides, sides[1:], strict=False):
        shown = _shown_values(left, right)
        if shown is not None and (_point_named(shown, before) or _last_given(shown, [*earlier, before])):
            return True
    return False


def _last_given(shown: list[tuple[str, str]], texts: Sequence[str]) -> bool:
    """Is the last written number the texts give each name (`l = 21`) the value shown for it?"""
    for name, value in shown:
        given = re.compile(rf"(?<![A-Za-z0-9_\\]){name}\s*=\s*(-?\d+(?:\.\d+)?)(?![\d.]|\s*[-+*/^(])")
        values = [found.group(1) for text in texts for found in given.finditer(text)]
        if not values or values[-1] != value:
            return False
    return True


def _shown_values(left: str, right: str) -> list[tuple[str, str]] | None:
    """The (name, value) pairs, in the order the names stand, where `right` is `left` with a number put
    in for each one-letter name (the same number for a name each time); None where it is not."""
    tokens = _SHOWN_TOKEN.findall(left)
    named = [t for t in tokens if len(t) == 1 and t.isalpha()]
    # (an expression in the names: `m = 4` alone gives a value, it shows no substitution)
    if "".join(tokens) != left or not named or len(named) == len(tokens) or re.search(r"[A-Za-z]", right):
        return None
    pattern, previous = "", ""
    for token in tokens:
        if len(token) == 1 and token.isalpha():
            glued = previous[:1].isdigit() or previous == ")"
            value = f"(?:{_SHOWN_TIMES}({_SHOWN_VALUE})|\\(({_SHOWN_VALUE})\\))"
            pattern += value if glued else f"(?:({_SHOWN_VALUE})|\\(({_SHOWN_VALUE})\\))"
        elif re.fullmatch(_SHOWN_TIMES, token):
            pattern += _SHOWN_TIMES
        else:
            pattern += re.escape(token)
        previous = token
    found = re.fullmatch(pattern, right)
    if found is None:
        return None
    groups = found.groups()
    values = [a if a is not None else b for a, b in zip(groups[::2], groups[1::2], strict=True)]
    given: dict[str, str] = {}
    if not all(given.setdefault(name, value) == value for name, value in zip(named, values, strict=True)):
        return None
    return list(given.items())


def _point_named(shown: list[tuple[str, str]], before: str) -> bool:
    """Does the text before the claim name the point the values make: their tuple, in the order the names
    stand or in alphabetical order (`(0, 1)`), or each name set to its value (`x = 0`)?"""
    for order in (shown, sorted(shown)):
        point = r"\(\s*" + r"\s*,\s*".join(re.escape(value) for _, value in order) + r"\s*\)"
        if re.search(point, before):
            return True
    return all(
        re.search(rf"(?<![A-Za-z0-9_\\]){name}\s*=\s*{re.escape(value)}(?![\d.])", before)
        for name, value in shown
    )


def spaced(text: str) -> str:
    """A pattern finding `text` as written whatever its spacing (`n = 5` in `$n=5$`).

    >>> bool(re.search(spaced("n = 5"), "from $n=1$ to $n=5$"))
    True
    """
    return r"\s*".join(map(re.escape, re.sub(r"\s+", "", text)))


def _value_given(claim: str) -> tuple[str, str] | None:
    """The name and the written number of a claim that is only those (`n = 4`, `4 = n`), or None."""
    match = _VALUE_GIVEN.fullmatch(claim)
    if not match:
        return None
    name = next(g for g in (match.group("name"), match.group("name2")) if g)
    return name, next(g for g in (match.group("value"), match.group("value2")) if g)


def _given_again(claim: str, index: int, chain: Sequence[str]) -> bool:
    """Is the claim only a name and a written number (`n = 4`), where the chain gave that name another
    written number before (`n = 7`)? Then it gives the name a new value ("the same formula with n = 4"); a
    value solved from an equation (`10m = 1000`, then `m = 100`) is still judged."""
    stated = _value_given(claim)
    if stated is None:
        return False
    name, value = stated
    step = chain[index]
    # (where the claim is written whole: `m = 2` is not the start of `m = 200`; its last place, as `b = 9`
    # may end `a + b = 9` before the list that gives `b` its values)
    # (spacing aside: the claim `n = 5` is read from `$n=5$`)
    offsets = [m.start() for m in re.finditer(spaced(claim.strip(" $.")) + r"(?![\d]|[.,]\d)", step)]
    before = [*chain[:index], step[: offsets[-1] if offsets else 0]]
    # (a number followed by an operator or a command is part of an expression; the `\\)` or `\\]` closing the
    # math it stands in is not, nor spacing or words between items: `So \\(n = 57\\)` gives n the value 57,
    # and so does `n = 57 \\quad \\text{and}`)
    # (a fraction of two whole numbers is a written value too: "where y = 1/2 and y = 1")
    given = re.compile(
        rf"(?<![A-Za-z0-9\\_.]){re.escape(name)}\s*=\s*(-?\d[\d.,]*(?:/\d+(?![\d.]))?)"
        r"(?![\d.,]*\s*(?:[-+*/^(]|\\(?![)\]]|q?quad(?![A-Za-z])|text\s*\{|[,;:! ])))"
    )
    return any(
        found.group(1) != value and not re.search(r"[-+*/=^<>]\s*$", text[: found.start()])
        for text in before
        for found in given.finditer(text)
    )


# a name set to a formula: the name alone on the left, on the right more than a written number
_NAME_BY_FORMULA = re.compile(
    r"[\s$]*(?P<name>[A-Za-z][A-Za-z_]*)\s*=\s*(?P<formula>\S.*?)[\s$.]*", re.DOTALL
)
# an operation in a formula (after its first sign, so that `-3` and `$37` are none)
_OPERATION = re.compile(
    r"[-+*/^×÷·]|\\[A-Za-z]+|[A-Za-z]\s*\(|\b(?:times|plus|minus|over|divided|multiplied)\b"
)


def _defined_again(claim: str, index: int, chain: Sequence[str]) -> bool:
    """Is the claim a name set to a formula (`F = 50 \\times 1.02`) where the chain set that name before
    (`F = 50 \\times e^{0.02}`, `E = 4.97 * 10^(-19) J`)? The reader then compares the name's earlier value
    with the new formula, a link the text never makes: a name set again may take a new value (the same
    energy in other units, the next case, a value recomputed), and a slip inside the formula is still read
    in the links after it (`= 51`)."""
    match = _NAME_BY_FORMULA.fullmatch(claim)
    if not match:
        return False
    name, formula = match.group("name"), match.group("formula")
    if not _OPERATION.search(formula, 1) or re.search(
        rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", formula
    ):
        return False  # a value stated (`_given_again`), or an equation in the name
    step = chain[index]
    offsets = claim_offsets(claim, step)
    before = [*chain[:index], step[: offsets[0] if offsets else 0]]
    # (where the name starts a relation: not `2F = 100`, not the right side of `G = F`)
    site = re.compile(rf"(?<![A-Za-z0-9\\_.]){re.escape(name)}\s*=(?!=)")
    return any(
        not re.search(r"[-+*/=^<>(]\s*$", text[: found.start()])
        for text in before
        for found in site.finditer(text)
    )


# a number followed by a word that scales it (`2.4 million`, `0.24 lakh`, `3 crore`): the readers take the
# digits alone, so a claim in that sentence, or solved from a relation there, is read with another number
_SCALED_NUMBER = re.compile(r"\d\s*(?:thousand|million|billion|trillion|lakhs?|crores?)\b", re.I)

# words that make a count a requirement (a count that must cover a quantity is the quotient rounded up)
_NEEDED = re.compile(r"\b(?:needs?|needed|requires?|required|must|ha(?:ve|s)\s+to|at\s+least|enough)\b", re.I)

# a name written alone on the left of an equation (`t = c`): a value given to it
_SOLVED_FORM = re.compile(r"^\s*([A-Za-z])\s*=")


def uncertain_reason(
    kind: str,
    claim: str,
    index: int,
    chain: Sequence[str],
    problem_text: str | None = None,
    expected: str | None = None,
    reading: str = "",
) -> str | None:
    """Why the failed claim `claim` of step `index` (read as `kind`, its first side worth `expected`, the
    reader's reason `reading`) is no certain error, or None when its reading is certain."""
    step = chain[index]
    relations = _relations_read(kind, claim)
    for relation in relations:
        frame = frame_of(
            relation,
            index,
            chain,
            names_too=kind not in WRITTEN_NUMBER_KINDS,
            conditions=kind != EQUATION_STEP,
        )
        if frame is not None:
            return f"{frame.why} ({frame.marker.strip()!r})"
    if kind not in (EQUATION_STEP, SYSTEM_RESULT, LABELLED_LINE, DIVISIBILITY) and _negation_written(
        claim, index, chain
    ):
        return (
            "the chain writes the claim's negation after it (`1 \\neq 7`): a relation it tested and refuted"
        )
    sentence = _sentence_of(claim, step)
    if _SCALED_NUMBER.search(sentence):
        return (
            "a number with a scale word in the claim's sentence (`2.4 million`, `0.24 lakh`): read without it"
        )
    if problem_text and _redefines_a_sign(problem_text):
        return "the problem gives a sign another meaning (`- means ×`): its arithmetic has two readings"
    if problem_text and _quoted_from(claim, problem_text):
        return "a relation the problem itself writes (an option, a statement to judge): quoted, not asserted"
    if _SPACED_THOUSANDS.search(claim):
        return "digits grouped by spaces (`9 132 500`): thousands, or numbers side by side"
    if _constant_named(claim, (problem_text or "", *chain[: index + 1])):
        return "a constant's symbol the text names as a quantity (`its parallax angle, $\\pi$`): a name here"
    grammar = _GRAMMAR.get(kind)
    if grammar is WORDS and _WORD_HYPHEN.search(claim):
        return "a hyphen inside a word (`base-6`, `x-values`): part of the word, not a minus"
    if grammar is WORDS and _RELATION_WORD.search(claim):
        return "a word of relation inside the claim (`equals`, `is`): two relations, its words read as units"
    if _OPENS_WITH_FRACTION.match(claim) and any(
        _AND_BEFORE.search(step[:at]) for at in claim_offsets(claim, step, overlapping=True)
    ):
        return "a whole number and a fraction joined by `and` (`3 and 1/8`): a mixed number, read in part"
    if _unbalanced(claim):
        return "a bracket the claim closes and never opens, or leaves open: cut out of a longer expression"
    if _applied_to_words(claim, step):
        return "a name the step applies to words (`P(Ben)`): read without its argument, a function's value"
    for relation in relations if grammar else ():
        unread = unread_span(relation, grammar)
        if unread is not None:
            return f"the reading does not account for every character: {unread.evidence()} of {relation!r}"
        offsets = claim_offsets(relation, step, overlapping=True)
        # (a word problem's `$` is money: there only `\\(...\\)` and `\\[...\\]` are math)
        cut = (
            cut_from_source(relation, step, offsets)
            if grammar is not WORDS or (offsets and all(_inside_brackets(step, at) for at in offsets))
            else None
        ) or cut_in_prose(relation, step, offsets, units_after=grammar is WORDS)
        if cut is not None:
            return f"the claim is cut out of a longer expression: {cut.evidence()} of the step"
    if kind not in (EQUATION_STEP, SYSTEM_RESULT, IDENTITY):
        other = other_reading(claim, index, chain, problem_text, sentence, expected)
        if other is not None:
            return other
        counted = kind in (WORD_PROBLEM_ARITHMETIC, CLOSED_ARITHMETIC) and _count_follows(claim, step)
        if counted and floored_quotient(claim):
            return "a quotient of whole things read as its integer part (`17/7 = 2 croissants` each): a share"
        if counted and ceiled_quotient(claim) and _NEEDED.search(sentence):
            return "a quotient of whole things rounded up (`462/9 = 52 drives` needed): a count to cover it"
        if kind == SUBSTITUTED_ARITHMETIC and _VALUE_GIVEN.fullmatch(claim):
            return "a name and a number (`x = 2`): a value stated, with no arithmetic in it"
        if _solved_from_rounded(claim, chain, index, problem_text or ""):
            return "a value solved from an equation of rounded decimals, within what their rounding allows"
    if kind in WRITTEN_NUMBER_KINDS and _TESTED.search(step) and _both_sides_worked(claim):
        return "an equation put to the test (both sides worked out) in a step that checks or tries a value"
    worked = kind in WRITTEN_NUMBER_KINDS or kind == WORD_PROBLEM_ARITHMETIC
    if worked and _both_sides_worked(claim) and introduced_by_a_test(index, chain):
        return "an equation put to the test (both sides worked out) that a value supposed or tried introduces"
    if (
        kind in (WORD_PROBLEM_ARITHMETIC, SUBSTITUTED_ARITHMETIC)
        and _TESTED.search(step)
        and _SOLVED_FORM.match(claim)
    ):
        return "a name worked out again in a step that checks or tries a value: a new use of it"
    shown = kind in (WORD_PROBLEM_ARITHMETIC, SUBSTITUTED_ARITHMETIC)
    if shown and _substitution_shown(claim, step, chain[:index]):
        return (
            "one side is the other with numbers put in for its names (`3x + y = 3*0 + 1`): values of its own"
        )
    if kind == WORD_PROBLEM_ARITHMETIC and _converted_units(claim, step, problem_text):
        return "the sides are in different units (`3 * 12 inches = 3 feet`): a conversion, not arithmetic"
    if kind == WORD_PROBLEM_ARITHMETIC and reading != _REWRITE_READ and _unknown_on_both_sides(claim):
        return "a name on both sides (`C = 1500 + \\frac{4}{7}C`): an equation to solve, not arithmetic"
    if kind not in (EQUATION_STEP, SYSTEM_RESULT) and _given_again(claim, index, chain):
        return "a second value given to a name (`n = 7`, then `n = 4`): a new use of it, not arithmetic"
    if kind in (WORD_PROBLEM_ARITHMETIC, SUBSTITUTED_ARITHMETIC) and _defined_again(claim, index, chain):
        return "a name set again by a formula (`F = 50`, then `F = 50 * 1.02`): no link to its old value"
    if _REJECTED.search(step):
        return "the step marks a statement false or rejects it"
    if _asked(claim, step):
        return "the claim is put as a question"
    if kind not in WRITTEN_NUMBER_KINDS and _VALUE_TRIAL.search(step):
        return "the step tries a value: what follows from it is no statement of the chain"
    if _CONTRADICTION.search(step) and any(_ASSUMED.search(text) for text in chain[: index + 1]):
        return "a contradiction reached on purpose from an assumption"
    if _on_case_heading(claim, step):
        return "the claim stands in the heading of a case"
    nearby = [chain[j] for j in range(max(0, index - _MODULAR_REACH), index + 1)]
    if problem_text and _MODULUS.search(problem_text):  # "Find the generator of the field Z_11"
        nearby.insert(0, problem_text)
    if kind not in (CONGRUENCE, DIVISIBILITY) and any(_MODULAR.search(text) for text in nearby):
        if _may_hold_modulo(claim, expected, nearby):
            return "the chain works modulo a number, and the claim may hold there"
    if any(_EQUATION_NUMBERS.match(side) for side in _RELATION.split(claim)):
        return "equation numbers combined (`\\frac{(4)}{(5)}`): a reference to tagged equations"
    if _SECOND_READING.search(_COMMAND.sub(" ", _TEXT_WORDS.sub(r" \1 ", claim))):
        return "notation with a second reading (√, !n, a remark in brackets)"
    if _SLASH_BEFORE_PRODUCT.search(claim):
        return "a slash before a product written side by side (`4/3\\pi`): `(4/3)\\pi` or `4/(3\\pi)`"
    if re.search(r"(?<!\\)[\[\]]", claim) and any(
        _INTEGER_PART.search(text) for text in (problem_text or "", *chain[: index + 1])
    ):
        return "square brackets where the chain writes the integer part"
    if kind == EQUATION_STEP:
        in_system = any(_SYSTEM.search(text) for text in chain[max(0, index - 1) : index + 1])
        if len(_names(claim)) >= 2 and in_system and not _REWRITE_SAID.search(step):
            return "a system of equations, and no rewrite said: one equation is no rewrite of the next"
        if _substituted(claim, chain, index):
            return "a relation the chain states put in for one side's part (`x^2 = x + 1`): no rewrite alone"
        return _equation_step_reason(claim)
    if kind == SYSTEM_RESULT and _one_name_several_values(claim.partition(" => ")[0].split(" ; ")):
        return "one name given several values (`y = 0`, `y = 2`): one case per value, not a system"
    if kind == IDENTITY:
        return _identity_reason(claim, chain, index)
    # (a word problem writes `$` as money, not math: the factor rule reads math segments)
    if kind not in (SYSTEM_RESULT, WORD_PROBLEM_ARITHMETIC) and _factor_before(claim, step):
        return "a factor stands right before the claim, outside what was read"
    return None


# the grammar each kind's reader reads (`claim_grammar`); kinds whose claim text the checker writes itself
# (`labelled_line`, `divisibility`) have none
_GRAMMAR: dict[str, Grammar] = {
    CLOSED_ARITHMETIC: WRITTEN_NUMBERS,
    NOTATION_RULE: WRITTEN_NUMBERS,
    CONGRUENCE: WRITTEN_NUMBERS,
    SUBSTITUTED_ARITHMETIC: NAMES,
    IDENTITY: NAMES,
    EQUATION_STEP: NAMES,
    SYSTEM_RESULT: NAMES,
    WORD_PROBLEM_ARITHMETIC: WORDS,
}


_NAME_AND_NUMBER = re.compile(r"\s*([A-Za-z])\s*=\s*(-?\d+(?:\.\d+)?)\s*")


def _one_name_several_values(relations: Sequence[str]) -> bool:
    """Do two equations of a system (not its result) give one name two different written values? Then they
    are cases (one per value of a list of solutions), which no system holds at once."""
    values: dict[str, set[Fraction]] = {}
    for relation in relations:
        found = _NAME_AND_NUMBER.fullmatch(relation)
        if found:
            values.setdefault(found.group(1), set()).add(Fraction(found.group(2)))
    return any(len(found) >= 2 for found in values.values())


# the symbols of constants a reader reads as their values (`\\pi`, `π`, a lone `e`), and the ways a text
# makes a symbol the name of a quantity: in apposition to a noun ("its parallax angle, $\\pi$,"), or after
# "denoted (by)", "called", "written", "let"
_CONSTANT = r"(?:\\pi(?![A-Za-z])|π|(?<![A-Za-z\\])e(?![A-Za-z]))"
_OPEN, _CLOSE = r"(?:\$|\\\()\s*", r"\s*(?:\$|\\\))"
_NAMED_CONSTANT = re.compile(
    rf"\b[A-Za-z]{{3,}},\s*{_OPEN}({_CONSTANT}){_CLOSE}\s*[,.]"
    rf"|\b(?i:denoted(?:\s+by)?|called|written(?:\s+as)?|let)\s+{_OPEN}({_CONSTANT}){_CLOSE}"
)
_CONSTANT_IN = re.compile(_CONSTANT)


def _constant_named(claim: str, texts: Sequence[str]) -> bool:
    """Does the claim hold a constant's symbol that the problem or the chain names as a quantity ("Find its
    parallax angle, $\\pi$, in arcseconds")? There the symbol is a name, not the constant's value."""
    used = set(_CONSTANT_IN.findall(_TEXT_BLOCK.sub(" ", claim)))
    if not used:
        return False
    named = {
        symbol
        for text in texts
        for found in _NAMED_CONSTANT.finditer(text)
        for symbol in found.groups()
        if symbol
    }
    return bool(used & named)


def _relations_read(kind: str, claim: str) -> list[str]:
    """The relations of the text a claim reads: an equation step's two (`A => B`), a system result's
    equations and result (`E1 ; E2 => R`), else the claim itself; a labelled line's claim is the checker's
    own sentence, located by nothing."""
    if kind == LABELLED_LINE or kind == DIVISIBILITY:
        return []
    if kind in (EQUATION_STEP, SYSTEM_RESULT):
        return [part.strip() for part in re.split(r" => | ; ", claim) if part.strip()]
    return [claim]


_MATH_BRACKET_DELIMITER = re.compile(r"\\[\[\]()]|\\(?:left|right)(?![A-Za-z])")


def _unbalanced(claim: str) -> bool:
    """Does the claim close a round or square bracket it never opened, or leave one open? Then it is cut
    out of a longer expression (`0.4167) = 0.3201 / 0.3388` from `P(z < 2.0833 | z > 0.4167) = ...`).
    Round and square brackets count alike, so an interval (`[0, 1)`) is balanced.

    >>> _unbalanced("0.4167) = 0.3201 / 0.3388 ≈ 0.9446"), _unbalanced("x \\\\in [0, 1) = A")
    (True, False)
    """
    depth = 0
    for char in _MATH_BRACKET_DELIMITER.sub(" ", claim):
        depth += (char in "([") - (char in ")]")
        if depth < 0:
            return True
    return depth != 0


# a sign of operation or relation the problem says means another (`If $-$ means $\\times$`, `'+' stands for
# '÷'`): a puzzle that redefines the notation, whose chains write claims in either meaning
_SIGN = r"(?:\+|-|−|×|÷|\\times|\\div|\\cdot|\*|/|=|>|<)"
_MEANING = (
    r"(?:means|stands\s+for|denotes|represents|indicates|signifies|is\s+used\s+(?:for|as)|is\s+read\s+as)"
)
_SIGN_REDEFINED = re.compile(
    rf"(?:^|[\s(,:;])(?:the\s+)?(?:sign\s+|symbol\s+)?{_SIGN}\s+(?:sign\s+|symbol\s+)?{_MEANING}\s+"
    rf"(?:the\s+)?(?:sign\s+|symbol\s+)?{_SIGN}(?=[\s,.;]|$)",
    re.IGNORECASE,
)


def _redefines_a_sign(problem_text: str) -> bool:
    """Does the problem say an operator sign means another (delimiters and quotes around the signs aside)?

    >>> _redefines_a_sign("If $$-$$ means $$\\\\times$$ and $$+$$ means $$\\\\div$$, then 20+4-2 = ?")
    True
    >>> _redefines_a_sign("Here - means minus, and the total is 20 - 4.")
    False
    """
    return bool(_SIGN_REDEFINED.search(re.sub(r"[$'\"‘’“”`]", " ", problem_text)))


def _applied_to_words(claim: str, step: str) -> bool:
    """Does a lone letter of the claim stand in the step glued to a bracket that opens with a word
    (`P(Ben)`, `P(both red)`)? The claim reader took the bracket for a label and kept the letter alone.

    >>> _applied_to_words("0.72 = 0.6 + P - 0.18", "0.72 = 0.6 + P(Ben) - 0.18")
    True
    >>> _applied_to_words("0.72 = 0.6 + P - 0.18", "0.72 = 0.6 + P(B) - 0.18")
    False
    """
    letters = set(_LONE_LETTER.findall(claim))
    return any(re.search(rf"(?<![A-Za-z\\]){letter}\(\s*[A-Za-z]{{2,}}", step) for letter in letters)


def _names(text: str) -> frozenset[str]:
    """The letters of `text` outside commands and `\\text{}` (`4bc` has `b` and `c`)."""
    return frozenset(re.findall(r"[A-Za-z]", _COMMAND.sub(" ", _TEXT_BLOCK.sub(" ", text))))


def _relations(text: str) -> list[str]:
    return [m.group(0) for m in _RELATION.finditer(text)]


_SUBSTITUTION_REACH = 3  # steps before the claim's whose relations may be put in


def _substituted(claim: str, chain: Sequence[str], index: int) -> bool:
    """Is an equation step's second relation its first with one part replaced by the other side of a relation
    the chain states in this step or the few before (`x^2 = x + 1`: `(x^2 + x)` becomes `(x + 1 + x)`)?
    It follows from the two together, so it is no rewrite of the first alone."""
    before, _, after = claim.partition(" => ")
    if not after:
        return False
    return _one_part_replaced(re.sub(r"\s+", "", before), re.sub(r"\s+", "", after), chain, index)


def _one_part_replaced(first: str, second: str, chain: Sequence[str], index: int) -> bool:
    """Is `second` the relation `first` with one part replaced by the other side of a relation the chain
    states in step `index` or the few before (spacing removed from both)?"""
    for text in chain[max(0, index - _SUBSTITUTION_REACH) : index + 1]:
        for match in _MATH_SEGMENT.finditer(text):
            body = re.sub(r"\s+", "", _body(match))
            sides = [side.strip(".,;") for side in re.split(r"(?<![<>!\\])=", body)]
            for left, right in zip(sides, sides[1:], strict=False):
                for part, value in ((left, right), (right, left)):
                    if not part or not value or part not in first or part == first:
                        continue
                    if second in (first.replace(part, value), first.replace(part, f"({value})")):
                        return True
    return False


def _substituted_identity(claim: str, chain: Sequence[str], index: int) -> bool:
    """Is an identity the chain's own equation with a relation it states put in (`Substitute x = 3y into
    y^3 = x^2`: `y^3 = (3y)^2`)? Then it is that equation in fewer names, to solve, not an identity."""
    second = re.sub(r"\s+", "", claim).strip("$.")
    stated = {
        re.sub(r"\s+", "", _body(match)).strip(".,;:")
        for text in chain[max(0, index - _SUBSTITUTION_REACH) : index + 1]
        for match in _MATH_SEGMENT.finditer(text)
    }
    return any(
        first != second
        and len(_RELATION.findall(first)) == 1
        and _one_part_replaced(first, second, chain, index)
        for first in stated
    )


def _equation_step_reason(claim: str) -> str | None:
    """An equation step is certain only between two relations of one kind in the same unknowns, neither a
    value given to the same name (branches of a split, or a substitution)."""
    before, _, after = claim.partition(" => ")
    if not after:
        return None
    if _names(before) != _names(after):
        return "the two relations are in different unknowns (a system, or a substitution)"
    kinds_before = {"=" if r == "=" else "order" for r in _relations(before)}
    kinds_after = {"=" if r == "=" else "order" for r in _relations(after)}
    if kinds_before != kinds_after:
        return "the two relations are of different kinds (an equation and an inequality)"
    first, second = _SOLVED_FORM.match(before), _SOLVED_FORM.match(after)
    if first and second and first.group(1) == second.group(1):
        return "two values of one name (branches of a split)"
    if _one_factor_zero(before, after):
        return "one factor of a product put equal to zero (`(x - 3)(x + 2) = 0`, then `x - 3 = 0`): one case"
    return None


def _factors(side: str) -> list[str]:
    """The bracketed factors of a product written side by side (`(x - 3)(x + 3)(x + 2)`), spacing aside;
    empty where the side is no such product."""
    text = re.sub(r"\\left|\\right|\s+", "", side)
    found, depth, start = [], 0, 0
    for at, ch in enumerate(text):
        if ch == "(":
            depth, start = depth + 1, (at + 1 if depth == 0 else start)
        elif ch == ")":
            depth -= 1
            if depth == 0:
                found.append(text[start:at])
        elif depth == 0:
            return []
    return found if len(found) >= 2 else []


def _one_factor_zero(before: str, after: str) -> bool:
    """Is `after` one factor of `before`'s product put equal to zero, where `before` puts it equal to zero
    (the zero-product property gives one case per factor, each a subset of the solutions)?

    >>> _one_factor_zero("(x - 3)(x + 3)(x + 2) = 0", "x - 3 = 0")
    True
    >>> _one_factor_zero("(x - 3)(x + 2) = 0", "x - 4 = 0")
    False
    """
    left, _, right = before.partition("=")
    new_left, _, new_right = after.partition("=")
    if right.strip() != "0" or new_right.strip() != "0":
        return False
    factor = re.sub(r"\s+", "", new_left).removeprefix("(").removesuffix(")")
    return factor in _factors(left)


def _identity_reason(claim: str, chain: Sequence[str] = (), index: int = 0) -> str | None:
    """An identity is certain only between two expressions in the same free names, and only where those
    names are free: `2x + 3 = 7` or `x^2 + y^2 = 25` is an equation (names on one side only, or a name
    lost), and so is a relation the step introduces as an equation, or one that holds at every value the
    chain finds for its names (unknowns it solves for)."""
    sides = [side for side in re.split(r"(?<![<>!\\])=", claim) if side.strip()]
    if len(sides) >= 2 and len({_names(side) for side in sides}) > 1:
        return "the sides are in different names: an equation to solve, not an identity"
    if chain and _introduced_as_equation(claim, chain[index]):
        return "the step introduces the relation as an equation (to solve, not an identity)"
    if chain and _substituted_identity(claim, chain, index):
        return "the chain's equation with a relation it states put in (`x = 3y` into `y^3 = x^2`): to solve"
    if len(sides) == 2 and chain and _rewrites_an_equation(claim, chain, index):
        return "an equation before it rewritten (linked, or its right side kept): a condition, no identity"
    names = _names(claim)
    if len(sides) == 2 and names and chain and _holds_at_found_values(sides, _pins(names, chain)):
        return "the relation holds at the values the chain finds for its names: an equation it solves"
    return None


# what separates the relations of one math segment: line breaks, a comma, a quad, an arrow, words (the
# negation search splits its lines with `_SEGMENT_LINES`, which also cuts at newlines, `;` and `\\therefore`)
_LINE_BREAKS = re.compile(r"\\\\|,\s|\\q?quad|\\implies|\\Rightarrow|\\text\s*\{[^{}]*\}")
# any math delimiter, matched or not: a text holding one is read by its segments alone (`_relations_before`)
_ANY_DELIMITER = re.compile(r"\$|\\[\[\(]")


def _relations_before(chain: Sequence[str], index: int, claim: str) -> list[tuple[str, str]]:
    """The (left, right) sides, spacing removed, of the relations written in the step before `index` and in
    step `index` before the claim's first occurrence (each `=` of a continued chain gives one); where the
    claim is not found as written, none of step `index`'s (what comes after it is no earlier relation).
    A text with no math delimiters is read as the claim reader reads plain text (its `=` runs: "to get
    2(r+6)^2 = 8r^2"), so a chain written without LaTeX delimiters has its relations too."""
    found = re.search(spaced(claim), chain[index])
    texts = [*chain[max(0, index - 1) : index], chain[index][: found.start() if found else 0]]
    relations: list[tuple[str, str]] = []
    for text in texts:
        lines = [line for match in _MATH_SEGMENT.finditer(text) for line in _LINE_BREAKS.split(_body(match))]
        if not lines and not _ANY_DELIMITER.search(text):
            lines = [run.text for run in extract_runs(text)]
        for line in lines:
            sides = [_balanced(side) for side in re.split(r"(?<![<>!\\])=", line)]
            relations += [(a, b) for a, b in zip(sides, sides[1:], strict=False) if a and b]
    return [(re.sub(r"\s+", "", a), re.sub(r"\s+", "", b)) for a, b in relations]


SAME_SOLUTIONS = "equation step: same solution set"  # solution_sets.SAME_SOLUTIONS (it runs in the worker)
# solution_sets.ROUNDED_ALIKE (it runs in the worker)
ROUNDED_ALIKE = "equation step: the same solutions to the places its decimals are written"


def _solved_from_rounded(claim: str, chain: Sequence[str], index: int, problem_text: str) -> bool:
    """Is the claim a name's value (`x = 12.5`) solved from a relation just before it that holds a decimal
    of three figures or more the problem does not write, and the same to the places that decimal is
    written (`0.435 = x/28.75`, 0.435 being 17.5/40.25 rounded: exactly x = 12.50625, and 12.5 from the
    value it stands for)? Then the chain carried a rounded value and wrote the value it meant. The
    equation-step reader's rounding rule (`solution_sets.rounded_alike`) decides, in the bounded worker,
    with every other decimal written as an exact fraction (`other_readings.exact_but_carried`: the
    problem's `28.75`, a rate `0.15`)."""
    from prm_factory.verifiers.math.bounded import run_items

    given_value = _value_given(claim)
    if given_value is None:
        return False
    name = given_value[0]
    named = re.compile(rf"(?<![A-Za-z\\]){name}(?![A-Za-z])")
    earlier = {
        exact
        for a, b in _relations_before(chain, index, claim)
        if named.search(a + b) and (exact := exact_but_carried(f"{a} = {b}", problem_text)) is not None
    }
    if not earlier:
        return False
    items = [(before, claim.strip(" $."), False) for before in sorted(earlier)]
    outcomes = run_items("prm_factory.verifiers.math.solution_sets:equation_steps", items, 3.0)
    return any(outcome == (None, ROUNDED_ALIKE) for outcome in outcomes)  # a str: timed out, not read


def _rewrites_an_equation(claim: str, chain: Sequence[str], index: int) -> bool:
    """Does the claim follow, as an equation step, from a relation before it that the text links to it (an
    equation pair: "which leads to", `\\Rightarrow`) or whose right side it keeps, its left rewritten
    (`\\left(\\frac{a^2 - 1}{2}\\right)^2 = a^3`, then "Simplifying, we get" `\\frac{(a^2 - 1)^2}{4} = a^3`)?
    Then it is that equation rewritten, a condition on its names, and its reading as an identity is not
    the only one. (An expression's rewrites keep the expression on the left, `x^8 + x^4 + 1 = A`, then
    `x^8 + x^4 + 1 = B`: a kept left side leaves the identity reading.) Judged by the equation-step
    reader in the bounded worker: the same real solutions (an implied set is not enough: after
    `x^8 + x^4 + 1 = 0`, which no real number solves, any equation is implied); an identity before it
    (`(x+1)(x+2) = x^2 + 3x + 2`), a derivation that fails, or one not read leaves the claim an identity."""
    from prm_factory.verifiers.math.bounded import run_items
    from prm_factory.verifiers.math.equation_steps import equation_pairs

    def bare(text: str) -> str:
        return re.sub(r"\s+", "", text).strip("$.,;")

    left, _, right = bare(claim).partition("=")
    earlier = {f"{a} = {b}" for a, b in _relations_before(chain, index, claim) if b == right and a != left}
    earlier |= {
        pair.before
        for pair in equation_pairs(chain)
        if pair.step == index and bare(pair.after) == bare(claim)
    }
    if not earlier:
        return False
    items = [(before, claim, False) for before in sorted(earlier)]
    outcomes = run_items("prm_factory.verifiers.math.solution_sets:equation_steps", items, 3.0)
    return any(outcome == (True, SAME_SOLUTIONS) for outcome in outcomes)  # a str: timed out, not read


# "the quadratic equation: \\[ ... \\]", "we solve $...$": the words right before a relation that name it
_EQUATION_BEFORE = re.compile(
    r"\b(?:equations?|solv(?:e|es|ed|ing))\b(?:\s+(?:is|are|becomes|reads))?\s*:?\s*$", re.I
)
_MATH_SEGMENT = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)


def _body(match: re.Match[str]) -> str:
    """The inside of a `_MATH_SEGMENT` match, whichever delimiters matched."""
    return next(group for group in match.groups() if group is not None)


# "simplify that equation to get 2(r+6)^2 = 8r^2": prose that derives the claim from an equation
_FROM_EQUATION_BEFORE = re.compile(
    r"\bequations?\b[^.;:$\\]{0,40}\b(?:to\s+get|we\s+get|gets?|gives?|becomes|yields?|to\s+obtain|obtain)\s*:?\s*"
    r"(?:\$\$?|\\\(|\\\[)?\s*$",
    re.I,
)


def _introduced_as_equation(claim: str, step: str) -> bool:
    """Is the claim a math segment of its own, the only relation in it, right after words that call it an
    equation or solve it? Or is it written whole right after words that derive it from an equation
    ("simplify that equation to get ...")? (A rewrite chain after "the equation:" is still read as
    identities.)

    >>> _introduced_as_equation("2(r+6)^2 = 8r^2", "So we simplify that equation to get 2(r+6)^2 = 8r^2.")
    True
    >>> _introduced_as_equation("a^2 = 4a", "The equation becomes $a^2 = 4a$.")
    True
    >>> _introduced_as_equation("2(r+6)^2 = 8r^2", "We can simplify to get 2(r+6)^2 = 8r^2.")
    False
    """
    wanted = re.sub(r"\s+", "", claim)
    for match in re.finditer(spaced(claim), step):
        if _FROM_EQUATION_BEFORE.search(step[max(0, match.start() - 80) : match.start()]):
            return True
    for match in _MATH_SEGMENT.finditer(step):
        body = _body(match)
        if re.sub(r"\s+", "", body).strip(".,;") != wanted:
            continue
        if _EQUATION_BEFORE.search(step[max(0, match.start() - 60) : match.start()]):
            return True
    return False


def _pins(names: frozenset[str], chain: Sequence[str]) -> list[tuple[str, str]]:
    """The chain's statements that put an expression in (some of) `names` equal to a number, as
    (expression, number): `x + y = \\frac{1190}{11}`, `r = \\frac{192}{5}`."""
    pins: list[tuple[str, str]] = []
    for step in chain:
        for match in _MATH_SEGMENT.finditer(step):
            body = _body(match)
            body = re.sub(r"\\boxed\s*\{|\\textbf\s*\{", "{", body)
            for line in _LINE_BREAKS.split(body):
                sides = re.split(r"(?<![<>!\\])=", line)
                for left, right in zip(sides, sides[1:], strict=False):
                    for one, other in ((left, right), (right, left)):
                        one, other = _balanced(one), _balanced(other)
                        number = _names(one) == frozenset() and re.search(r"\d", one)
                        if number and _names(other) and _names(other) <= names and (other, one) not in pins:
                            pins.append((other, one))
    return pins


def _balanced(text: str) -> str:
    """`text` without spaces and punctuation at its ends, nor a brace left open or closed by a cut."""
    text = text.strip(" .,;")
    while text.startswith("{") and text.count("{") > text.count("}"):
        text = text[1:].strip(" .,;")
    while text.endswith("}") and text.count("}") > text.count("{"):
        text = text[:-1].strip(" .,;")
    return text


def _holds_at_found_values(sides: Sequence[str], pins: Sequence[tuple[str, str]]) -> bool:
    """Does the relation hold at every value the pins give its names (bounded worker)? A check that could
    not run leaves the claim unjudged."""
    if not pins:
        return False
    from prm_factory.verifiers.math.bounded import run_items

    target = "prm_factory.verifiers.math.solution_sets:identity_at_values"
    (outcome,) = run_items(target, [(sides[0], sides[1], list(pins))], 3.0)
    return outcome is True or isinstance(outcome, str)  # TIMED_OUT / WORKER_FAILED: not read, unjudged


def _inside_math(step: str, position: int) -> bool:
    """Is `position` inside a math segment (`$...$`, `\\(...\\)`, `\\[...\\]`, an environment)?"""
    before = step[:position].replace("$$", "\x00")  # `$$...$$` displays, then `$...$` inline
    dollars = len(re.findall(r"(?<!\\)\$", before)) + before.count("\x00")
    opened = len(re.findall(r"\\[(\[]|\\begin\{", before)) > len(re.findall(r"\\[)\]]|\\end\{", before))
    return opened or dollars % 2 == 1


def _factor_before(claim: str, step: str) -> bool:
    """Does every place the claim's first side is written stand right after a factor inside math (a name,
    a closing bracket, `\\cdot`): `PS = PU \\cos 30^\\circ = ...` read from `\\cos`?"""
    head = re.split(r"=|\\approx|≈", claim, maxsplit=1)[0].strip()
    if not head:
        return False
    found = [m.start() for m in re.finditer(re.escape(head), step)]
    if not found:
        return False
    return all(
        _inside_math(step, at)
        and _FACTOR_BEFORE.search(step[max(0, at - 16) : at])
        and not _NO_FACTOR_COMMAND.search(step[max(0, at - 16) : at])
        for at in found
    )


def _question_spans(step: str) -> list[tuple[int, int]]:
    """Stretches of `step` that ask: from "verify if" / "whether" to the end of its sentence (through the
    display a colon opens there), and every sentence that ends on `?`."""
    spans = []
    for ask in _ASKS.finditer(step):
        end_match = _SENTENCE_END.search(step, ask.end())
        end = end_match.end() if end_match else len(step)
        colon = step.find(":", ask.end(), end)
        if colon != -1:
            display = _DISPLAY_END.search(step, colon)
            end = max(end, display.end()) if display else end
        spans.append((ask.start(), end))
    for mark in re.finditer(r"\?", step):
        starts = [m.end() for m in _SENTENCE_END.finditer(step, 0, mark.start())]
        spans.append((starts[-1] if starts else 0, mark.end()))
    return spans


def _asked(claim: str, step: str) -> bool:
    """Is the claim written inside a question (`we need to verify if: \\[ \\sqrt3 = 2 \\]`)? A claim that
    cannot be found in the step counts as asked when the step asks at all."""
    spans = _question_spans(step)
    if not spans:
        return False
    head = re.split(r"=|\\approx|≈|\\equiv", claim, maxsplit=1)[0].strip()
    found = [m.start() for m in re.finditer(re.escape(head), step)] if head else []
    if not found:
        return True
    return all(any(a <= at < b for a, b in spans) for at in found)


# a relation the chain writes negated (`1 \\neq 7`), one to a line of a math segment
_SEGMENT_LINES = re.compile(r"\\\\|\n|,\s|;|\\q?quad|\\implies|\\Rightarrow|\\therefore")


def _negation_written(claim: str, index: int, chain: Sequence[str]) -> bool:
    """Does the chain write this claim's negation after it, in its step or the next: `A \\neq b` where `A`
    is the claim's first side as written and `b` the value of its second side (`1 = \\sqrt{11 - 2(1)} + 4`,
    lines later `1 \\neq 7`)? Then the chain tested the relation and refuted it: it is right, not wrong
    (a slip on the way to the refutation gives a value other than `b`, and stays an error). The values are
    compared by the bounded worker; a comparison that timed out or whose worker failed counts as a
    negation found (fail closed: a refutation the checker could not read leaves the claim unjudged, never
    `incorrect`), as `_holds_at_found_values` treats its own."""
    sides = re.split(r"(?<![<>!\\])=", claim)
    if len(sides) != 2 or not sides[0].strip() or not sides[1].strip():
        return False
    first, second = (re.sub(r"\s+", "", side).strip("$.") for side in sides)
    offsets = claim_offsets(claim, chain[index])
    texts = [chain[index][offsets[0] if offsets else 0 :], *chain[index + 1 : index + 2]]
    written: list[str] = []
    for text in texts:
        for match in _MATH_SEGMENT.finditer(text):
            body = _body(match)
            for line in _SEGMENT_LINES.split(body):
                parts = UNEQUAL.split(line)
                if len(parts) == 2 and not _RELATION.search(UNEQUAL.sub(" ", line)):
                    left, right = (re.sub(r"\s+", "", part).strip("$.") for part in parts)
                    if left == first and right and right != second:
                        written.append(right)
    if not written:
        return False
    from prm_factory.verifiers.math.bounded import run_items

    target = "prm_factory.verifiers.math.solution_sets:equal_values"
    outcomes = run_items(target, [(sides[1], value) for value in written], 3.0)
    # TIMED_OUT / WORKER_FAILED: not read, so a refutation may stand (as in `_holds_at_found_values`)
    return any(outcome is True or isinstance(outcome, str) for outcome in outcomes)


def _on_case_heading(claim: str, step: str) -> bool:
    """Does the claim stand on a line that heads a case (`Case 2: a = 2, b = 1`): values assumed, not
    derived?"""
    head = re.split(r"=|\\approx|≈", claim, maxsplit=1)[0].strip()
    for heading in _CASE_HEADING.finditer(step):
        line_end = step.find("\n", heading.start())
        line = step[heading.start() : len(step) if line_end == -1 else line_end]
        if not head or head in line:
            return True
    return False


def _rational(text: str | None) -> Fraction | None:
    """A side written as a plain number or a `\\frac` of two (`-\\frac12`, `144`, `-1/2`), else None."""
    if text is None:
        return None
    t = text.replace("$", "").replace(" ", "").replace("\\left", "").replace("\\right", "")
    t = re.sub(r"\\[dt]?frac\{?(-?\d+)\}?\{?(\d+)\}?", r"\1/\2", t)
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None


def _written_value(text: str) -> Fraction | None:
    """A side in written numbers worked out exactly (`9^2`, `11 \\times 17 + 9`, `-\\frac12`), else None."""
    value = _rational(text)
    if value is not None:
        return value
    try:
        worked = evaluate(parse_side(lex(text)), {})
    except (NotEvaluable, TooLarge, ValueError, ZeroDivisionError, IndexError, KeyError):
        return None
    return worked.const if not worked.coef else None


def _may_hold_modulo(claim: str, expected: str | None, texts: Sequence[str]) -> bool:
    """Could the failed claim hold modulo a number the chain works with? Unknown moduli or unreadable
    sides: yes, where the right side is a number. `-\\frac12 = 144` modulo 289 holds, and `(8^2)^2 = 9^2`
    modulo 11 (a chain of `\\equiv` written with `=`, both sides worked out); `2^4 + 1 = 19` modulo 289 does
    not, nor `194 = 11 \\times 17 + 9` modulo 11 (194 against 196). A right side that is an expression is
    read modulo a number only where the chain names one."""
    moduli = {int(m) for text in texts for m in _MODULUS.findall(text) if int(m) > 1}
    sides = re.split(r"=|\\equiv", claim)
    left_text, right_text = sides[0], sides[-1]
    right = _rational(right_text)
    if right is None and moduli:
        right = _written_value(right_text)
    if right is None:
        return False  # `194 = 11 \\times 17 + 9` and no modulus named: an expression is plain arithmetic
    left = _written_value(left_text)
    if left is None:
        left = _rational(expected)
    if not moduli or left is None:
        return True
    for m in moduli:
        difference = left - right
        if difference.denominator % m and math.gcd(difference.denominator, m) == 1:
            numerator = difference.numerator * pow(difference.denominator, -1, m)
        else:
            numerator = difference.numerator if difference.denominator == 1 else 1
        if numerator % m == 0:
            return True
    return False
