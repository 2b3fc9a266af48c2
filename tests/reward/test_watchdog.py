"""The watchdog stops a call in its own thread at its deadline, and nothing lands in the thread after the call
ended (no timed assertions: a stopped call is one whose loop never reached its end)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from contextvars import ContextVar

import pytest

from prm_factory.reward.watchdog import PastDeadline, run_until
from prm_factory.verifiers.math import bounded

SEEN: ContextVar[str] = ContextVar("seen", default="outside")

# a trace function (coverage's) runs Python where the exception lands: the product does not interrupt a
# traced thread (bounded.can_interrupt), and these tests, which do, are left to untraced runs
pytestmark = pytest.mark.skipif(not bounded.can_interrupt(), reason="a trace function is set")


def spin(seconds: float, ended: list[bool] | None = None) -> str:
    """Pure Python for `seconds` (no C call that releases the GIL or blocks the exception)."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        pass
    if ended is not None:
        ended.append(True)
    return "ended"


def test_a_call_past_its_deadline_is_stopped_and_one_before_it_returns() -> None:
    ended: list[bool] = []
    with pytest.raises(PastDeadline):
        run_until(time.time() + 0.2, spin, 30.0, ended)
    assert ended == []
    assert run_until(time.time() + 30.0, spin, 0.05) == "ended"
    assert run_until(time.time() + 0.3, spin, 0.0) == "ended"
    spin(0.5)  # past that call's deadline: nothing lands here
    assert bounded._RAISED == {} and bounded._IN_STREAM == {}


def test_a_context_variable_set_in_the_call_stays_in_it() -> None:
    def set_it() -> str:
        SEEN.set("inside")
        return SEEN.get()

    assert run_until(time.time() + 30.0, set_it) == "inside" and SEEN.get() == "outside"


def test_each_thread_has_its_own_deadline() -> None:
    outcomes: dict[str, str] = {}

    def call(name: str, deadline_s: float, seconds: float) -> None:
        try:
            outcomes[name] = run_until(time.time() + deadline_s, spin, seconds)
        except PastDeadline:
            outcomes[name] = "stopped"

    threads = [
        threading.Thread(target=call, args=("short", 0.2, 30.0)),
        threading.Thread(target=call, args=("long", 60.0, 0.6)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == {"short": "stopped", "long": "ended"}


def test_many_calls_ending_near_their_deadlines_leave_nothing_behind() -> None:
    stopped = escaped = 0
    for index in range(200):
        try:
            try:
                run_until(time.time() + (index % 7) * 0.001, spin, (index % 5) * 0.001)
            except PastDeadline:
                stopped += 1
            spin(0.002)  # the caller's own code after the call: nothing may land here
        except PastDeadline:
            escaped += 1
    assert escaped == 0 and bounded._RAISED == {} and bounded._IN_STREAM == {}


def test_a_trace_function_set_after_a_stopped_call_does_not_stall_the_thread() -> None:
    # PyThreadState_SetAsyncExc(id, NULL), which settling once used, left CPython 3.11's pending-exception
    # signal set with nothing to deliver; a trace function (coverage, a debugger) then stalled the next
    # call at its entry for good: this suite hung under coverage. A fresh interpreter, as a tracer may come
    # at any time after the first stopped call.
    script = """
import sys, time
from prm_factory.reward.watchdog import PastDeadline, run_until
def spin(seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        pass
try:
    run_until(time.time() + 0.2, spin, 30.0)
except PastDeadline:
    pass
sys.settrace(lambda *args: None)
def called():
    return "called"
print(called())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "called", done.stderr[-2000:]
