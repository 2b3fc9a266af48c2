"""A rejected input row: the one shape every problem and chain loader uses for a row it cannot use.

A bad input row never stops a run. The loader skips it and returns a `RejectedRow` with the file, the line
(1-based; the item number in a JSON list), the field that was wrong and the reason, and the run records it
in the dataset's `rejections` table. `field` is `WHOLE_LINE` when the row as a whole is unusable (not JSON,
not an object, neither accepted shape).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WHOLE_LINE = "<line>"


@dataclass(frozen=True)
class RejectedRow:
    file: str
    line: int
    field: str
    reason: str


class RowError(ValueError):
    """Raised while parsing a row: which field is wrong and why. The loader turns it into a `RejectedRow`."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason

    def at(self, file: str, line: int) -> RejectedRow:
        return RejectedRow(file, line, self.field, self.reason)


def read_text_lines(path: str | Path) -> Iterator[tuple[int, str | RejectedRow]]:
    """Each line of a text file with its 1-based number, decoded as UTF-8 on its own.

    Reading bytes line by line means one bad byte costs one row, not the file: a line that is not valid
    UTF-8 comes back as a `RejectedRow` naming the byte offset, never as a traceback and never silently
    repaired into U+FFFD. Line ends are stripped.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as handle:
    ...     _ = handle.write(b'{"a": 1}\\n{"a": "\\xff"}\\n')
    >>> [(n, type(x).__name__) for n, x in read_text_lines(handle.name)]
    [(1, 'str'), (2, 'RejectedRow')]
    >>> os.unlink(handle.name)
    """
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                yield (
                    number,
                    RejectedRow(
                        str(path), number, WHOLE_LINE, f"not valid UTF-8 (byte {err.start} of the line)"
                    ),
                )


def read_json_lines(path: str | Path) -> tuple[list[tuple[int, Any]], list[RejectedRow]]:
    """The parsed JSON value of each non-blank line with its number, and the lines that are not UTF-8 or
    not JSON as `RejectedRow`s (`read_text_lines` decides the bytes, this the syntax)."""
    rows: list[tuple[int, Any]] = []
    rejected: list[RejectedRow] = []
    for number, line in read_text_lines(path):
        if isinstance(line, RejectedRow):
            rejected.append(line)
        elif line.strip():
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                rejected.append(RejectedRow(str(path), number, WHOLE_LINE, f"invalid JSON: {exc.msg}"))
    return rows, rejected
