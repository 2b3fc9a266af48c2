"""Final answers: find the answer in a model's text, and decide whether it equals the reference.

Extraction, in order of trust: the last `\\boxed{...}` (nested braces kept), the last `#### ...` line,
the last "The (final) answer is ...", and, when allowed, the last number in the text. The span is
recorded so a reader can see what was graded.

Equivalence, precision first (a wrong `correct` poisons a PRM dataset; an `unparsed` only costs a sample):
1. Fast path, in-process and exact: both sides read as plain numbers after stripping `$`, units, `\\text{}`,
   thousands separators and an `x =` prefix, and evaluating simple arithmetic LaTeX (`\\frac{1}{2}`,
   `3\\frac{1}{2}`, `1.5 \\times 10^{3}`) with `Fraction`s. Exact comparison, or relative 1e-6 when a
   decimal is involved; `p%` may mean p/100 or p.
2. Otherwise math-verify's `parse` + `verify` (LaTeX, radicals, expressions, equations, tuples, sets,
   intervals) in the bounded worker; a time-out, a crash or a parse failure is `unparsed`.

>>> answers_equivalent("$1,000.00", "1000").label, answers_equivalent("0.33", "1/3").label
('correct', 'incorrect')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from verifiers.math.arithmetic import NotEvaluable, Token, TooLarge, evaluate, lex, parse_side
from verifiers.math.bounded import BoundedPool, run_items
from verifiers.math.numbers import RELATIVE_TOLERANCE, format_value
from verifiers.protocol import Verdict

DEFAULT_TIMEOUT_S = 3.0
_ANSWER_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE)
_HASHES = re.compile(r"####\s*")
_LAST_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|-?\$?\.\d+%?")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_VAR_PREFIX = re.compile(r"^\s*[A-Za-z]\s*=\s*(?!=)")
_TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}(?:\^\{?[23]\}?)?")
_THIN_THOUSANDS = re.compile(r"(\d)\\[,;!: ](\d{3})(?!\d)")
_MATH_WORDS = {"pi", "sqrt", "inf", "infinity", "log", "ln", "sin", "cos", "tan", "e", "i", "or", "and"}


@dataclass(frozen=True)
class ExtractedAnswer:
    """The answer text found in a completion and where: `completion[start:end]` contains it."""

    text: str
    start: int
    end: int
    method: str  # boxed | hashes | the_answer_is | last_number


def _closing_braces(text: str) -> dict[int, int]:
    """Index of the matching `}` for every `{` that has one, in one pass (no quadratic rescans)."""
    stack: list[int] = []
    closing: dict[int, int] = {}
    for i, ch in enumerate(text):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            closing[stack.pop()] = i
    return closing


def _boxed(text: str) -> ExtractedAnswer | None:
    matches = list(_BOXED.finditer(text))
    if not matches:
        return None
    closing = _closing_braces(text)
    for match in reversed(matches):
        end = closing.get(match.end() - 1)
        if end is not None:
            content = text[match.end() : end]
            if content.strip():
                start = match.end() + len(content) - len(content.lstrip())
                return ExtractedAnswer(content.strip(), start, start + len(content.strip()), "boxed")
    return None


def _until_sentence_end(text: str, start: int) -> tuple[int, int]:
    end = text.find("\n", start)
    end = len(text) if end == -1 else end
    segment = text[start:end]
    # a full stop ends the answer; a decimal point does not ("is 2.5.")
    for k, ch in enumerate(segment):
        if ch == "." and (k + 1 == len(segment) or not segment[k + 1].isdigit()):
            if k + 1 == len(segment) or segment[k + 1] in " \t\"'":
                end = start + k
                break
    return start, end


def extract_answer(text: str, *, last_number_fallback: bool = True) -> ExtractedAnswer | None:
    """The final answer of a model's text, or None when it states none.

    >>> extract_answer("So 3+4=7. The answer is $7.").text
    '$7'
    >>> extract_answer(r"\\boxed{\\frac{1}{2}} then 5").text
    '\\\\frac{1}{2}'
    """
    boxed = _boxed(text)
    if boxed is not None:
        return boxed
    for pattern, method in ((_HASHES, "hashes"), (_ANSWER_PHRASE, "the_answer_is")):
        matches = list(pattern.finditer(text))
        if matches:
            start, end = _until_sentence_end(text, matches[-1].end())
            answer = text[start:end].strip().rstrip(".")
            if answer:
                offset = text.index(answer, start) if answer in text[start:end] else start
                return ExtractedAnswer(answer, offset, offset + len(answer), method)
    if last_number_fallback:
        numbers = list(_LAST_NUMBER.finditer(text))
        if numbers:
            last = numbers[-1]
            answer = last.group().rstrip(",")
            return ExtractedAnswer(answer, last.start(), last.start() + len(answer), "last_number")
    return None


def _strip_delimiters(text: str) -> str:
    s = text.strip().rstrip(".").strip()
    for left, right in (("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if s.startswith(left) and s.endswith(right) and len(s) > len(left) + len(right):
            s = s[len(left) : -len(right)].strip()
    if s.count("$") == 2 and s.startswith("$") and s.endswith("$"):
        s = s[1:-1].strip()
    inner = _boxed(s)
    if inner is not None and s.startswith("\\boxed"):
        s = inner.text
    return s


def normalize_answer(text: str) -> str:
    """Cosmetic normalization shared by both paths: delimiters, `\\text{}` units, degrees, `\\!`."""
    s = _strip_delimiters(text)
    s = _TEXT_COMMAND.sub(lambda m: f" {m.group(1)} ", s)
    s = _THIN_THOUSANDS.sub(r"\1\2", s)
    s = s.replace("^\\circ", "").replace("^{\\circ}", "").replace("°", "").replace("\\!", "")
    s = s.replace("\\%", "%").replace("\\$", "$").replace("dfrac", "frac").replace("tfrac", "frac")
    if s.count("=") == 1:
        s = _VAR_PREFIX.sub("", s)  # "x = 3" answers 3; "x=2 or x=3" stays whole
    return s.strip()


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


def _fast_verdict(predicted: str, reference: str) -> Verdict | None:
    pred, ref = plain_value(predicted), plain_value(reference)
    if pred is None or ref is None:
        return None
    tolerant = _has_decimal(predicted) or _has_decimal(reference)
    for p in pred:
        for r in ref:
            if p == r or (tolerant and abs(p - r) <= RELATIVE_TOLERANCE * max(abs(p), abs(r))):
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


def answers_equivalent(
    predicted: str, reference: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, pool: BoundedPool | None = None
) -> Verdict:
    """`correct | incorrect | unparsed` for an extracted answer against the reference answer."""
    return answers_equivalent_many([(predicted, reference)], timeout_s=timeout_s, pool=pool)[0]


def answers_equivalent_many(
    pairs: Sequence[tuple[str, str]], *, timeout_s: float = DEFAULT_TIMEOUT_S, pool: BoundedPool | None = None
) -> list[Verdict]:
    """Like `answers_equivalent` for many pairs; the ones the fast path cannot read go to the worker in
    one batch (one round trip, each pair with its own time limit)."""
    verdicts: list[Verdict | None] = []
    hard: list[int] = []
    for index, (predicted, reference) in enumerate(pairs):
        if not predicted.strip():
            verdicts.append(
                Verdict("unparsed", "empty answer", {"predicted": predicted, "reference": reference})
            )
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
        payload = [(normalize_answer(pairs[i][0]), normalize_answer(pairs[i][1])) for i in hard]
        for index, outcome in zip(hard, _symbolic(tuple(payload), timeout_s, pool), strict=True):
            predicted, reference = pairs[index]
            evidence = {"predicted": predicted, "reference": reference, "path": "math-verify"}
            if isinstance(outcome, str):
                reason = "timed out" if "timed_out" in outcome else "worker failed"
                verdicts[index] = Verdict("unparsed", f"{reason} (limit {timeout_s:g} s)", evidence)
            else:
                label, detail = outcome
                verdicts[index] = Verdict(label, detail, evidence)
    return [v for v in verdicts if v is not None]


_symbolic_cache: dict[tuple[str, str], tuple[str, str]] = {}


def _symbolic(payload: tuple[tuple[str, str], ...], timeout_s: float, pool: BoundedPool | None) -> list:
    """Worker results, cached per pair (rollouts repeat the same answers many times); time-outs are not
    cached, so a later call on a quieter machine may still finish."""
    missing = [pair for pair in dict.fromkeys(payload) if pair not in _symbolic_cache]
    fresh: dict[tuple[str, str], object] = {}
    if missing:
        outcomes = run_items("verifiers.math.symbolic:answer_equivalence", missing, timeout_s, pool)
        for pair, outcome in zip(missing, outcomes, strict=True):
            fresh[pair] = outcome
            if not isinstance(outcome, str):
                if len(_symbolic_cache) > 16_384:
                    _symbolic_cache.clear()
                _symbolic_cache[pair] = (outcome[0], outcome[1])
    return [_symbolic_cache.get(pair) or fresh[pair] for pair in payload]


def grade_answer(
    completion: str,
    reference: str,
    *,
    last_number_fallback: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    pool: BoundedPool | None = None,
) -> Verdict:
    """Outcome of a completion against the reference: correct | incorrect | unparsed (no answer found,
    or one that could not be read). Evidence carries the extracted span."""
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
    "answers_equivalent",
    "answers_equivalent_many",
    "extract_answer",
    "grade_answer",
    "grade_answers",
    "normalize_answer",
    "plain_value",
]
