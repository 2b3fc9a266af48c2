"""The warm pool: N long-lived sandbox containers, one job at a time each, safe to call from many threads.

Why a warm pool: a fresh container costs 0.6-1.5 s on the project's 2-core machines, far more than the
tests it runs. A container whose job timed out, ran out of memory or misbehaved is destroyed and
replaced, so one bad job never taints the next.

Engine restarts: a job whose container vanished with the Docker engine is run again on a fresh container
once the engine answers (waiting up to `engine_wait_s`), never judged on the lost one; an engine that
stays away raises `SandboxUnavailable`, so the stage fails and retries instead of writing wrong labels.
"""

from __future__ import annotations

import atexit
import logging
import queue
import signal
import threading
import time
import weakref
from typing import Any

import docker

from prm_factory.verifiers.code.sandbox.container import (
    ENGINE_ERRORS,
    REAPER_COMMAND,
    UNREMOVED,
    SandboxLimits,
    cleanup_leftovers,
    container_kwargs,
    docker_client,
    remove_or_remember,
    remove_unremoved,
    start_container,
)
from prm_factory.verifiers.code.sandbox.dispatch import Dispatch, Slot, exec_job
from prm_factory.verifiers.code.sandbox.protocol import NO_OPTIONS, ExecResult, JobOptions, with_duration

log = logging.getLogger(__name__)


class SandboxUnavailable(RuntimeError):
    """The Docker engine stopped answering and did not come back in time; the job was never judged.

    Raised instead of a result so that an engine restart can never turn into a failed test (a wrong
    label): the caller's task fails and its retry, or the run's failure record, says why.
    """


# No-report outcomes that happen when the engine (not the job) goes away: the job is run once more on a
# fresh container, after the engine answers again. A job that keeps causing them is judged on the rerun.
LOST_CONTAINER_PROBLEMS = ("container exited", "attach stream failed", "cannot reach the supervisor")


def lost_container(result: ExecResult) -> bool:
    """Whether a result says the container vanished under the job rather than the job failing."""
    return result.exit_code is None and result.reason.startswith(LOST_CONTAINER_PROBLEMS)


