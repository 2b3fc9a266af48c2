"""A rejected input row: the one shape every problem and chain loader uses for a row it cannot use.

A bad input row never stops a run. The loader skips it and returns a `RejectedRow` with the file, the line
(1-based; the item number in a JSON list), the field that was wrong and the reason, and the run records it
in the dataset's `rejections` table. `field` is `WHOLE_LINE` when the row as a whole is unusable (not JSON,
not an object, neither accepted shape).
"""

from __future__ import annotations

from dataclasses import dataclass

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
