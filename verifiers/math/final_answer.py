"""Find the final answer in a long MATH-style model output.

Models end their solutions in many ways: `\\boxed{...}` (often several times, or several boxes in the
last sentence), a `#### 42` line (GSM8K style), a PRM800K `# Answer` block, a Minerva line
`Final Answer: The final answer is $42$. I hope it is correct.`, a free sentence
(`Final Answer: The largest $n$ is 34.`), or "The answer is: 42". Every marker found is a candidate; the one
that starts last in the text wins (a model's last word is its answer), and a sentence is cut down to the
value it states. The span is kept so a reader can see what was graded.

>>> extract_answer("so $n \\\\le 34$.\\nFinal Answer: The largest $n$ is 34.").text
'34'
>>> extract_answer("The roots are $\\\\boxed{2}$ and $\\\\boxed{-3}$.").text
'2, -3'
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASHES = re.compile(r"####\s*")
_PRM800K = re.compile(r"^#\s*Answer\s*$", re.MULTILINE | re.IGNORECASE)
_FINAL_LINE = re.compile(r"final answer\s*:\s*", re.IGNORECASE)
# no `^`: `Pattern.match(text, pos)` would only let `^` match at a line start, never at `pos`
_MINERVA = re.compile(r"\s*the final answer is\s*:?\s*", re.IGNORECASE)
_HOPE_ANYWHERE = re.compile(r"I hope it is correct", re.IGNORECASE)
# chat-template tokens a model may write after its answer (`<|im_start|>user`, `</s>`)
_CHAT_TAIL = re.compile(r"<\|[a-z_]+\|>|</s>|<\|endoftext\|>", re.IGNORECASE)
_ANSWER_PHRASE = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE)
_HOPE = re.compile(r"\.?\s*I hope it is correct\.?\s*$", re.IGNORECASE)
# a value said to be the answer after it: "so $y \geq 3$ is the answer", "$x < 5$ is our solution"
_IS_THE_ANSWER = re.compile(
    r"(?:\$(?P<dollar>[^$]+)\$|\\\((?P<paren>.+?)\\\))\s*(?:is|are)\s+(?:the|our)\s+(?:final\s+)?"
    r"(?:answer|solution(?:\s+set)?)\b",
    re.IGNORECASE,
)
# a clause after an answer's maths that says why or adds a remark: "$x > 3$, since $x = 3$ fails"
_CLAUSE_AFTER = re.compile(
    r"\s*[,;]?\s*(?:since|because|as|which|where|given|for|so\s+that|when|while|and\s+(?:this|that|it))\b",
    re.IGNORECASE,
)
# digit groups may be joined by `,`, or by LaTeX's `,\!` and `{,}` (`1,\!000`, `3{,}600`)
_LAST_NUMBER = re.compile(r"-?\$?\d(?:,\\!(?=\d)|\{,\}(?=\d)|[\d,])*(?:\.\d+)?(?:/\d+)?%?|-?\$?\.\d+%?")
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
# a sentence states its value after its last verb of being: "The volume of $V$ is 120 cubic inches."
_STATES = re.compile(
    r"\s(?:is|are|was|equals|be|=)\s*:?\s+(?:equal to\s+|approximately\s+|about\s+)?", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z]{3,}")
_VERB = re.compile(r"\s(?:is|are|was|equals)\s", re.IGNORECASE)
# a value right after a stating verb, and a math span that states a value (`$x = 3$`, `$27$`)
_VALUE_AHEAD = re.compile(r"[-+]?(?:\d|\$|\\\(|\\frac|\\sqrt)")
_STATED_IN_MATH = re.compile(r"^[$\\(\[]*\s*(?:[A-Za-z](?:_\{?\w+\}?)?\s*=\s*)?[-+]?\d")
_HEADING_WORDS = re.compile(r"^[A-Za-z][A-Za-z ]*:?\s*$")
_NEW_PROBLEM = re.compile(r"^[ \t]*(?:Problem|Question)(?:[ \t]+\d+)?[ \t]*:", re.MULTILINE)
# without any marker, a last sentence that ends by stating a maths value: "... the pair is $(7, 6)$."
_LAST_SENTENCE_CHARS = 400
_LAST_SENTENCE_VALUE = re.compile(
    r"\s(?:is|are|equals|=)\s+(?:\$(?P<dollar>[^$]+)\$|\\\((?P<paren>.+?)\\\))\s*\.?\s*$", re.IGNORECASE
)
_SPACING = r"(?:\s|\$|\\[,;:! ]|\\q?quad\b|\\\[|\\\]|\\\(|\\\))*"
_CONJUNCTION = r"(?:,|and|or|&|\\text\s*\{\s*(?:,|and|or)\s*\})"
# what may stand between boxes that state one answer: "}$ and $\boxed{", "} \quad \text{and} \quad \boxed{",
# and "}$ and $x = \boxed{" when the same `x =` stands before the box before it
_BOX_JOIN_GAP = re.compile(
    rf"^{_SPACING}(?:[.,;:]{_SPACING})*(?:{_CONJUNCTION}{_SPACING})+"
    rf"(?P<var>[A-Za-z](?:_\{{?\w+\}}?)?\s*=)?{_SPACING}$"
)
# or only spacing on one line: `$\boxed{2}$ $\boxed{5}$`, `\boxed{2} \quad \boxed{5}`
_BOX_SPACE_GAP = re.compile(r"^(?:[ \t$]|\\[,;:! ]|\\q?quad\b)*$")
_VAR_BEFORE_BOX = re.compile(r"([A-Za-z](?:_\{?\w+\}?)?\s*=)[\s$]*$")


@dataclass(frozen=True)
class ExtractedAnswer:
    """The answer text found in a completion and where: `completion[start:end]` contains it."""

    text: str
    start: int
    end: int
    # boxed | boxed_several | hashes | prm800k | final_answer | the_answer_is | whole_math | last_sentence
    # | is_the_answer | last_number
    method: str


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


def _boxes(text: str) -> list[tuple[int, int, int]]:
    """(marker start, content start, content end) of every closed, non-empty box."""
    matches = list(_BOXED.finditer(text))
    if not matches:
        return []
    closing = _closing_braces(text)
    boxes = []
    for match in matches:
        end = closing.get(match.end() - 1)
        if end is not None and text[match.end() : end].strip():
            boxes.append((match.start(), match.end(), end))
    # a box inside a box (`\boxed{\boxed{5}}`) is the same answer: keep the outer one; braces nest, so
    # one pass in text order finds them (a box starting before the last outer box closes is inside it)
    outer: list[tuple[int, int, int]] = []
    for box in boxes:
        if outer and box[0] < outer[-1][2]:
            continue
        outer.append(box)
    return outer


def boxed_answer(text: str) -> ExtractedAnswer | None:
    """The last box; boxes joined only by `,` / `and` / `or` in the last sentence are one answer."""
    boxes = _boxes(text)
    if not boxes:
        return None
    group = [boxes[-1]]
    for box in reversed(boxes[:-1]):
        between = text[box[2] + 1 : group[0][0]]
        if _BOX_SPACE_GAP.match(between):
            group.insert(0, box)
            continue
        gap = _BOX_JOIN_GAP.match(between)
        if gap is None:
            break
        if gap["var"] is not None:  # `x = \boxed{-3}$ and $x = \boxed{5}`, never `a = ...` and `b = ...`
            before = _VAR_BEFORE_BOX.search(text[max(0, box[0] - 40) : box[0]])
            if before is None or before.group(1).replace(" ", "") != gap["var"].replace(" ", ""):
                break
        group.insert(0, box)
    contents = list(dict.fromkeys(text[s:e].strip() for _, s, e in group))
    start, end = group[0][1], group[-1][2]
    if len(contents) == 1:
        inner = text[start:end]
        offset = start + len(inner) - len(inner.lstrip())
        return ExtractedAnswer(contents[0], offset, offset + len(contents[0]), "boxed")
    return ExtractedAnswer(", ".join(contents), start, end, "boxed_several")


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end == -1 else end


def _sentence_end(text: str, start: int) -> int:
    """End of the sentence at `start`: a full stop followed by a space or the line end; `2.5.` and
    `$\\$1.25$` keep their decimal points, and a full stop inside `$...$` does not count."""
    end = _line_end(text, start)
    in_math = False
    for k in range(start, end):
        ch = text[k]
        if ch == "$" and (k == 0 or text[k - 1] != "\\"):
            in_math = not in_math
        elif ch == "." and not in_math and (k + 1 == end or text[k + 1] in " \t\"'"):
            return k
    return end


def _clean(text: str) -> str:
    """The answer without "I hope it is correct", a final full stop, or Markdown bold (`**34**`)."""
    text = _HOPE.sub("", text).strip().rstrip(".").strip()
    if text.startswith("**") and text.count("**") == 1:  # the rest of "**Answer:** 12"
        text = text[2:].strip()
    while len(text) > 4 and text.startswith("**") and text.endswith("**"):
        text = text[2:-2].strip()
    return text


def _is_sentence(text: str) -> bool:
    """Words around a value: "Hillary has 7 nickels", "The largest $n$ is 34"; not "Navin",
    "no solution" or "12 \\text{ cm}"."""
    outside = _MATH_SPAN.sub(" ", text)
    outside = re.sub(r"\\[A-Za-z]+\s*(\{[^{}]*\})?", " ", outside)
    words = len(_WORD.findall(outside))
    if _VERB.search(f" {outside} ") is not None:  # "$x$ is 9" names a variable with no other word
        return True
    return words >= 3 or (words >= 1 and _STATES.search(f" {outside} ") is not None)


def _stated_head(text: str, start: int) -> str | None:
    """The value a stating verb is followed by at `start` (its math span or number), else None."""
    if _VALUE_AHEAD.match(text, start) is None:
        return None
    span = _MATH_SPAN.match(text, start)
    if span is not None:
        return "".join(next(g for g in span.groups() if g is not None).split())
    number = _LAST_NUMBER.match(text, start)
    return number.group().rstrip(",") if number is not None else text[start : start + 12]


def _value_of_sentence(text: str) -> str | None:
    """The value a sentence states, or None: after its last "is / are / =", else its last math span,
    else its last number. `The largest $n$ is 34` -> `34`. A sentence that states two values (`The sum
    is 5 and the product is 6`, `$x = 3$ and $y = 4$`) states no single answer: None."""
    spans = list(_MATH_SPAN.finditer(text))
    in_math = [span.span() for span in spans]
    states = [  # "the line $y = 2x - 3$" states no value at its `=`
        m for m in _STATES.finditer(text) if not any(a <= m.start() < b for a, b in in_math)
    ]
    if len({_stated_head(text, m.end()) for m in states} - {None}) > 1:
        return None  # two values; `... is $-\frac{1}{2}$, so the answer is $-\frac{1}{2}$` states one
    if states:
        rest = text[states[-1].end() :].strip()
        if rest and not _is_sentence(rest):
            return rest
    if spans:
        if not states and sum(_STATED_IN_MATH.search(span.group()) is not None for span in spans) > 1:
            return None
        last = spans[-1]
        return next(g for g in last.groups() if g is not None).strip()
    numbers = list(_LAST_NUMBER.finditer(text))
    return numbers[-1].group().rstrip(",") if numbers else None


def _answer_at(text: str, start: int, end: int, method: str) -> ExtractedAnswer | None:
    raw = text[start:end]
    lead = _MATH_SPAN.match(raw.lstrip())
    if lead is not None and _CLAUSE_AFTER.match(raw.lstrip(), lead.end()):
        raw = lead.group()  # the answer's maths, then a remark on it: the maths alone
    answer = _clean(raw)
    if _is_sentence(answer):
        value = _value_of_sentence(answer)
        if value is None:
            return None
        answer = _clean(value)
    if not answer:
        return None
    offset = text.find(answer, start, end + 1)
    offset = start if offset == -1 else offset
    return ExtractedAnswer(answer, offset, offset + len(answer), method)


def _is_heading(text: str, start: int) -> bool:
    """A Markdown heading (`#### Verification` with more text below), not a GSM8K `#### 42` answer line."""
    end = _line_end(text, start)
    return bool(_HEADING_WORDS.match(text[start:end])) and bool(text[end:].strip())


def _marker_candidates(text: str) -> list[tuple[int, ExtractedAnswer | None]]:
    """(marker position, answer) for the last occurrence of every marker kind."""
    found: list[tuple[int, ExtractedAnswer | None]] = []
    boxed = boxed_answer(text)
    if boxed is not None:
        found.append((max(b[0] for b in _boxes(text)), boxed))
    hashes = [m for m in _HASHES.finditer(text) if not _is_heading(text, m.end())]
    if hashes:
        m = hashes[-1]
        found.append((m.start(), _answer_at(text, m.end(), _line_end(text, m.end()), "hashes")))
    blocks = list(_PRM800K.finditer(text))
    if blocks:
        m = blocks[-1]
        body = text[m.end() :].lstrip()
        start = len(text) - len(body)
        found.append((m.start(), _answer_at(text, start, _line_end(text, start), "prm800k")))
    finals = list(_FINAL_LINE.finditer(text))
    if finals:
        m = finals[-1]
        end = _line_end(text, m.end())
        minerva = _MINERVA.match(text, m.end())
        start = minerva.end() if minerva else m.end()
        # the line ends where its sentence does: notes or a new turn may follow on the same line
        hope = _HOPE_ANYWHERE.search(text, start, end)
        end = hope.start() if hope else _sentence_end(text, start)
        found.append((m.start(), _answer_at(text, start, end, "final_answer")))
    said = list(_IS_THE_ANSWER.finditer(text))
    if said:
        m = said[-1]
        group = "dollar" if m["dollar"] is not None else "paren"
        value = m[group].strip()
        if value:
            start = m.start(group) + len(m[group]) - len(m[group].lstrip())
            found.append((m.start(), ExtractedAnswer(value, start, start + len(value), "is_the_answer")))
    final_line_end = _line_end(text, finals[-1].end()) if finals else -1
    phrases = [p for p in _ANSWER_PHRASE.finditer(text) if p.start() > final_line_end]
    if phrases:
        m = phrases[-1]
        found.append((m.start(), _answer_at(text, m.end(), _sentence_end(text, m.end()), "the_answer_is")))
    return found


def _this_turn(text: str) -> str:
    """The output up to where a new turn begins: a chat-template token after some text
    (`<|im_start|>user`), or a few-shot `Problem:` / `Question:` line after an answer marker, as base
    models write when they go on with the prompt's pattern."""
    for token in _CHAT_TAIL.finditer(text):
        if text[: token.start()].strip() and not _CHAT_TAIL.fullmatch(text[: token.start()].strip()):
            text = text[: token.start()]
            break
    for line in itertools.islice(_NEW_PROBLEM.finditer(text), 8):
        if any(answer is not None for _, answer in _marker_candidates(text[: line.start()])):
            return text[: line.start()]
    return text


