"""Does the text assert a claim, or only put it to the test? Decided on the sentence, by a lexicon of markers.

A chain writes relations it does not claim: the value it tries, the equation it checks, the branch of a
case, the statement it then says is false. Read as claims, each is a false `incorrect`. This module
finds the claim's place in its step and reads the sentence around it (sentences end at `.`, `!` or `?`
before a space, at a line break, at a blank line; never inside math, and a sentence that ends on `:` goes
on through what it introduces). A claim is a **test**, not an assertion, when:

- **it is the object of a marker** (`SUPPOSITION`, `TRIAL`, `CHECK`, `QUESTION`, `CONDITION`,
  `SUBSTITUTION` below): between the marker and the claim stand only filler words (`that`, `if`, `whether`,
  `the equation`, ...) and math delimiters ("suppose $2 + 2 = 5$", "check whether $A = B$", "we test
  $x = 2$", "if $n + 7 = 2$, then ...", "substitute $x = 1/2$ into ..."; a substitution's object only
  where the claim sets a name);
- **its sentence asks** (it ends on `?`);
- **the chain negates it in its own sentence or the next** (`NEGATION`: "false", "not equal", `\\neq`
  after it, "does not hold", "contradiction", "impossible", ...; the next sentence may open the next step):
  where the chain refutes a false relation the chain is right;
- **it stands in the consequent of a value supposed or tried** ("if $x = 3$, then ...", "let's try
  $n = 5$: ...", "suppose $a = 2$. ..."): for claims in names only (`names_too`), since arithmetic in written
  numbers worked for a trial is still the chain's own arithmetic (`2(-3)^4 - 3 = 150` after "testing
  $x = -3$" is wrong whatever was tried). A supposition reaches to the end of its step, an `if` or `for`
  to the end of its sentence;
- **it stands on the heading line of a case** (`Case 2: a = 2, b = 1`, `**Subcase (ii):** ...`).

The markers are words and signs with one job in mathematical prose; a phrase copied from one example is
no marker. A claim the step does not write as such (joined or rewritten by a reader) is located by its
first side; one that cannot be located is a test when its step holds any marker at all (fail closed).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

# The lexicon. Each is a set of words (or signs) that open a frame in which a relation is not asserted.
# supposing something for the argument
SUPPOSITION = r"suppose|supposing|assume|assuming|assumed|imagine|hypothetically|presume|presuming"
# trying a value or an example
TRIAL = (
    r"try|trying|tried|test|testing|tested|guess|guessing|plug|plugging|e\.g\.|for\s+example"
    r"|for\s+instance"
)
# checking a statement, not stating it
CHECK = r"check|checking|checks|verify|verifying|verifies|confirm|confirming|see\s+(?:if|whether)"
# stating a condition: the antecedent of a conditional is supposed, not stated ("if $n + 7 = 2$, then ...")
CONDITION = r"if|when|whenever|unless|provided|such\s+that"
# putting a value in for a name: the value is chosen, not derived ("substitute $x = 1/2$ into ...",
# "setting $t = 0$"); only a claim that sets a name is its object
SUBSTITUTION = r"substitute|substituting|substitution|setting|putting|letting"
# asking
QUESTION = r"whether|is\s+it\s+(?:true|possible|the\s+case)|does\s+it\s+(?:hold|work|equal)"
# saying a relation fails: its negation
NEGATION = (
    r"false|untrue|incorrect|wrong|mistaken?|erroneous|contradict\w*|absurd|impossible|invalid|fails?|failed"
    r"|not\s+(?:true|correct|right|valid|possible|equal|the\s+case|a\s+(?:valid\s+)?solution|satisfied|hold"
    r"|work|an?\s+option)"
    r"|(?:does|do|did|can)\s*(?:n[o']t|not)\s+(?:hold|work|satisfy|equal|match|check\s+out|give|make)"
    r"|no\s+(?:solutions?|good)|reject\w*|discard\w*|(?:cannot|can't|can\s+not)\s+be"
    r"|\bisn[’']t\s+(?:true|correct|right|valid|equal|possible)"
)
# the filler words that may stand between a marker and its object
_FILLER = (
    r"(?:\s|\$|\\\(|\\\[|\\begin\{[a-z*]+\}|:|,|\b(?:that|if|whether|the|an?|our|this|these|its|it|with|for"
    r"|out|in|on|into|value|values|equation|equations|relation|statement|claim|identity|equality|again"
    r"|instead|now|first|then|next|further|also|whose|when|we|us|let'?s|let|to|need|want|must|should|can"
    r"|will|would|could|might|is|are|be|do|does|see)\b)*"
)
# a marker after a determiner is a noun ("the test is 2 * 180", "the check was $50"): an exam, a bill
_NOUN = r"(?<!\bthe\s)(?<!\bthe\s\s)(?<!\ba\s)(?<!\ban\s)(?<!\bthis\s)(?<!\bthat\s)(?<!\bher\s)(?<!\bhis\s)"
# (a condition or a substitution opens a frame only for its own object: elsewhere in a text, "if" and "let"
# are everywhere, so `FRAME_MARKER` and a claim not found in its step do not read them)
# (an equation step reads `if A then B` as the rewrite A => B, which the chain does assert: there a
# condition opens no frame; and a substitution chooses a value only for a name, `x = 1/2`: "substituting
# $\tan^2 20^\circ = 2 - \sqrt{3}$ back" puts in a value the chain states)


@functools.lru_cache(maxsize=4)
def _object_marker(conditions: bool, substitution: bool) -> re.Pattern[str]:
    markers = [SUPPOSITION, TRIAL, CHECK, QUESTION]
    markers += [CONDITION] if conditions else []
    markers += [SUBSTITUTION] if substitution else []
    return re.compile(rf"{_NOUN}\b(?:{'|'.join(markers)})\b{_FILLER}$", re.IGNORECASE)


_NEGATION = re.compile(rf"\b(?:{NEGATION})\b|≠|\\neq?(?![A-Za-z])|\\not\s*=", re.IGNORECASE)
# any marker of a frame, wherever it stands (not only before its object): a text that holds one has put
# something to the test or refuted something (`claims` asks it between a value's binding and its use)
FRAME_MARKER = re.compile(
    rf"{_NOUN}\b(?:{SUPPOSITION}|{TRIAL}|{CHECK}|{QUESTION})\b|\b(?:{NEGATION})\b", re.IGNORECASE
)
# a claim that is itself a `\\neq` (`162 - 108 - 45 - 3 \\neq 6`): only words negate it, not its own sign
_NEGATION_WORDS = re.compile(rf"\b(?:{NEGATION})\b", re.IGNORECASE)
UNEQUAL = re.compile(r"≠|\\neq?(?![A-Za-z])|\\not\s*=")  # an inequality sign (`certainty` too)
# a value supposed or tried: the marker, then a name given a value (`suppose $a = 2$`, `try n = 5`)
_VALUE = r"[\s$\\(]*[A-Za-z](?:_\{?\w+\}?)?\s*=(?!=)"
_SUPPOSED_VALUE = re.compile(
    rf"\b(?:{SUPPOSITION}|{TRIAL}|{CHECK})\b[^.!?\n]{{0,24}}?{_VALUE}", re.IGNORECASE
)
_NAME_SET = re.compile(_VALUE)  # a claim that sets a name (`x = 1/2`)
_CONDITIONAL_VALUE = re.compile(rf"\b(?:if|when|whenever|for)\b{_VALUE}", re.IGNORECASE)
# a heading that opens one part of the work on its own line ("For the final exam:", "**For the second
# container:**"): the values given under one such heading belong to it, not to the next
SCOPE_HEADING = re.compile(
    r"^[ \t>#*-]*For\s+(?:the\s+|each\s+|an?\s+)?[^\n:=$\\]{1,40}:[ \t*]*$", re.IGNORECASE | re.MULTILINE
)
# the heading of a case, on its own line (`Case 2: a = 2, b = 1`, `**Subcase (ii).**`)
_CASE_HEADING = re.compile(r"^[\W\d]*(?:sub)?case\s*[\w()]{0,6}\s*[:.)]", re.IGNORECASE | re.MULTILINE)
# math segments, inside which no sentence ends
_MATH = re.compile(
    r"\\\[.*?\\\]|\\\(.*?\\\)|\$\$.*?\$\$|\$[^$]*\$|\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.DOTALL
)
_BOUNDARY = re.compile(r"[.!?](?=\s|$)|\n")


@dataclass(frozen=True)
class Frame:
    """Why a claim is a test, not an assertion, and where the marker stands (offset in its step)."""

    why: str
    marker: str


def sentences(step: str) -> list[tuple[int, int]]:
    """The sentences of a step as (start, end) spans: ends at `.`/`!`/`?` before a space or the end, and at
    line breaks, never inside math; a sentence whose last sign is `:` goes on through the next one.

    >>> text = "Try $x = 1.5$. So $2 + 2 = 4$?\\nYes."
    >>> [text[a:b] for a, b in sentences(text)]
    ['Try $x = 1.5$.', ' So $2 + 2 = 4$?', '\\nYes.']
    """
    return list(_sentences(step))


@functools.lru_cache(maxsize=256)
def _sentences(step: str) -> tuple[tuple[int, int], ...]:
    """`sentences`, kept per step: every claim of a step asks again, once per place it is written, which
    made a step of n repeated claims cost n^2 splits (a long step took minutes)."""
    masked = _MATH.sub(lambda m: "x" * len(m.group(0)), step)
    spans, start = [], 0
    for end in _BOUNDARY.finditer(masked):
        stop = end.end()
        if not masked[start:stop].strip():
            continue
        if masked[start:stop].rstrip().endswith(":") and stop < len(step):
            continue  # "we check:" goes on through the display it opens
        spans.append((start, stop))
        start = stop
    if start < len(step) and step[start:].strip():
        spans.append((start, len(step)))
    return tuple(spans or [(0, len(step))])


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def claim_offsets(claim: str, step: str, *, overlapping: bool = False) -> list[int]:
    """Where the claim is written in its step: the whole claim (spacing aside), else its first side; with
    `overlapping`, places that overlap count too (`128 / 10 = 12` in `128 / 10 = 128 / 10 = 12`)."""
    wanted = _squeeze(claim)
    if wanted:
        squeezed, index = [], []
        for i, ch in enumerate(step):
            if not ch.isspace():
                squeezed.append(ch)
                index.append(i)
        flat = "".join(squeezed)
        pattern = f"(?={re.escape(wanted)})" if overlapping else re.escape(wanted)
        found = [index[m.start()] for m in re.finditer(pattern, flat)]
        if found:
            return found
    head = re.split(r"=|\\approx|≈|\\equiv|<|>|\\[lg]eq?(?![A-Za-z])", claim, maxsplit=1)[0].strip()
    if not head:
        return []
    return [m.start() for m in re.finditer(re.escape(head), step)]


def _frame_at(
    step: str,
    at: int,
    next_text: str,
    names_too: bool,
    unequal: bool = False,
    conditions: bool = True,
    substitution: bool = True,
) -> Frame | None:
    spans = sentences(step)
    k = next((j for j, (a, b) in enumerate(spans) if a <= at < b), len(spans) - 1)
    start, end = spans[k]
    sentence = step[start:end]
    before = step[start:at]
    marker = _object_marker(conditions, substitution).search(before)
    if marker:
        why = "the claim is the object of a supposition, trial, check, question, condition or substitution"
        return Frame(why, marker.group(0))
    if sentence.rstrip().endswith("?"):
        return Frame("the claim is put as a question", "?")
    # the next sentence that is not a bare relation: a displayed block worked line by line (`(-2)^2 + (-2) -
    # 6 = 0`, `4 - 2 - 6 = 0`, `-4 = 0`) is one test, and the words after its last line judge every line
    after = next((j for j in range(k + 1, len(spans)) if not _bare_relation(step[slice(*spans[j])])), None)
    following = step[slice(*spans[after])] if after is not None else _first_sentence(next_text)
    for text, where in ((sentence, "its sentence"), (following, "the next sentence")):
        negation = (_NEGATION_WORDS if unequal else _NEGATION).search(_MATH_WORDS.sub(" ", text))
        if negation:
            return Frame(f"the chain negates it in {where}", negation.group(0))
    if _on_case_heading(step, at):
        return Frame("the claim stands in the heading of a case", "case")
    if names_too:
        supposed = [m for m in _SUPPOSED_VALUE.finditer(step) if m.end() <= at]
        if supposed:
            return Frame("a value supposed or tried: what follows is no statement", supposed[-1].group(0))
        conditional = [m for m in _CONDITIONAL_VALUE.finditer(step, start) if m.end() <= at]
        if conditional:
            why = "a value given in a condition: its consequent is no statement"
            return Frame(why, conditional[-1].group(0))
    return None


# a relation sign, and a word of prose (two letters or more outside math, commands and `\\text`)
_RELATION_SIGN = re.compile(r"=|<|>|\\[lg]eq?(?![A-Za-z])|\\neq?(?![A-Za-z])")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")


def _bare_relation(sentence: str) -> bool:
    """A line of math alone: a relation and no word of prose (`$4 - 2 - 6 = 0$`, `20 = 24 + 3(0)`).

    >>> _bare_relation("$4 - 2 - 6 = 0$"), _bare_relation("  20 = 24"), _bare_relation("This does not hold.")
    (True, True, False)
    """
    if not _RELATION_SIGN.search(sentence):
        return False
    unmathed = _MATH.sub(lambda m: " " if "\\text" not in m.group(0) else m.group(0), sentence)
    return not _PROSE_WORD.search(_MATH_WORDS.sub(" ", unmathed))


# `\\text{...}` inside math keeps its words; other commands are no words (`\\neq` stays a sign)
_MATH_WORDS = re.compile(r"\\(?!neq?(?![A-Za-z])|not(?![A-Za-z]))[A-Za-z]+")


def _first_sentence(text: str) -> str:
    if not text:
        return ""
    start, end = sentences(text)[0]
    return text[start:end]


def _on_case_heading(step: str, at: int) -> bool:
    for heading in _CASE_HEADING.finditer(step):
        line_end = step.find("\n", heading.start())
        if heading.start() <= at < (len(step) if line_end == -1 else line_end):
            return True
    return False


def introduced_by_a_test(index: int, chain: Sequence[str]) -> str | None:
    """The marker of a test that introduces step `index` across a step break: the step before ends on `:`
    (a sentence that ends on `:` goes on through what it introduces) and that sentence supposes, tries or
    checks a value ("If $\\alpha = 0$ and $k = 8$, then the equation above becomes:"); None otherwise.

    >>> introduced_by_a_test(1, ["If $x = 2$, then the equation becomes:", "$3(2) + 1 = 2 + 4$"])
    'If $x ='
    >>> introduced_by_a_test(1, ["Expanding the square gives:", "$3(2) + 1 = 7$"]) is None
    True
    >>> introduced_by_a_test(1, ["For $i = 0$:", "$y_2 = 2 + \\\\frac{1}{2} = 2 - 5$"]) is None
    True
    """
    if index == 0:
        return None
    before = chain[index - 1].rstrip()
    if not before.endswith(":"):
        return None
    start, _ = sentences(before)[-1]
    last = before[start:]
    marker = _INTRODUCED_VALUE.search(last)
    return marker.group(0) if marker else None


# a value supposed, tried, checked or put in a condition, its name a letter or a Greek command (`\\alpha`);
# not "For $i = 0$:", which opens one round of a computation, asserted
_INTRODUCED_VALUE = re.compile(
    rf"\b(?:{SUPPOSITION}|{TRIAL}|{CHECK}|if|when|whenever)\b[^.!?\n]{{0,24}}?"
    r"[\s$\\(]*(?:\\[A-Za-z]+|[A-Za-z])(?:_\{?\w+\}?)?\s*=(?!=)",
    re.IGNORECASE,
)


def frame_of(
    claim: str, index: int, chain: Sequence[str], *, names_too: bool = False, conditions: bool = True
) -> Frame | None:
    """The frame that makes the claim of step `index` a test, or None where the text asserts it; with
    `names_too`, the consequent of a supposed value counts too (claims in names); without `conditions`,
    the antecedent of a condition is no frame (a rewrite `if A then B` is asserted as A => B).

    >>> frame_of("2 + 2 = 5", 0, ["So $2 + 2 = 5$."]) is None
    True
    >>> frame_of("2 + 2 = 5", 0, ["So $2 + 2 = 5$.", "This is false."]).why
    'the chain negates it in the next sentence'
    >>> frame_of("2 + 2 = 5", 0, ["We check whether $2 + 2 = 5$."]).why
    'the claim is the object of a supposition, trial, check, question, condition or substitution'
    """
    step = chain[index]
    next_text = chain[index + 1] if index + 1 < len(chain) else ""
    return _frame_in(claim, step, next_text, names_too, conditions)


@functools.lru_cache(maxsize=1024)
def _frame_in(
    claim: str, step: str, next_text: str, names_too: bool, conditions: bool = True
) -> Frame | None:
    """`frame_of` for a claim written in `step` (followed by `next_text`): kept, since a claim repeated in
    its step is asked once per copy, and each answer reads every place the claim is written."""
    offsets = claim_offsets(claim, step)
    if not offsets:
        return _anywhere(step, next_text, names_too, conditions)
    unequal = bool(UNEQUAL.search(claim))
    named = bool(_NAME_SET.match(claim))
    frames = [_frame_at(step, at, next_text, names_too, unequal, conditions, named) for at in offsets]
    if all(frames):
        return frames[0]
    return None


def _anywhere(step: str, next_text: str, names_too: bool, conditions: bool = True) -> Frame | None:
    """A claim not found in its step: a test when any marker stands anywhere in it (fail closed)."""
    for start, end in sentences(step):
        frame = _frame_at(step, max(start, end - 1), next_text, names_too, conditions=conditions)
        if frame:
            return frame
        if re.search(rf"\b(?:{SUPPOSITION}|{TRIAL}|{CHECK}|{QUESTION})\b", step[start:end], re.IGNORECASE):
            return Frame("a marker of a test in the step, and the claim is not found in it", "step")
    return None
