"""Hard time limits for SymPy work: a small pool of killable worker processes.

Why processes: `signal.alarm` (math-verify's own timeout) only works on the main thread, and no Python-level
timeout stops a hang inside C code (a huge integer power, a runaway simplification). A worker that runs
past its limit is killed and replaced, so the caller always gets an answer within the limit, from any
thread (Prefect task threads included).

Work is sent in batches: the worker runs a generator function over a payload and streams one result per
item, and each item gets its own deadline. When item k times out, items before it keep their results,
item k is reported as `TIMED_OUT`, and the caller decides how to resume (see `run_stream`).

Workers are fresh interpreters (safe to start from threads, unlike `fork`), started lazily; they import
SymPy and math-verify once; their address space is capped so a memory bomb fails fast instead of swapping.

Why not pebble's ProcessPool (tried for issue 13; as fast on bench/bench_math_verifier.py, and its tests
passed): its workers are `multiprocessing` children, so it cannot start inside a daemonic process (a Dask
worker, `runner.task_runner = "dask"`: "daemonic processes are not allowed to have children"), and a
spawned worker re-imports the caller's `__main__` (an unguarded script runs twice). It also needs one pool
per worker, since a batch's generator state must stay in one process between its items.
"""

from __future__ import annotations

import atexit
import importlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

TIMED_OUT = "__timed_out__"
WORKER_FAILED = "__worker_failed__"
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
    """How many workers, how long a worker may take to start, and its memory cap (MiB, 0 = none)."""

    workers: int = 1
    startup_timeout_s: float = 120.0
    memory_limit_mb: int = 2048


def _worker_main(conn: Any, memory_limit_mb: int) -> None:
    """Worker loop: import once, then run `module:function` generators and stream their items."""
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


class _Worker:
    """One worker: a fresh interpreter running this module, talking over two pipes.

    A plain subprocess rather than `multiprocessing` spawn, so the caller's `__main__` is never
    re-imported (spawn requires an `if __name__ == "__main__"` guard in every script that might verify).
    """

    def __init__(self, config: PoolConfig) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        paths = [os.path.abspath(p or ".") for p in sys.path if os.path.isdir(p or ".")]
        env["PYTHONPATH"] = os.pathsep.join(paths)  # the worker imports the same code as its parent
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "prm_factory.verifiers.math.worker_main",
                str(to_child_r),
                str(from_child_w),
                str(config.memory_limit_mb),
            ],
            pass_fds=(to_child_r, from_child_w),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
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
        atexit.register(self.close)

    def run_stream(self, target: str, payload: Any, n_items: int, item_timeout_s: float) -> Iterator[Any]:
        """Run generator `target` ("module:function") over `payload` in a worker; yield its `n_items`
        results, each within `item_timeout_s`. A late item yields `TIMED_OUT` and ends the stream (the
        worker is killed); a crashed worker or an exception yields `WORKER_FAILED` and ends it.
        """
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

    def close(self) -> None:
        """Kill every idle worker (busy ones are killed by their callers' time limits)."""
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
