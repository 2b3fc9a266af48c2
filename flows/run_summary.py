"""What a generation run returns (`RunSummary`) and how a failed one travels (`RunFailed`).

Kept apart from the flow so the CLI's printer (prm_factory/summary.py) and other flows read it without
importing a flow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prm_factory.labels.tally import RunTally
from prm_factory.schemas.records import Rejection


@dataclass
class RunSummary:
    run_id: str
    domain: str
    dataset_root: str
    version: int | None
    status: str
    error: str
    problems: int
    chains: int
    steps: int
    rejected: list[Rejection]
    chain_accuracy: float
    stage_seconds: dict[str, float]
    rollout_tokens: int
    tally: RunTally = field(default_factory=RunTally)  # totals over the committed rows (none when failed)
    cached_stages: list[str] = field(default_factory=list)
    engine: dict = field(default_factory=dict)  # the engine's host-dependent settings and why (runs.engine)
    parent_run_id: str | None = None  # a shard of a sharded run: its logical run and which shard (I/N)
    shard: str | None = None


class RunFailed(RuntimeError):
    """A run that failed and recorded itself; raised by a direct `generation_run` call, with its summary."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message, summary)  # both in args, so the exception pickles with Prefect results
        self.summary = summary

    def __str__(self) -> str:
        return str(self.args[0])
