"""Quadratic-formula lines: one name's `\\pm` value displayed line after line is one chain of equalities.

Chains work the quadratic formula one displayed line at a time, each line restating the name:
`\\[a = \\frac{108 \\pm \\sqrt{(-108)^2 - 4(61)(-225)}}{122}\\] \\[a = \\frac{108 \\pm \\sqrt{11664 +
55425}}{122}\\]`. Each line alone is a definition (`a = ...`), so no claim is read, and a wrong square or
product between the lines goes unjudged. Two displays of the same step with nothing but spacing or a comma
between them, each `name = value` with the same single-letter name and a `\\pm` in both values, are read as
one display `name = value1 = value2`: the second line restates the first. Only with `\\pm` on both lines:
without it two lines may list two roots (`x = \\frac{1 + \\sqrt5}{2}`, `x = \\frac{1 - \\sqrt5}{2}`), never a
restatement. The values' equality is then judged branch by branch (`symbolic.plus_minus_branches`).

A display that opens on `=` goes on with the expression above it: joined to the display before when only
spacing stands between (`continued_lines`), or, after a few words of prose or at the head of the next step,
given that display's last side as its own first (`continued_across`).
"""

from __future__ import annotations

import re

_DISPLAY = re.compile(r"\\\[(?P<a>.*?)\\\]|\$\$(?P<b>.*?)\$\$", re.DOTALL)
_VALUE = re.compile(r"\s*(?P<name>[A-Za-z])\s*=(?P<value>[^=]*)$", re.DOTALL)
_BETWEEN = re.compile(r"[\s,.]*")


def _pm_value(body: str) -> tuple[str, str] | None:
    """(name, value) of a display `name = value` whose value has one `\\pm`."""
    match = _VALUE.match(body)
    if match is None or match.group("value").count("\\pm") != 1 or "\\mp" in body:
        return None
    return match.group("name"), match.group("value").strip().rstrip(",.").strip()


def joined_plus_minus_lines(step: str) -> str:
    """The step with consecutive displayed `\\pm` values of one name joined into one chain.

    >>> joined_plus_minus_lines(r"\\[x = \\frac{2 \\pm \\sqrt{4}}{2}\\] \\[x = \\frac{2 \\pm 2}{2}\\]")
    '\\\\[x = \\\\frac{2 \\\\pm \\\\sqrt{4}}{2} = \\\\frac{2 \\\\pm 2}{2}\\\\]'
    """
    if "\\pm" not in step:
        return step
    out: list[str] = []
    last_end = 0
    run: tuple[str, list[str], str] | None = None  # (name, values, text) of the displays being joined
    run_start = 0
    for match in _DISPLAY.finditer(step):
        body = match.group("a") if match.group("a") is not None else match.group("b")
        found = _pm_value(body)
        continues = (
            run is not None
            and found is not None
            and found[0] == run[0]
            and _BETWEEN.fullmatch(step[last_end : match.start()])
        )
        if run is not None and continues:
            run[1].append(found[1])  # type: ignore[index]
            last_end = match.end()
            continue
        if run is not None:
            out.append(_chain(run))
            out.append(step[last_end : match.start()])
        else:
            out.append(step[run_start : match.start()])
        run = (found[0], [found[1]], match.group(0)) if found is not None else None
        if run is None:
            out.append(match.group(0))
        last_end = run_start = match.end()
    if run is not None:
        out.append(_chain(run))
    out.append(step[last_end:])
    return "".join(out)


def _chain(run: tuple[str, list[str], str]) -> str:
    name, values, text = run
    if len(values) == 1:
        return text  # nothing joined: the display as written
    return f"\\[{name} = {' = '.join(values)}\\]"


# `\\[ A = B \\] \\[ = C \\]`, `$$ A $$ $$ = C $$`: a display that opens on `=` goes on with the one before it
# (only spacing between); in an aligned block, `A &= B \\\\ &= C` is one chain too
_CONTINUED_DISPLAY = re.compile(r"(?:\\\]|\$\$)\s*(?:\\\[|\$\$)(?=\s*(?:&\s*)?=)")
# (a line opening on an operator, `&\\quad + 1 - ...`, goes on with the expression above: never cut there)
_CONTINUED_ALIGN = re.compile(r"\\\\\s*&\s*(?:\\q?quad\s*|\\[,;:! ]\s*)*(?=[-+=]|\\cdot|\\times)")
_ALIGN_MARK = re.compile(r"&(?=\s*=)")
_ALIGNED = re.compile(r"\\begin\{(align\*?|aligned|eqnarray\*?)\}.*?\\end\{\1\}", re.DOTALL)


def continued_lines(step: str) -> str:
    """The step with displayed lines that open on `=` joined to the line before, as one chain of equalities
    (each line restates the expression above it: a wrong product between the lines is a claim).

    >>> continued_lines(r"\\[T = 24 \\times 11111\\] \\[= 266664\\]")
    '\\\\[T = 24 \\\\times 11111 = 266664\\\\]'
    >>> continued_lines(r"\\begin{align*} x &= 2 + 3 \\\\ &= 5 \\end{align*}")
    '\\\\[ x = 2 + 3 = 5 \\\\]'
    """
    if "=" not in step:
        return step
    step = _CONTINUED_DISPLAY.sub(" ", step)
    return _ALIGNED.sub(_aligned_as_display, step)


