"""How the console script ends: after a finished run without the interpreter's teardown, and on SIGTERM
without leaving the processes it started behind.

After a run has printed its summary every exit handler still runs as usual: Prefect's services drain and
its temporary server stops, the engine's processes are shut down, worker pools close. What is left after
them is the interpreter freeing every module and object one by one, 7-13 s on a 2-core machine with nothing
to save. `install()` registers one exit handler at the CLI's import, before any heavy library registers its
own, so it runs last; once `leave_after_handlers(code)` has been called it flushes the streams and logging
and ends the process with `code`. Without that call (other commands, a crashed run) the exit is Python's own.

A scheduler, a container runtime or a timeout stops a command with SIGTERM, whose default action ends the
process at once: no exit handler ran, so the temporary Prefect server (a uvicorn process of about 300 MB),
the engine's and the SymPy workers' processes were left running. `install()` also makes SIGTERM an exit:
the command ends as on Ctrl-C (SystemExit 143: `finally` blocks and exit handlers run, which stop those
processes), and if it has not ended within GRACE_SECONDS (a worker thread still inside a call keeps the
interpreter from exiting) the processes it started are stopped and it exits with 143 anyway. What a run
committed and the chunks it staged stay (the commit is atomic, staged chunks are resumed), as after SIGKILL.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
import time

_code: int | None = None
_installed = False
_stopping = False
GRACE_SECONDS = 10.0
"""How long a SIGTERM'd command may take to end through its exit handlers before it is ended by force."""
STOPPED = 128 + signal.SIGTERM


def install() -> None:
    """Register the last-running exit handler and the SIGTERM handler (idempotent)."""
    global _installed
    if not _installed:
        atexit.register(_leave)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _on_sigterm)
        _installed = True


def installed() -> bool:
    """Whether this process is the console script (tests calling the Typer app in-process are not)."""
    return _installed


def leave_after_handlers(code: int) -> None:
    """Ask for the process to end with `code` once the other exit handlers have run."""
    global _code
    _code = code


def _leave() -> None:
    if _code is None or not _installed:
        return
    logging.shutdown()  # registered before this handler, so it would run after it
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    os._exit(_code)


def _on_sigterm(signum: int, _frame: object) -> None:
    """SIGTERM as an exit (module docstring); a second SIGTERM stops the children and ends at once."""
    global _stopping
    if _stopping:
        _force_exit_after(0.0)
    _stopping = True
    grace = threading.Thread(
        target=_force_exit_after, args=(GRACE_SECONDS,), name="sigterm-grace", daemon=True
    )
    grace.start()
    raise SystemExit(STOPPED)


def _force_exit_after(seconds: float) -> None:
    """After `seconds`, stop the processes this one started and end it (143)."""
    time.sleep(seconds)
    stop_children()
    os._exit(STOPPED)


def stop_children(timeout: float = 5.0) -> None:
    """Stop every process this one started: SIGTERM, then SIGKILL for those still alive after `timeout`."""
    import psutil

    children = psutil.Process().children(recursive=True)
    for child in children:
        try:
            child.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(children, timeout=timeout)
    for child in alive:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
