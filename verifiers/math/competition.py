"""When may a false claim in competition math be called an error? Only when its reading is certain.

Competition solutions (MATH, olympiads) write letters for many things a word-problem checker reads as
values or units: unknowns still being solved for, one branch of an alternative (`b = 0` or `b = 5`), a
case (`if d = 1 ... if d = -1`), a trial value (`For x = 1: ...`), a dummy index (`\\sum_{m=2}`), a
product of names (`5AD^2`, `2rs`), a function (`f(2)`, `\\log_2 3`). Each of these, read as arithmetic,
turns a true step into a "false" claim. So in a chain whose problem is written in competition style
(LaTeX, see `looks_competition`) a failed claim stays `incorrect` only when:

- its text is pure numbers: no letter left once the few commands with one meaning (`\\frac`, `\\sqrt`,
  `\\cdot`, `\\times`, `\\div`, `\\left`, `\\right`, `\\pi`; trigonometry only with degree marks, which
  `symbolic` reads as degrees) are taken out, no factorial, no absolute value, no subscript, no `\\pm`;
- it does not stand inside notation it cannot see (`\\log_2`, `5!`, `x^{...}`: see `certain_context`);
- or it is an expansion cue'd in words (`Expanding, (x+1)^2 = x^2 + x + 1`) that is false as an identity
  both to SymPy's simplification and at random rational points (`symbolic.IDENTITY_FALSE`).

Everything else that fails is unjudged, with the reason. GSM8K-style chains (no LaTeX in the problem)
keep the word-problem checker's readings unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

from prm_factory.verifiers.math.claim_result import ClaimResult

# A problem in competition style: a LaTeX command, math between dollars that starts with a letter, a
# command, a bracket or an absolute value (`$x$`, `$\frac12$`, `$|2-x| = 3$`, never the currency `$5`), a
# power or a subscript.
_COMPETITION = re.compile(r"\\[A-Za-z]+|\\[()\[\]]|\$\s*[A-Za-z\\({|]|[\^_]")

_ONE_MEANING = re.compile(
    r"\\(?:[dt]?frac|sqrt|cdot|times|div|left|right|pi|approx|boxed|[lr]floor|[lr]ceil|[dt]?binom|[,;!: ]"
    r"|geqslant|leqslant|geq?|leq?|neq?|lt|gt)"
    r"(?![A-Za-z])"
)
_TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
# a factorial, absolute value, subscript, plus-minus, an ellipsis, or a number before a fraction (a mixed
# number or a product?)
_UNSAFE_MARKS = re.compile(r"[!|_]|\\pm|\\mp|\\%|\.\.\.|\\ldots|\\cdots|\d\s*\\[dt]?frac")

# Words that say a step rewrites an expression (so an `=` in it is an identity, not an equation to solve).
IDENTITY_CUE = re.compile(
    r"\b(?:expand(?:s|ed|ing)?|simplif(?:y|ies|ied|ying|ication)|distribut(?:e|es|ed|ing|ive)"
    r"|multiply(?:ing)? out|FOIL|factor(?:s|ed|ing|i[sz]ation|i[sz]es)?)\b",
    re.IGNORECASE,
)
IDENTITY_FALSE = "false as an identity"
# `\\frac{1 \\pm \\sqrt{5}}{2} = \\frac{1 \\pm 2.24}{2}`: both branches read as numbers
# (`symbolic.plus_minus_branches`)
PLUS_MINUS = "both branches of \\pm"
# `A = B = C` in the same names: each `=` claims an identity, no words needed (`symbolic.identity_chain`)
IDENTITY_CHAIN_FALSE = "false as an identity in a chain of expressions"


# Notation of competition math that word-problem solutions do not use: roots, logs, sums, trigonometry,
# congruences, floors, comparisons, a power of a name.
_COMPETITION_STEP = re.compile(
    r"\\(?:sqrt|binom|sum|prod|log|ln|sin|cos|tan|cot|sec|csc|equiv|pmod|bmod|lfloor|lceil|infty|cup|cap"
    r"|angle|triangle|overline|le|ge|leq|geq|neq|pm|mid|gcd|lcm|circ)(?![A-Za-z])|[A-Za-z]\s*\^|\(mod\b"
)


def looks_competition(problem_text: str | None, steps: Sequence[str] = ()) -> bool:
    """Is the problem written in competition style (LaTeX math), or its solution in competition notation,
    rather than a plain word problem worked in arithmetic?

    >>> looks_competition("Find $x$ if $x^2 = 9$."), looks_competition("Tom pays $5 for 2 pens.")
    (True, False)
    >>> looks_competition("Find the sum of all solutions of the equation $|2-x|= 3$.")
    True
    """
    if problem_text and _COMPETITION.search(problem_text):
        return True
    return any(_COMPETITION_STEP.search(step) for step in steps)


# a trig function's argument: a bracket, a group or a `\\frac`, else the run of factors up to an operator
_TRIG_ARGUMENT = re.compile(
    r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])\s*(?:\^\s*(?:\{[^{}]*\}|\d)\s*)?"
    r"(?:\\left\s*)?(\((?:[^()]|\([^()]*\))*\)|\{(?:[^{}]|\{[^{}]*\})*\}"
    r"|\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}|(?:\d|\\pi(?![A-Za-z])|\s)+)"
)


# after the argument: nothing that could still belong to it (`\\tan \\pi/4`: tan(pi)/4 or tan(pi/4)?)
_ARGUMENT_ENDS = re.compile(r"\s*(?:$|[-+=,)}\]]|\\right(?![A-Za-z]))")


def radians_said(text: str) -> bool:
    """Is every trig function of `text` applied to a multiple of `\\pi` (`\\sin \\frac{7\\pi}{2}`,
    `\\cos(2\\pi/3)`)? Then its argument is in radians, with no second reading.

    >>> radians_said("\\\\sin \\\\frac{7\\\\pi}{2} = -1"), radians_said("\\\\sin 30 = \\\\frac12")
    (True, False)
    >>> radians_said("\\\\tan \\\\pi/4 = 1")
    False
    """
    calls = list(_TRIG.finditer(text))
    found = list(_TRIG_ARGUMENT.finditer(text))
    return (
        len(found) == len(calls) > 0
        and all("\\pi" in m.group(1) for m in found)
        and all(_ARGUMENT_ENDS.match(text, m.end()) for m in found)
    )


# a logarithm read with certainty: a base written in digits (`\\log_5`, `\\log_{10}`) or `\\ln`, applied to a
# bracket, a group or a number (with its power: `\\log_{11} 5^{-1}`) that nothing after may still extend
_LOG = re.compile(r"\\(?:log|ln)(?![A-Za-z])")
_LOG_HEAD = r"(?:\\log_\s*(?:\{\s*\d+\s*\}|\d)|\\ln(?![A-Za-z]))"
_LOG_CALL = re.compile(
    _LOG_HEAD + r"\s*(?:\((?:[^()]|\([^()]*\))*\)|\\left\s*\((?:(?!\\right).)*\\right\s*\)"
    r"|\{(?:[^{}]|\{[^{}]*\})*\}|\d+(?:\.\d+)?(?:\s*\^\s*(?:\{[^{}]*\}|\d))?)"
)
_LOG_ENDS = re.compile(r"\s*(?:$|[-+=,)}\]<>]|\\(?:right|approx|geq?|leq?|neq?)(?![A-Za-z]))")


# a remainder: `\\mod` / `\\bmod` between a whole number (or a bracket) and a whole number, a side alone
_MOD = re.compile(r"\\b?mod(?![A-Za-z])")
_MOD_SIDE = re.compile(
    r"(?!.*(?:\^\s*\{?\s*-|\\[dt]?frac|/))"  # no inverse, no fraction: `(13^{-1}) \\mod 19` is no remainder
    r"\s*(?:\d+|\((?:[^()])*\)|\{[^{}]*\})\s*\\b?mod(?![A-Za-z])\s*\d+\s*"
)


def logs_said(text: str) -> bool:
    """Is every logarithm of `text` read with certainty: a base in digits (or `\\ln`) and an argument that
    ends where an operator, a relation or a bracket does (`\\log_5 49 = 2.64`, not `\\log 100`, `\\log_b 8`
    or `\\log_2 8 \\cdot 3`)?

    >>> [logs_said(c) for c in ("\\\\log_5 49 = 2.64", "\\\\log 100 = 2", "\\\\log_2 8 \\\\cdot 3 = 9")]
    [True, False, False]
    """
    calls = _LOG.findall(text)
    found = list(_LOG_CALL.finditer(text))
    return len(found) == len(calls) and all(_LOG_ENDS.match(text, m.end()) for m in found)


def certain_claim_text(claim: str) -> bool:
    """Is a claim's text pure numbers, with no notation that has a second reading?

    >>> [certain_claim_text(c) for c in ("\\\\frac{48}{2} = 25", "2c = 2", "5! = 12", "\\\\log_{5} 25 = 3")]
    [True, False, False, True]
    """
    text = claim
    if _MOD.search(text):
        if not all(_MOD_SIDE.fullmatch(side) for side in re.split(r"=|\\approx", text) if _MOD.search(side)):
            return False  # `2 + 17 \\mod 5`, `13^{-1} \\mod 19`: which operands, or an inverse? not said
        text = _MOD.sub(" ", text)
    if _LOG.search(text):
        if not logs_said(text):
            return False  # which base, or how far does the argument reach? not said
        text = re.sub(_LOG_HEAD, " ", text)
    if _TRIG.search(text):
        if not (_DEGREES.search(text) or radians_said(text)):
            return False  # radians or degrees? not said
        text = _TRIG.sub(" ", text)
    text = _DEGREES.sub(" ", text)
    if _UNSAFE_MARKS.search(text):
        return False
    text = _ONE_MEANING.sub(" ", text)
    return not re.search(r"[A-Za-z\\]", text)


# Right before a run, touching it: a name, a subscript or power, a command (`\log_2{3} = ...` would start
# at `2`).
# An operator the problem defines (`3 \\& 5`, `\\#(9)`, `a \\star b`, `x @ y`) before a run, with or without
# spacing, took the run's left operand.
_BEFORE_UNSAFE = re.compile(
    r"(?:[A-Za-z{]|\\[A-Za-z]+|[_^]\s*"
    r"|(?:\\[#&]|[@#&]|\\(?:star|bigstar|diamond|ast|odot|oplus|otimes|bullet|boxtimes|boxplus|spadesuit"
    r"|heartsuit|clubsuit|diamondsuit|triangle|nabla|dagger|Box|square|bowtie)(?![A-Za-z]))\s*)$"
)
# A lone name or a norm bar before it with spacing took the run's first operand too (`11 + a \\sqrt{3} = 74`,
# `x \\sqrt{57} + 1 = 2`, `\\|\\mathbf{b}\\| \\cos 60^\\circ = ...`), unless the run opens on a relation
# (`x \\ge 5 = 2 + 3`: the name is that relation's side, which `relation_pieces` leaves out).
_NAME_BEFORE = re.compile(r"(?:(?<![A-Za-z\\])[A-Za-z]\s+|\\?\|\s*)$")
_OPENS_ON_RELATION = re.compile(r"\s*(?:\\(?:geqslant|leqslant|geq?|leq?|neq?)(?![A-Za-z])|[<>=])")


def _operand_before(step: str, start: int) -> bool:
    """Does notation right before `step[start:]` take the run's first operand?"""
    before = step[max(0, start - 12) : start]
    return bool(
        _BEFORE_UNSAFE.search(before)
        or (_NAME_BEFORE.search(before) and not _OPENS_ON_RELATION.match(step, start))
    )


