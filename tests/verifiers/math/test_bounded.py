"""SymPy work under hard limits: bombs return within the limit, the pool recovers, threads are fine."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator
from multiprocessing.queues import Queue

import pytest

from prm_factory.verifiers.math.answers import answers_equivalent_many, grade_answer
from prm_factory.verifiers.math.bounded import (
    TIMED_OUT,
    WORKER_FAILED,
    BoundedPool,
    PoolConfig,
    default_pool,
    interrupt,
    run_items,
    settle,
    streams_until,
)
from prm_factory.verifiers.math.claims import check_steps
from prm_factory.verifiers.math.latex_claims import check_hard_runs_bounded

LIMIT_S = 2.5  # generous: legitimate items take milliseconds, but the test machine may be busy
# Not readable by the exact fast path (a radical), so it reaches SymPy, which tries to build 5^(5^3125).
BOMB = r"5^{5^{5^{5}}} + \sqrt{2}"


@pytest.fixture(scope="module")
def pool() -> Iterator[BoundedPool]:
    pool = BoundedPool(PoolConfig(workers=1))
    yield pool
    pool.close()


def test_answer_bomb_times_out_within_the_limit_and_the_pool_recovers(pool: BoundedPool) -> None:
    answers_equivalent_many([(r"\sqrt{4}", "2")], pool=pool)  # warm the worker: startup is not the limit
    started = time.monotonic()
    bomb, after = answers_equivalent_many([(BOMB, "3"), (r"\sqrt{9}", "3")], timeout_s=LIMIT_S, pool=pool)
    elapsed = time.monotonic() - started
    assert bomb.label == "timeout" and "timed out" in bomb.reason  # not judged: never incorrect
    assert after.label == "correct"  # the item after the bomb ran in a fresh worker
    assert elapsed < LIMIT_S + 20  # the limit plus one worker restart, never the bomb's hours
    assert pool.restarts >= 1


def test_claim_bomb_is_unverifiable_and_other_steps_keep_their_verdicts(pool: BoundedPool) -> None:
    steps = [r"\(\sqrt{16} = 4\)", rf"so \({BOMB} = 3\)", r"\(\sqrt{25} = 6\)"]
    checker = lambda items: check_hard_runs_bounded(items, timeout_s=LIMIT_S, pool=pool)  # noqa: E731
    verdicts = check_steps(steps, hard_checker=checker)
    assert [v.label for v in verdicts] == ["correct", "unverifiable", "incorrect"]
    assert "timed out" in verdicts[1].evidence["claims"][0]["reason"]


def test_run_items_reports_a_late_item_as_timed_out(pool: BoundedPool) -> None:
    outcomes = run_items(
        "prm_factory.verifiers.math.answer_symbolic:answer_equivalence", [("1", "1")], LIMIT_S, pool
    )
    assert outcomes[0][0] == "correct" and TIMED_OUT not in outcomes


def test_latex_assignments_carry_forward_in_the_worker(pool: BoundedPool) -> None:
    checker = lambda items: check_hard_runs_bounded(items, timeout_s=LIMIT_S, pool=pool)  # noqa: E731
    steps = [r"Let \(r = \sqrt{9}\)", r"Then \(r^2 + \sqrt{4} = 11\)", r"and \(\sqrt{r} = 2\)"]
    assert [v.label for v in check_steps(steps, hard_checker=checker)] == [
        "unverifiable",
        "correct",
        "incorrect",
    ]


def test_verification_from_threads(pool: BoundedPool) -> None:
    results: dict[int, str] = {}

    def work(index: int) -> None:
        results[index] = grade_answer(rf"\boxed{{\sqrt{{{index * index}}}}}", str(index), pool=pool).label

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2, 6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {i: "correct" for i in range(2, 6)}


def test_a_crashed_worker_is_worker_failed_and_the_pool_recovers(pool: BoundedPool) -> None:
    # faulthandler._sigsegv kills the worker with SIGSEGV: a crash in C code, not a Python exception
    assert run_items("faulthandler:_sigsegv", [False], LIMIT_S, pool) == [WORKER_FAILED]
    after = run_items(
        "prm_factory.verifiers.math.answer_symbolic:answer_equivalence", [("2", "2")], LIMIT_S, pool
    )
    assert after[0][0] == "correct"


def test_an_exception_in_the_worker_is_worker_failed(pool: BoundedPool) -> None:
    assert run_items("json:loads", ["not json"], LIMIT_S, pool) == [WORKER_FAILED]


def test_a_fresh_worker_has_preloaded_sympy_and_math_verify() -> None:
    fresh = BoundedPool(PoolConfig(workers=1))
    try:
        names = ["sympy", "math_verify", "prm_factory.verifiers.math.answer_symbolic", "not_a_module"]
        loaded = run_items("prm_factory.verifiers.math.bounded:imported", names, LIMIT_S, fresh)
        assert loaded == [True, True, True, False]
    finally:
        fresh.close()


def _grade_in_this_process(results: Queue) -> None:
    fresh = BoundedPool(PoolConfig(workers=1))
    try:
        outcome = run_items(
            "prm_factory.verifiers.math.answer_symbolic:answer_equivalence", [(r"\sqrt{4}", "2")], 60, fresh
        )
        results.put(outcome[0][0])
    except BaseException as exc:  # reported to the parent, which fails the test with it
        results.put(f"{type(exc).__name__}: {exc}")
    finally:
        fresh.close()


def test_workers_start_inside_a_daemonic_process() -> None:
    # Dask worker processes are daemonic (distributed.worker.daemon): multiprocessing refuses children there
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    process = context.Process(target=_grade_in_this_process, args=(results,), daemon=True)
    process.start()
    try:
        assert results.get(timeout=180) == "correct"
    finally:
        process.join(timeout=30)


def test_the_worker_warm_up_runs_each_hot_path_without_error() -> None:
    """The warm-up swallows errors (it only buys the first item its head start), so pin here that it works."""
    import importlib

    from prm_factory.verifiers.math.bounded import _WARM_UP

    firsts = []
    for target, payload in _WARM_UP:
        module_name, _, function_name = target.partition(":")
        results = list(getattr(importlib.import_module(module_name), function_name)(payload))
        assert len(results) == len(payload)
        firsts.append(results[0])
    answer, claims = firsts
    assert answer[0] == "correct" and claims[0][1] is True


def test_a_thread_deadline_cuts_a_stream_of_the_process_wide_pool_too() -> None:
    """What the certainty gate sends with `run_items` and no pool stops at the caller's deadline (a reward
    response's budget or deadline): the worker is not killed, it finishes in the background."""
    default_pool().ready()  # started outside the deadline
    target = "prm_factory.verifiers.math.symbolic:latex_claims"
    restarts = default_pool().restarts
    started = time.monotonic()
    with streams_until(time.time() + 0.5) as deadline:
        with streams_until(None) as inner:  # an enclosing deadline holds inside one with none
            (outcome,) = run_items(target, [(BOMB + " = 3", {})], 5.0)
    assert outcome == TIMED_OUT and inner is not None and inner.cut and deadline is not None and deadline.cut
    assert time.monotonic() - started < 4 and default_pool().restarts == restarts
    default_pool().ready()  # waits for the bomb's item limit, then starts its replacement
    (after,) = run_items(target, [(r"\sqrt{16} = 4", {})], 60.0)
    assert after[0][1] is True


