"""tests/docker_turns.py: a dockerd restart waits until no other process holds a turn on Docker, and a process
that holds a shared turn can still take the exclusive one (a restart test inside a warm pool's module)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.docker_turns import DockerTurns

ROOT = Path(__file__).resolve().parents[1]


def other_process_can_take(path: Path, kind: str) -> bool:
    """Whether another process gets the turn at once (non-blocking)."""
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys
        fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.{kind} | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(1)
        """
    )
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_shared_turns_exclude_a_restart_in_another_process_and_not_each_other(tmp_path: Path) -> None:
    turns = DockerTurns(tmp_path / "turns.lock")
    with turns.shared():
        assert other_process_can_take(turns.path, "LOCK_SH")
        assert not other_process_can_take(turns.path, "LOCK_EX")
        with turns.shared():  # nested: a pool's module turn and its test's turn
            pass
        assert not other_process_can_take(turns.path, "LOCK_EX")  # the outer turn is still held
    assert other_process_can_take(turns.path, "LOCK_EX")


def test_an_exclusive_turn_inside_a_shared_one_converts_it_and_gives_it_back(tmp_path: Path) -> None:
    turns = DockerTurns(tmp_path / "turns.lock")
    with turns.shared():
        with turns.exclusive():  # would wait forever on a second descriptor of the same process
            assert not other_process_can_take(turns.path, "LOCK_SH")
        assert other_process_can_take(turns.path, "LOCK_SH")
        assert not other_process_can_take(turns.path, "LOCK_EX")
    assert other_process_can_take(turns.path, "LOCK_EX")


def test_a_restart_waits_for_a_shared_turn_of_another_process(tmp_path: Path) -> None:
    path = tmp_path / "turns.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # another holder, as a test on another worker
    try:
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
            "from tests.docker_turns import DockerTurns;"
            "t = DockerTurns(Path(sys.argv[2]));"
            "import threading; done = threading.Event();"
            "threading.Thread(target=lambda: (t.exclusive().__enter__(), done.set()), daemon=True).start();"
            "sys.exit(0 if not done.wait(1.5) else 3)"
        )
        waited = subprocess.run([sys.executable, "-c", code, str(ROOT), str(path)], check=False)
        assert waited.returncode == 0  # still waiting after 1.5 s
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert other_process_can_take(path, "LOCK_EX")
