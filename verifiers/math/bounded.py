"""Hard time limits for SymPy work: a small pool of killable worker processes.

Why processes: `signal.alarm` (math-verify's own timeout) only works on the main thread, and no Python-level
timeout stops a hang inside C code (a huge integer power, a runaway simplification). A worker that runs
past its limit is killed and replaced, so the caller always gets an answer within the limit, from any
thread (Prefect task threads included).

Work is sent in batches: the worker runs a generator function over a payload and streams one result per
item, and each item gets its own deadline. When item k times out, items before it keep their results,
item k is reported as `TIMED_OUT`, and the caller decides how to resume (see `run_stream`).

A thread can also give its streams a deadline (`streams_until`): every wait (a free slot, each item) then
ends at it as well, the worker stops the stream after its current item (`until`) and finishes that item in
the background before it goes back to the pool, so a deadline never kills and restarts a worker (a start
takes milliseconds from the fork server, seconds where a fresh interpreter must import SymPy). The reward
path bounds a response this way (reward/budget.py, reward/scorer.py); a check that calls `run_items` with
the process-wide pool is bounded too, since the deadline follows the thread, not the pool.

A thread that labels a response in its caller's own thread is stopped at its deadline by an exception raised
into it from another (`interrupt`, CPython's PyThreadState_SetAsyncExc: it lands at the next bytecode, so
pure Python stops; C code runs to its end first). Never inside a stream: a stream takes and gives back a
worker's slot, and an exception between those would lose the slot, so `interrupt` waits while the thread is
in one (the stream ends at the deadline itself), and a thread that enters one with an exception raised into
it and not yet delivered gets it there, before any slot is taken.

Workers are started lazily, forked from the process's fork server (fork_server.py: one interpreter that
imported SymPy and math-verify and warmed their caches once; the caller itself never forks, which is unsafe
in a threaded process), or, where the platform lacks the means, fresh interpreters that import them; their
address space is capped so a memory bomb fails fast instead of swapping.

Why not pebble's ProcessPool (tried for issue 13; as fast on bench/bench_math_verifier.py, and its tests
passed): its workers are `multiprocessing` children, so it cannot start inside a daemonic process (a Dask
worker, `runner.task_runner = "dask"`: "daemonic processes are not allowed to have children"), and a
spawned worker re-imports the caller's `__main__` (an unguarded script runs twice). It also needs one pool
per worker, since a batch's generator state must stay in one process between its items.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from prm_factory.verifiers.math.fork_server import ForkedProcess, ForkServer, spawn_entry

TIMED_OUT = "__timed_out__"
WORKER_FAILED = "__worker_failed__"
UNTIL = "prm_factory.verifiers.math.bounded:until"
_PRELOAD = (
    "sympy",
    "latex2sympy2_extended",
    "math_verify",
    "prm_factory.verifiers.math.symbolic",
    "prm_factory.verifiers.math.answer_symbolic",
    "prm_factory.verifiers.math.solution_sets",
)
# One small call per hot path before the worker says ready: the first parse builds the LaTeX grammar's
# caches (about 20x a warm call), and that cost belongs to the startup limit, not to the first item's.
_WARM_UP = (
    ("prm_factory.verifiers.math.answer_symbolic:answer_equivalence", [(r"\frac{1}{2}", "0.5")]),
    ("prm_factory.verifiers.math.symbolic:latex_claims", [(r"\sqrt{4} + 1 = 3", {})]),
)


@dataclass(frozen=True)
class PoolConfig:
    """How many workers, how long a worker may take to start, its memory cap (MiB, 0 = none), and whether
    workers are forked from this process's preloaded fork server (fork_server.py) where the platform
    allows; False: a fresh interpreter each."""

    workers: int = 1
    startup_timeout_s: float = 120.0
    memory_limit_mb: int = 2048
    fork_server: bool = True


def prepare_worker() -> None:
    """Import what workers use and warm its caches: a fresh worker before its first item, or the fork
    server once for every worker it forks."""
    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    for target, payload in _WARM_UP:
        try:
            module_name, _, function_name = target.partition(":")
            list(getattr(importlib.import_module(module_name), function_name)(payload))
        except Exception:  # a failed warm-up only costs the first item its head start
            pass


def _worker_main(conn: Any, memory_limit_mb: int, prepared: bool = False) -> None:
    """Worker loop: import once (unless forked `prepared`), then run `module:function` generators and
    stream their items."""
    if memory_limit_mb > 0:
        try:
            import resource

            limit = memory_limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    parent = os.getppid()

    def watch_parent() -> None:  # a worker busy in C code must not outlive a killed parent
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    if not prepared:
        prepare_worker()
    conn.send(("ready", None))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        target, payload = message
        module_name, _, function_name = target.partition(":")
        try:
            function = getattr(importlib.import_module(module_name), function_name)
            for item in function(payload):
                conn.send(("item", item))
            conn.send(("done", None))
        except MemoryError:
            conn.send(("error", "MemoryError"))
        except Exception as exc:  # the worker must survive any bad input; the caller sees the error
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


@dataclass
class Deadline:
    """When a thread's streams stop waiting (time.time(), which a worker reads too), and whether one was
    cut there."""

    at: float
    cut: bool = False


_DEADLINE: ContextVar[Deadline | None] = ContextVar("prm_factory_stream_deadline", default=None)


@contextmanager
def streams_until(at: float | None) -> Iterator[Deadline | None]:
    """Streams this thread starts inside stop at `at` (an enclosing deadline that comes first still holds;
    None: only the enclosing one, if any). Yields the Deadline, whose `cut` says afterwards whether a
    stream was cut; a cut at the enclosing deadline marks that one cut as well."""
    outer = _DEADLINE.get()
    moments = [m for m in (at, outer.at if outer else None) if m is not None]
    deadline = Deadline(min(moments)) if moments else None
    token = _DEADLINE.set(deadline)
    try:
        yield deadline
    finally:
        try:
            _DEADLINE.reset(token)
        except ValueError:
            # Finalized in another context: an interruption (reward.watchdog) cut the `with` short, and
            # the context copy the call ran in, which holds this deadline, was dropped with the call.
            pass
        if outer is not None and deadline is not None and deadline.cut and deadline.at >= outer.at:
            outer.cut = True


_INTERRUPT_LOCK = threading.Lock()
_IN_STREAM: dict[int, int] = {}  # thread id -> streams it has open
_RAISED: dict[int, type[BaseException]] = {}  # thread id -> what `interrupt` raised in it, until `settle`


def can_interrupt() -> bool:
    """Whether an exception raised into this thread lands only in the code it runs: CPython, and no trace
    function in this thread. A tracer's callbacks (coverage's, a debugger's) run Python in the thread, and
    an exception landing there breaks the tracer: under coverage one landed between its data lock's
    acquire and release and the next test waited on that lock for good. Callers take another way then
    (the reward scorer: its workers)."""
    return sys.implementation.name == "cpython" and sys.gettrace() is None


def _raise_in(thread_id: int, error: type[BaseException]) -> int:
    """Raise `error` in the thread at its next bytecode (one not delivered yet is replaced; `_drop_own`
    drops one)."""
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(error))


class _Dropped(BaseException):
    """Raised into a thread by itself (`_drop_own`) and caught there at once."""


def _drop_own(thread_id: int) -> None:
    """Drop an exception raised into this thread (`thread_id`, the caller's) and maybe not delivered yet,
    leaving nothing pending. Not `PyThreadState_SetAsyncExc(id, NULL)`: on CPython 3.11 that drops the
    exception but leaves the interpreter's pending-exception signal set with nothing to deliver, and under
    a trace function (coverage, a debugger) every later Python call then stalls at its entry for good
    (one such call and a no-op `sys.settrace` function were enough; the reward tests hung under coverage).
    An exception delivered clears that signal: `_Dropped` replaces what was pending and lands here, as
    the call that raised it returns or at the loop's first back-jump."""
    assert thread_id == threading.get_ident(), "only a thread's own pending exception is dropped"
    try:
        _raise_in(thread_id, _Dropped)  # it may land as this call returns
        while True:
            pass
    except _Dropped:
        pass


def interrupt(thread_id: int, error: type[BaseException]) -> bool:
    """Raise `error` in thread `thread_id` (see the module docstring), once until `settle`. False while the
    thread is inside a stream: the caller tries again (the stream ends at the thread's deadline itself)."""
    with _INTERRUPT_LOCK:
        if _IN_STREAM.get(thread_id):
            return False
        if thread_id not in _RAISED:
            _RAISED[thread_id] = error
            _raise_in(thread_id, error)
        return True


def settle(thread_id: int) -> None:
    """The interrupted call in `thread_id` has ended: an exception raised into it and not delivered yet is
    dropped (it must not land in the caller's code after the call); the thread may be interrupted again."""
    with _INTERRUPT_LOCK:
        if _RAISED.pop(thread_id, None) is not None:
            _drop_own(thread_id)


@contextmanager
def _no_interrupts() -> Iterator[None]:
    """The body runs with no exception raised into this thread by `interrupt`; one raised before it and
    not yet delivered is raised here instead, before the body starts."""
    thread_id = threading.get_ident()
    with _INTERRUPT_LOCK:
        error = _RAISED.get(thread_id)
        if error is not None:
            _drop_own(thread_id)  # delivered now, synchronously, rather than inside the body
        else:
            _IN_STREAM[thread_id] = _IN_STREAM.get(thread_id, 0) + 1
    if error is not None:
        raise error()
    try:
        yield
    finally:
        with _INTERRUPT_LOCK:
            if _IN_STREAM[thread_id] <= 1:
                del _IN_STREAM[thread_id]
            else:
                _IN_STREAM[thread_id] -= 1


def until(payload: tuple[float, str, Any]) -> Iterator[Any]:
    """In a worker: the items of generator `target` over its payload, ending after the first item that
    ends past `deadline` (time.time())."""
    deadline, target, inner = payload
    module, _, name = target.partition(":")
    for item in getattr(importlib.import_module(module), name)(inner):
        yield item
        if time.time() >= deadline:
            return


class _Worker:
    """One worker talking over two pipes: forked from the process's fork server (fork_server.py), else a
    fresh interpreter running worker_main.

    A plain subprocess rather than `multiprocessing` spawn, so the caller's `__main__` is never
    re-imported (spawn requires an `if __name__ == "__main__"` guard in every script that might verify).
    """

    def __init__(self, config: PoolConfig) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        forked = None
        if config.fork_server:
            forked = FORK_SERVER.fork_worker(
                to_child_r, from_child_w, config.memory_limit_mb, config.startup_timeout_s
            )
        self.process: subprocess.Popen | ForkedProcess = forked or self._spawn(
            config, to_child_r, from_child_w
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.conn = _Duplex(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))
        if not self.conn.poll(config.startup_timeout_s):
            self.kill()
            raise RuntimeError("math worker did not start in time")
        kind, _ = self.conn.recv()
        if kind != "ready":
            self.kill()
            raise RuntimeError("math worker failed to start")

    @staticmethod
    def _spawn(config: PoolConfig, read_fd: int, write_fd: int) -> subprocess.Popen:
        return spawn_entry([str(read_fd), str(write_fd), str(config.memory_limit_mb)], (read_fd, write_fd))

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.conn.close()
        if isinstance(self.process, ForkedProcess):
            self.process.close()


@dataclass
class _Duplex:
    reader: Connection
    writer: Connection

    def poll(self, timeout: float) -> bool:
        return self.reader.poll(timeout)

    def recv(self) -> Any:
        return self.reader.recv()

    def send(self, obj: Any) -> None:
        self.writer.send(obj)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


class BoundedPool:
    """A thread-safe pool of killable workers. `run_stream` is the one way to use it."""

    def __init__(self, config: PoolConfig = PoolConfig()) -> None:
        self.config = config
        self._idle: queue.SimpleQueue[_Worker | None] = queue.SimpleQueue()
        for _ in range(config.workers):
            self._idle.put(None)  # a slot; the worker starts on first use
        self.restarts = 0
        self.cut = 0  # streams a deadline ended
        self._lock = threading.Lock()
        self._ready_lock = threading.Lock()
        self._finishing: set[_Worker] = set()
        self._closed = False
        atexit.register(self.close)

    def run_stream(self, target: str, payload: Any, n_items: int, item_timeout_s: float) -> Iterator[Any]:
        """Run generator `target` ("module:function") over `payload` in a worker; yield its `n_items`
        results, each within `item_timeout_s`. A late item yields `TIMED_OUT` and ends the stream (the
        worker is killed); a crashed worker or an exception yields `WORKER_FAILED` and ends it. Inside
        `streams_until`, a wait past the thread's deadline also yields `TIMED_OUT` and ends the stream.
        `interrupt` waits while a stream is open (it holds a slot)."""
        with _no_interrupts():
            yield from self._stream(target, payload, n_items, item_timeout_s)

    def _stream(self, target: str, payload: Any, n_items: int, item_timeout_s: float) -> Iterator[Any]:
        deadline = _DEADLINE.get()
        if deadline is not None:
            yield from self._until(deadline, target, payload, n_items, item_timeout_s)
            return
        slot = self._idle.get()
        worker = slot
        try:
            if worker is None or not worker.alive():
                worker = _Worker(self.config)
            try:
                worker.conn.send((target, payload))
            except (OSError, ValueError):
                worker.kill()
                worker = None
                yield WORKER_FAILED
                return
            received = 0
            while received < n_items:
                if not worker.conn.poll(item_timeout_s):
                    worker.kill()
                    worker = None
                    self.restarts += 1
                    yield TIMED_OUT
                    return
                try:
                    kind, item = worker.conn.recv()
                except (EOFError, OSError):
                    worker.kill()
                    worker = None
                    yield WORKER_FAILED
                    return
                if kind == "item":
                    received += 1
                    yield item
                elif kind == "error" or kind == "done":
                    if kind == "error":
                        yield WORKER_FAILED
                    return
            if not worker.conn.poll(item_timeout_s):  # wait for the generator's "done"
                worker.kill()
                worker = None
                return
            worker.conn.recv()
        finally:
            if worker is not None and not worker.alive():
                worker = None
            self._idle.put(worker)

    def _until(
        self, limit: Deadline, target: str, payload: Any, n_items: int, item_timeout_s: float
    ) -> Iterator[Any]:
        """`run_stream` with every wait (a free slot, each item) cut at `deadline` as well. A stream ends at
        its end (early, past the deadline: `until`), with its worker killed (the per-item limit), or handed
        to a thread that lets it finish its item; no late item ever reaches the next stream. Only a cut at
        the deadline marks `limit` cut (an item past the per-item limit is what it is without one)."""
        deadline = limit.at

        def cut() -> str:
            self.cut += 1
            limit.cut = True
            return TIMED_OUT

        starting = False
        while True:
            left = deadline - time.time()
            if left <= 0:  # past it: no worker is touched
                yield cut()
                return
            try:
                worker = self._idle.get(timeout=left)  # a slot: a worker, or None where none started
            except queue.Empty:
                continue
            if worker is not None and worker.alive():
                break
            if worker is not None:
                worker.kill()
            if starting or self._closed:  # a start failed (or the pool closed): no second one in here
                self._idle.put(None)
                yield cut()
                return
            # a start (seconds for a fresh interpreter or the fork server's own first start) cannot be cut:
            # it runs in the background, which returns the slot once its worker is up, and this stream
            # waits for a slot until the deadline as for any other
            starting = True
            threading.Thread(target=self._start_in_slot, daemon=True).start()
        handed = False
        try:
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
                    if time.monotonic() - last >= item_timeout_s:  # the per-item limit: killed
                        worker.kill()
                        worker = None
                        self.restarts += 1
                    elif time.time() >= deadline:  # its current item ends in the background
                        cut()
                        self._finish(worker, last, item_timeout_s)
                        handed = True
                    else:  # the poll woke before either limit
                        continue
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
                    yield cut()
                return
        finally:
            if not handed:
                if worker is not None and not worker.alive():
                    worker = None
                self._idle.put(worker)

    def _start_in_slot(self) -> None:
        """Start a worker for an empty slot, outside any deadline, and hand the slot back."""
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

    def ready(self) -> None:
        """Wait for every slot (a stream in progress, a cut one finishing) and start the workers they lack:
        what a caller runs outside its deadlines after a cut, so the next deadline holds no start."""
        with self._ready_lock:
            slots = [self._idle.get() for _ in range(self.config.workers)]
            try:
                for position, worker in enumerate(slots):
                    if worker is None or not worker.alive():
                        slots[position] = None
                        slots[position] = _Worker(self.config)
            except RuntimeError:  # did not start: the next stream tries again
                pass
            finally:
                for worker in slots:
                    self._idle.put(worker)

    def close(self) -> None:
        """Kill every idle worker and those finishing a cut stream (one busy in C code holds the GIL, so its
        own watch for a dead parent may never run: it must not outlive the pool); busy ones are killed by
        their callers' time limits."""
        with self._lock:
            self._closed = True
            finishing = list(self._finishing)
        for worker in finishing:
            worker.process.kill()  # its thread sees the pipe close and gives the slot back empty
        for _ in range(self.config.workers):
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            if worker is not None:
                worker.kill()
            self._idle.put(None)


def imported(names: list[str]) -> Iterator[bool]:
    """In a worker: whether each module is already imported (tests check the preload with it)."""
    return (name in sys.modules for name in names)


FORK_SERVER = ForkServer()  # one a process, shared by its pools; started by the first forked worker
atexit.register(FORK_SERVER.close)

_default_pool: BoundedPool | None = None
_default_lock = threading.Lock()


def default_pool() -> BoundedPool:
    """The process-wide pool, created on first use and closed at exit."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = BoundedPool()
        return _default_pool


def run_items(
    target: str, items: list[Any], item_timeout_s: float, pool: BoundedPool | None = None
) -> list[Any]:
    """Results for every item, in order: a timed-out item becomes `TIMED_OUT`, and the stream resumes
    after it in a fresh worker, so one bomb costs one item, not the batch.
    """
    pool = pool or default_pool()
    results: list[Any] = []
    while len(results) < len(items):
        remaining = items[len(results) :]
        for result in pool.run_stream(target, remaining, len(remaining), item_timeout_s):
            results.append(result)
            if isinstance(result, str) and result in (TIMED_OUT, WORKER_FAILED):
                break
        else:
            if len(results) < len(items):  # the worker ended early without saying why
                results.append(WORKER_FAILED)
    return results
