"""Quadratic-formula lines: one name's `\\pm` value displayed line after line is one chain of equalities.

Chains work the quadratic formula one displayed line at a time, each line restating the name:
`\\[a = \\frac{108 \\pm \\sqrt{(-108)^2 - 4(61)(-225)}}{122}\\] \\[a = \\frac{108 \\pm \\sqrt{11664 +
55425}}{122}\\]`. Each line alone is a definition (`a = ...`), so no claim is read, and a wrong square or
product between the lines goes unjudged. Two displays of the same step with nothing but spacing or a comma
between them, each `name = value` with the same single-letter name and a `\\pm` in both values, are read as
one display `name = value1 = value2`: the second line restates the first. Only with `\\pm` on both lines:
without it two lines may list two roots (`x = \\frac{1 + \\sqrt5}{2}`, `x = \\frac{1 - \\sqrt5}{2}`), never a
restatement. The values' equality is then judged branch by branch (`symbolic.plus_minus_branches`).
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