def test_under_a_deadline_a_stream_waits_for_a_worker_that_starts_until_the_deadline() -> None:
    """An empty slot (a fresh pool, a worker killed at the per-item limit) is filled in the background and
    the stream uses it when it comes up in time: a deadline cuts waits, never a check `label` would run."""
    pool = BoundedPool(PoolConfig(workers=1))
    target = "prm_factory.verifiers.math.symbolic:latex_claims"
    try:
        with streams_until(time.time() + 120.0) as deadline:
            (outcome,) = run_items(target, [(r"\sqrt{16} = 4", {})], 60.0, pool)
        assert outcome != TIMED_OUT and outcome[0][1] is True and deadline is not None and not deadline.cut
        with streams_until(time.time() - 1.0) as past:
            assert run_items(target, [(r"\sqrt{9} = 3", {})], 60.0, pool) == [TIMED_OUT] and past.cut
    finally:
        pool.close()


def test_a_deadline_left_open_by_an_interruption_is_closed_quietly_from_another_context() -> None:
    """An interruption can land between `streams_until`'s set and the `with` taking hold: the context
    manager is left open in the context copy the call ran in (reward.watchdog.run_until) and finalized
    later wherever it is collected. That close neither raises (it was an unraisable warning at garbage
    collection) nor touches the collecting context's deadline."""
    from contextvars import copy_context

    from prm_factory.verifiers.math import bounded

    left_open = streams_until(time.time() + 60.0)
    call = copy_context()
    opened = call.run(left_open.__enter__)
    assert opened is not None and call.run(bounded._DEADLINE.get) is opened
    with streams_until(time.time() + 30.0) as here:
        left_open.gen.close()  # what the garbage collector does with the abandoned generator
        assert bounded._DEADLINE.get() is here
    assert bounded._DEADLINE.get() is None


class Stop(BaseException):
    """What a watchdog raises into a thread past its deadline (reward/watchdog.py)."""


def test_a_thread_is_interrupted_outside_a_stream_never_inside_and_then_at_the_next_one(
    pool: BoundedPool,
) -> None:
    """`interrupt` waits while the thread holds a stream open (its slot must go back), stops its pure Python
    afterwards, and a thread that swallowed the exception gets it again when it opens a stream, before a
    slot is taken: the pool still serves the next stream."""
    target = "prm_factory.verifiers.math.symbolic:latex_claims"
    run_items(target, [(r"\sqrt{4} = 2", {})], 60.0, pool)  # the worker starts outside the test's steps
    opened, close, outcome = threading.Event(), threading.Event(), []

    def labelling() -> None:
        stream = pool.run_stream(target, [(r"\sqrt{9} = 3", {})], 1, 60.0)
        next(stream)  # the stream is open: its slot is held until it ends
        opened.set()
        close.wait()
        assert list(stream) == []  # its end read: the slot goes back
        try:
            while True:  # pure Python, until the exception lands
                pass
        except Stop:
            outcome.append("stopped")
        try:  # swallowed above: the next stream raises it at its start
            list(pool.run_stream(target, [(r"\sqrt{16} = 4", {})], 1, 60.0))
            outcome.append("streamed")
        except Stop:
            outcome.append("stopped at the stream")
        settle(threading.get_ident())

    thread = threading.Thread(target=labelling)
    thread.start()
    opened.wait(120)
    assert interrupt(thread.ident, Stop) is False  # inside the stream
    close.set()
    while not interrupt(thread.ident, Stop):
        time.sleep(0.01)
    thread.join(120)
    assert outcome == ["stopped", "stopped at the stream"]
    (after,) = run_items(target, [(r"\sqrt{16} = 4", {})], 60.0, pool)
    assert after[0][1] is True
