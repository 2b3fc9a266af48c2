"""The in-container supervisor's host-testable parts (verifiers/code/launcher.py): a job's files stay in
its work dir, which argv lines run as a python script in a forked child, and its framing reads. Every
sandbox test runs the whole supervisor in a container."""

from __future__ import annotations

import os

import pytest

from prm_factory.verifiers.code import launcher


def test_job_files_stay_inside_the_work_dir(tmp_path):
    workdir = str(tmp_path / "job")
    os.mkdir(workdir)
    launcher.write_files(workdir, {"main.py": "print(1)", "pkg/mod.py": "x = 1"})
    assert (tmp_path / "job" / "pkg" / "mod.py").read_text() == "x = 1"
    for escape in ("../outside.py", "/etc/passwd", "pkg/../../x"):
        with pytest.raises(ValueError, match="escapes the work dir"):
            launcher.write_files(workdir, {escape: ""})
    assert not (tmp_path / "outside.py").exists()


def test_python_script_argv():
    assert launcher.python_script_argv(["python3", "-I", "main.py", "a"]) == ("main.py", ["main.py", "a"])
    assert launcher.python_script_argv(["python3", "-c", "print(1)"]) is None
    assert launcher.python_script_argv(["bash", "main.sh"]) is None
    assert launcher.python_script_argv([]) is None


def test_read_exactly_returns_none_on_a_short_stream():
    read_fd, write_fd = os.pipe()
    launcher.write_all(write_fd, b"12345")
    os.close(write_fd)
    assert launcher.read_exactly(read_fd, 3) == b"123"
    assert launcher.read_exactly(read_fd, 3) is None  # 2 bytes left, then EOF
    os.close(read_fd)