# Right after it: a factorial, a power or subscript; touching it, a name or a bracket that the run's last
# number belongs to (`120 = 5!`, `2 = 2^x`, `= 3x`, `= 3(x + 1)`), a command (`= 0.\overline{3}`).
_AFTER_UNSAFE = re.compile(r"^(?:\s*[!^_]|[A-Za-z0-9(\[{]|\.?\\[A-Za-z])")


_MATH_OPEN = re.compile(r"\\\(|\\\[|\$\$?")
_MATH_CLOSE = re.compile(r"\\\)|\\\]|\$\$?")
# what may follow a whole expression inside math: its end, punctuation, a relation, spacing, text, a line end
_EXPRESSION_END = re.compile(
    r"^\s*(?:$|[,.;:=&<>]|\\(?:q?quad|text|Rightarrow|implies|iff|le|ge|leq|geq|neq|approx"
    r"|[,;!: ]|\\|end|right|\)|\])(?![A-Za-z])|\\[()\[\]])"
)


# a `$` that opens or closes math: never escaped, never touching a number (`$336`, `50$` are money)
_MATH_DOLLAR = re.compile(r"(?<![\\\d])\$(?!\s*\d)")


def _cut_inside_math(step: str, end: int) -> bool:
    """Does the run end inside a math segment, before the end of its expression (`= x^4 - 2p^2 x^2`, read
    up to `2p^2`)? Then its last side is cut."""
    before = step[:end]
    dollars = len(_MATH_DOLLAR.findall(before))
    opened = len(re.findall(r"\\[(\[]", before)) > len(re.findall(r"\\[)\]]", before))
    if not (opened or dollars % 2 == 1):
        return False
    close = _MATH_CLOSE.search(step, end)
    rest = step[end : close.start() if close else len(step)]
    return bool(rest.strip()) and not _EXPRESSION_END.match(rest)


