"""slime's `custom_rm` and the `verifiers` reward functions against their call shapes (slime does not install
beside this project's lock, nor `verifiers` 0.3 with its rubric: docs/rewards.md; the 0.4 paths also run
inside the library, test_verifiers_library.py): awaited from an event loop, one float per sample."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

import prm_factory.reward.slime_reward as slime_reward
import prm_factory.reward.verifiers_reward as verifiers_reward

QUESTION = "Tom has 48 apples and gives half away. How many are left?"
WRONG = "Half of 48 is 48/2 = 25.\n\nThe answer is 25."
RIGHT = "Half of 48 is 48/2 = 24.\n\nThe answer is 24."


@pytest.fixture(autouse=True)
def shared_scorer(monkeypatch, scorer):
    for module in (slime_reward, verifiers_reward):
        batch = module.score_batch
        monkeypatch.setattr(
            module, "score_batch", lambda items, _b=batch, **kw: _b(items, scorer=scorer, **kw)
        )


def sample(response: str) -> SimpleNamespace:
    return SimpleNamespace(prompt=QUESTION, response=response, label="24", metadata={}, reward=None)


def test_slime_custom_rm_one_sample_a_group_and_the_dict_form() -> None:
    args = SimpleNamespace()
    wrong, right = (
        asyncio.run(slime_reward.custom_rm(args, sample(WRONG))),
        asyncio.run(slime_reward.custom_rm(args, sample(RIGHT))),
    )
    assert wrong < right
    assert asyncio.run(slime_reward.custom_rm(args, [sample(WRONG), sample(RIGHT)])) == [wrong, right]
    keyed = asyncio.run(slime_reward.custom_rm_dict(args, sample(WRONG)))
    assert keyed["first_error"] == 0 and keyed["score"] == wrong and keyed["status"] == "ok"


class TraceShape:
    """What `trace_reward` reads of a `verifiers.v1` Trace: `last_reply`, `record_metric`."""

    def __init__(self, reply: str) -> None:
        self.last_reply = reply
        self.metrics: dict[str, float] = {}

    def record_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value


def test_verifiers_trace_reward_and_rubric_function() -> None:
    trace = TraceShape(WRONG)
    wrong = asyncio.run(verifiers_reward.trace_reward(trace, prompt=QUESTION, answer="24"))
    assert trace.metrics == {"prm_factory_first_error": 0.0, "prm_factory_unverified": 0.0}
    chat = [{"role": "assistant", "content": RIGHT}]
    right = asyncio.run(
        verifiers_reward.process_reward(completion=chat, answer="24", prompt=QUESTION, info={})
    )
    assert wrong < right
