"""score_steps / score_batch: the reward's shape, its deadline (a late check is `unverifiable`, never an
error), its thread safety, and the same verdicts in a worker as in the caller."""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from prm_factory.reward import RewardRequestError, RewardScorer, score_batch, score_steps
from prm_factory.reward.scorer import make_request
from prm_factory.verifiers.math.bounded import can_interrupt

# the caller's own path needs an interruptible thread: none under a trace function (coverage, a debugger)
in_caller_only = pytest.mark.skipif(not can_interrupt(), reason="a trace function is set: no in-caller path")

PROMPT = "Tom has 48 apples and gives half away. How many are left?"
WRONG = "Half of 48 is 48/2 = 25.\n\nSo he has 25 left.\n\nThe answer is 25."
SOLUTION = "48/2=<<48/2=24>>24\n#### 24"
RIGHT = "Half of 48 is 48/2 = 24.\n\nSo he has 24 left.\n\nThe answer is 24."
# not readable by the exact fast path, so it reaches SymPy, which tries to build 5^(5^3125)
BOMB = r"We get \(5^{5^{5^{5}}} + \sqrt{2} = 3\)." + "\n\n" + r"Then \(\sqrt{16} = 4\)."


def test_a_wrong_step_is_found_with_its_span_reason_and_p_correct(scorer) -> None:
    result = score_steps(PROMPT, WRONG, answer="24", solution=SOLUTION, scorer=scorer)
    assert result.status == "ok" and result.outcome == "incorrect" and result.first_error == 0
    first = result.steps[0]
    assert WRONG[first.start : first.end] == "Half of 48 is 48/2 = 25."
    assert first.verdict == "incorrect" and first.p_correct is not None and first.p_correct < 0.5
    assert "expected 24" in next(v.reason for v in first.sources if v.source == "verifier")
    assert result.score == first.p_correct  # min over the steps
    right = score_steps(
        PROMPT, RIGHT, answer="24", solution=SOLUTION, scorer=scorer, aggregate="outcome_penalty"
    )
    assert right.first_error is None and right.outcome == "correct" and right.score > result.score
    assert right.to_dict()["steps"][0]["sources"][0]["verdict"] == "correct"


def test_a_bad_request_is_refused_before_any_work(scorer) -> None:
    with pytest.raises(RewardRequestError, match="response must be a string"):
        score_steps(PROMPT, None, scorer=scorer)  # type: ignore[arg-type]
    with pytest.raises(RewardRequestError, match="no label source"):
        score_steps(PROMPT, RIGHT, sources=["verifier", "nope"], scorer=scorer)
    with pytest.raises(ValueError, match="unknown aggregation"):
        score_steps(PROMPT, RIGHT, aggregate="median", scorer=scorer)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_empty_batch_is_an_empty_answer(workers: int) -> None:
    """A trainer's empty query list (the reward server's fuzz found a 500 for it): no share, no worker."""
    scorer = RewardScorer(workers=workers)
    try:
        assert score_batch([], scorer=scorer) == []
    finally:
        scorer.close()


@pytest.mark.parametrize(
    "in_caller", [pytest.param(True, marks=in_caller_only), False], ids=["in-the-caller", "in-a-worker"]
)
def test_a_response_past_its_deadline_is_unverifiable_and_the_next_is_scored(in_caller: bool) -> None:
    scorer = RewardScorer(workers=1, deadline_s=1.0, in_caller=in_caller)
    try:
        late, after = score_batch(
            [
                {"prompt": "Compute.", "response": BOMB},
                {"prompt": PROMPT, "response": WRONG, "answer": "24", "solution": SOLUTION},
            ],
            scorer=scorer,
        )
    finally:
        scorer.close()
    assert late.status == "timed_out" and "deadline of 1 s" in late.reason
    assert [s.verdict for s in late.steps] == ["unverifiable", "unverifiable"] and late.outcome == "timeout"
    assert after.status == "ok" and after.first_error == 0  # in a fresh worker