def extract_answer(text: str, *, last_number_fallback: bool = True) -> ExtractedAnswer | None:
    """The final answer of a model's text, or None when it states none.

    >>> extract_answer("So 3+4=7. The answer is $7.").text
    '$7'
    >>> extract_answer("I check it: 2+5 = 7.\\n# Answer\\n\\n7").method
    'prm800k'
    """
    text = _this_turn(text)
    candidates = sorted(
        ((pos, answer) for pos, answer in _marker_candidates(text) if answer is not None),
        key=lambda item: item[0],
    )
    if candidates:
        return candidates[-1][1]
    if last_number_fallback:
        whole = _MATH_SPAN.fullmatch(text.strip().rstrip(".").strip())
        if whole is not None:  # the output is one maths span (`$\\frac{1}{2}$`): all of it is the answer
            group = next(i for i, g in enumerate(whole.groups(), 1) if g is not None)
            value = whole.group(group).strip()
            if value and "$" not in value:
                start = text.find(value)
                return ExtractedAnswer(value, start, start + len(value), "whole_math")
        # only the end of the text can hold its last sentence; a bounded window keeps the search linear
        window = max(0, len(text) - _LAST_SENTENCE_CHARS)
        stated = _LAST_SENTENCE_VALUE.search(text, window)
        if stated is not None:
            group = "dollar" if stated["dollar"] is not None else "paren"
            value = stated[group].strip()
            if value:
                start = stated.start(group) + len(stated[group]) - len(stated[group].lstrip())
                return ExtractedAnswer(value, start, start + len(value), "last_sentence")
        numbers = list(_LAST_NUMBER.finditer(text))
        if numbers:
            last = numbers[-1]
            answer = last.group().rstrip(",")
            return ExtractedAnswer(answer, last.start(), last.start() + len(answer), "last_number")
    return None


