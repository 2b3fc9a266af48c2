"""Stop a call running in its caller's own thread at its deadline: one watchdog thread raises `PastDeadline`
in it (verifiers.math.bounded.interrupt), never inside a SymPy stream, which ends at the deadline itself.

Why not a labelling thread the caller waits on: handing each response to another thread and back cost a
GSM8K-sized response about a sixth of its time (two wake-ups, and the work moved to another core's cold
caches: label 1.38 ms a chain, the labelling thread 1.51, the caller's own thread 1.32), and a response past
its deadline kept that thread busy until its pure-Python readings ended. Here the call is stopped there.

The watchdog wakes only at deadlines, not per call: a call with a later deadline than the one it sleeps
towards is picked up when it wakes. What it cannot stop: C code (a huge integer power, a regex) runs to
its end before the exception lands, as it held the waiting caller in a labelling thread too.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from contextvars import copy_context
from typing import Any

from prm_factory.verifiers.math.bounded import can_interrupt, interrupt, settle

RETRY_S = 0.002
"""How soon the watchdog tries again when the thread was inside a SymPy stream at its deadline."""


class PastDeadline(BaseException):
    """Raised into a call past its deadline. A BaseException, so no check's `except Exception` (which makes
    a broken check `unverifiable`) swallows it and goes on past the deadline."""


class Watchdog:
    """One daemon thread, started on first use, that interrupts calls past their deadlines.

    What the watched thread runs here is C-level only where the exception may land: a plain Lock (a
    Condition's or an Event's Python-level `__enter__` could take its lock and be cut before the `with`
    holds it, which deadlocked a stress run) and a SimpleQueue to wake the watchdog."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wakeups: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._due: dict[int, float] = {}  # thread id -> deadline (time.time())
        self._wake_at: float | None = None  # when the watchdog wakes next (None: only when woken)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def start(self) -> None:
        """Start the watchdog's thread (idempotent; `run_until` does it before arming)."""
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="reward-watchdog", daemon=True)
                self._thread.start()

    def arm(self, thread_id: int, deadline: float) -> None:
        """Stop the call that thread `thread_id` runs now at `deadline` (time.time())."""
        with self._lock:
            self._due[thread_id] = deadline
            wake = self._wake_at is None or deadline < self._wake_at
            if wake:
                self._wake_at = deadline
        if wake:  # otherwise it wakes before this deadline anyway, and then sleeps until it
            self._wakeups.put(None)

    def release(self, thread_id: int) -> None:
        """The call in `thread_id` ended: no exception lands in it after this (idempotent)."""
        with self._lock:
            self._due.pop(thread_id, None)
        settle(thread_id)

    def _watch(self) -> None:
        while True:
            with self._lock:
                now = time.time()
                if self._wake_at is not None and now >= self._wake_at:
                    for thread_id, deadline in list(self._due.items()):
                        if deadline <= now and interrupt(thread_id, PastDeadline):
                            del self._due[thread_id]  # raised once; `release` settles it
                    late = any(d <= now for d in self._due.values())  # inside a stream: soon again
                    pending = [d for d in self._due.values() if d > now]
                    self._wake_at = now + RETRY_S if late else min(pending, default=None)
                wait = None if self._wake_at is None else max(0.0, self._wake_at - time.time())
            try:
                self._wakeups.get(timeout=wait)
            except queue.Empty:
                pass


WATCHDOG = Watchdog()


def run_until(deadline: float, function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in this thread, stopped by `PastDeadline` at `deadline` (time.time()). It runs in a
    copy of this thread's context, so a context variable it set and an interruption cut short before its
    reset stays there. No PastDeadline reaches the caller after the call returned."""
    WATCHDOG.start()
    thread_id = threading.get_ident()
    try:
        WATCHDOG.arm(thread_id, deadline)
        return copy_context().run(function, *args)
    finally:
        while True:  # one raised as the call ended may land in `release` itself: release again
            try:
                WATCHDOG.release(thread_id)
                break
            except PastDeadline:  # the call's result (or its own PastDeadline) stands
                pass


__all__ = ["WATCHDOG", "PastDeadline", "Watchdog", "can_interrupt", "run_until"]
