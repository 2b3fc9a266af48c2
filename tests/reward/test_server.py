"""The reward server: OpenRLHF's /get_reward and the batch endpoint answer; bad requests get a 4xx with the
reason and the server keeps serving; a busy replica says 503; the token and the loopback Host are enforced;
/health and /metrics answer."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.testclient import TestClient

from prm_factory.reward.scorer import make_request
from prm_factory.reward.server import Limits, Metrics, RequestRefused, Scoring, create_app

PROMPT = "Tom has 48 apples and gives half away. How many are left?"
WRONG = "Half of 48 is 48/2 = 25.\n\nThe answer is 25."
RIGHT = "Half of 48 is 48/2 = 24.\n\nThe answer is 24."
SOLUTION = "48/2=<<48/2=24>>24\n#### 24"
LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def client(scorer):
    with TestClient(create_app(scorer, Limits(max_body_bytes=1_000_000, max_steps=200)), base_url=LOCAL) as c:
        yield c


def test_get_reward_answers_in_openrlhfs_shape(client) -> None:
    body = {"query": [PROMPT + WRONG, PROMPT + RIGHT], "prompts": [PROMPT, PROMPT], "labels": ["24", "24"]}
    answer = client.post("/get_reward", json=body)
    assert answer.status_code == 200, answer.text
    rewards = answer.json()["rewards"]
    assert len(rewards) == 2 and rewards[0] < rewards[1]
    assert answer.json()["extra_logs"]["first_error"][1] == -1


def test_the_batch_endpoint_gives_per_step_results(client) -> None:
    items = [{"prompt": PROMPT, "response": WRONG, "answer": "24", "solution": SOLUTION}]
    answer = client.post("/score", json={"items": items, "aggregate": "first_error"})
    assert answer.status_code == 200, answer.text
    (result,) = answer.json()["results"]
    assert result["first_error"] == 0 and result["aggregate"] == "first_error" and result["reward"] == 0.0
    assert result["steps"][0]["sources"][0]["verdict"] == "incorrect"
    assert WRONG[result["steps"][0]["start"] : result["steps"][0]["end"]] == "Half of 48 is 48/2 = 25."


BAD_REQUESTS = [
    (b"x" * 10_000_000, 413, "body over"),
    (b'{"query": ["\xff\xfe"]}', 400, "not UTF-8"),
    (b'{"query": [', 400, "not JSON"),
    (b"{}", 422, "missing field 'query'"),
    (b'{"query": "one string"}', 422, "must be list"),
    (b'{"query": null}', 422, "not null"),
    (b"[1, 2]", 422, "a JSON object"),
    (b'{"query": [1, 2]}', 422, "lists of strings"),
    (json.dumps({"query": ["\n\n".join(["x"] * 10_000)]}).encode(), 413, "steps, more than 200"),
    (b'{"query": ["a"], "labels": [1, 2]}', 422, "same length"),
]


# short ids (the reasons): a test id is in PYTEST_CURRENT_TEST, which every process the scorer starts
# inherits, and a 10 MB body as its id is past the kernel's limit on a new environment (E2BIG)
@pytest.mark.parametrize(("body", "status", "reason"), BAD_REQUESTS, ids=[case[2] for case in BAD_REQUESTS])
def test_a_bad_request_gets_a_4xx_with_its_reason_and_the_server_keeps_serving(
    client, body, status, reason
) -> None:
    answer = client.post("/get_reward", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status and reason in answer.json()["error"], answer.text
    assert client.post("/get_reward", json={"query": [RIGHT]}).status_code == 200


def test_bad_batch_items_and_malformed_latex(client) -> None:
    unknown = client.post("/score", json={"items": [{"prompt": "p", "response": "r", "bogus": 1}]})
    assert unknown.status_code == 422 and "unknown fields" in unknown.json()["error"]
    wrong_type = client.post("/score", json={"items": [{"prompt": "p", "response": 3}]})
    assert wrong_type.status_code == 422 and "response must be a string" in wrong_type.json()["error"]
    lost = client.post("/score", json={"items": [{"prompt": "p", "response": "a b", "steps": ["a", "z"]}]})
    assert lost.status_code == 422 and "step 1 is not in the response" in lost.json()["error"]
    source = client.post("/score", json={"items": [{"prompt": "p", "response": "r", "sources": ["mc"]}]})
    assert source.status_code == 422 and "engine" in source.json()["error"]
    budget = client.post("/score", json={"items": [{"prompt": "p", "response": "r", "budget_s": -1}]})
    assert budget.status_code == 422 and "budget_s" in budget.json()["error"]
    budgeted = client.post("/score", json={"items": [{"prompt": "p", "response": "1+1=2", "budget_s": 0}]})
    assert budgeted.status_code == 200 and budgeted.json()["results"][0]["status"] == "ok"
    latex = client.post(
        "/score", json={"items": [{"prompt": "p", "response": r"So $\frac{1}{ = \sqrt{{2$."}]}
    )
    assert latex.status_code == 200 and latex.json()["results"][0]["steps"][0]["verdict"] == "unverifiable"


def test_health_and_metrics(client) -> None:
    assert client.get("/health").json()["status"] == "ok"
    metrics = client.get("/metrics").text
    assert 'prm_reward_requests_total{endpoint="/get_reward",status="200"}' in metrics
    assert "prm_reward_request_seconds_bucket" in metrics


def test_a_busy_replica_refuses_at_once_and_a_late_request_is_unverifiable(scorer) -> None:
    async def scenario() -> None:
        scoring = Scoring(scorer, Limits(concurrency=1, queue=0, request_deadline_s=0.2), Metrics())
        request = make_request(PROMPT, RIGHT)
        await scoring.slots.acquire()  # the one slot is busy
        with pytest.raises(RequestRefused) as refused:
            await scoring.score([request], "min", asyncio.get_running_loop().time())
        assert refused.value.status == 503
        waiting = Scoring(scorer, Limits(concurrency=1, queue=4, request_deadline_s=0.2), Metrics())
        await waiting.slots.acquire()
        import time

        (late,) = await waiting.score([request], "min", time.monotonic())
        assert late.status == "timed_out" and "deadline of 0.2 s" in late.reason

    asyncio.run(scenario())


def test_the_token_and_the_loopback_host(scorer) -> None:
    guarded = TestClient(create_app(scorer, token="s3cret", loopback=False), base_url="http://10.0.0.5")
    assert guarded.post("/get_reward", json={"query": [RIGHT]}).status_code == 401
    assert guarded.post("/get_reward?token=s3cret", json={"query": [RIGHT]}).status_code == 200
    bearer = {"authorization": "Bearer s3cret"}
    assert guarded.post("/get_reward", json={"query": [RIGHT]}, headers=bearer).status_code == 200
    assert guarded.get("/health").status_code == 200
    local = TestClient(create_app(scorer), base_url="http://rebound.example")
    assert local.post("/get_reward", json={"query": [RIGHT]}).status_code == 400
    with pytest.raises(ValueError, match="needs a token"):
        create_app(scorer, loopback=False)


def test_the_server_keeps_an_idle_connection_longer_than_a_trainers_client_pool(scorer, monkeypatch) -> None:
    """aiohttp pools an idle connection 15 s (httpx 5 s): a server that closed it sooner would race the
    client's next request on it (a disconnect error in the trainer)."""
    import uvicorn

    from prm_factory.reward import server

    given: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: given.update(options))
    server.run(scorer, Limits())
    assert given["timeout_keep_alive"] > 15 and given["host"] == "127.0.0.1"
