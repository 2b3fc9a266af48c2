"""Test stand-in: a sandbox `ExecResult` built by hand (no Docker), for tests that script the runner."""

from __future__ import annotations

from prm_factory.verifiers.code.sandbox import ExecResult


def exec_result(stdout: str = "", **flags: object) -> ExecResult:
    """A clean exit with `stdout`; `flags` override any field (`timed_out=True`, `oom=True`, ...)."""
    fields = dict(
        exit_code=0,
        signal=None,
        stdout=stdout,
        stderr="",
        timed_out=False,
        oom=False,
        output_truncated=False,
        misbehaved=False,
        reason="",
        job_seconds=0.0,
        duration_s=0.0,
        container_replaced=False,
    )
    fields.update(flags)
    return ExecResult(**fields)  # type: ignore[arg-type]
