"""A code response scored through the reward path on the real sandbox (issue 49): the final program run
against the problem's tests by the code verifier, as `label` runs it. Before this test the reward built its
config with a key the config had renamed (`problems.domain`), so every code request failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.reward import RewardScorer, score_steps
from prm_factory.reward.labelling import Context, RewardRequest, label_response
from prm_factory.schemas.code_problems import load_code_problems
from tests.docker_turns import DOCKER_TURNS

pytestmark = pytest.mark.docker

PROBLEMS = Path(__file__).resolve().parents[2] / "data" / "code_problems" / "humaneval_style.jsonl"
OPENING = "We need the sum of squares.\n\n```python\ndef sum_of_squares(nums):\n"
RIGHT = OPENING + "    return sum(x * x for x in nums)\n```"
WRONG = OPENING + "    return sum(nums)\n```"


@pytest.fixture(scope="module")
def squares():
    try:
        from prm_factory.verifiers.code.image import ensure_image
        from prm_factory.verifiers.code.sandbox import docker_client

        docker_client().close()
        ensure_image()
    except Exception as exc:  # noqa: BLE001 - an engine that does not answer is a skip, with its reason
        pytest.skip(f"docker engine not answering ({type(exc).__name__}); run scripts/start_dockerd.sh")
    loaded, rejected = load_code_problems(PROBLEMS)
    assert not rejected
    return next(p for p in loaded if "sum_of_squares" in (p.tests or ""))


def test_a_code_response_is_graded_by_its_tests_in_the_sandbox(squares) -> None:
    context = Context()
    try:
        with DOCKER_TURNS.shared():
            right, wrong = (
                label_response(RewardRequest(squares.text, text, tests=squares.tests, domain="code"), context)
                for text in (RIGHT, WRONG)
            )
    finally:
        context.close()  # its sandbox containers: none may outlive the test (test_code_attacks counts them)
    assert right.outcome.label == "correct" and "all 4 tests pass" in right.outcome.reason
    assert wrong.outcome.label == "incorrect" and "3 of 4 tests fail" in wrong.outcome.reason
    assert [label.verdict for label in right.labels[-1] if label.source == "verifier"] == ["correct"]
    assert [label.verdict for label in wrong.labels[-1] if label.source == "verifier"] == ["incorrect"]


def test_score_steps_returns_the_code_outcome(squares) -> None:
    scorer = RewardScorer(deadline_s=None)
    try:
        with DOCKER_TURNS.shared():
            result = score_steps(squares.text, WRONG, tests=squares.tests, domain="code", scorer=scorer)
    finally:
        scorer.close()
    assert result.status == "ok" and result.outcome == "incorrect"


def test_closing_a_scorer_removes_its_sandbox_containers(squares) -> None:
    from prm_factory.verifiers.code.sandbox import docker_client
    from tests.docker_turns import own_sandboxes

    before = {c.id for c in docker_client().containers.list(all=True, filters=own_sandboxes())}
    scorer = RewardScorer(deadline_s=None)
    with DOCKER_TURNS.shared():
        score_steps(squares.text, RIGHT, tests=squares.tests, domain="code", scorer=scorer)
        scorer.close()
    after = {c.id for c in docker_client().containers.list(all=True, filters=own_sandboxes())}
    assert after <= before
