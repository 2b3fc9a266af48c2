"""The sandbox's wire protocol without Docker: one header parser serves both the stream reader (when is a
report complete) and the report parser, and Docker's stream frames are split exactly."""

from __future__ import annotations

import struct

from prm_factory.verifiers.code.sandbox.container import SandboxLimits
from prm_factory.verifiers.code.sandbox.protocol import (
    NO_OPTIONS,
    JobOptions,
    build_request,
    parse_report,
    read_header,
    report_length,
    result_from_report,
    split_frames,
)

HEADER = b"\nPRMREPORT n1 0 -1 0 0 0 0 0 0.5 5 3\n"


def test_report_length_waits_for_the_header_then_the_announced_body():
    assert report_length(b"junk", "n1") is None  # no header yet
    assert report_length(HEADER[:-1], "n1") is None  # header line not finished
    complete = len(HEADER) + 8
    assert report_length(HEADER, "n1") == complete
    assert report_length(b"xx" + HEADER + b"hello", "n1") == complete + 2
    assert report_length(HEADER, "other") is None  # another request's nonce is not this report


def test_a_malformed_header_is_complete_at_once_and_refused():
    for bad in (
        b"\nPRMREPORT n1 0 -1 0 0 0 0 0 x 5 3\n",  # job seconds not a number
        b"\nPRMREPORT n1 0 -1 0 0 0 0 0 0.5 5\n",  # a field missing
        b"\nPRMREPORT n1 0 -1 0 0 0 0 0 0.5 -5 3\n",  # a negative length
    ):
        header = read_header(bad, "n1")
        assert header is not None and header.fields is None
        assert report_length(bad, "n1") == len(bad)
        assert parse_report(bad, "n1") is None
    assert read_header(HEADER, "n1").fields.n_out == 5  # type: ignore[union-attr]


def test_parse_report_reads_the_last_header_and_exact_body():
    report = parse_report(HEADER + b"helloerr", "n1")
    assert report is not None and (report.stdout, report.stderr) == (b"hello", b"err")
    assert report.job_seconds == 0.5 and report.exit_code == 0 and report.signal is None
    assert parse_report(HEADER + b"hello", "n1") is None  # body short


def test_split_frames_takes_complete_frames_and_keeps_the_rest():
    def frame(stream: int, data: bytes) -> bytes:
        return bytes([stream, 0, 0, 0]) + struct.pack(">I", len(data)) + data

    pending = bytearray(frame(1, b"out") + frame(2, b"err") + frame(1, b"partial")[:-2])
    assert list(split_frames(pending)) == [(1, b"out"), (2, b"err")]
    assert pending == frame(1, b"partial")[:-2]
    pending += b"al"
    assert list(split_frames(pending)) == [(1, b"partial")] and not pending


def test_request_carries_only_the_options_set():
    limits = SandboxLimits(wall_seconds=3.0)
    nonce, request = build_request({"a.py": ""}, ["python3", "a.py"], limits)
    assert request["nonce"] == nonce and request["wall_s"] == 3.0 and "stdin" not in request
    _, request = build_request({}, [], limits, JobOptions(stdin="in.txt", wall_seconds=1.0, memory_mb=64))
    assert (request["stdin"], request["wall_s"], request["memory_mb"]) == ("in.txt", 1.0, 64)
    assert NO_OPTIONS.deadline(10.0, limits) > 13.0


def test_result_replaces_the_container_only_when_the_report_says_so():
    clean, replace = result_from_report(parse_report(HEADER + b"helloerr", "n1"), "", b"", 0.1)
    assert clean.ok and clean.stdout == "hello" and not replace
    lost, replace = result_from_report(None, "deadline", b"boom", 0.1)
    assert replace and lost.timed_out and lost.misbehaved and not lost.ok and lost.stderr == "boom"
