"""Rich progress bars for a run in the CLI: one line per stage, a bar for rollouts (the long stage).

It is a progress sink for flows/observe.py, so the flow stays terminal-free and the same events also go to
the log as greppable `prm-run` lines. A stage's clock shows the stage's own time: it stops when the stage
ends (at the seconds its `done` event reports, the sum over its chunks) and, where the flow reports the
pauses between chunks (`paused` / `resumed`), between them too.

`output_to_log` keeps the terminal for the bars and the summary: while a run is under way, everything else
the process and its children (vLLM's EngineCore and worker, the Prefect server) write to stdout or stderr
goes to the run's log file. `quiet_output` does the same for commands without bars (`label`, `relabel`).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.text import Text


class StageTimeColumn(ProgressColumn):
    """A stage's own time, not the wall time since it first started: a streaming run starts a stage in its
    first chunk and ends it after the last, so that span can be minutes for a stage of one second.

    Task fields (set by RichStageProgress): `seconds` once the stage ended (frozen there), else `worked`
    (seconds of its finished pieces) plus the running piece since `since` (None while paused).
    """

    def render(self, task: Task) -> Text:
        seconds = stage_seconds(task.fields, task.get_time())
        if seconds is None:
            return Text("-:--:--", style="progress.elapsed")
        return Text(str(timedelta(seconds=max(0, int(seconds)))), style="progress.elapsed")


def stage_seconds(fields: dict, now: float) -> float | None:
    """The time a stage's clock shows at `now` (see StageTimeColumn); None before it started."""
    if fields.get("seconds") is not None:
        return float(fields["seconds"])
    if "worked" not in fields:
        return None
    since = fields.get("since")
    return float(fields["worked"]) + (now - since if since is not None else 0.0)


class RichStageProgress:
    """Shows each stage as a spinner while it runs and a finished bar (with `cached` when reused)."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            StageTimeColumn(),
            console=console,
            transient=False,
            # writes to sys.stdout/stderr belong to the log file, not above the bars
            redirect_stdout=False,
            redirect_stderr=False,
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
                now = self.progress.get_time()
                self._tasks[stage] = self.progress.add_task(stage, total=None, worked=0.0, since=now)
            return self._tasks[stage]

    def _fields(self, stage: str) -> dict:
        return self.progress.tasks[self._task(stage)].fields

    def started(self, stage: str) -> None:
        self._task(stage)

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.progress.update(self._task(stage), completed=done, total=total)

    def paused(self, stage: str, seconds: float) -> None:
        """A piece (chunk) of `stage` ended; `seconds` is the stage's time so far. The clock waits."""
        self.progress.update(self._task(stage), worked=seconds, since=None)

    def resumed(self, stage: str) -> None:
        """A further piece of `stage` began: its clock runs on from where it waited."""
        if self._fields(stage).get("since") is None:
            self.progress.update(self._task(stage), since=self.progress.get_time())

    def finished(self, stage: str, seconds: float, cached: bool) -> None:
        task = self._task(stage)
        label = f"{stage} (cached)" if cached else stage
        total = self.progress.tasks[task].total or 1
        self.progress.update(task, description=label, completed=total, total=total, seconds=seconds)


LOG_DIR = "_logs"  # under the dataset root; the underscore keeps it out of the record kinds


def run_log_path(dataset_root: Path) -> Path:
    """`<dataset root>/_logs/<UTC time>-<pid>.log`, a fresh name per `prm-factory run`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(dataset_root) / LOG_DIR / f"{stamp}-{os.getpid()}.log"


@contextmanager
def output_to_log(log_path: Path) -> Iterator[TextIO]:
    """Point file descriptors 1 and 2 at `log_path` while the block runs, and yield a stream on the original
    stdout for the progress bars. Descriptors, not `sys.stdout`: vLLM's EngineCore and worker are spawned
    children that write to the descriptors they inherit. Both are restored on the way out, errors included.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved_out, saved_err = os.dup(1), os.dup(2)  # not inheritable: children never get the terminal
    terminal = os.fdopen(os.dup(saved_out), "w", buffering=1, encoding=sys.stdout.encoding or "utf-8")
    try:
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        yield terminal
    finally:
        for stream in (sys.stdout, sys.stderr, terminal):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        for fd in (saved_out, saved_err, log_fd):
            os.close(fd)
        terminal.close()


_EVENT = re.compile(r"prm-run .*")


def logged_events(log_path: Path, events: tuple[str, ...]) -> list[str]:
    """The run's `prm-run ... event=E` lines in the log whose event is one of `events`, in order."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        match = _EVENT.search(line)
        if match and any(f" event={event}" in match.group(0) for event in events):
            found.append(match.group(0).rstrip())
    return found


@contextmanager
def quiet_output(dataset_root: Path) -> Iterator[Path]:
    """`prm-factory run`'s quiet terminal for a command without bars (`label`, `relabel`): Prefect's INFO
    lines, vLLM's and the libraries' output go to a fresh log under the dataset root (yielded); on an error
    the log's path is printed, on stderr, once the terminal is back. Prefect's and vLLM's loggers are then
    turned down, so the temporary server's and the engine's shutdown notes at exit stay off it too."""
    from prm_factory.config.runtime import apply_quiet_defaults

    apply_quiet_defaults()
    log_path = run_log_path(dataset_root)
    try:
        with output_to_log(log_path):
            yield log_path
    except BaseException:
        Console(stderr=True).print(f"log: {log_path}", soft_wrap=True, highlight=False)
        raise
    finally:
        logging.getLogger("prefect").setLevel(logging.WARNING)
        logging.getLogger("vllm").setLevel(logging.ERROR)