def test_threads_share_a_scorer_and_get_what_one_thread_gets(scorer) -> None:
    items = [
        {"prompt": PROMPT, "response": WRONG if i % 2 else RIGHT, "answer": "24", "solution": SOLUTION}
        for i in range(16)
    ]
    alone = [score_batch([item], scorer=scorer)[0].first_error for item in items[:2]]
    with ThreadPoolExecutor(8) as threads:
        together = list(threads.map(lambda item: score_batch([item], scorer=scorer)[0].first_error, items))
    assert together == alone * 8 == [None, 0] * 8


@in_caller_only
def test_the_caller_path_gives_the_worker_path_verdicts(scorer) -> None:
    unbounded = RewardScorer(deadline_s=None)
    in_a_worker = RewardScorer(workers=1, deadline_s=30.0, in_caller=False)
    request = make_request(PROMPT, WRONG, answer="24")
    try:
        (here,) = unbounded.score([request])
        (bounded_here,) = scorer.score([request])
        (there,) = in_a_worker.score([request])
    finally:
        in_a_worker.close()
    assert here.steps == bounded_here.steps == there.steps and here.score == there.score


@in_caller_only
def test_a_small_math_response_is_labelled_in_the_caller_and_the_rest_in_a_worker(
    scorer, monkeypatch
) -> None:
    sent: list[int] = []
    run_slice = scorer._run_slice
    monkeypatch.setattr(
        scorer, "_run_slice", lambda requests: sent.append(len(requests)) or run_slice(requests)
    )
    small = make_request(PROMPT, WRONG, answer="24")
    large = make_request(PROMPT, WRONG + "\n\n" + "We keep counting apples. " * 400, answer="24")
    assert scorer.fits_caller(small) and not scorer.fits_caller(large)
    assert scorer.score([small])[0].first_error == 0 and sent == []  # no hop to a worker
    assert scorer.score([large])[0].first_error == 0 and sent == [1]
    with scorer._caller_lock:  # another call is labelling in the caller: this one goes to a worker
        assert scorer.score([small])[0].first_error == 0 and sent == [1, 1]
    code = make_request(PROMPT, "print(1)", domain="code")
    assert not scorer.fits_caller(code) and not RewardScorer(deadline_s=1.0, in_caller=False).fits_caller(
        small
    )


@in_caller_only
def test_a_batch_labels_one_share_in_the_caller_beside_the_workers(monkeypatch) -> None:
    scorer = RewardScorer(workers=2, deadline_s=30.0)
    monkeypatch.setattr(scorer, "_warmed", True)  # no worker process: the workers' share is a stand-in
    sent: list[list[str]] = []

    def in_a_worker(requests):
        sent.append([r.response for r in requests])
        return [("failed", "the stand-in worker", 0.0)] * len(requests)

    monkeypatch.setattr(scorer, "_run_slice", in_a_worker)
    responses = [WRONG, RIGHT, RIGHT, WRONG]
    try:
        results = score_batch(
            [{"prompt": PROMPT, "response": r, "answer": "24"} for r in responses], scorer=scorer
        )
    finally:
        scorer.close()
    assert sent == [[RIGHT, WRONG]]  # the second share; the first was labelled here, in order
    assert [r.status for r in results] == ["ok", "failed", "ok", "failed"]
    assert results[0].first_error == 0 and results[2].first_error is None


@in_caller_only
def test_a_response_whose_readings_outrun_the_deadline_is_stopped_there_and_the_next_is_labelled_here(
    monkeypatch,
) -> None:
    scorer = RewardScorer(workers=1, deadline_s=0.3)
    scorer.warm()
    sent: list[int] = []
    run_slice = scorer._run_slice
    monkeypatch.setattr(
        scorer, "_run_slice", lambda requests: sent.append(len(requests)) or run_slice(requests)
    )
    # a reading that outruns the deadline in pure Python: a stand-in verifier call that spins first (the
    # worker process keeps the real one); the watchdog stops it, so it never reaches its end
    from prm_factory.verifiers.math.verifier import MathVerifier

    real_check = MathVerifier.check_steps
    ended: list[bool] = []

    def slow_check(self, problem, steps):
        until = time.monotonic() + 30.0
        while time.monotonic() < until:
            pass
        ended.append(True)
        return real_check(self, problem, steps)

    monkeypatch.setattr(MathVerifier, "check_steps", slow_check)
    slow = make_request("Compute.", "2^2^2^2 = 16. " * 80)
    assert scorer.fits_caller(slow)
    try:
        (late,) = scorer.score([slow])
        assert late.status == "timed_out" and {s.verdict for s in late.steps} == {"unverifiable"}
        assert ended == [] and not scorer._caller_lock.locked()  # stopped, not left running
        monkeypatch.setattr(MathVerifier, "check_steps", real_check)
        (after,) = scorer.score([make_request(PROMPT, WRONG, answer="24")])
        assert after.status == "ok" and after.first_error == 0 and sent == []  # labelled here again
        threading.Event().wait(0.5)  # past the first deadline: nothing more lands in this thread
    finally:
        scorer.close()