# A run that opens on a binary operator lost its left operand to notation before it (`f(7) + 1 = 4`,
# `\\angle DAE + 60^\\circ = 180^\\circ` read from `+`); a leading minus may be a sign and is kept.
_LEADING_OPERATOR = re.compile(r"^[\s$]*(?:[+*/×·÷]|\\(?:cdot|times|div)(?![A-Za-z]))")
# A leading minus is a sign only when nothing it could subtract from stands right before it: after a name, a
# number, a closing bracket or a degree mark (`\\angle PQR - 36^\\circ = ...`) it lost its left operand too.
_LEADING_MINUS = re.compile(r"^[\s]*-")
_OPERAND_BEFORE = re.compile(r"(?:[A-Za-z0-9)}\]]|\\circ)\s*$")


def certain_context(step: str, start: int, end: int) -> bool:
    """Is the run at `step[start:end]` whole, not cut out of notation the lexer does not read?"""
    return not (
        _LEADING_OPERATOR.match(step[start:end])
        or (
            _LEADING_MINUS.match(step[start:end]) and _OPERAND_BEFORE.search(step[max(0, start - 12) : start])
        )
        or _operand_before(step, start)
        or _AFTER_UNSAFE.match(step[end:])
        or _cut_inside_math(step, end)
    )


