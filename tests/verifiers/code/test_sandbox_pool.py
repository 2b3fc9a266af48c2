"""The pool's rules that need no Docker engine (verifiers/code/sandbox/pool.py): which results mean the
container vanished (run again) rather than the job failing (judged), and a pool's size and closing.
tests/verifiers/code/test_code_sandbox.py and test_engine_restart.py run the pool on the real engine."""

from __future__ import annotations

import pytest
from exec_results import exec_result

from prm_factory.verifiers.code.sandbox.pool import SandboxPool, lost_container


def test_a_vanished_container_is_lost_a_failed_job_is_not():
    assert lost_container(exec_result(exit_code=None, reason="container exited", misbehaved=True))
    assert lost_container(exec_result(exit_code=None, reason="attach stream failed: reset"))
    assert lost_container(exec_result(exit_code=None, reason="cannot reach the supervisor: broken pipe"))
    assert not lost_container(exec_result(exit_code=None, reason="deadline", timed_out=True))
    assert not lost_container(exec_result(exit_code=1, reason="container exited"))  # the job reported
    assert not lost_container(exec_result())


def test_pool_size_and_closed_pool():
    with pytest.raises(ValueError, match="at least 1"):
        SandboxPool("image", size=0)
    pool = SandboxPool("image", size=1)  # nothing reaches Docker before start()
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.run({"main.py": ""}, ["python3", "main.py"])
