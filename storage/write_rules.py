"""When a written row replaces the stored row with the same key: one rule set for every writer of a table.

A dataset's keys are content hashes, so a run often writes a row whose key is already stored. By default the
stored row stays (insert-if-absent); three rules let the written row replace it, and every writer applies the
same ones: a Delta merge (storage/delta_io.merge_rows, SQL in DataFusion over `target` / `source`), the
locked append that merges only present keys (`insert_rows`), and relabel's one-pass rewrite
(storage/rewrite.py, SQL in DuckDB over `t` / `s`). `WriteRules.replaces` writes the rules once as a
predicate over whichever aliases and identifier quoting the engine takes.

>>> WriteRules(replace_when_changed="labeler").replaces("t", "s", {"labeler"}, quote=lambda c: f'"{c}"')
'(t."labeler" IS DISTINCT FROM s."labeler")'
>>> WriteRules().replaces("t", "s", set())
'FALSE'
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass


def sql_string(value: str) -> str:
    """A SQL string literal (DataFusion and DuckDB both double a quote inside one)."""
    return "'" + value.replace("'", "''") + "'"


def backquoted(column: str) -> str:
    """An identifier as a Delta merge predicate writes it."""
    return f"`{column}`"


@dataclass(frozen=True)
class WriteRules:
    """The rules under which a written row replaces a stored row with the same key.

    - `update_matched`: always (an upsert: a runs row, a tag).
    - `claim_from_uncommitted` (the run ids committed so far): when the stored row's `run_id` is neither
      among them nor the writing run's. Keys need not include the run id, so a run killed before its runs
      row must not keep rows a later run with another config would otherwise own.
    - `replace_when_changed` (a column, a labeler-identity hash): when the two rows' values differ, so new
      labels of the same chain replace the old ones in this version. Applies only where the table has the
      column (a table written before it was added keeps its rows).
    """

    update_matched: bool = False
    claim_from_uncommitted: tuple[str, ...] | None = None
    replace_when_changed: str | None = None

    @property
    def could_replace(self) -> bool:
        """Whether any rule can replace a stored row (if not, present keys need no merge at all)."""
        return (
            self.update_matched
            or self.claim_from_uncommitted is not None
            or self.replace_when_changed is not None
        )

    def replaces(
        self,
        target: str,
        source: str,
        target_columns: Collection[str],
        quote: Callable[[str], str] = backquoted,
    ) -> str:
        """SQL, over a matched pair of rows aliased `target` (stored) and `source` (written), that is true
        where the written row replaces the stored one: `TRUE`, `FALSE`, or the rules joined by OR."""
        if self.update_matched:
            return "TRUE"
        rules = []
        if self.claim_from_uncommitted is not None:
            run_id = quote("run_id")
            rule = f"{target}.{run_id} <> {source}.{run_id}"
            if self.claim_from_uncommitted:
                committed = ", ".join(map(sql_string, self.claim_from_uncommitted))
                rule += f" AND {target}.{run_id} NOT IN ({committed})"
            rules.append(f"({rule})")
        if self.replace_when_changed is not None and self.replace_when_changed in target_columns:
            column = quote(self.replace_when_changed)
            rules.append(f"({target}.{column} IS DISTINCT FROM {source}.{column})")
        return " OR ".join(rules) or "FALSE"