def _aligned_as_display(match: re.Match[str]) -> str:
    """An aligned block as one display (a nested `aligned` as its body), its `&=` lines joined."""
    name = match.group(1)
    body = match.group()[len(f"\\begin{{{name}}}") : -len(f"\\end{{{name}}}")]
    body = _ALIGN_MARK.sub("", _CONTINUED_ALIGN.sub("", body))
    return f" {body} " if name == "aligned" else f"\\[{body}\\]"


# a display's body, for `continued_across`: `\\[ ... \\]` or `$$ ... $$` (an aligned block is joined into
# `\\[ ... \\]` by `continued_lines` first)
_OPENS_ON_EQUALS = re.compile(r"\s*(?:&\s*)?=(?!=)")
# any math between two displays: then the `=` may continue that math, not the display
_INLINE_MATH = re.compile(r"\\\(|\\\[|\$|\\begin\{")
# words that make the next display a correction, a case, a part or another source, not the same expression
# going on
_NOT_GOING_ON = re.compile(
    r"\b(?:wait|wrong|mistake|error|incorrect|recheck\w*|correct\w*|recomput\w*|recalculat\w*|actually"
    r"|instead|oops|again|case|if|when|suppose|assum\w*|substitut\w*|plug\w*|similarly|likewise|other"
    r"|another|alternative\w*|numerator|denominator|left|right|side|part|terms? of|for)\b",
    re.IGNORECASE,
)
# the expression a display ends on: its last side, with no relation but `=` and no list in it
_NOT_ONE_EXPRESSION = re.compile(
    r"[<>,;]|\\(?:[lg]eq?|[lg]t|neq?|approx|sim|equiv|pm|mp|Rightarrow|implies|iff|to|text|quad|qquad)"
    r"(?![A-Za-z])|\\\\|&"
)
_MAX_PROSE = 200


def _top_level_sides(body: str) -> list[str]:
    """`body` cut at its `=` signs outside brackets and braces."""
    sides, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif ch == "=" and depth == 0 and body[i - 1 : i] not in ("<", ">", "!", "\\"):
            sides.append(body[start:i])
            start = i + 1
    sides.append(body[start:])
    return sides


def _last_expression(body: str) -> str | None:
    """The expression a display ends on (`A = B` -> `B`), or None when its last side is no one expression
    (a relation other than `=`, a list, an empty side) or it is no chain at all (a single expression with
    no `=` is kept: `\\[ (x + 1)^2 - 4 \\]` then `\\[ = x^2 + 2x - 3 \\]`)."""
    last = _top_level_sides(body)[-1].strip().rstrip(",.").strip()
    if not last or _NOT_ONE_EXPRESSION.search(last) or "\\\\" in body:
        return None
    return last


def continued_across(steps: list[str]) -> list[str]:
    """Displays that open on `=` after a few words of prose (`\\[ A = B \\] Simplifying the terms: \\[ = C
    \\]`), or at the head of the next step, continue the expression the display before them ends on: they
    are rewritten as `\\[ B = C \\]`, so that the step claims `B = C`. Only where nothing but prose stands
    between (no other math, at most a short sentence, no word of a correction, a case or another part),
    and the display before ends on one expression. Displays with only spacing between are joined already
    (`continued_lines`)."""
    out = list(steps)
    last: tuple[int, int, str] | None = None  # (step, end offset, body) of the last display seen
    for index, step in enumerate(steps):
        pieces: list[str] = []
        cursor = 0
        for match in _DISPLAY.finditer(step):
            body = match.group("a") if match.group("a") is not None else match.group("b")
            if last is not None and _OPENS_ON_EQUALS.match(body):
                between = _prose_between(steps, last, index, match.start())
                expression = _last_expression(last[2])
                if between is not None and expression is not None:
                    opener = "\\[" if match.group("a") is not None else "$$"
                    closer = "\\]" if opener == "\\[" else "$$"
                    rest = _OPENS_ON_EQUALS.sub("", body, count=1).lstrip()
                    pieces.append(step[cursor : match.start()])
                    pieces.append(f"{opener} {expression} = {rest}{closer}")
                    cursor = match.end()
            last = (index, match.end(), body)
        if cursor:
            pieces.append(step[cursor:])
            out[index] = "".join(pieces)
        if last is not None and last[0] != index:
            last = None  # a step with no display breaks the thread
        elif last is not None and _INLINE_MATH.search(step[last[1] :]):
            last = None  # math after the last display: the next step's `=` may continue that math
    return out


def _prose_between(steps: list[str], last: tuple[int, int, str], index: int, start: int) -> str | None:
    """The words between the last display and a display at `start` of step `index`, or None when more
    than prose stands there (math, a correction, too many words) or more than one step lies between."""
    if last[0] == index:
        between = steps[index][last[1] : start]
    elif last[0] == index - 1:
        between = steps[last[0]][last[1] :] + "\n" + steps[index][:start]
    else:
        return None
    if _INLINE_MATH.search(between) or len(between) > _MAX_PROSE or _NOT_GOING_ON.search(between):
        return None
    return between
