"""Rich progress bars for a run in the CLI: one line per stage, a bar for rollouts (the long stage).

It is a progress sink for flows/observe.py, so the flow stays terminal-free and the same events also go to
the log as greppable `prm-run` lines.
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


class RichStageProgress:
    """Shows each stage as a spinner while it runs and a finished bar (with `cached` when reused)."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RichStageProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _task(self, stage: str) -> TaskID:
        with self._lock:
            if stage not in self._tasks:
                self._tasks[stage] = self.progress.add_task(stage, total=None)
            return self._tasks[stage]

    def started(self, stage: str) -> None:
        self._task(stage)

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.progress.update(self._task(stage), completed=done, total=total)

    def finished(self, stage: str, seconds: float, cached: bool) -> None:
        task = self._task(stage)
        label = f"{stage} (cached)" if cached else stage
        total = self.progress.tasks[task].total or 1
        self.progress.update(task, description=label, completed=total, total=total)
