"""Final answers: find the answer in a model's text, and decide whether it equals the reference.

Extraction lives in `final_answer` (boxes, `####`, PRM800K `# Answer`, "Final Answer:" lines, "The answer
is"; the last marker wins) with the last number as an optional fallback; the span is recorded.

Each side of a pair is first cut down to the answer it states (`final_answer.stated_answer`), so a gold
answer given as `$\\boxed{2}$, $\\boxed{5}$` or `Final Answer: The largest $n$ is 34.` compares as `2, 5` or
`34`; a sentence stating two values (`The sum is 5 and the product is 6.`) is `unparsed`, never judged.

Equivalence, precision first (a wrong `correct` poisons a PRM dataset; an `unparsed` only costs a sample):
1. The same text after cosmetic normalization (`$`, `\\text{}`, degrees, `\\dfrac`) is `correct`.
2. Word answers (`\\text{even}`, `Navin`, `East`) are compared as words, case-insensitively, never
   handed to SymPy, which reads `even` as the product e*v*e*n (equal to `neve`).
3. Fast path, in-process and exact: both sides read as plain numbers after stripping `$`, units, `\\text{}`,
   thousands separators and an `x =` prefix, and evaluating simple arithmetic LaTeX (`\\frac{1}{2}`,
   `3\\frac{1}{2}`, `1.5 \\times 10^{3}`, `0.\\overline{3}`) with `Fraction`s. Exact comparison, or
   relative 1e-6 when a decimal is involved; `p%` may mean p/100 or p. `,\\!` is a thousands separator
   (`1,\\!000`). A decimal comma (`2,5`, `0{,}75`, on either side) is read as a point only against one
   number on the other side, never with a space after it (`2, 5` is a list) and never where it can be a
   thousands separator (`1,250` stays 1250).
4. Otherwise math-verify's `parse` + `verify` (LaTeX, radicals, expressions, equations in any equivalent
   form, inequalities against intervals, tuples, sets, matrices) in the bounded worker
   (`answer_symbolic`), which also reads inequalities joined by "or" as a union of intervals.
Before these: an angle with its degree sign against one in radians (`45^\\circ`, `\\frac{\\pi}{4}`) is
compared in radians (a bare `45` is not an angle), and two numbers with base subscripts are compared as
values in their bases (the LaTeX reader drops a subscript, making `10101_2` equal `10101_3`); against a
plain integer a subscripted number is never `correct` (`25_{6}` vs `25` or `17` is `unparsed`).

Outcomes: `correct | incorrect`, or, never as a judgement, `unparsed` (no answer, or one that cannot be
read), `timeout` (the worker ran past its limit) and `error` (the worker died, could not start, or its
math-verify cannot import or parse; `check_dependencies` reports that before a run).

>>> answers_equivalent("$1,000.00", "1000").label, answers_equivalent("0.33", "1/3").label
('correct', 'incorrect')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

from prm_factory.verifiers.math.arithmetic import NotEvaluable, Token, TooLarge, evaluate, lex, parse_side
from prm_factory.verifiers.math.bounded import TIMED_OUT, WORKER_FAILED, BoundedPool, run_items
from prm_factory.verifiers.math.final_answer import (
    ExtractedAnswer,
    boxed_answer,
    extract_answer,
    stated_answer,
)
from prm_factory.verifiers.math.numbers import RELATIVE_TOLERANCE, format_value
from prm_factory.verifiers.protocol import Verdict

DEFAULT_TIMEOUT_S = 3.0
_VAR_PREFIX = re.compile(r"^\s*[A-Za-z]\s*=\s*(?!=)")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_REPEATING = re.compile(r"^(-?)(\d*)\.(\d*)\\overline\{(\d+)\}$")
_DECIMAL_COMMA = re.compile(r"^(-?\d+)(?:\{,\}|,)(\d+)((?:\s*%)?(?:\s+[A-Za-z][A-Za-z ]*)?)$")  # `3,5 cm`
_WORD_ANSWER = re.compile(r"^[a-z][a-z .'-]*$")
_NOT_WORDS = {"pi", "sqrt", "infty", "inf", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp"}
_TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}(?:\^\{?[23]\}?)?")
_THIN_THOUSANDS = re.compile(r"(\d)\\[,;!: ](\d{3})(?!\d)")
_BRACED_THOUSANDS = re.compile(r"(\d)\{,\}(\d{3})(?!\d)")
# `,\!` is LaTeX for a thousands separator only (`1,\!000`, `12,\!345,\!678`): the comma goes too, so the
# LaTeX reader does not see a list (`1,\!000\pi` would be the set {1, 0})
_COMMA_THIN_THOUSANDS = re.compile(r"(\d),\\!\s*(?=\d{3}(?!\d))")
# `{,}` between groups of three after a leading group that is not 0 (`3{,}600\pi`; `0{,}125` is a decimal)
_BRACED_GROUPS = re.compile(r"(?<![\d.])-?[1-9]\d{0,2}(?:\{,\}\d{3})+(?![\d{])")
_SPACING_COMMAND = re.compile(r"\\[,;:]")
_FRAC_DIGITS = re.compile(r"\\frac\s*(\d)\s*(\d)")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\text\s*\{\s*degrees?\s*\}|\s+degrees?\b")
_PI = re.compile(r"\\pi\b|\bpi\b|π")
_CHOICE_ONLY = re.compile(r"^(?:\(([A-E])\)|([A-E]))$")
_CHOICE_OPENING = re.compile(r"^\(([A-E])\)(?=$|\s|\\[ ,;:!]|~)")
_BASE = re.compile(r"^([0-9A-Za-z]+)_\{?(\d+)\}?$")
_MATH_WORDS = {"pi", "sqrt", "inf", "infinity", "log", "ln", "sin", "cos", "tan", "e", "i", "or", "and"}


def _strip_delimiters(text: str) -> str:
    s = text.strip().rstrip(".").strip()
    for left, right in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if s.startswith(left) and s.endswith(right) and len(s) > len(left) + len(right):
            s = s[len(left) : -len(right)].strip()
    signed = re.match(r"^([+-])\s*\$([^$]+)\$$", s)  # PRM800K writes `-$\pi/6$`
    if signed:
        s = f"${signed.group(1)}{signed.group(2)}$"
    if s.count("$") == 2 and s.startswith("$") and s.endswith("$"):
        s = s[1:-1].strip()
    inner = boxed_answer(s)
    if inner is not None and s.startswith("\\boxed"):
        s = inner.text
    return s


def normalize_answer(text: str) -> str:
    """Cosmetic normalization shared by both paths: delimiters, `\\text{}` units, degrees, `\\!`."""
    s = _strip_delimiters(text)
    s = _TEXT_COMMAND.sub(lambda m: f" {m.group(1)} ", s)
    s = _COMMA_THIN_THOUSANDS.sub(r"\1", s)
    s = _BRACED_GROUPS.sub(lambda m: m.group().replace("{,}", ""), s)
    s = _THIN_THOUSANDS.sub(r"\1\2", s)
    s = _BRACED_THOUSANDS.sub(r"\1,\2", s)  # `1{,}250.00` as `1,250.00`, which the exact path reads
    s = _SPACING_COMMAND.sub(" ", s)  # `\$\,42`: LaTeX spacing is no part of a value
    s = s.replace("\\varnothing", "\\emptyset").replace("\\langle", "(").replace("\\rangle", ")")
    s = s.replace("^\\circ", "").replace("^{\\circ}", "").replace("°", "").replace("\\!", "")
    s = s.replace("\\%", "%").replace("\\$", "$").replace("dfrac", "frac").replace("tfrac", "frac")
    s = _FRAC_DIGITS.sub(r"\\frac{\1}{\2}", s)  # `\frac52` is `\frac{5}{2}` in LaTeX
    if s.count("=") == 1:
        # "x = 3" answers 3, but "y = -2x + 1" is an equation; "x=2 or x=3" stays whole
        prefix = _VAR_PREFIX.match(s)
        if prefix and not re.search(r"[A-Za-z]", _LATEX_COMMAND.sub("", s[prefix.end() :])):
            s = s[prefix.end() :]
    return s.strip()


def _compact(text: str) -> str:
    """Normalized text without spaces or `\\left`/`\\right`: equal compact texts are the same answer."""
    s = normalize_answer(text).replace("\\left", "").replace("\\right", "")
    return re.sub(r"\s+|\\[ ,;:]", "", s)


def word_answer(text: str) -> str | None:
    """The words of an answer that is words only (`\\text{Navin}`, `East`, `(C)` is not), else None."""
    s = re.sub(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}", r"\1", _strip_delimiters(text))
    s = re.sub(r"\s+", " ", s).strip().strip(".").lower()
    if not _WORD_ANSWER.match(s):
        return None
    words = re.findall(r"[a-z]+", s)
    if not any(len(w) >= 3 and w not in _NOT_WORDS for w in words):
        return None  # `x`, `xy`, `pi`: maths, not words
    return " ".join(words)


def _repeating_decimal(text: str) -> Fraction | None:
    """`0.\\overline{3}` -> 1/3, `1.2\\overline{45}` -> 137/110."""
    match = _REPEATING.match(normalize_answer(text).replace(" ", ""))
    if match is None:
        return None
    sign, whole, fixed, period = match.groups()
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
    value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
    return -value if sign else value


def _decimal_comma(text: str) -> str | None:
    """`2,5` / `0{,}75` as `2.5` / `0.75`; None for `1,250` (a thousands separator), `2, 5` (a list) or a
    non-number."""
    match = _DECIMAL_COMMA.match(normalize_answer(text).replace("$", ""))  # `$3{,}5$ cm`, `\$2,50`
    if match is None:
        return None
    whole, fraction, unit = match.groups()
    if len(fraction) == 3 and whole.lstrip("-") != "0":
        return None
    return f"{whole}.{fraction}{unit}"


_LATEX_DECIMAL = re.compile(r"(?<![\d,])(-?\d+)\{,\}(\d{1,2}|\d{4,})(?![\d,{])")


def _latex_decimal_comma(text: str) -> str:
    """LaTeX's decimal comma in a predicted answer (`x = 2{,}5`, `2{,}5 \\text{ m}`) as a point for the
    parser; `{,}` before three digits stays a thousands group, and a bare `1,22` (a list?) is left alone.

    >>> _latex_decimal_comma("So $x = 2{,}5$."), _latex_decimal_comma("$100{,}001$")
    ('So $x = 2.5$.', '$100{,}001$')
    """
    return _LATEX_DECIMAL.sub(r"\1.\2", text)


class AnswerTooLarge(Exception):
    """The answer is arithmetic whose value would be astronomically large (`5^{5^{5^5}}`)."""


@lru_cache(maxsize=8192)
def plain_value(text: str) -> tuple[Fraction, ...] | None:
    """Exact readings of an answer that is plain arithmetic (a `p%` gives p/100 and p), else None.

    Raises AnswerTooLarge for a power tower, so it is `unparsed` at once instead of hanging SymPy.
    """
    tokens = lex(normalize_answer(text))
    while (
        len(tokens) > 1
        and tokens[-1].kind == "word"
        and tokens[-1].text.lower() not in _MATH_WORDS
        and (len(tokens[-1].text) > 1 or tokens[-1].text.startswith("\\"))
        and tokens[-2].start + len(tokens[-2].text) < tokens[-1].start
    ):
        tokens.pop()  # trailing units: "18 dollars", "5 \\text{ cm}"; never the x of "3x"
    if not tokens or any(t.kind not in ("num", "op", "lp", "rp") for t in tokens):
        return None
    if any(t.kind == "op" and t.text == "-" for t in tokens[1:]) and _looks_like_range(tokens):
        return None
    try:
        node = parse_side(tokens)
        readings = [evaluate(node, {})]
        if any(t.literal is not None and t.literal.percent for t in tokens):
            readings.append(evaluate(node, {}, percent_as_fraction=False))
    except TooLarge as exc:
        raise AnswerTooLarge(str(exc)) from exc
    except NotEvaluable:
        return None
    if not all(r.is_number for r in readings):
        return None
    return tuple(r.const for r in readings)


def _looks_like_range(tokens: list[Token]) -> bool:
    """`5-10` as an answer is a range, not a subtraction."""
    return len(tokens) == 3 and all(t.kind == "num" for t in (tokens[0], tokens[2]))


def _has_decimal(text: str) -> bool:
    return bool(re.search(r"\d\.\d|\.\d|\d[eE][+-]?\d", text))


def _readings(text: str) -> tuple[Fraction, ...] | None:
    value = plain_value(text)
    if value is None:
        repeating = _repeating_decimal(text)
        value = None if repeating is None else (repeating,)
    return value


def _decimal_places(value: Fraction) -> int | None:
    """How many decimals write the value exactly (0.125 -> 3), or None when none do (1/3)."""
    denominator, places = value.denominator, 0
    while denominator % 2 == 0 or denominator % 5 == 0:
        value *= 10
        denominator, places = value.denominator, places + 1
    return places if denominator == 1 else None


def _within_written_precision(p: Fraction, r: Fraction) -> bool:
    """Two decimals may differ only by less than half a unit in the last place of the coarser one:
    `1.0000001` is `1`, but `16386.17` is not `16386.16`, however close; a value no decimal writes
    exactly (1/3) leaves the relative tolerance alone."""
    places = [_decimal_places(p), _decimal_places(r)]
    if places[0] is None or places[1] is None:
        return True
    return abs(p - r) * 2 < Fraction(1, 10 ** min(places[0], places[1]))


def _fast_verdict(predicted: str, reference: str) -> Verdict | None:
    # a decimal comma is read as a point only against one number on the other side; against a list
    # (`2, 5`, or `3,5` on both sides) it stays a list. In a reference only the explicit `{,}` form counts:
    # MATH writes lists of answers as `1,3`, and `1.3` must not pass for one (precision first)
    comma = _decimal_comma(reference) if "{,}" in reference else None
    if comma is not None and _decimal_comma(predicted) is None and _readings(predicted) is not None:
        reference = comma
    ref = _readings(reference)
    if ref is None:
        return None
    comma = _decimal_comma(predicted)
    if comma is not None:
        predicted = comma
    pred = _readings(predicted)
    if pred is None:
        return None
    tolerant = _has_decimal(predicted) or _has_decimal(reference)
    for p in pred:
        for r in ref:
            close = abs(p - r) <= RELATIVE_TOLERANCE * max(abs(p), abs(r))
            if p == r or (tolerant and close and _within_written_precision(p, r)):
                return Verdict(
                    "correct",
                    f"{format_value(p)} equals {format_value(r)}",
                    {"predicted": predicted, "reference": reference, "path": "exact"},
                )
    return Verdict(
        "incorrect",
        f"{format_value(pred[0])} differs from {format_value(ref[0])}",
        {"predicted": predicted, "reference": reference, "path": "exact"},
    )


_GROUPS = (("\\{", "set"), ("(", "paren"), ("[", "paren"))


def _group_kind(text: str) -> str | None:
    s = normalize_answer(text)
    if "," not in s:
        return None
    return next((kind for opener, kind in _GROUPS if s.startswith(opener)), None)


def _degrees_as_radians(predicted: str, reference: str) -> tuple[str, str]:
    """An angle in degrees against one in radians: the degree side as radians, only when its degree sign
    (or the word) is written and the other side holds `\\pi` without one; `45^\\circ` vs `\\frac{\\pi}{4}`
    compares `\\frac{\\pi}{4}`, while a bare `45` stays 45."""
    sides = [predicted, reference]
    marked = [_DEGREES.search(side) is not None for side in sides]
    for i in (0, 1):
        if marked[i] and not marked[1 - i] and _PI.search(sides[1 - i]):
            degrees = plain_value(_DEGREES.sub("", _strip_delimiters(sides[i])))
            if degrees is not None and len(degrees) == 1:
                turn = degrees[0] / 180
                sides[i] = f"\\frac{{{turn.numerator}\\pi}}{{{turn.denominator}}}"
    return sides[0], sides[1]


def _choice_verdict(predicted: str, reference: str) -> Verdict | None:
    """A multiple-choice reference (`\\text{(C)}`, `(C)`, `C`) against an answer that opens with a
    choice in parentheses (`(C) 12`, `\\textbf{(C) }12`): the letters decide. None otherwise."""
    ref = _CHOICE_ONLY.match(_unwrapped(reference))
    pred = _CHOICE_OPENING.match(_unwrapped(predicted))
    if ref is None or pred is None:
        return None
    evidence = {"predicted": predicted, "reference": reference, "path": "choice"}
    letters = (pred.group(1), ref.group(1) or ref.group(2))
    if letters[0] == letters[1]:
        return Verdict("correct", f"the same choice ({letters[1]})", evidence)
    return Verdict("incorrect", f"choice ({letters[0]}) is not ({letters[1]})", evidence)


def _unwrapped(text: str) -> str:
    s = _strip_delimiters(text).strip().strip("*").strip()
    return re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", s).strip()


def _base_verdict(predicted: str, reference: str) -> Verdict | None:
    """Both sides numbers with a base subscript (`10101_2`): equal only as values in their bases; the
    LaTeX reader drops the subscript, which would make `10101_2` equal `10101_3`."""
    texts = [normalize_answer(side).replace(" ", "") for side in (predicted, reference)]
    pred, ref = (_BASE.match(text) for text in texts)
    evidence = {"predicted": predicted, "reference": reference, "path": "base"}
    if (pred is None) != (ref is None):
        return _one_base_verdict(pred or ref, texts[0] if pred is None else texts[1], evidence)
    if pred is None or ref is None:
        return None
    try:
        values = [int(m.group(1), int(m.group(2))) for m in (pred, ref)]
    except ValueError:  # a digit the base does not have, or a base outside 2..36
        return Verdict("unparsed", "not a number in the base its subscript names", evidence)
    if values[0] == values[1]:
        return Verdict("correct", f"both are {values[0]} in base 10", evidence)
    return Verdict("incorrect", f"{values[0]} differs from {values[1]} (in base 10)", evidence)


def _one_base_verdict(based: re.Match[str], plain: str, evidence: dict[str, object]) -> Verdict | None:
    """A number with a base subscript against a plain integer (`25_{6}` vs `25`): the plain one may be
    written in either base, so a match of its digits or of its value is not judged; anything else
    differs. None when the subscript is no base (`x_1`) or the other side no integer."""
    if not re.fullmatch(r"\d+", plain):
        return None
    try:
        value = int(based.group(1), int(based.group(2)))
    except ValueError:
        return None
    if plain.lstrip("0") in (based.group(1).lstrip("0"), str(value)):
        return Verdict(
            "unparsed", "a base subscript on one side only: the other may be in either base", evidence
        )
    return Verdict("incorrect", f"{value} (in base 10) differs from {plain} in either base", evidence)


def answers_equivalent(
    predicted: str, reference: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, pool: BoundedPool | None = None
) -> Verdict:
    """`correct | incorrect | unparsed | timeout | error` for an extracted answer against the reference."""
    return answers_equivalent_many([(predicted, reference)], timeout_s=timeout_s, pool=pool)[0]


def answers_equivalent_many(
    pairs: Sequence[tuple[str, str]], *, timeout_s: float = DEFAULT_TIMEOUT_S, pool: BoundedPool | None = None
) -> list[Verdict]:
    """Like `answers_equivalent` for many pairs; the ones the fast path cannot read go to the worker in
    one batch (one round trip, each pair with its own time limit)."""
    verdicts: list[Verdict | None] = []
    hard: list[int] = []
    original = list(pairs)
    stated = [(stated_answer(predicted), stated_answer(reference)) for predicted, reference in original]
    pairs = [
        _degrees_as_radians(
            original[i][0] if predicted is None else predicted,
            original[i][1] if reference is None else reference,
        )
        for i, (predicted, reference) in enumerate(stated)
    ]
    for index, (predicted, reference) in enumerate(pairs):
        if None in stated[index]:
            side = "answer" if stated[index][0] is None else "reference"
            verdicts.append(
                Verdict(
                    "unparsed",
                    f"the {side} states no single value",
                    {"predicted": predicted, "reference": reference, "path": "text"},
                )
            )
            continue
        if not predicted.strip():
            verdicts.append(
                Verdict("unparsed", "empty answer", {"predicted": predicted, "reference": reference})
            )
            continue
        verdict = (
            _text_verdict(predicted, reference)
            or _choice_verdict(predicted, reference)
            or _base_verdict(predicted, reference)
        )
        if verdict is not None:
            verdicts.append(verdict)
            continue
        try:
            verdict = _fast_verdict(predicted, reference)
        except AnswerTooLarge as exc:
            verdict = Verdict(
                "unparsed",
                f"too large to evaluate: {exc}",
                {"predicted": predicted, "reference": reference, "path": "exact"},
            )
        if verdict is None:
            kinds = {_group_kind(predicted), _group_kind(reference)}
            if kinds == {"set", "paren"}:  # a set is never a tuple or an interval
                verdict = Verdict(
                    "incorrect",
                    "a set against a tuple or interval",
                    {"predicted": predicted, "reference": reference, "path": "structure"},
                )
        verdicts.append(verdict)
        if verdict is None:
            hard.append(index)
    if hard:
        payload = [
            (normalize_answer(_latex_decimal_comma(pairs[i][0])), normalize_answer(pairs[i][1])) for i in hard
        ]
        for index, outcome in zip(hard, _symbolic(tuple(payload), timeout_s, pool), strict=True):
            predicted, reference = pairs[index]
            evidence = {"predicted": predicted, "reference": reference, "path": "math-verify"}
            if outcome == TIMED_OUT:
                verdicts[index] = Verdict(
                    "timeout", f"math worker timed out (limit {timeout_s:g} s)", evidence
                )
            elif isinstance(outcome, str):
                verdicts[index] = Verdict("error", outcome, evidence)
            else:
                label, detail = outcome
                verdicts[index] = Verdict(label, detail, evidence)
    return [
        _with_originals(verdict, pair, compared)
        for verdict, pair, compared in zip(verdicts, original, pairs, strict=True)
        if verdict is not None
    ]


def _with_originals(verdict: Verdict, pair: tuple[str, str], compared: tuple[str, str]) -> Verdict:
    """Evidence names the answers as given, and what was compared where a rule rewrote them."""
    if pair == compared:
        return verdict
    evidence = {**verdict.evidence, "predicted": pair[0], "reference": pair[1], "compared": list(compared)}
    return Verdict(verdict.label, verdict.reason, evidence)


def _text_verdict(predicted: str, reference: str) -> Verdict | None:
    """`correct` for the same normalized text; word answers judged as words; None to go on."""
    evidence = {"predicted": predicted, "reference": reference, "path": "text"}
    if _compact(predicted) == _compact(reference):
        return Verdict("correct", "the same answer once normalized", evidence)
    pred_words, ref_words = word_answer(predicted), word_answer(reference)
    if pred_words is None and ref_words is None:
        return None
    if pred_words == ref_words:
        return Verdict("correct", f"the same words: {ref_words!r}", evidence)
    if pred_words is not None and ref_words is not None:
        return Verdict("incorrect", f"{pred_words!r} is not {ref_words!r}", evidence)
    # words against maths: `39.6` is not `\text{Navin}`; a `correct` here would need a reading we lack
    return Verdict("incorrect", "a word answer against a mathematical one", evidence)


_symbolic_cache: dict[tuple[str, str], tuple[str, str]] = {}


def _symbolic(payload: tuple[tuple[str, str], ...], timeout_s: float, pool: BoundedPool | None) -> list:
    """Worker results, cached per pair (rollouts repeat the same answers many times); time-outs are not
    cached, so a later call on a quieter machine may still finish."""
    missing = [pair for pair in dict.fromkeys(payload) if pair not in _symbolic_cache]
    fresh: dict[tuple[str, str], object] = {}
    if missing:
        try:
            outcomes = run_items(
                "prm_factory.verifiers.math.answer_symbolic:answer_equivalence", missing, timeout_s, pool
            )
        except (RuntimeError, OSError) as exc:  # the worker could not start: no pair was judged
            outcomes = [f"math worker could not start: {exc}"] * len(missing)
        for pair, outcome in zip(missing, outcomes, strict=True):
            if outcome == WORKER_FAILED:
                outcome = "math worker failed (crashed, out of memory, or could not import its code)"
            fresh[pair] = outcome
            if not isinstance(outcome, str) and outcome[0] in _JUDGED:
                if len(_symbolic_cache) > 16_384:
                    _symbolic_cache.clear()
                _symbolic_cache[pair] = (outcome[0], outcome[1])
    return [_symbolic_cache.get(pair) or fresh[pair] for pair in payload]


_JUDGED = frozenset({"correct", "incorrect", "unparsed"})  # worker results worth caching
_CHECK_ANSWERS = (r"\frac{1}{2}", r"\sqrt{12}", r"\left( 3, \frac{\pi}{2} \right)")


def check_dependencies(*, pool: BoundedPool | None = None, timeout_s: float = 60.0) -> list[str]:
    """Problems that would stop the answer grader from judging LaTeX answers; empty when it can.

    Runs in the bounded worker, as grading does: starts it, imports math-verify and its LaTeX parser
    there, and parses a few LaTeX answers. Meant for a run's preflight, so a broken install fails the run
    with one clear line instead of turning every LaTeX answer into `error`.
    """
    try:
        results = run_items(
            "prm_factory.verifiers.math.answer_symbolic:dependency_check",
            list(_CHECK_ANSWERS),
            timeout_s,
            pool,
        )
    except (RuntimeError, OSError) as exc:
        return [f"math answer worker could not start: {exc}"]
    problems = []
    for answer, result in zip(_CHECK_ANSWERS, results, strict=True):
        if result == TIMED_OUT:
            problems.append(f"math answer worker took over {timeout_s:g} s to parse {answer!r}")
        elif result == WORKER_FAILED:
            problems.append(
                "math answer worker failed "
                "(crashed, or could not import prm_factory.verifiers.math.answer_symbolic)"
            )
        elif result:
            problems.append(f"math answer worker: {result}")
    return list(dict.fromkeys(problems))


def grade_answer(
    completion: str,
    reference: str,
    *,
    last_number_fallback: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    pool: BoundedPool | None = None,
) -> Verdict:
    """Outcome of a completion against the reference: correct | incorrect, or unparsed (no answer found,
    or one that could not be read), timeout or error (see the module docstring). Evidence carries the
    extracted span and the extraction method."""
    return grade_answers(
        [completion], reference, last_number_fallback=last_number_fallback, timeout_s=timeout_s, pool=pool
    )[0]


def grade_answers(
    completions: Sequence[str],
    reference: str,
    *,
    last_number_fallback: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    pool: BoundedPool | None = None,
) -> list[Verdict]:
    """`grade_answer` for many completions of one problem, with one worker round trip for the hard ones."""
    extracted = [extract_answer(c, last_number_fallback=last_number_fallback) for c in completions]
    pairs = [(e.text, reference) for e in extracted if e is not None]
    judged = iter(answers_equivalent_many(pairs, timeout_s=timeout_s, pool=pool))
    verdicts = []
    for answer in extracted:
        if answer is None:
            verdicts.append(Verdict("unparsed", "no final answer found", {"reference": reference}))
            continue
        verdict = next(judged)
        evidence = {
            **verdict.evidence,
            "answer": answer.text,
            "span": [answer.start, answer.end],
            "method": answer.method,
        }
        verdicts.append(Verdict(verdict.label, verdict.reason, evidence))
    return verdicts


__all__ = [
    "ExtractedAnswer",
    "check_dependencies",
    "answers_equivalent",
    "answers_equivalent_many",
    "extract_answer",
    "grade_answer",
    "grade_answers",
    "normalize_answer",
    "plain_value",
    "word_answer",
]