@in_caller_only
def test_responses_stopped_at_random_points_leave_the_scorer_as_it_was() -> None:
    """Deadlines of a fraction of a millisecond to 50 ms stop responses anywhere in the verifier, its SymPy
    streams included (LaTeX steps): no exception reaches the caller, nothing is left raised or open, and
    the scorer then gives every response the verdicts it gives without a deadline."""
    from prm_factory.reward.watchdog import PastDeadline
    from prm_factory.verifiers.math import bounded

    data = Path(__file__).resolve().parents[2] / "evaluation" / "data" / "altered_gsm8k.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()[:40]]
    items = [{"prompt": r["problem"], "response": "\n\n".join(r["steps"])} for r in rows]
    latex = [r"We have $\sqrt{16} = 4$.", r"So $x^2 - 1 = (x-1)(x+1)$ and $\frac{6}{4} = \frac{3}{2}$."]
    items += [{"prompt": "Simplify.", "response": "\n\n".join(latex[: 1 + k % 2])} for k in range(10)]
    unbounded = RewardScorer(deadline_s=None)
    want = [[s.verdict for s in score_steps(**item, scorer=unbounded).steps] for item in items]
    scorer = RewardScorer(workers=1, deadline_s=30.0)
    scorer.warm()
    statuses, escaped, rng = set(), 0, random.Random(1)
    try:
        for item in rng.sample(items * 3, len(items) * 3):
            scorer.deadline_s = rng.choice([0.0005, 0.002, 0.008, 0.05])
            try:
                statuses.add(score_steps(**item, scorer=scorer).status)
                sum(range(1000))  # the caller's own code after the call: nothing may land here
            except PastDeadline:
                escaped += 1
        scorer.deadline_s = 30.0
        got = [[s.verdict for s in score_steps(**item, scorer=scorer).steps] for item in items]
    finally:
        scorer.close()
    assert escaped == 0 and bounded._RAISED == {} and bounded._IN_STREAM == {}
    assert "timed_out" in statuses and got == want


def test_a_scorer_warmed_for_competition_starts_the_gates_pool_before_the_first_request() -> None:
    """`RewardScorer(competition=True)`: each worker's certainty-gate pool and LaTeX DFA start in `warm`,
    so no competition response pays them; a plain scorer leaves them to the traffic (issue 49)."""
    from prm_factory.reward import worker

    assert RewardScorer(workers=1)._warm_target.endswith(":warm")
    scorer = RewardScorer(workers=1, competition=True)
    assert scorer._warm_target.endswith(":warm_competition")
    scorer.close()
    assert list(worker.warm_competition([make_request("Warm up.", worker.WARM_STEP)])) == [True]
    from prm_factory.verifiers.math import bounded

    pool = bounded.default_pool()
    workers = [pool._idle.get() for _ in range(pool.config.workers)]
    for started in workers:
        pool._idle.put(started)
    assert workers and all(started is not None and started.alive() for started in workers)


def test_under_a_trace_function_nothing_is_labelled_in_the_caller() -> None:
    # an exception raised into a traced thread may land in the tracer's own Python (under coverage one left
    # its data lock held): the scorer sends every request to its workers while a trace function is set
    scorer = RewardScorer(workers=1, deadline_s=30.0)
    small = make_request(PROMPT, RIGHT, solution=SOLUTION)
    before = sys.gettrace()
    sys.settrace(lambda *args: None)
    try:
        assert not can_interrupt() and not scorer.fits_caller(small)
    finally:
        sys.settrace(before)
    assert scorer.fits_caller(small) == (before is None)
