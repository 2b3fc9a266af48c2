"""A time budget per response for the verifier's SymPy work: an explicit, opt-in reward option (`budget_s`).

Why: on competition math a response's SymPy items (LaTeX parsed by an ANTLR grammar, differences
simplified) take from milliseconds to the verifier's per-item limit each, so one 30-step response can take
seconds, and an RL step waits for its slowest reward. With a budget, the SymPy items of the response's step
checks that would start or finish after the budget is spent are not waited for: each such claim is
`unverifiable` (fail closed, never `incorrect`), as a claim past the verifier's own per-item limit is, and
once anything of a response was cut its verifier calls no step `correct` (`without_cut_positives`). The
pure-Python readings, the final answer's grading and the consensus are not cut. Without a budget (the
default) nothing changes: the verdicts are `label`'s (tests/reward/test_same_labels.py).

How: the budget follows the calling thread (a context variable set around the step checks), so one verifier
and its workers serve requests with and without one. A budgeted stream runs in the worker inside `until`,
which stops the stream after the first item that ends past the deadline; the items it did run are the
ones a stream without a budget gives (a stream's state, such as values learned from earlier runs, is
only cut short). The caller stops waiting at the deadline itself; the worker then finishes its one item
in a background thread and goes back to the pool (killed past the verifier's per-item limit, as always).
"""

from __future__ import annotations

import importlib
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.bounded import TIMED_OUT, WORKER_FAILED, BoundedPool, PoolConfig, _Worker

UNTIL = "prm_factory.reward.budget:until"
CUT_REASON = "the response's budget cut its SymPy checks: no step of it is called correct by the verifier"


@dataclass
class Budget:
    """A response's budget: its deadline (time.time(), which the SymPy worker reads too) and whether
    anything was cut."""

    deadline: float
    cut: bool = False


_BUDGET: ContextVar[Budget | None] = ContextVar("prm_factory_reward_budget", default=None)


@contextmanager
def budget_until(deadline: float | None) -> Iterator[Budget | None]:
    """SymPy work in this thread stops at `deadline` (None: no budget); yields the Budget, whose `cut`
    says afterwards whether any check was cut."""
    budget = None if deadline is None else Budget(deadline)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def without_cut_positives(labels: tuple[StepLabel | None, ...]) -> tuple[StepLabel | None, ...]:
    """A cut response's verifier labels with every `correct` made `unverifiable`: a check the budget cut
    may have been the one claim of a step that fails (a system result or an equation step that was not
    judged adds nothing, and the step's other claims then make it `correct`), so after a cut no step is
    called right by the verifier; `incorrect` stays (a cut never makes a claim fail)."""
    return tuple(
        replace(label, verdict="unverifiable", value=None, reason=f"{CUT_REASON} ({label.reason})")
        if label is not None and label.verdict == "correct"
        else label
        for label in labels
    )


def until(payload: tuple[float, str, Any]) -> Iterator[Any]:
    """In a worker: the items of generator `target` over its payload, ending after the first item that
    ends past `deadline` (time.time())."""
    deadline, target, inner = payload
    module, _, name = target.partition(":")
    for item in getattr(importlib.import_module(module), name)(inner):
        yield item
        if time.time() >= deadline:
            return


class BudgetedPool(BoundedPool):
    """A BoundedPool whose streams also end at the calling thread's budget deadline (see the module
    docstring). Outside a budget it is the plain pool. `cut` counts the streams a budget ended."""

    def __init__(self, config: PoolConfig | None = None) -> None:
        super().__init__(config or PoolConfig())
        self.cut = 0
        self._lock = threading.Lock()
        self._finishing: set[_Worker] = set()
        self._closed = False

    def run_stream(self, target: str, payload: Any, n_items: int, item_timeout_s: float) -> Iterator[Any]:
        budget = _BUDGET.get()
        if budget is None:
            yield from super().run_stream(target, payload, n_items, item_timeout_s)
            return
        for result in self._until(budget.deadline, target, payload, n_items, item_timeout_s):
            if result == TIMED_OUT:
                budget.cut = True
            yield result

    def _until(
        self, deadline: float, target: str, payload: Any, n_items: int, item_timeout_s: float
    ) -> Iterator[Any]:
        """BoundedPool.run_stream with every wait (a free slot, each item) cut at the deadline as well. A
        stream ends at its end (early, past the deadline: `until`), with its worker killed, or handed to a
        thread that lets it finish its item; no late item ever reaches the next stream."""
        try:
            worker = self._idle.get(timeout=max(0.0, deadline - time.time()))
        except queue.Empty:
            self.cut += 1
            yield TIMED_OUT
            return
        handed = False
        try:
            if worker is None or not worker.alive():  # a start takes seconds: never inside a budget
                worker = None
                threading.Thread(target=self._start_in_slot, daemon=True).start()
                handed = True  # the thread returns the slot once its worker is up
                self.cut += 1
                yield TIMED_OUT
                return
            try:
                worker.conn.send((UNTIL, (deadline, target, payload)))
            except (OSError, ValueError):
                worker.kill()
                worker = None
                yield WORKER_FAILED
                return
            received, last = 0, time.monotonic()
            while True:
                wait = min(item_timeout_s - (time.monotonic() - last), deadline - time.time())
                if wait <= 0 or not worker.conn.poll(wait):
                    if time.monotonic() - last >= item_timeout_s:  # the verifier's own limit: killed
                        worker.kill()
                        worker = None
                        self.restarts += 1
                    else:  # the budget: its current item ends in the background, then it is back
                        self.cut += 1
                        self._finish(worker, last, item_timeout_s)
                        handed = True
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
                elif received < n_items:  # `until` ended the stream at the deadline
                    self.cut += 1
                    yield TIMED_OUT
                return
        finally:
            if not handed:
                if worker is not None and not worker.alive():
                    worker = None
                self._idle.put(worker)

    def _start_in_slot(self) -> None:
        """Start a worker for a slot a kill emptied, outside any budget, and hand the slot back."""
        worker = None
        try:
            if not self._closed:
                worker = _Worker(self.config)
        except RuntimeError:  # did not start: the next stream tries again
            worker = None
        finally:
            self._idle.put(worker)

    def _finish(self, worker: _Worker, last: float, item_timeout_s: float) -> None:
        """Let `worker` end its stream in the background (`until` stops it after its current item; each item
        within the per-item limit, else it is killed), then give its slot back."""
        with self._lock:
            self._finishing.add(worker)

        def finish() -> None:
            alive = False
            try:
                since = last
                while True:
                    if not worker.conn.poll(max(0.0, item_timeout_s - (time.monotonic() - since))):
                        break
                    kind, _ = worker.conn.recv()
                    since = time.monotonic()
                    if kind in ("done", "error"):
                        alive = not self._closed
                        break
            except (EOFError, OSError):
                pass
            finally:
                with self._lock:
                    self._finishing.discard(worker)
                if not alive:
                    worker.kill()
                self._idle.put(worker if alive else None)

        threading.Thread(target=finish, daemon=True).start()

    def close(self) -> None:
        """Kill the idle workers and those finishing a cut stream (one busy in C code holds the GIL, so its
        own watch for a dead parent may never run: it must not outlive the pool)."""
        with self._lock:
            self._closed = True
            finishing = list(self._finishing)
        for worker in finishing:
            worker.process.kill()  # its thread sees the pipe close and gives the slot back empty
        super().close()
