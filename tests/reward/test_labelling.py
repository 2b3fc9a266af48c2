"""A response split and labelled as `label` labels a chain: the trainer's steps located in the response,
sources taken from the registry, a source that needs the engine refused."""

from __future__ import annotations

import pytest

from prm_factory.reward.labelling import (
    Context,
    RewardRequest,
    RewardRequestError,
    label_response,
    labels_by_source,
    options_items,
    split_steps,
)

CONTEXT = Context()


def config_of(request: RewardRequest):
    return CONTEXT.config(request)


def test_the_trainers_steps_are_found_in_the_response() -> None:
    request = RewardRequest("q", "<think>2+2=4</think> so 4+1=5", steps=("2+2=4", "4+1=5"))
    text, spans = split_steps(request, config_of(request))
    assert text == request.response and [(s.start, s.end) for s in spans] == [(7, 12), (24, 29)]
    missing = RewardRequest("q", "2+2=4", steps=("2+2=4", "9"))
    with pytest.raises(RewardRequestError, match="step 1 is not in the response"):
        split_steps(missing, config_of(missing))


def test_without_steps_the_response_is_split_as_a_run_splits_it() -> None:
    request = RewardRequest("q", "Step 1: 2+2=4\nStep 2: 4*2=9")
    _, spans = split_steps(request, config_of(request))
    assert [s.text for s in spans] == ["Step 1: 2+2=4", "Step 2: 4*2=9"]


def test_verifier_and_reference_label_and_the_first_error_follows_the_consensus() -> None:
    request = RewardRequest(
        "Ann has 3 bags of 4 apples. How many apples?",
        "3 * 4 = 13 apples.\n\nThe answer is 13.",
        answer="12",
        solution="3*4=<<3*4=12>>12\n#### 12",
    )
    labelled = label_response(request, CONTEXT)
    by_source = labels_by_source(labelled)
    assert by_source["verifier"][0] == "incorrect" and set(by_source) == {"verifier", "reference"}
    assert labelled.first_error == 0 and labelled.outcome.label == "incorrect"
    assert labelled.labelers["verifier"].startswith("math-sympy@")


def test_sources_that_need_an_engine_or_do_not_exist_are_refused() -> None:
    with pytest.raises(RewardRequestError, match="needs the policy engine"):
        label_response(RewardRequest("q", "1+1=2", sources=("verifier", "mc")), CONTEXT)
    with pytest.raises(RewardRequestError, match="no label source 'nope'"):
        label_response(RewardRequest("q", "1+1=2", sources=("nope",)), CONTEXT)
    with pytest.raises(RewardRequestError, match="unknown domain"):
        label_response(RewardRequest("q", "1+1=2", domain="chess"), CONTEXT)


def test_the_prm_is_reached_through_the_registry_and_skipped_without_a_checkpoint() -> None:
    request = RewardRequest("q", "1+1=2", sources=("verifier", "prm"))
    assert set(label_response(request, CONTEXT).labelers) == {"verifier"}  # `prm` applies only with one
    assert options_items({"prm": {"checkpoint": "/x", "batch_size": 2}}) == (
        ("prm", (("batch_size", "2"), ("checkpoint", "/x"))),
    )


def test_a_request_shape_is_planned_once_and_a_refused_shape_every_time() -> None:
    context = Context()
    first = context.plan(RewardRequest("q", "1+1=2"))
    assert context.plan(RewardRequest("another prompt", "2+2=4", answer="4")) is first
    other = context.plan(RewardRequest("q", "1+1=2", sources=("verifier",)))
    assert other is not first and [s.name for s in other.sources] == ["verifier"]
    assert other.verifier is first.verifier  # one verifier (and its SymPy worker) per verifier config
    for _ in range(2):
        with pytest.raises(RewardRequestError, match="needs the policy engine"):
            context.plan(RewardRequest("q", "1+1=2", sources=("verifier", "mc")))


def test_closing_a_context_stops_its_verifiers_and_forgets_their_pools() -> None:
    """`Context.ready` restarts every pool it holds: a closed verifier's pool must not be among them."""
    context = Context()
    label_response(RewardRequest("q", "2 + 2 = 4"), context)
    assert context._pools and context._verifiers
    context.close()
    assert context._pools == [] and context._verifiers == {}