def stated_answer(text: str) -> str | None:
    """The answer a short text states, for grading answer against answer (a gold answer is often given as
    `$\\boxed{2}$, $\\boxed{5}$` or as a `Final Answer:` sentence):
    - a text with a marker (a box, `Final Answer:`, "the answer is", `####`, `# Answer`): its marked answer,
      None when the marker states none;
    - a sentence that states its value with "is / are / =": that value (`The largest $n$ is 34.` -> `34`),
      None when it states two (`The sum is 5 and the product is 6.`);
    - anything else (`34`, `x = 5`, `\\text{Navin}`, `all real numbers except 3`): the text itself.

    >>> stated_answer("Final Answer: The largest $n$ is 34."), stated_answer(r"$\\boxed{2}$, $\\boxed{5}$")
    ('34', '2, 5')
    """
    if (
        _BOXED.search(text)
        or _FINAL_LINE.search(text)
        or _ANSWER_PHRASE.search(text)
        or _IS_THE_ANSWER.search(text)
    ):
        found = extract_answer(text, last_number_fallback=False)
        return None if found is None else found.text
    if _HASHES.search(text) or _PRM800K.search(text):
        found = extract_answer(text, last_number_fallback=False)
        return text if found is None else found.text
    sentence = _clean(text)
    in_math = [span.span() for span in _MATH_SPAN.finditer(sentence)]
    states = any(not any(a <= m.start() < b for a, b in in_math) for m in _STATES.finditer(sentence))
    if not states or not _is_sentence(sentence):
        return text
    value = _value_of_sentence(sentence)
    return None if value is None else _clean(value)


__all__ = ["ExtractedAnswer", "boxed_answer", "extract_answer", "stated_answer"]
