"""The wire protocol between the host and the in-container supervisor (`launcher.py`).

A request is `marshal` data (the supervisor must not pay for importing json); the report is one header
line tagged with the request's nonce, `PRMREPORT <nonce> <exit> <signal> <timed_out> <overflow> <oom>
<strays_before> <strays_after> <job_seconds> <n_stdout> <n_stderr>`, followed by exactly the announced
stdout and stderr bytes. Docker carries both inside its multiplexed stream (8-byte frame headers). The
header is read by one parser, `read_header`: `report_length` uses it to know when a report is complete on
a stream, `parse_report` to read it. Pure functions over bytes, so all of it is unit-tested.
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from prm_factory.verifiers.code.sandbox.container import SandboxLimits

# Seconds allowed on top of the job's wall limit for python start-up, cleanup and the report.
EXEC_GRACE_SECONDS = 5.0
# What the serving supervisor writes when a job killed the handler that should have reported it.
ABORT_LINE = b"\nPRMABORT\n"
REPORT_FIELDS = 12


@dataclass(frozen=True)
class JobOptions:
    """Per-job settings on top of the pool's limits: a stdin file (one of the job's files), a tighter
    wall-clock or memory limit (a dataset's per-test limits), a larger output cap (a test whose expected
    output is big). None keeps the pool's value; the container's own limits always apply as well."""

    stdin: str | None = None
    wall_seconds: float | None = None
    memory_mb: int | None = None
    output_cap_bytes: int | None = None

    def wall(self, limits: SandboxLimits) -> float:
        return self.wall_seconds if self.wall_seconds is not None else limits.wall_seconds

    def output_cap(self, limits: SandboxLimits) -> int:
        return self.output_cap_bytes if self.output_cap_bytes is not None else limits.output_cap_bytes

    def deadline(self, started: float, limits: SandboxLimits) -> float:
        """The monotonic time by which the report must be in."""
        return started + self.wall(limits) + EXEC_GRACE_SECONDS

    def stream_cap(self, limits: SandboxLimits) -> int:
        """Bytes a stream may carry before the supervisor is judged runaway (both outputs plus the header)."""
        return 2 * self.output_cap(limits) + 65536


NO_OPTIONS = JobOptions()


@dataclass(frozen=True)
class ExecResult:
    """What one job did. `ok` only says the process exited 0; test verdicts are decided elsewhere."""

    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    timed_out: bool
    oom: bool
    output_truncated: bool
    misbehaved: bool
    reason: str  # why the container was judged unhealthy ("" when it was not)
    job_seconds: float  # job run time measured by the in-container supervisor
    duration_s: float  # host wall time of the whole dispatch
    container_replaced: bool

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.oom or self.misbehaved)


@dataclass(frozen=True)
class SupervisorReport:
    exit_code: int | None
    signal: int | None
    timed_out: bool
    output_overflow: bool
    oom: bool
    strays_before: int
    strays_after: int
    job_seconds: float
    stdout: bytes
    stderr: bytes


def build_request(
    files: dict[str, str], argv: list[str], limits: SandboxLimits, options: JobOptions = NO_OPTIONS
) -> tuple[str, dict[str, Any]]:
    """A fresh nonce and the request the supervisor reads (its report must carry that nonce)."""
    nonce = secrets.token_hex(16)
    request: dict[str, Any] = {
        "nonce": nonce,
        "job_id": secrets.token_hex(8),
        "files": files,
        "argv": argv,
        "wall_s": options.wall(limits),
        "output_cap": options.output_cap(limits),
    }
    if options.stdin is not None:
        request["stdin"] = options.stdin
    if options.memory_mb is not None:
        request["memory_mb"] = options.memory_mb
    return nonce, request


class HeaderFields(NamedTuple):
    exit_code: int  # -1: none (killed by a signal)
    signal: int  # -1: none
    timed_out: int
    overflow: int
    oom: int
    strays_before: int
    strays_after: int
    job_seconds: float
    n_out: int
    n_err: int


@dataclass(frozen=True)
class ReportHeader:
    """A complete header line: where its body starts and, when well formed, its fields (else None)."""

    body_start: int
    fields: HeaderFields | None

    @property
    def body_length(self) -> int:
        return 0 if self.fields is None else self.fields.n_out + self.fields.n_err


def read_header(out: bytes | bytearray, nonce: str, *, last: bool = True) -> ReportHeader | None:
    """The report header carrying `nonce` (the last one, or the first with `last=False`); None while no
    complete header line is in `out`. A malformed header (field count, a number, a negative length) has
    `fields` None: the caller treats the container as misbehaved."""
    marker = b"\nPRMREPORT " + nonce.encode() + b" "
    start = out.rfind(marker) if last else out.find(marker)
    if start < 0:
        return None
    header_end = out.find(b"\n", start + 1)
    if header_end < 0:
        return None
    words = out[start + 1 : header_end].split()
    fields: HeaderFields | None = None
    if len(words) == REPORT_FIELDS:
        try:
            codes = [int(w) for w in words[2:9]]
            fields = HeaderFields(*codes, float(words[9]), int(words[10]), int(words[11]))
        except ValueError:
            fields = None
    if fields is not None and min(fields.n_out, fields.n_err) < 0:
        fields = None
    return ReportHeader(body_start=header_end + 1, fields=fields)


def report_length(out: bytes | bytearray, nonce: str) -> int | None:
    """Bytes `out` must hold for the first report with `nonce` to be complete, once its header is in
    (a malformed header is complete at once, so `parse_report` refuses it without waiting)."""
    header = read_header(out, nonce, last=False)
    return None if header is None else header.body_start + header.body_length


def parse_report(out: bytes, nonce: str) -> SupervisorReport | None:
    """The supervisor's report: the last header carrying this request's nonce, then exactly the bytes
    it announces. Anything malformed is None (the caller treats the container as misbehaved)."""
    header = read_header(out, nonce)
    if header is None or (fields := header.fields) is None:
        return None
    body = out[header.body_start :]
    if len(body) != header.body_length:
        return None
    return SupervisorReport(
        exit_code=None if fields.exit_code < 0 else fields.exit_code,
        signal=None if fields.signal < 0 else fields.signal,
        timed_out=bool(fields.timed_out),
        output_overflow=bool(fields.overflow),
        oom=bool(fields.oom),
        strays_before=fields.strays_before,
        strays_after=fields.strays_after,
        job_seconds=fields.job_seconds,
        stdout=body[: fields.n_out],
        stderr=body[fields.n_out :],
    )


def split_frames(pending: bytearray) -> Iterator[tuple[int, bytes]]:
    """Take the complete frames of Docker's multiplexed stream off the front of `pending`: (stream, data),
    stream 1 stdout and 2 stderr. An incomplete frame stays in `pending` for the next chunk."""
    while len(pending) >= 8:
        stream, size = pending[0], struct.unpack(">I", pending[4:8])[0]
        if len(pending) < 8 + size:
            return
        data = bytes(pending[8 : 8 + size])
        del pending[: 8 + size]
        yield stream, data


def result_from_report(
    report: SupervisorReport | None, problem: str, err: bytes, duration: float
) -> tuple[ExecResult, bool]:
    """The job's result from the supervisor's report, and whether its container must be replaced."""
    if report is None:
        reason = problem or "no supervisor report (the job killed or corrupted its supervisor)"
        result = ExecResult(
            exit_code=None,
            signal=None,
            stdout="",
            stderr=err.decode("utf-8", "replace")[-4000:],
            timed_out=problem == "deadline",
            oom=False,
            output_truncated=problem == "exec stream over its cap",
            misbehaved=True,
            reason=reason,
            job_seconds=duration,
            duration_s=duration,
            container_replaced=True,
        )
        return result, True
    reasons = []
    if report.timed_out:
        reasons.append("wall-clock limit")
    if report.oom:
        reasons.append("out of memory")
    if report.output_overflow:
        reasons.append("output over its cap")
    if report.strays_after:
        reasons.append(f"{report.strays_after} process(es) outlived the job")
    result = ExecResult(
        exit_code=report.exit_code,
        signal=report.signal,
        stdout=report.stdout.decode("utf-8", "replace"),
        stderr=report.stderr.decode("utf-8", "replace"),
        timed_out=report.timed_out,
        oom=report.oom,
        output_truncated=report.output_overflow,
        misbehaved=report.output_overflow or report.strays_after > 0,
        reason="; ".join(reasons),
        job_seconds=report.job_seconds,
        duration_s=duration,
        container_replaced=bool(reasons),
    )
    return result, bool(reasons)


def with_duration(result: ExecResult, duration: float) -> ExecResult:
    """The same result with the host's wall time of the whole dispatch."""
    fields = dict(result.__dict__)
    fields["duration_s"] = duration
    return ExecResult(**fields)
