"""What a reward worker runs: one result per request, a refused request and a broken check reported with
their reasons (never raised into the trainer)."""

from __future__ import annotations

from prm_factory.reward.labelling import Context, RewardRequest
from prm_factory.reward.worker import label_one, score_requests


def test_one_result_per_request_with_refusals_and_failures_named(monkeypatch) -> None:
    requests = [RewardRequest("q", "2 + 2 = 5"), RewardRequest("q", "1 + 1 = 2", sources=("mc",))]
    (ok, labelled), (refused, reason) = list(score_requests(requests))
    assert ok == "ok" and labelled.labels[0][0].verdict == "incorrect"
    assert refused == "refused" and "engine" in reason

    import prm_factory.reward.worker as worker

    def broken(request, context, deadline=None):
        raise RuntimeError("a dead sandbox")

    monkeypatch.setattr(worker, "label_response", broken)
    assert label_one(requests[0], Context()) == ("failed", "RuntimeError: a dead sandbox")


def test_warm_starts_the_process_wide_sympy_worker_too() -> None:
    """The certainty gate's pool: a budget cuts a stream that finds no worker (it starts one in the
    background), so a worker starts it before any timed request."""
    from prm_factory.reward.worker import WARM_STEP, warm
    from prm_factory.verifiers.math.bounded import default_pool

    assert list(warm([RewardRequest("Warm up.", WARM_STEP)])) == [True]
    pool = default_pool()
    slot = pool._idle.get(timeout=60)
    try:
        assert slot is not None and slot.alive()
    finally:
        pool._idle.put(slot)
