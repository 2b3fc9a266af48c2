"""Split a chain's text into steps, keeping each step's character span in the original text.

Spans matter: a rollout continues from `text[:step.end]`, and a reader can find the step in the
chain again. Whitespace around a step is not part of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

SegmentMode = Literal["auto", "line", "blank_line", "step_marker"]

_STEP_MARKER = re.compile(r"(?im)^[ \t]*(?:\*\*)?step[ \t]*\d+[ \t]*[:.)]")
_BLANK_LINE = re.compile(r"\r?\n[ \t]*\r?\n")


@dataclass(frozen=True)
class StepSpan:
    index: int
    text: str
    start: int
    end: int


def _spans_between(text: str, cuts: list[int]) -> list[tuple[int, int]]:
    bounds = [0, *cuts, len(text)]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _strip_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return None
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def _cuts(text: str, mode: SegmentMode) -> list[int]:
    if mode == "line":
        return [m.end() for m in re.finditer(r"\n", text)]
    if mode == "blank_line":
        return [m.end() for m in _BLANK_LINE.finditer(text)]
    if mode == "step_marker":
        return [m.start() for m in _STEP_MARKER.finditer(text) if m.start() > 0]
    raise ValueError(f"unknown segmentation mode {mode!r}")


def resolve_mode(text: str, mode: SegmentMode) -> SegmentMode:
    """`auto` picks the coarsest structure the text has: "Step k:" markers, then paragraphs, then lines."""
    if mode != "auto":
        return mode
    if len(_STEP_MARKER.findall(text)) >= 2:
        return "step_marker"
    if len([p for p in _BLANK_LINE.split(text.strip()) if p.strip()]) >= 2:
        return "blank_line"
    return "line"


def segment(text: str, mode: SegmentMode = "auto") -> list[StepSpan]:
    """Steps of `text` with spans; empty pieces are dropped.

    >>> [s.text for s in segment("Step 1: 2+2=4\\nso\\nStep 2: The answer is 4")]
    ['Step 1: 2+2=4\\nso', 'Step 2: The answer is 4']
    """
    chosen = resolve_mode(text, mode)
    steps: list[StepSpan] = []
    for start, end in _spans_between(text, _cuts(text, chosen)):
        span = _strip_span(text, start, end)
        if span is not None:
            steps.append(StepSpan(len(steps), text[span[0] : span[1]], span[0], span[1]))
    return steps