def _top_level_equals(text: str) -> list[int]:
    """Offsets of the `=` signs of `text` outside brackets and braces."""
    depth, found = 0, []
    for i, ch in enumerate(text):
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif ch == "=" and depth <= 0 and text[i - 1 : i] not in ("<", ">", "!", "\\"):
            found.append(i)
    return found


def trimmed_run(step: str, start: int, end: int) -> tuple[int, int] | None:
    """A run whose first or last side is cut out of notation (`f(x) = A = B` read from `(x)`, the `3` of
    `= 3x`), without that side: the sides between two whole `=` signs are whole expressions. The new
    (start, end), or None when fewer than two sides would be left or the run stays cut."""
    cuts = [start + i for i in _top_level_equals(step[start:end])]
    binary_minus = _LEADING_MINUS.match(step[start:end]) and _OPERAND_BEFORE.search(
        step[max(0, start - 12) : start]
    )
    if binary_minus or _operand_before(step, start):
        if not cuts:
            return None
        start, cuts = cuts[0] + 1, cuts[1:]
    if _AFTER_UNSAFE.match(step[end:]) or _cut_inside_math(step, end):
        if not cuts:
            return None
        end, cuts = cuts[-1], cuts[:-1]
    if not cuts or not certain_context(step, start, end):
        return None
    while start < end and step[start].isspace():
        start += 1
    while end > start and step[end - 1].isspace():
        end -= 1
    return start, end


# between two statements of one run: an implication or wide spacing (`\\frac{100}{11} \\approx 9.09 \\quad
# \\Rightarrow \\quad \\lceil 9.09 \\rceil = 10`)
_CONNECTOR = re.compile(
    r"\\(?:Rightarrow|implies|Longrightarrow|iff|Leftrightarrow|therefore|q?quad)(?![A-Za-z])"
)


