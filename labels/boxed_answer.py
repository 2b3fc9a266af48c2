r"""Where a chain first writes its boxed answer when that answer is an expression (`27\sqrt{3}`, `3a-2`).

A wrong chain's answer holds its error or follows from it, so the step that first writes the answer is the
first error or comes after it, unless the same expression stood there as a right intermediate (which is
why `labels.reference` looks only near the answer's step). A step "writes" the answer only where it stands
alone: not inside a larger term (`x + 2\sqrt{5}`, `\frac{2\sqrt{5}}{3}`, `-2\sqrt{5}`, `(2\sqrt{5})^2`),
only between the step's delimiters, `=`, words and punctuation. Spacing commands, `\left` / `\right` and
`\dfrac` / `\tfrac` are read as the plain forms. Whatever cannot be matched with certainty is not matched.

>>> steps = [r"So $x = 27\sqrt{3}+1$.", r"Then $y = 27 \sqrt{3}$.", r"$\boxed{27\sqrt{3}}$"]
>>> first_writing(steps, r"27\sqrt{3}")
1
>>> first_writing([r"We get $-27\sqrt{3}$.", r"$\boxed{27\sqrt{3}}$"], r"27\sqrt{3}")
1
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MAX_LENGTH = 80  # longer answers (matrices, long lists) are left alone
_SPACING = re.compile(r"\\left\b|\\right\b|\\displaystyle\b|\\[,;:! ]|\s+")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{[^{}]*\}")
_FRAC = re.compile(r"\\[dt]frac\b")
_PIECE = re.compile(r"\\[A-Za-z]+|\\.|.", re.DOTALL)
_GAP = r"(?:\s|\\left\b|\\right\b|\\displaystyle\b|\\[,;:! ])*"
# what may stand right before the answer (after spacing): a delimiter, `=`, punctuation, the box itself
_BEFORE = re.compile(
    r"(?:^|[=,:;$]|\\\(|\\\[|\\boxed\{|\\text\{|\\quad|\\qquad|\\implies|\\Rightarrow|\b(?:is|are|be|as))$"
)
# what may follow it: the end, a delimiter, `=`, punctuation, a closing box brace, a word
_AFTER = re.compile(r"^(?:$|[=,;$}]|\.(?!\d)|\\\)|\\\]|\\quad|\\qquad|\\text\b|\\\\)")


def normalized(latex: str) -> str:
    """`latex` without spacing, `\\left` / `\\right`, and with `\\dfrac` / `\\tfrac` read as `\\frac`."""
    return _FRAC.sub(r"\\frac", _SPACING.sub("", latex))


def is_expression(answer: str) -> bool:
    r"""An answer worth looking for: short, with a digit or a LaTeX command, and not a bare name (`EKM`).

    >>> is_expression(r"2\sqrt{5}"), is_expression("3a-2"), is_expression("EKM"), is_expression("x")
    (True, True, False, False)
    >>> is_expression(r"\text{odd}"), is_expression(r"130 \text{ m}")
    (False, True)
    """
    compact = normalized(answer)
    mathematics = _TEXT.sub("", compact)  # words in `\\text{}` are no mathematics (`\\text{odd}`)
    return 2 <= len(compact) <= _MAX_LENGTH and bool(re.search(r"\d|\\[A-Za-z]", mathematics))


def _pattern(answer: str) -> re.Pattern[str]:
    pieces = [
        _FRAC.pattern if piece == "\\frac" else re.escape(piece)
        for piece in _PIECE.findall(normalized(answer))
    ]
    return re.compile(_GAP.join(pieces))


def _stands_alone(text: str, start: int, end: int) -> bool:
    """Whether the match text[start:end] is the whole of a term: only delimiters, `=`, punctuation or
    words around it, never an operator, a sign, a brace of `\\frac` or an exponent."""
    if not _BEFORE.search(_SPACING.sub(" ", text[:start]).rstrip()):
        return False
    word_follows = re.match(r"\s+[A-Za-z]{2,}\b", text[end:])  # "... is the answer"
    return bool(word_follows or _AFTER.match(_SPACING.sub("", text[end:])))


def writes(text: str, answer: str) -> bool:
    """Whether `text` writes `answer` standing alone (module doc)."""
    return any(_stands_alone(text, m.start(), m.end()) for m in _pattern(answer).finditer(text))


def first_writing(steps: Sequence[str], answer: str) -> int | None:
    """The index of the first step that writes `answer` standing alone, None where none does."""
    return next((i for i, step in enumerate(steps) if writes(step, answer)), None)


def last_box(steps: Sequence[str]) -> tuple[int, str] | None:
    """(step index, content) of the chain's last `\\boxed{}` (the answer it commits to), None without one."""
    from prm_factory.schemas.external_chains import boxed_content

    return next(
        ((i, box) for i in reversed(range(len(steps))) if (box := boxed_content(steps[i])) is not None), None
    )
