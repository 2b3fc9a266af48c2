"""Which problems a run labels: the configured slice, or (`problems.skip_labeled`) the next unlabeled ones.

Scheduled runs of one config would otherwise label the same `offset .. offset+limit` slice every hour. With
`skip_labeled`, the candidates are every valid problem from `offset` on, minus those that already have chains
in the dataset, and the first `limit` of what is left are taken: each run grows the dataset with fresh
problems, and a run killed before committing picks the same problems again (its chains are not visible),
so resume still finds its cached stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query


def labeled_problem_ids(dataset_root: str | Path, except_parent: str | None = None) -> set[str]:
    """Problems with at least one chain in the latest dataset version (only committed runs are visible).

    `except_parent` leaves out chains of that sharded run's own shards: a shard started after its siblings
    committed must still pick the problems the whole logical run picked (flows/shards.py).
    """
    dataset = Dataset(str(dataset_root))
    if not dataset.exists():
        return set()
    if except_parent is None:
        sql = "SELECT DISTINCT problem_id FROM chains"
    else:
        quoted = except_parent.replace("'", "''")
        sql = (
            "SELECT DISTINCT problem_id FROM chains JOIN runs USING (run_id) "
            f"WHERE runs.parent_run_id IS DISTINCT FROM '{quoted}'"
        )
    return set(query(dataset, sql)["problem_id"].to_pylist())


def pick_fresh(
    candidates: Sequence[Problem], rejected: Sequence[RejectedRow], labeled: set[str], limit: int
) -> tuple[list[Problem], list[RejectedRow]]:
    """The first `limit` candidates not in `labeled`, and the rejected rows met before the last one picked.

    Rejected rows past the last picked problem belong to a later run's slice; keeping them out means a run
    reports the bad rows of what it read, not of the whole file.

    >>> p = [Problem(f"id{i}", "s", "math", "q", source_line=i + 1) for i in range(4)]
    >>> picked, bad = pick_fresh(p, [RejectedRow("f", 3, "answer", "x")], {"id0", "id1"}, 1)
    >>> [x.problem_id for x in picked], [r.line for r in bad]
    (['id2'], [3])
    """
    picked = [problem for problem in candidates if problem.problem_id not in labeled][:limit]
    if not picked:
        return [], list(rejected)
    last_line = max(problem.source_line or 0 for problem in picked)
    return picked, [row for row in rejected if row.line <= last_line]
