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
