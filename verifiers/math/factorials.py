"""Factorials of written numbers inside math: `5!` is 120, so a claim about it can be judged.

The claim readers stop at `!` (in prose it ends a sentence; after a name or a bracket its meaning depends
on what is inside), so `\\binom{5}{2} = \\frac{5!}{2!3!} = 10` was never judged. Inside a math segment
(`\\( \\)`, `\\[ \\]`, `$$ $$`, `$ $`) a whole number of at most two digits followed by one `!` has one
meaning, and is written out as its value in brackets before the claims are read:
`\\frac{5!}{2!3!}` -> `\\frac{(120)}{(2)(6)}`, and so is a written sum or difference in brackets,
`(13-4)!` -> `(362880)`. Left as written (so still unjudged): a factorial of a name or of any other
bracket (`n!`, `(n-4)!`), a double factorial (`5!!`), a number that is part of a decimal, a power or a
subscript, and anything outside math (`That's 3!` in prose).
"""

from __future__ import annotations

import math
import re

# math segments; a `$ ... $` holding words of prose is money or text, not math
_SEGMENT = re.compile(r"\\\((?:.|\n)*?\\\)|\\\[(?:.|\n)*?\\\]|\$\$(?:.|\n)*?\$\$|(?<!\\)\$[^$]+?(?<!\\)\$")
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
# a written whole number, not part of a name, decimal, command argument of a power or subscript
_FACTORIAL = re.compile(r"(?<![\d.^_])(\d{1,2})!(?!!)")
# a name right before the number (`x9!`), unless it ends a command (`\\cdot9!`); a power or subscript
_NAME_BEFORE = re.compile(r"(?<!\\)(?<![A-Za-z])[A-Za-z]+$|[\^_]\s*\{?$")
_LARGEST = 30


# a difference or sum of two written numbers in brackets (`(13-4)!`, as `\\binom` is written out)
_BRACKET_FACTORIAL = re.compile(r"(?:\\left)?\(\s*(\d{1,2})\s*([-+])\s*(\d{1,2})\s*(?:\\right)?\)!(?!!)")


def _bracket_value(match: re.Match[str]) -> str:
    a, b = int(match.group(1)), int(match.group(3))
    n = a - b if match.group(2) == "-" else a + b
    return f"({math.factorial(n)})" if 0 <= n <= _LARGEST else match.group(0)


def _written_out(segment: str) -> str:
    def value(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if _NAME_BEFORE.search(segment[max(0, match.start() - 12) : match.start()]):
            return match.group(0)
        return f"({math.factorial(n)})" if n <= _LARGEST else match.group(0)

    return _FACTORIAL.sub(value, _BRACKET_FACTORIAL.sub(_bracket_value, segment))


def factorials_written_out(step: str) -> str:
    """The step with each factorial of a written number inside math replaced by its value in brackets.

    >>> factorials_written_out(r"so \\( \\frac{5!}{2!3!} = 10 \\) ways. That's 3!")
    "so \\\\( \\\\frac{(120)}{(2)(6)} = 10 \\\\) ways. That's 3!"
    """
    if "!" not in step:
        return step

    def segment(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("$") and not text.startswith("$$") and _PROSE.search(text):
            return text
        return _written_out(text)

    return _SEGMENT.sub(segment, step)
