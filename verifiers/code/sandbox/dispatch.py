"""Getting one job to a container's supervisor and its report back: a `docker exec` per job, or a framed
request on the attached stdin of a container whose PID 1 is the supervisor.

"server" dispatch (the default): one framed request in on the attached stdin, one report out, no Docker
API call per job (~25 ms per job). "exec" dispatch: PID 1 only reaps, and each job is a `docker exec` of
the supervisor (~80-170 ms per job: runc sets up every exec). Both give every job the same fresh work
dir, limits, process-tree kill and report.
"""

from __future__ import annotations

import logging
import marshal
import socket
import time
from typing import Any, Literal

import docker
import docker.errors
import docker.utils

from prm_factory.verifiers.code.sandbox.container import (
    LAUNCHER_SOURCE,
    REAPER_COMMAND,
    SANDBOX_USER,
    SERVER_COMMAND,
    SandboxLimits,
    container_kwargs,
    remove_or_remember,
    start_container,
)
from prm_factory.verifiers.code.sandbox.protocol import (
    ABORT_LINE,
    EXEC_GRACE_SECONDS,
    NO_OPTIONS,
    ExecResult,
    JobOptions,
    SupervisorReport,
    build_request,
    parse_report,
    report_length,
    result_from_report,
    split_frames,
)

log = logging.getLogger(__name__)

Dispatch = Literal["server", "exec"]


def read_exec_stream(raw: socket.socket, deadline: float, hard_cap: int) -> tuple[bytes, bytes, str]:
    """Read Docker's multiplexed exec stream until EOF; returns (stdout, stderr, problem)."""
    buffers = {1: bytearray(), 2: bytearray()}
    pending = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bytes(buffers[1]), bytes(buffers[2]), "deadline"
        raw.settimeout(remaining)
        try:
            chunk = raw.recv(262144)
        except TimeoutError:
            return bytes(buffers[1]), bytes(buffers[2]), "deadline"
        if not chunk:
            return bytes(buffers[1]), bytes(buffers[2]), ""
        pending += chunk
        for stream, data in split_frames(pending):
            buffers.setdefault(stream, bytearray()).extend(data)
        if len(buffers[1]) + len(buffers[2]) > hard_cap:
            return bytes(buffers[1]), bytes(buffers[2]), "exec stream over its cap"


def exec_job(
    api: docker.APIClient,
    container_id: str,
    files: dict[str, str],
    argv: list[str],
    limits: SandboxLimits,
    options: JobOptions = NO_OPTIONS,
) -> tuple[ExecResult, bool]:
    """Run one job in a running sandbox container; returns (result, container must be replaced)."""
    started = time.monotonic()
    nonce, request = build_request(files, argv, limits, options)
    exec_id = api.exec_create(
        container_id,
        ["python3", "-I", "-S", "-c", LAUNCHER_SOURCE],
        stdin=True,
        stdout=True,
        stderr=True,
        user=SANDBOX_USER,
        workdir="/work",
    )["Id"]
    sock = api.exec_start(exec_id, socket=True)
    raw: socket.socket = getattr(sock, "_sock", sock)
    try:
        # marshal: the in-container supervisor must not pay for importing json (see launcher.py).
        raw.sendall(marshal.dumps(request, 4))
        raw.shutdown(socket.SHUT_WR)
        out, err, problem = read_exec_stream(
            raw, options.deadline(started, limits), options.stream_cap(limits)
        )
    finally:
        raw.close()
        sock.close()
    duration = time.monotonic() - started
    return result_from_report(parse_report(out, nonce), problem, err, duration)


class Slot:
    """One pool container and the connection that reaches it.

    "server" dispatch: the container's PID 1 is the supervisor in server mode, attached once; a job is one
    framed request written to its stdin and one report read back. "exec" dispatch: PID 1 only reaps, and
    each job is a `docker exec` of the supervisor.
    """

    def __init__(self, client: docker.DockerClient, image: str, limits: SandboxLimits, dispatch: Dispatch):
        self.dispatch = dispatch
        self.api = docker.APIClient(
            version=client.api.api_version, timeout=60, **docker.utils.kwargs_from_env()
        )
        if dispatch == "server":
            kwargs = container_kwargs(image, limits, SERVER_COMMAND)
            kwargs["stdin_open"] = True
        else:
            kwargs = container_kwargs(image, limits, REAPER_COMMAND)
        container = start_container(client, kwargs)
        self.id: str = container.id
        self._sock: Any = None
        self._out = bytearray()
        self._pending = bytearray()
        if dispatch == "server":
            try:
                params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
                self._sock = self.api.attach_socket(self.id, params=params)
            except BaseException:  # the engine refused or went away: the started container must not stay
                self.destroy()
                raise

    def run(
        self, files: dict[str, str], argv: list[str], limits: SandboxLimits, options: JobOptions = NO_OPTIONS
    ) -> tuple[ExecResult, bool]:
        """Run one job; returns (result, container must be replaced)."""
        if self.dispatch == "exec":
            return exec_job(self.api, self.id, files, argv, limits, options)
        started = time.monotonic()
        nonce, request = build_request(files, argv, limits, options)
        payload = marshal.dumps(request, 4)
        raw: socket.socket = getattr(self._sock, "_sock", self._sock)
        raw.settimeout(options.wall(limits) + EXEC_GRACE_SECONDS)
        try:
            raw.sendall(len(payload).to_bytes(8, "big") + payload)
        except OSError as exc:
            problem = f"cannot reach the supervisor: {exc}"
            return result_from_report(None, problem, b"", time.monotonic() - started)
        deadline = options.deadline(started, limits)
        report, problem, err = self._read_report(raw, nonce, deadline, options.stream_cap(limits))
        return result_from_report(report, problem, err, time.monotonic() - started)

    def _read_report(
        self, raw: socket.socket, nonce: str, deadline: float, hard_cap: int
    ) -> tuple[SupervisorReport | None, str, bytes]:
        """Demultiplex the attach stream until this request's report is complete."""
        err = bytearray()
        while True:
            needed = report_length(self._out, nonce)
            if needed is not None and len(self._out) >= needed:
                if len(self._out) > needed:
                    return None, "bytes after the supervisor report", bytes(err)
                report = parse_report(bytes(self._out), nonce)
                self._out.clear()
                return report, "" if report else "malformed supervisor report", bytes(err)
            if ABORT_LINE in self._out:
                return None, "supervisor aborted (the job killed its handler)", bytes(err)
            if len(self._out) > hard_cap:
                return None, "exec stream over its cap", bytes(err)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, "deadline", bytes(err)
            raw.settimeout(remaining)
            try:
                chunk = raw.recv(262144)
            except TimeoutError:
                return None, "deadline", bytes(err)
            except OSError as exc:
                return None, f"attach stream failed: {exc}", bytes(err)
            if not chunk:
                return None, "container exited", bytes(err)
            self._pending += chunk
            for stream, data in split_frames(self._pending):
                if stream == 1:
                    self._out += data
                else:
                    err += data
                    del err[:-8192]

    def destroy(self) -> None:
        """Close the connection and remove the container (one already gone is fine)."""
        if self._sock is not None:
            try:
                getattr(self._sock, "_sock", self._sock).close()
                self._sock.close()
            except OSError as exc:
                log.debug("closing attach socket: %s", exc)
        remove_or_remember(self.api, self.id)  # one the engine cannot remove now goes once it answers
        self.api.close()