def _top_level_cuts(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Spans of `pattern` in `text` outside brackets and braces; none when a bracket is left unbalanced."""
    cuts, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            found = pattern.match(text, i)
            if found:
                cuts.append((found.start(), found.end()))
                i = found.end()
                continue
        i += 1
    return cuts if depth == 0 else []


def _split_at(text: str, cuts: list[tuple[int, int]]) -> list[str]:
    """`text` without the spans `cuts`, as the pieces between them."""
    pieces, start = [], 0
    for begin, end in cuts:
        pieces.append(text[start:begin])
        start = end
    pieces.append(text[start:])
    return pieces


def connector_pieces(text: str) -> list[str]:
    """The statements in pure numbers of a run joined by `\\Rightarrow`, `\\implies` or `\\quad` outside
    brackets, each to be read alone (a side holding the connector is no expression); the run itself when it
    has none, or when a bracket is left open across a connector. A statement in names is left to the whole
    run: read alone, the step's words ("simplifies to") would make its equation an identity.

    >>> connector_pieces("x = 2 \\\\quad \\\\Rightarrow \\\\quad 2 + 1 = 3")
    ['2 + 1 = 3']
    """
    cuts = _top_level_cuts(text, _CONNECTOR) if _CONNECTOR.search(text) else []
    if not cuts:
        return [text]
    pieces = _split_at(text, cuts)
    return [p.strip() for p in pieces if re.search(r"=|\\approx", p) and certain_claim_text(p)]


# a relation other than `=` inside a run (`a^2 \\ge (17 - 1)^2 = 49^2`, `... = 162 - 108 \\neq 0`)
ORDER_RELATION = re.compile(r"\\(?:geqslant|leqslant|geq?|leq?|neq?|lt|gt)(?![A-Za-z])|[<>≤≥≠]")


def relation_pieces(text: str) -> list[str]:
    """The statements of a run that relations other than `=` join (`\\ge`, `\\le`, `\\neq`, `<`), each read
    alone: every stretch of equalities whose first side is an expression (after a bare name it would define
    it), and every such relation between two sides in pure numbers. The run itself when it has none, or when
    a bracket is left open across one.

    >>> relation_pieces("a^2 \\\\ge (17 - 1)^2 = 49^2 = 2401")
    ['(17 - 1)^2 = 49^2 = 2401']
    >>> relation_pieces("2(-3)^4 - 3 = 162 - 3 \\\\neq 0")
    ['2(-3)^4 - 3 = 162 - 3', '162 - 3 \\\\neq 0']
    """
    cuts = _top_level_cuts(text, ORDER_RELATION)
    if not cuts:
        return [text]
    pieces = _split_at(text, cuts)
    out = []
    for piece in pieces:
        equals = _top_level_equals(piece)
        if equals and not re.fullmatch(r"\s*[A-Za-z]\s*", piece[: equals[0]]):
            out.append(piece.strip())
    for k, (begin, end) in enumerate(cuts):
        left = re.split(r"=|\\approx", pieces[k])[-1].strip()
        right = re.split(r"=|\\approx", pieces[k + 1])[0].strip()
        if left and right and certain_claim_text(left) and certain_claim_text(right):
            out.append(f"{left} {text[begin:end]} {right}")
    return out


# a trig function of a number of degrees: the mark belongs to its argument, not to a side's value
_TRIG_OF_DEGREES = re.compile(
    r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])\s*(?:\^\s*(?:\{[^{}]*\}|\d)\s*)?"
    r"(?:\\left\s*\((?:(?!\\right).)*\\right\s*\)|\((?:[^()]|\([^()]*\))*\)|\{[^{}]*\}"
    r"|\d+(?:\.\d+)?\s*(?:\^\s*(?:\{\s*\\circ\s*\}|\\circ)|°))"
)


def degrees_on_one_side(claim: str) -> bool:
    """Does a degree mark (outside a trig argument) stand on some sides of the claim and not on others
    (`\\frac{1}{12} \\cdot 360^\\circ = 30` "degrees", `\\frac{180(5-2)}{5} = 108^\\circ`)? Then the bare
    side's unit is said in words or not at all, and reading it in radians is no certain reading.

    >>> degrees_on_one_side("\\\\frac{180(5-2)}{5} = 108^\\\\circ")
    True
    >>> degrees_on_one_side("\\\\cos 208^\\\\circ = \\\\cos (180^\\\\circ - 208^\\\\circ)")
    False
    """
    sides = [_TRIG_OF_DEGREES.sub(" ", side) for side in re.split(r"=|\\approx|≈", claim)]
    marked = [bool(_DEGREES.search(side)) for side in sides]
    return any(marked) and not all(marked)


IMAGINARY = "with i the imaginary unit"  # symbolic.IMAGINARY: the claim failed with `i` read as sqrt(-1)
_IMAGINARY_UNIT = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")
# the step says `i` is the imaginary unit (`i^2`, "complex", "imaginary") ...
_IMAGINARY_SAID = re.compile(r"(?<![A-Za-z\\])i\s*\^\s*\{?\s*2|\b(?:complex|imaginary)\b", re.IGNORECASE)
# ... and uses no `i` as an index or a name set to a value (`x_i`, `\\sum_{i=1}`, `i = 3`, "for i")
_I_AS_NAME = re.compile(
    r"_\s*\{?[^{}\s]*(?<![A-Za-z\\])i(?![A-Za-z])|(?<![A-Za-z0-9\\])i\s*(?:=|\\in(?![A-Za-z]))|\bfor\s+i\b"
)


def imaginary_said(step: str) -> bool:
    """Does the step use `i` as the imaginary unit, and never as an index or a name given a value?

    >>> imaginary_said("So (5 - 8i)(30 + 48i) = 150 - 384i^2."), imaginary_said("Let i = 2, so 3i = 5.")
    (True, False)
    """
    return bool(_IMAGINARY_SAID.search(step)) and not _I_AS_NAME.search(step)


def unjudged(result: ClaimResult, why: str) -> ClaimResult:
    """The same claim, not judged, with the reason."""
    return ClaimResult(result.claim, None, result.expected, f"competition math: {why}", result.kind)


# Around a binding: words of an alternative, a case, a trial or an example make it no binding at all.
_NOT_A_BINDING = re.compile(
    r"\b(?:or|if|for|when|whenever|case|cases|suppose|assume|assuming|try|trying|test|testing|check|checking"
    r"|say|example|instance|e\.g|either|otherwise|possible|possibly|could|might)\b|\\pm|\\mp|\\in\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)|\n|\\\]|\$\$")


def _clause(text: str, offset: int) -> str:
    """The clause of `text` around `offset` (between sentence or display ends)."""
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, offset)]
    start = starts[-1] if starts else 0
    end_match = _CLAUSE_END.search(text, offset)
    return text[start : end_match.start() if end_match else len(text)]


def hypothetical(text: str, offset: int) -> bool:
    """Does the clause around `offset` try a value or name one branch (`If G = 26`, `b = 0 or b = 5`)?"""
    return bool(_NOT_A_BINDING.search(_clause(text, offset)))


def _sites(name: str, chain: Sequence[str]) -> list[tuple[int, int]]:
    """Where the chain sets `name` (`x = ...`, an index `{x=1}`), as (step, offset)."""
    pattern = re.compile(rf"(?<![A-Za-z\\_^']){re.escape(name)}\s*(?:=(?!=)|\\in\b|\\to\b)")
    return [(i, m.start()) for i, text in enumerate(chain) for m in pattern.finditer(text)]


def safe_binding(name: str, chain: Sequence[str]) -> bool:
    """Is `name` bound once and unambiguously in the whole chain? Never a subscript or index anywhere,
    set at exactly one place, and that place says no alternative, case or trial around it.

    >>> safe_binding("s", ["Here $s = 1$.", "So $2s + 1 = 3$."]), safe_binding("b", ["$b = 0$ or $b = 5$"])
    (True, False)
    """
    if len(name) != 1 or name in "eiIo":
        return False
    index = re.compile(rf"_\{{?[^{{}}\s]*(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])|\\(?:sum|prod|lim)")
    if any(index.search(text) for text in chain):
        return False
    sites = _sites(name, chain)
    if len(sites) != 1:
        return False
    step, offset = sites[0]
    return not hypothetical(chain[step], offset)


def with_safe_names(claim: str, names: Sequence[str]) -> str:
    """The claim with each standalone safe name written as a number, for `certain_claim_text`."""
    for name in names:
        claim = re.sub(rf"(?<![A-Za-z\\_^{{]){re.escape(name)}(?![A-Za-z_('])", "1", claim)
    return claim


# `\\approx`, `≈`: close within 1 %; a decimal of three or more places, a rounded value carried
# (`(2.8284)^2 = 8`): within 0.05 %
_APPROXIMATE_MARK = re.compile(r"\\approx|≈")
_ROUNDED_DECIMAL = re.compile(r"\d\.\d{3,}")
APPROXIMATION_TOLERANCE = Fraction(1, 100)
CARRIED_ROUNDING_TOLERANCE = Fraction(5, 10_000)


def _value_of(text: str) -> Fraction | None:
    try:
        return Fraction(text.replace("\\", "").replace("$", "").replace(",", "").strip())
    except (ValueError, ZeroDivisionError):
        return None


def _beyond_last_digit(result: ClaimResult) -> bool:
    """Is a failed approximate claim off by a unit of its last written digit or more (`\\sqrt{1000/3}
    \\approx 18` is within 1 of 18.26: a whole number written as "about")? Unreadable: not beyond."""
    last = re.split(r"=|\\approx|≈", result.claim)[-1]
    written, expected = _value_of(last), _value_of(result.expected or "")
    if written is None or expected is None:
        return False
    digits = re.search(r"\.(\d+)\s*$", last.replace("$", "").strip())
    unit = Fraction(1, 10 ** len(digits.group(1))) if digits else Fraction(1)
    return abs(written - expected) >= unit


def _far_off(result: ClaimResult, tolerance: Fraction) -> bool:
    """Is a failed approximate claim off by more than `tolerance` (its expected value against its last
    side)? Unreadable values are not far off (the claim stays unjudged)."""
    written = _value_of(re.split(r"=|\\approx|≈", result.claim)[-1])
    expected = _value_of(result.expected or "")
    if written is None or expected is None:
        return False
    return abs(written - expected) > tolerance * max(abs(written), abs(expected))


def gate_failed(
    result: ClaimResult,
    step: str,
    *,
    context_ok: bool = True,
    safe_names: Sequence[str] = (),
    approximate: bool = False,
) -> ClaimResult:
    """A failed claim of a competition chain stays failed only when its reading is certain; a name counts
    as read with certainty only when it is in `safe_names` (bound once, unambiguously: `safe_binding`)."""
    if result.holds is True and result.reason.startswith(IDENTITY_FALSE):
        return result
    if result.holds is not True and result.reason.startswith(IDENTITY_CHAIN_FALSE):
        if context_ok:
            return ClaimResult(result.claim, False, result.expected, result.reason, rule="identity chain")
        return result
    if result.holds is None and result.reason.startswith(IDENTITY_FALSE):
        if context_ok and IDENTITY_CUE.search(step):
            return ClaimResult(result.claim, False, result.expected, result.reason, rule="identity")
        return result
    if result.holds is not False:
        return result
    if not context_ok:
        return unjudged(result, "the claim is cut out of notation it does not read")
    if degrees_on_one_side(result.claim):
        return unjudged(result, "a degree mark on one side only: the other side's unit is not said")
    if result.reason.startswith(IMAGINARY):
        # `i` read as the imaginary unit: certain only where the step says so and never uses `i` otherwise
        if not imaginary_said(step) or not certain_claim_text(_IMAGINARY_UNIT.sub("", result.claim)):
            return unjudged(result, "`i` may be a name: the imaginary unit is not said")
        return ClaimResult(result.claim, False, result.expected, result.reason, rule="imaginary unit")
    if result.expected and re.search(r"\bI\b", result.expected):
        # `((-5)^3)^{4/3}`: a power of a negative base has a real reading and a principal complex one
        return unjudged(result, "a complex value of a real-looking expression: the branch is not said")
    said_approximate = approximate or _APPROXIMATE_MARK.search(result.claim)
    if said_approximate and not _far_off(result, APPROXIMATION_TOLERANCE):
        return unjudged(result, "an approximation, within 1 %")
    if said_approximate and not _beyond_last_digit(result):
        return unjudged(result, "an approximation, within a unit of the last digit written")
    if _ROUNDED_DECIMAL.search(result.claim) and not _far_off(result, CARRIED_ROUNDING_TOLERANCE):
        return unjudged(result, "a rounded value carried, within 0.05 %")
    claim = result.claim
    if result.reason == PLUS_MINUS:  # each branch was read as numbers: `\\pm` has no second reading here
        claim = claim.replace("\\pm", "+")
    if not certain_claim_text(with_safe_names(claim, safe_names)):
        return unjudged(result, "names or notation with more than one reading")
    if safe_names and not certain_claim_text(result.claim):
        return ClaimResult(result.claim, False, result.expected, result.reason, rule="names bound once")
    return result
