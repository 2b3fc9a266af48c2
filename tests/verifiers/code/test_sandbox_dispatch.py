"""Reading Docker's exec stream (verifiers/code/sandbox/dispatch.py) over a local socket pair: frames to
stdout and stderr, and the three ways a read ends (EOF, the deadline, the cap)."""

from __future__ import annotations

import socket
import struct
import time

from prm_factory.verifiers.code.sandbox.dispatch import read_exec_stream


def frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + struct.pack(">I", len(data)) + data


def test_frames_split_into_stdout_and_stderr_until_eof():
    host, container = socket.socketpair()
    with host, container:
        container.sendall(frame(1, b"out ") + frame(2, b"err") + frame(1, b"more"))
        container.shutdown(socket.SHUT_WR)
        assert read_exec_stream(host, time.monotonic() + 5, 1 << 20) == (b"out more", b"err", "")


def test_a_silent_stream_ends_at_the_deadline():
    host, container = socket.socketpair()
    with host, container:
        container.sendall(frame(1, b"partial"))
        out, _, problem = read_exec_stream(host, time.monotonic() + 0.2, 1 << 20)
        assert (out, problem) == (b"partial", "deadline")


def test_a_flood_ends_at_the_cap():
    host, container = socket.socketpair()
    with host, container:
        container.sendall(frame(1, b"x" * 5000))
        out, _, problem = read_exec_stream(host, time.monotonic() + 5, 1000)
        assert problem == "exec stream over its cap" and len(out) == 5000
