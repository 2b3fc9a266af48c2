"""The opt-in SymPy budget of a response: what it cuts is `unverifiable` (never `incorrect`), the final
answer is graded as without it, and a cut stream never leaks a late item into the next one."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from prm_factory.reward import RewardScorer, score_steps
from prm_factory.reward.budget import budget_until, without_cut_positives
from prm_factory.reward.labelling import RewardRequestError
from prm_factory.reward.scorer import make_request
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.bounded import TIMED_OUT, BoundedPool, PoolConfig

LATEX = "latex_claims"
TARGET = f"prm_factory.verifiers.math.symbolic:{LATEX}"
BOMB = r"5^{5^{5^{5}}} + \sqrt{2} = 3"  # SymPy tries to build 5^(5^3125): never finishes by itself


@pytest.fixture(scope="module")
def pool() -> Iterator[BoundedPool]:
    pool = BoundedPool(PoolConfig(workers=1))
    list(pool.run_stream(TARGET, [(r"\sqrt{4} = 2", {})], 1, 120.0))  # started outside any budget
    yield pool
    finishing = list(pool._finishing)
    pool.close()
    assert all(w.process.wait(timeout=30) is not None for w in finishing)  # no bomb outlives the pool


def test_a_budget_cuts_a_running_item_and_the_next_stream_gets_only_its_own_items(pool) -> None:
    with budget_until(time.time() + 1.0):
        cut = list(pool.run_stream(TARGET, [(BOMB, {})], 1, 8.0))  # the budget ends the wait first
    assert cut == [TIMED_OUT] and pool.cut >= 1 and pool.restarts == 0
    assert pool._finishing  # the bomb runs on in the background, up to the per-item limit
    (after,) = list(pool.run_stream(TARGET, [(r"\sqrt{16} = 5", {})], 1, 120.0))
    assert after[0][:2] == (r"\sqrt{16} = 5", False)


def test_a_stream_started_past_its_budget_touches_no_worker(pool) -> None:
    cut_before = pool.cut
    with budget_until(time.time() - 1.0):
        assert list(pool.run_stream(TARGET, [(r"\sqrt{9} = 3", {})], 1, 120.0)) == [TIMED_OUT]
    assert pool.cut == cut_before + 1


def test_the_worker_stops_a_stream_at_the_budget_and_serves_the_next_one() -> None:
    pool = BoundedPool(PoolConfig(workers=1))
    try:
        list(pool.run_stream(TARGET, [(r"\sqrt{4} = 2", {})], 1, 120.0))
        items = [(rf"\sqrt{{{n * n}}} + \frac{{1}}{{{n}}} = {n}", {}) for n in range(2, 40)]
        with budget_until(time.time() + 0.001):
            cut = list(pool.run_stream(TARGET, items, len(items), 120.0))
        assert len(cut) < len(items) and cut[-1] == TIMED_OUT
        assert all(result[0][1] is False for result in cut[:-1])  # the items it ran, as without a budget
        with budget_until(time.time() + 120.0):
            (result,) = list(pool.run_stream(TARGET, [(r"\sqrt{16} = 4", {})], 1, 120.0))
        assert result[0][1] is True and pool.restarts == 0  # the same worker, never restarted
    finally:
        pool.close()


def test_with_a_budget_of_zero_the_sympy_claims_are_unverifiable_and_the_outcome_is_graded() -> None:
    scorer = RewardScorer(deadline_s=None)  # in this process: the subject is the verdicts
    try:
        prompt, response = "What is $\\sqrt{16}$?", "We have $\\sqrt{16} = 5$.\n\nThe answer is $5$."
        full = score_steps(prompt, response, answer="4", scorer=scorer)
        cut = score_steps(prompt, response, answer="4", scorer=scorer, budget_s=0)
    finally:
        scorer.close()
    verifier = lambda result: next(s for s in result.steps[0].sources if s.source == "verifier")  # noqa: E731
    assert verifier(full).verdict == "incorrect"  # sqrt(16) = 5 is read by SymPy
    assert verifier(cut).verdict == "unverifiable"  # its SymPy item was never run
    assert cut.steps[0].p_correct is None or cut.steps[0].p_correct >= full.steps[0].p_correct
    assert cut.outcome == full.outcome == "incorrect"


def test_a_budget_must_be_a_number_of_seconds() -> None:
    for bad in (-1, "1", True):
        with pytest.raises(RewardRequestError, match="budget_s"):
            make_request("q", "1+1=2", budget_s=bad)
    assert make_request("q", "1+1=2", budget_s=1).budget_s == 1.0


def test_after_a_cut_the_verifier_calls_no_step_correct() -> None:
    labels = (
        StepLabel("verifier", "correct", None, "2 claim(s) hold"),  # its failing claim may have been cut
        StepLabel("verifier", "incorrect", None, "claim '2+2 = 5' is false"),
        None,
    )
    kept = without_cut_positives(labels)
    assert [x.verdict if x else None for x in kept] == ["unverifiable", "incorrect", None]
    assert kept[0].reason.startswith("the response's budget cut")