class SandboxPool:
    """N warm sandbox containers; `run` borrows one per job. Safe to call from many threads.

    Each container slot has its own API client and connection, so concurrent jobs share nothing.
    Survives a Docker engine restart: a job whose container vanished is run again on a fresh one once
    the engine answers (waiting up to `engine_wait_s`), and a pool slot that cannot be rebuilt stays an
    empty token to rebuild on next use, so the pool never hands out a dead container.
    """

    def __init__(
        self,
        image: str,
        size: int = 2,
        limits: SandboxLimits | None = None,
        dispatch: Dispatch = "server",
        engine_wait_s: float = 60.0,
    ) -> None:
        if size < 1:
            raise ValueError("pool size must be at least 1")
        self.image = image
        self.size = size
        self.limits = limits or SandboxLimits()
        self.dispatch = dispatch
        self.engine_wait_s = engine_wait_s
        self._client: docker.DockerClient | None = None
        # Tokens: a live slot, or None for a slot to (re)build on next use.
        self._idle: queue.Queue[Slot | None] = queue.Queue()
        self._all: dict[str, Slot] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.replaced = 0
        self.engine_losses = 0  # jobs rerun because their container vanished with the engine

    def __enter__(self) -> SandboxPool:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        self._client = self._wait_for_engine()
        cleanup_leftovers(self._client)
        _LivePools.add(self)
        for _ in range(self.size):
            self._idle.put(self._new_slot())

    def _wait_for_engine(self) -> docker.DockerClient:
        """A fresh client once the engine answers; `SandboxUnavailable` after `engine_wait_s`."""
        started = time.monotonic()
        next_log = started
        warned = False
        while True:
            try:
                client = docker_client()
                if warned:
                    log.warning("Docker engine answering again after %.1f s", time.monotonic() - started)
                return client
            except ENGINE_ERRORS as exc:
                waited = time.monotonic() - started
                if waited >= self.engine_wait_s:
                    raise SandboxUnavailable(
                        f"Docker engine not answering after {self.engine_wait_s:.0f} s: {exc}"
                    ) from exc
                if time.monotonic() >= next_log:  # once, then every 10 s
                    log.warning(
                        "Docker engine not answering (%s); waiting up to %.0f s", exc, self.engine_wait_s
                    )
                    next_log = time.monotonic() + 10.0
                    warned = True
                time.sleep(1.0)

    def _new_slot(self) -> Slot:
        assert self._client is not None, "pool not started"
        try:
            slot = Slot(self._client, self.image, self.limits, self.dispatch)
        except ENGINE_ERRORS:
            # The engine may have restarted under us: wait for it with a fresh client, try once more.
            self._client = self._wait_for_engine()
            remove_unremoved(self._client.api)  # what the lost engine kept from being removed
            slot = Slot(self._client, self.image, self.limits, self.dispatch)
        with self._lock:
            self._all[slot.id] = slot
        return slot

    def _replacement(self) -> Slot | None:
        """A fresh container now, keeping the pool warm; None (built on next use) if the engine is away."""
        try:
            return self._new_slot()
        except (SandboxUnavailable, *ENGINE_ERRORS) as exc:
            log.warning("sandbox container not replaced yet: %s", exc)
            return None

    def _retire(self, slot: Slot) -> None:
        """Destroy a container that must not take another job; its place is refilled by the caller."""
        self._destroy(slot)
        self.replaced += 1

    def _destroy(self, slot: Slot) -> None:
        with self._lock:
            self._all.pop(slot.id, None)
        try:
            slot.destroy()  # a removal the engine did not answer is remembered in UNREMOVED
        except ENGINE_ERRORS as exc:
            log.warning("sandbox container %s left for later removal: %s", slot.id[:12], exc)
            UNREMOVED.add(slot.id)

    def run(self, files: dict[str, str], argv: list[str], options: JobOptions = NO_OPTIONS) -> ExecResult:
        """Run argv in a fresh work dir holding `files`; blocks while every container is busy.

        Raises `SandboxUnavailable` when the engine is gone for longer than `engine_wait_s`.
        """
        if self._closed:
            raise RuntimeError("sandbox pool is closed")
        token = self._idle.get()
        try:
            for attempt in range(3):
                if token is None:
                    token = self._new_slot()
                try:
                    result, replace = token.run(files, argv, self.limits, options)
                except ENGINE_ERRORS as exc:
                    # The container died between jobs (its PID 1 OOM-killed, the engine restarted): the
                    # job never started, so it runs again on a fresh container.
                    log.warning("sandbox container %s unusable (%s); replacing it", token.id[:12], exc)
                    self._retire(token)
                    token = None
                    continue
                lost = lost_container(result)
                if replace:
                    self._retire(token)
                    token = None if lost else self._replacement()  # a lost one is rebuilt for the rerun
                if lost and attempt < 2:
                    self.engine_losses += 1
                    log.warning("sandbox job lost its container (%s); running it again", result.reason)
                    continue
                return result
            raise SandboxUnavailable("sandbox containers keep failing before the job could run")
        finally:
            if self._closed and token is not None:
                self._destroy(token)
            elif not self._closed:
                self._idle.put(token)

    def close(self) -> None:
        """Remove every container of this pool (idempotent)."""
        self._closed = True
        while True:
            try:
                slot = self._idle.get_nowait()
            except queue.Empty:
                break
            if slot is not None:
                self._destroy(slot)
        with self._lock:
            leftover = list(self._all.values())
        # Containers borrowed by a job still running in another thread: remove them anyway.
        for slot in leftover:
            self._destroy(slot)
        if UNREMOVED.snapshot() and self._client is not None:
            remove_unremoved(self._client.api)  # left while the engine was away; it may be back by now

    def container_ids(self) -> list[str]:
        with self._lock:
            return sorted(self._all)


def run_once(
    image: str,
    files: dict[str, str],
    argv: list[str],
    limits: SandboxLimits | None = None,
    client: docker.DockerClient | None = None,
    options: JobOptions = NO_OPTIONS,
) -> ExecResult:
    """One fresh container per job (create, start, run, remove): the benchmark's baseline.

    Same hardening and the same supervisor as the pool, so the two differ only in container reuse.
    """
    limits = limits or SandboxLimits()
    client = client or docker_client()
    started = time.monotonic()
    kwargs = container_kwargs(image, limits, REAPER_COMMAND)
    container = start_container(client, kwargs)
    try:
        result, _ = exec_job(client.api, container.id, files, argv, limits, options)
    finally:
        remove_or_remember(client.api, container.id)
    return with_duration(result, time.monotonic() - started)


class _LivePools:
    """Pools still holding containers, so atexit and SIGTERM can remove them."""

    pools: weakref.WeakSet[SandboxPool] = weakref.WeakSet()
    installed = False
    lock = threading.Lock()

    @classmethod
    def add(cls, pool: SandboxPool) -> None:
        with cls.lock:
            cls.pools.add(pool)
            if not cls.installed:
                atexit.register(cls.close_all)
                if threading.current_thread() is threading.main_thread():
                    previous = signal.getsignal(signal.SIGTERM)

                    def on_sigterm(signum: int, frame: Any) -> None:
                        cls.close_all()
                        if callable(previous):
                            previous(signum, frame)
                        raise SystemExit(128 + signum)

                    signal.signal(signal.SIGTERM, on_sigterm)
                cls.installed = True

    @classmethod
    def close_all(cls) -> None:
        for pool in list(cls.pools):
            pool.close()
