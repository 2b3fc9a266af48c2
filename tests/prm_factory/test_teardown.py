"""prm_factory.teardown: a finished run leaves after every exit handler, with its own code, output flushed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import atexit, sys
from pathlib import Path
from prm_factory import teardown
if {install}:
    teardown.install()
atexit.register(lambda: Path({marker!r}).write_text("handler ran"))  # a library's handler, registered later
print("summary line", end="")  # left in the buffer: the exit must flush it
if {ask} is not None:
    teardown.leave_after_handlers({ask})
sys.exit(0)
"""


def _run(tmp_path: Path, *, install: bool, ask: int | None) -> tuple[subprocess.CompletedProcess[str], Path]:
    marker = tmp_path / "marker"
    code = SCRIPT.format(install=install, marker=str(marker), ask=ask)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return done, marker


@pytest.mark.parametrize("ask", [0, 1])
def test_a_finished_run_leaves_with_its_code_after_the_other_handlers(tmp_path: Path, ask: int) -> None:
    done, marker = _run(tmp_path, install=True, ask=ask)
    assert done.returncode == ask
    assert done.stdout == "summary line"
    assert marker.read_text() == "handler ran"


@pytest.mark.parametrize("install", [True, False])
def test_without_both_calls_the_exit_is_pythons_own(tmp_path: Path, install: bool) -> None:
    done, marker = _run(tmp_path, install=install, ask=None if install else 5)
    assert done.returncode == 0  # not 5: a CliRunner in a test session never had `install` called
    assert done.stdout == "summary line"
    assert marker.read_text() == "handler ran"
