"""The eval sets `prm-factory eval` reads, each with its declared shape: the fields a row of it carries.

`--kind` names the set. Left at `auto`, a folder is chain splits (ProcessBench ships one file per split) and
a file is the one kind whose declared shape its rows have: every JSON object row is matched against every
shape, and exactly one kind must be matched (rows that match none are left to that kind's reader, which
reports them as rejected rows). No row matching, or rows matching two kinds, is an error that names the
shapes and asks for `--kind`; no first-row guess, no precedence between kinds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class EvalKind(StrEnum):
    """Which eval set a file is; `auto` tells it from its declared shape (`kind_of`)."""

    auto = "auto"
    chains = "chains"  # ProcessBench / PRM800K-shape chains with gold first errors or step ratings
    answer_pairs = "answer-pairs"  # {predicted, reference, equivalent}
    math_outputs = "math-outputs"  # {completion, reference, equivalent}
    claim_steps = "claim-steps"  # {step, has_false_claim, claims}


@dataclass(frozen=True)
class Shape:
    """One row shape of an eval set: its name and the fields every row of that shape carries."""

    kind: EvalKind
    name: str
    fields: frozenset[str]

    def matches(self, row: dict) -> bool:
        return self.fields <= row.keys()

    def describe(self) -> str:
        return f"{self.name} ({', '.join(sorted(self.fields))})"


SHAPES = (
    Shape(EvalKind.chains, "chains, ProcessBench", frozenset({"steps"})),
    Shape(EvalKind.chains, "chains, PRM800K", frozenset({"question", "label"})),
    Shape(EvalKind.answer_pairs, "answer-pairs", frozenset({"predicted", "reference", "equivalent"})),
    Shape(EvalKind.math_outputs, "math-outputs", frozenset({"completion", "reference", "equivalent"})),
    Shape(EvalKind.claim_steps, "claim-steps", frozenset({"step", "has_false_claim"})),
)
"""The declared shapes, one place: a new eval set adds its shape here and its branch in `eval`."""


class UnknownShape(ValueError):
    """A file whose rows match no declared shape, or the shapes of more than one kind."""


def kind_of(path: Path) -> EvalKind:
    """The eval set `path` holds, by declared shape (module docstring); raises UnknownShape."""
    if path.is_dir():
        return EvalKind.chains
    matched: dict[EvalKind, int] = {}  # kind -> the first row (1-based) that matched it
    rows = 0
    for number, row in _object_rows(path):
        rows += 1
        for shape in SHAPES:
            if shape.matches(row):
                matched.setdefault(shape.kind, number)
    if len(matched) == 1:
        return next(iter(matched))
    if len(matched) > 1:
        where = ", ".join(f"{kind.value} (row {number})" for kind, number in matched.items())
        found = f"its rows have the shapes of more than one eval set: {where}"
    else:
        found = "no row has the fields of an eval set" if rows else "no row is a JSON object"
    raise UnknownShape(f"{path}: cannot tell which eval set this is ({found}); {shapes_help()}")


def shapes_help() -> str:
    """The shapes eval reads and the `--kind` values that name them, for an error message."""
    kinds = "|".join(k.value for k in EvalKind if k is not EvalKind.auto)
    return f"eval reads {'; '.join(s.describe() for s in SHAPES)}; name one with --kind {kinds}"


def _object_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(row number, row) for every JSON object of a file: a `.json` list's items, else one per line. A line
    that does not parse is skipped: it is the reader's to report, not a reason to misread the file."""
    if path.suffix == ".json":
        try:
            rows = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            pass  # perhaps one object per line under a .json name: read it line by line
        else:
            for number, row in enumerate(rows if isinstance(rows, list) else [rows], 1):
                if isinstance(row, dict):
                    yield number, row
            return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(row, dict):
                yield number, row
