"""Leave a finished `prm-factory run` without the interpreter's teardown of torch, vLLM and Prefect.

After a run has printed its summary every exit handler still runs as usual: Prefect's services drain and
its temporary server stops, the engine's processes are shut down, worker pools close. What is left after
them is the interpreter freeing every module and object one by one, 7-13 s on a 2-core machine with nothing
to save. `install()` registers one exit handler at the CLI's import, before any heavy library registers its
own, so it runs last; once `leave_after_handlers(code)` has been called it flushes the streams and logging
and ends the process with `code`. Without that call (other commands, a crashed run) the exit is Python's own.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys

_code: int | None = None
_installed = False


def install() -> None:
    """Register the last-running exit handler (idempotent)."""
    global _installed
    if not _installed:
        atexit.register(_leave)
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
