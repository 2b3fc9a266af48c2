"""Stage events of a run, for operators: one greppable log line per event, and optional progress sinks.

Every line starts with `prm-run` and is `key=value` pairs, so `grep 'prm-run.*event=failed'` or
`grep 'stage=rollouts'` over a worker's log finds what an operator needs without parsing prose:

    prm-run run_id=3f2a9c0d1e2b4a5f stage=sample event=done seconds=41.2 cached=false

A progress sink (the CLI's rich progress bars) receives the same events in-process; sinks are registered
with `progress_sink(...)` around a run and are optional, so the flow never depends on a terminal.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class ProgressSink(Protocol):
    def started(self, stage: str) -> None: ...

    def advanced(self, stage: str, done: int, total: int) -> None: ...

    def finished(self, stage: str, seconds: float, cached: bool) -> None: ...


_SINKS: list[ProgressSink] = []
_LOCK = threading.Lock()


@contextmanager
def progress_sink(sink: ProgressSink) -> Iterator[ProgressSink]:
    """Send stage events to `sink` while the block runs (flows run in this process from the CLI)."""
    with _LOCK:
        _SINKS.append(sink)
    try:
        yield sink
    finally:
        with _LOCK:
            _SINKS.remove(sink)


def _sinks() -> list[ProgressSink]:
    with _LOCK:
        return list(_SINKS)


def event_line(run_id: str, stage: str, event: str, **fields: object) -> str:
    """`prm-run run_id=.. stage=.. event=.. k=v ...`; values with spaces are quoted."""
    parts = [f"run_id={run_id}", f"stage={stage}", f"event={event}"]
    for key, value in fields.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        parts.append(f'{key}="{text}"' if (" " in text or not text) else f"{key}={text}")
    return "prm-run " + " ".join(parts)


class StageEvents:
    """Emits one run's stage events to the run logger and to every registered progress sink."""

    def __init__(self, run_id: str, logger: logging.Logger | logging.LoggerAdapter) -> None:
        self.run_id = run_id
        self.logger = logger

    def started(self, stage: str) -> None:
        self.logger.info(event_line(self.run_id, stage, "start"))
        for sink in _sinks():
            sink.started(stage)

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.logger.info(event_line(self.run_id, stage, "progress", done=done, total=total))
        for sink in _sinks():
            sink.advanced(stage, done, total)

    def finished(self, stage: str, seconds: float, cached: bool = False) -> None:
        self.logger.info(event_line(self.run_id, stage, "done", seconds=f"{seconds:.2f}", cached=cached))
        for sink in _sinks():
            sink.finished(stage, seconds, cached)

    def paused(self, stage: str, seconds: float) -> None:
        """A piece (chunk) of `stage` ended, `seconds` its time so far: sinks that show a clock stop it.
        Not logged: a chunk's boundary is no operator event (the `done` line has the stage's time)."""
        for sink in _sinks():
            if callable(getattr(sink, "paused", None)):
                sink.paused(stage, seconds)  # type: ignore[attr-defined]

    def resumed(self, stage: str) -> None:
        """A further piece of `stage` began (see `paused`)."""
        for sink in _sinks():
            if callable(getattr(sink, "resumed", None)):
                sink.resumed(stage)  # type: ignore[attr-defined]

    def failed(self, stage: str, error: str) -> None:
        self.logger.error(event_line(self.run_id, stage, "failed", error=error))
