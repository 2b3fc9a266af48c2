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


HANGING_SOURCE = '''
"""A plug-in source that writes a mark and then hangs inside its first batch call: a command mid-work."""
import os
import time
from pathlib import Path

from prm_factory.labels.source import BaseSource


class Hang(BaseSource):
    name = "hang"
    version = "1.0"

    def label(self, chains, prior, setup):
        Path(os.environ["PRM_HANGING"]).write_text("in the call")
        time.sleep(600)
        return [None for _ in chains]


SOURCE = Hang()
'''


def _descendants(pid: int) -> list[int]:
    import psutil

    return [child.pid for child in psutil.Process(pid).children(recursive=True)]


def test_a_command_stopped_with_sigterm_stops_the_processes_it_started(tmp_path: Path) -> None:
    """`prm-factory label` stopped with SIGTERM while a source is inside a call: the command ends with 143
    and its temporary Prefect server (uvicorn) and every other process it started end too. The call sleeps
    on in a worker thread, which the interpreter's exit would wait for: the forced stop after the grace
    ends it (before, the command died at once and left the server running)."""
    import os
    import signal
    import time

    import psutil

    site = tmp_path / "site"
    (site / "prm_hang").mkdir(parents=True)
    (site / "prm_hang" / "__init__.py").write_text(HANGING_SOURCE)
    chains = tmp_path / "chains.jsonl"
    chains.write_text('{"id": "r0", "problem": "What is 1 + 2?", "steps": ["1 + 2 = 3"], "answer": "3"}\n')
    config = tmp_path / "config.toml"
    config.write_text('[labels]\nsources = ["prm_hang:SOURCE"]\n')
    mark = tmp_path / "hanging"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_API")}
    env |= {  # no server given: the command starts its own temporary one, as on a user's machine
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "PRM_HANGING": str(mark),
    }
    exe = Path(sys.executable).with_name("prm-factory")
    command = [str(exe), "label", str(chains), "--config", str(config), "--dataset", str(tmp_path / "ds")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 300
        while not mark.is_file():
            assert process.poll() is None, process.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the source was never called"
            time.sleep(0.2)
        started = _descendants(process.pid)
        servers = [p for p in started if "uvicorn" in " ".join(psutil.Process(p).cmdline())]
        assert servers, "no temporary Prefect server was started"
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, out[-3000:]
    deadline = time.monotonic() + 30
    while [p for p in started if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]:
        assert time.monotonic() < deadline, f"left running: {[p for p in started if psutil.pid_exists(p)]}"
        time.sleep(0.2)
