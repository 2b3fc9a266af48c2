"""A time budget per response for the verifier's SymPy work: an explicit, opt-in reward option (`budget_s`).

Why: on competition math a response's SymPy items (LaTeX parsed by an ANTLR grammar, differences
simplified) take from milliseconds to the verifier's per-item limit each, so one 30-step response can take
seconds, and an RL step waits for its slowest reward. With a budget, the SymPy items of the response's step
checks that would start or finish after the budget is spent are not waited for: each such claim is
`unverifiable` (fail closed, never `incorrect`), as a claim past the verifier's own per-item limit is. The
pure-Python readings, the final answer's grading and the consensus are not cut. Without a budget (the
default) nothing changes: the verdicts are `label`'s (tests/reward/test_same_labels.py).

The budget follows the calling thread (a context variable set around the step checks), so one verifier and
its workers serve requests with and without one. A worker still busy when a budget runs out is not killed
(a restart costs more than most of the rest of a stream): it finishes its stream in a background thread,
under the verifier's own per-item limit, and becomes the pool's spare, while the response goes on with
the spare started before, or with none.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from prm_factory.verifiers.math.bounded import TIMED_OUT, WORKER_FAILED, BoundedPool, PoolConfig, _Worker

_DEADLINE: ContextVar[float | None] = ContextVar("prm_factory_reward_budget", default=None)


@contextmanager
def budget_until(deadline: float | None) -> Iterator[None]:
    """SymPy work in this thread stops at `deadline` (time.monotonic(); None: no budget)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class BudgetedPool(BoundedPool):
    """A BoundedPool whose streams also end at the calling thread's budget deadline (see the module
    docstring). Outside a budget it is the plain pool. `cut` counts the streams a budget ended; at most one
    worker drains a cut stream at a time (a second one cut meanwhile is killed), so a verifier holds at
    most its workers, one spare and one draining worker."""

    def __init__(self, config: PoolConfig | None = None) -> None:
        super().__init__(config or PoolConfig())
        self.cut = 0
        self._lock = threading.Lock()
        self._spare: _Worker | None = None
        self._spare_starting = False
        self._draining: _Worker | None = None
        self._closed = False

    def run_stream(self, target: str, payload: Any, n_items: int, item_timeout_s: float) -> Iterator[Any]:
        deadline = _DEADLINE.get()
        if deadline is None:
            yield from super().run_stream(target, payload, n_items, item_timeout_s)
        else:
            yield from self._until(deadline, target, payload, n_items, item_timeout_s)

    def _until(
        self, deadline: float, target: str, payload: Any, n_items: int, item_timeout_s: float
    ) -> Iterator[Any]:
        """BoundedPool.run_stream with every wait (a free slot, a started worker, each item) cut at the
        deadline as well. A stream ends at its end, with its worker killed, or handed to a drain thread,
        so no late item ever reaches the next stream."""
        try:
            worker = self._idle.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            self.cut += 1
            yield TIMED_OUT
            return
        try:
            if worker is None or not worker.alive():
                worker = self._take_spare()
                if worker is None:  # a start takes seconds: never inside a budget
                    self._start_spare()
                    self.cut += 1
                    yield TIMED_OUT
                    return
            try:
                worker.conn.send((target, payload))
            except (OSError, ValueError):
                worker.kill()
                worker = None
                yield WORKER_FAILED
                return
            received, last = 0, time.monotonic()
            while True:
                wait = min(item_timeout_s - (time.monotonic() - last), deadline - time.monotonic())
                if wait <= 0 or not worker.conn.poll(wait):
                    draining = False
                    if time.monotonic() - last >= item_timeout_s:  # the verifier's own limit: killed
                        worker.kill()
                        self.restarts += 1
                    else:  # the budget: it finishes in the background and becomes the spare
                        self.cut += 1
                        draining = self._drain(worker, last, item_timeout_s)
                    worker = self._take_spare()
                    if not draining:
                        self._start_spare()
                    if received < n_items:
                        yield TIMED_OUT
                    return
                try:
                    kind, item = worker.conn.recv()
                except (EOFError, OSError):
                    worker.kill()
                    worker = None
                    yield WORKER_FAILED
                    return
                last = time.monotonic()
                if kind == "item":
                    received += 1
                    if received <= n_items:
                        yield item
                    continue
                if kind == "error":
                    yield WORKER_FAILED
                return
        finally:
            if worker is not None and not worker.alive():
                worker = None
            self._idle.put(worker)

    def _take_spare(self) -> _Worker | None:
        with self._lock:
            spare, self._spare = self._spare, None
        return spare if spare is not None and spare.alive() else None

    def _offer_spare(self, worker: _Worker) -> None:
        with self._lock:
            if self._spare is None and not self._closed and worker.alive():
                self._spare, worker = worker, None
        if worker is not None:
            worker.kill()

    def _start_spare(self) -> None:
        """Start a spare worker in the background unless one is there or starting."""
        with self._lock:
            if self._spare is not None or self._spare_starting or self._closed:
                return
            self._spare_starting = True

        def start() -> None:
            try:
                self._offer_spare(_Worker(self.config))
            except RuntimeError:  # did not start: the next cut tries again
                pass
            finally:
                with self._lock:
                    self._spare_starting = False

        threading.Thread(target=start, daemon=True).start()

    def _drain(self, worker: _Worker, last: float, item_timeout_s: float) -> bool:
        """Let `worker` finish its stream in the background (each item within the per-item limit), then
        offer it as the spare (True); a second cut stream while one drains is killed instead (False)."""
        with self._lock:
            busy = self._draining is not None or self._closed
            if not busy:
                self._draining = worker
        if busy:
            worker.kill()
            return False

        def drain() -> None:
            try:
                since = last
                while True:
                    if not worker.conn.poll(max(0.0, item_timeout_s - (time.monotonic() - since))):
                        worker.kill()
                        return
                    kind, _ = worker.conn.recv()
                    since = time.monotonic()
                    if kind in ("done", "error"):
                        self._offer_spare(worker)
                        return
            except (EOFError, OSError):
                worker.kill()
            finally:
                with self._lock:
                    self._draining = None

        threading.Thread(target=drain, daemon=True).start()
        return True

    def close(self) -> None:
        """Kill the idle workers, the spare and a draining worker (one busy in C code holds the GIL, so
        its own watch for a dead parent may never run: it must not outlive the pool)."""
        with self._lock:
            self._closed = True
            spare, self._spare = self._spare, None
            draining = self._draining
        for worker in (spare, draining):
            if worker is not None:
                worker.process.kill()  # the drain thread waits for it and closes its pipes
        super().close()
