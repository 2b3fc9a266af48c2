"""Math workers forked from a preloaded server: a new worker costs a fork, not an interpreter start.

A fresh worker interpreter spends about 0.4 s of CPU importing SymPy, latex2sympy and math-verify and
warming their caches before its first item (`bounded._WARM_UP`). A pool pays that at every start: its first
use, and again after every worker a time limit killed, so a deadline-bound caller (the reward path) waits a
start after each cut, and a process that makes many pools (a test suite, a label run per chunk) pays it each
time. The fork server is one such interpreter per calling process, prepared once; each worker is a `fork`
of it, ready in milliseconds, with the server's imports and warm caches.

Forking is done there, never in the caller: the caller runs threads (Prefect's, vLLM's, the pool's own),
and a fork of a threaded process may inherit a lock held by another thread. The server is single-threaded
while it forks.

Each request carries the caller's environment, import path and folder as they are at that moment, which the
worker takes before it runs (modules the server imported at its start stay as imported then). The caller
hands the new worker its two pipe ends over a Unix socket (`socket.send_fds`); the server answers
with the worker's pid and a pidfd (Linux 5.3+), through which the caller polls and kills it: a pid alone
could be reused once the server reaps the worker. The server reaps each worker as it ends (SIGCHLD), never
between a fork and its pidfd, so no zombie is left and a worker's CPU reaches the caller's count with the
server's.

Lifetimes follow the parent chain, as for a spawned worker (worker_main.watch_from_outside): the server dies
with its caller, each worker with the server. Where the platform lacks fork, pidfds or fd passing, or the
server cannot start, `fork_worker` answers None and the pool starts a fresh interpreter as before.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence

_READY = b"ready"
_ENTRY = "prm_factory.verifiers.math.worker_main"
_EXIT_WAIT_S = 2.0  # a server told to stop (its socket closed) ends in milliseconds; past this it is killed
_HEADER_BYTES = 4  # each message: its length (big-endian), then its bytes; fds ride on the first byte


def supported() -> bool:
    """Whether this platform can fork workers from a server and hand their pidfds back."""
    return all(
        (
            hasattr(os, "fork"),
            hasattr(os, "pidfd_open"),
            hasattr(socket, "send_fds"),
            hasattr(signal, "pidfd_send_signal"),
        )
    )


def _send(sock: socket.socket, body: bytes, fds: Sequence[int] = ()) -> None:
    framed = len(body).to_bytes(_HEADER_BYTES, "big") + body
    sent = socket.send_fds(sock, [framed], list(fds)) if fds else sock.send(framed)
    if sent < len(framed):
        sock.sendall(framed[sent:])


def _receive(sock: socket.socket, max_fds: int) -> tuple[bytes, list[int]] | None:
    """One framed message and the fds sent with it; None at the end of the stream."""
    head, fds, _, _ = socket.recv_fds(sock, _HEADER_BYTES, max_fds)
    if not head:
        return None
    while len(head) < _HEADER_BYTES:
        more = sock.recv(_HEADER_BYTES - len(head))
        if not more:
            raise ConnectionError("the stream ended inside a message")
        head += more
    size, body = int.from_bytes(head, "big"), b""
    while len(body) < size:
        more = sock.recv(min(size - len(body), 1 << 20))
        if not more:
            raise ConnectionError("the stream ended inside a message")
        body += more
    return body, fds


class ForkedProcess:
    """A worker forked by the server, seen from its caller through a pidfd: `subprocess.Popen`'s
    `pid`, `poll`, `kill` and `wait`, which the pool uses. Its exit status belongs to the server that
    forked it, so an ended worker reports 0."""

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self._pidfd: int | None = pidfd
        self._ended = False

    def _wait_fd(self, timeout_s: float) -> bool:
        if self._ended or self._pidfd is None:
            return True
        poller = select.poll()
        poller.register(self._pidfd, select.POLLIN)
        self._ended = bool(poller.poll(max(0, int(timeout_s * 1000))))  # readable once the process ended
        return self._ended

    def poll(self) -> int | None:
        return 0 if self._wait_fd(0) else None

    def kill(self) -> None:
        if self._pidfd is not None and not self._ended:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                self._ended = True

    def wait(self, timeout: float | None = None) -> int:
        if not self._wait_fd(3600.0 * 24 if timeout is None else timeout):
            raise subprocess.TimeoutExpired(f"forked math worker {self.pid}", timeout or 0.0)
        self.close()
        return 0

    def close(self) -> None:
        """Give the pidfd back (the process itself is left as it is)."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass


class ForkServer:
    """This process's fork server, started on first use (and again after it died), shared by every pool
    of the process; thread-safe (one fork at a time: each takes milliseconds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self.failed: str | None = None  # why the server could not start: no second try in this process
        # a forked copy of this process must not share the server nor wait on a lock another thread held
        method = weakref.WeakMethod(self._forget)
        os.register_at_fork(after_in_child=lambda: (forget := method()) and forget())

    def _forget(self) -> None:
        """In a forked copy of this process: a fresh lock, and no server (the parent's stays the parent's;
        the copy starts its own on first use)."""
        self._lock = threading.Lock()
        if self._socket is not None:
            try:
                self._socket.close()  # the copy's duplicate of the parent's socket, not the parent's
            except OSError:
                pass
        self._socket = self._process = None

    def fork_worker(
        self, read_fd: int, write_fd: int, memory_limit_mb: int, startup_timeout_s: float
    ) -> ForkedProcess | None:
        """A worker forked with `read_fd` and `write_fd` as its pipe ends and its address space capped at
        `memory_limit_mb` (0: none); None where the server is unavailable (the caller spawns instead)."""
        with self._lock:
            if self.failed is not None or not supported():
                return None
            for _ in range(2):  # a server that died since its last fork is started again once
                try:
                    sock = self._running(startup_timeout_s)
                    sock.settimeout(startup_timeout_s)  # this pool's limit, not the one that started it
                    request = {
                        "memory_mb": memory_limit_mb,
                        "paths": import_paths(),
                        "cwd": os.getcwd(),
                        "env": dict(os.environ),
                    }
                    _send(sock, json.dumps(request).encode(), (read_fd, write_fd))
                    answer = _receive(sock, 1)
                    if answer is None:
                        raise ConnectionError("the fork server closed its socket")
                    message, fds = answer
                    if not fds:
                        why = message.decode(errors="replace")
                        raise RuntimeError(f"the fork server did not fork: {why}")
                    return ForkedProcess(int(message), fds[0])
                except (OSError, ValueError):  # ConnectionError among them
                    self._stop()
                except RuntimeError as error:
                    self.failed = str(error)
                    self._stop()
                    return None
            self.failed = "the fork server failed twice"
            return None

    def _running(self, startup_timeout_s: float) -> socket.socket:
        if self._socket is not None and self._process is not None and self._process.poll() is None:
            return self._socket
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = spawn_entry(["fork-server", str(theirs.fileno())], (theirs.fileno(),))
        finally:
            theirs.close()
        self._socket, self._process = ours, process
        ours.settimeout(startup_timeout_s)
        try:
            ready = ours.recv(len(_READY))
        except OSError as error:
            self._stop()
            raise RuntimeError(f"the fork server did not start: {error}") from error
        if ready != _READY:
            self._stop()
            raise RuntimeError("the fork server did not start")
        return ours

    def _stop(self) -> None:
        if self._socket is not None:
            self._socket.close()  # the server reads the end, reaps its ended workers and exits
        if self._process is not None:
            try:
                self._process.wait(timeout=_EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        self._socket = self._process = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def import_paths() -> list[str]:
    """This process's import path as absolute folders: what a worker (forked or spawned) must import from."""
    return [os.path.abspath(p or ".") for p in sys.path if os.path.isdir(p or ".")]


def spawn_entry(args: Sequence[str], fds: Sequence[int]) -> subprocess.Popen:
    """`python -m prm_factory.verifiers.math.worker_main ARGS` with `fds` handed over: a fresh worker, or
    the fork server itself. It imports the same code as this process (its import path as PYTHONPATH)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(import_paths())
    return subprocess.Popen(
        [sys.executable, "-m", _ENTRY, *args],
        pass_fds=tuple(fds),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )


def _reap(signum: int, frame: object) -> None:
    """SIGCHLD in the server: reap every ended worker (their CPU then counts in the server's children's
    usage, which reaches the caller when it reaps the server, as a spawned worker's reaches it)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(sock: socket.socket, prepare: Callable[[], None], work: Callable[[int, int, int], None]) -> None:
    """The server's loop: `prepare()` once (imports, warm-up), then fork a worker per request, in which
    `work(read_fd, write_fd, memory_limit_mb)` runs, until the caller closes the socket."""
    prepare()
    signal.signal(signal.SIGCHLD, _reap)  # ended workers are reaped at once: no zombies
    sock.sendall(_READY)
    while True:
        try:
            received = _receive(sock, 2)
        except OSError:
            received = None
        if received is None:  # the caller is done: its killed workers are counted before the server ends
            _reap(signal.SIGCHLD, None)
            return
        message, fds = received
        try:
            request = json.loads(message)
        except ValueError:
            request = None
        if not isinstance(request, dict) or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            _send(sock, b"a request is a JSON object with two pipe ends")
            continue
        # no reaping between the fork and the pidfd: the worker's pid cannot be reused before it is taken
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            pid = os.fork()
            if pid == 0:
                _run_forked(sock, fds, request, work)
            for fd in fds:
                os.close(fd)
            try:
                pidfd = os.pidfd_open(pid)
            except OSError as error:  # no pidfds here: the caller spawns instead
                _send(sock, f"no pidfd for the worker: {error}".encode())
                continue
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        try:
            _send(sock, str(pid).encode(), (pidfd,))
        finally:
            os.close(pidfd)


def _run_forked(
    sock: socket.socket, fds: Sequence[int], request: dict, work: Callable[[int, int, int], None]
) -> None:
    """In the forked worker: leave the server's socket and signal handling, take the caller's environment,
    import path and folder as they are now (a spawned worker inherits them at its start), run `work`
    (which watches its parent, the server, as a spawned worker watches its caller), and exit without the
    server's exit handlers."""
    code = 0
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})  # blocked by the server around the fork
        if isinstance(request.get("env"), dict):  # the caller's, now: the server's is from its own start
            os.environ.clear()
            os.environ.update(request["env"])
        paths = list(request.get("paths", []))  # in the caller's order, as a spawned worker's PYTHONPATH
        sys.path[:] = paths + [path for path in sys.path if path not in paths]
        try:
            os.chdir(request.get("cwd") or ".")
        except OSError:
            pass
        work(fds[0], fds[1], int(request["memory_mb"]))
    except BaseException:
        code = 1
    finally:
        os._exit(code)
