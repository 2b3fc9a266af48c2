"""The OpenAI-compatible sampler: retry and round-robin logic on a stand-in, then a real `vllm serve`.

Fast tests use `StandInCompletionsServer`, a tiny stdlib `http.server` that speaks just enough of
`/v1/completions` and `/metrics` to exercise the client; it is not vLLM and generates no text worth
reading. The engine tests (marker `engine`) start one real server for the module on the embedded model,
with max_tokens <= 32 to keep CI short. The test that kills the server runs last in this module.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from prm_factory.sampling.openai_sampler import (
    OpenAICompatibleSampler,
    RetryPolicy,
    SamplerRequestError,
    SamplerUnavailable,
    UrlRotation,
    parse_completions,
    prefix_cache_stats,
)
from prm_factory.sampling.protocol import GenerationParams
from prm_factory.sampling.vllm_server import free_port

FAST_RETRY = RetryPolicy(max_attempts=3, backoff_s=0.01, max_backoff_s=0.02, cooldown_s=30.0)


# ---------------------------------------------------------------------------------------------------------
# Stand-in server (not vLLM).


class StandInCompletionsServer:
    """A stdlib HTTP server answering `/v1/completions` with "<name>:<prompt>#<j>" choices.

    `fail_next` requests get HTTP 503 first (a server under restart); `status` forces every answer's code
    (e.g. 400); `html` makes it answer 200 with an HTML page (a proxy's error page); every payload received
    is kept in `payloads`, the Authorization header of each in `authorizations`.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.fail_next = 0
        self.status = 200
        self.html = False
        self.payloads: list[dict] = []
        self.authorizations: list[str | None] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                return

            def do_GET(self) -> None:
                body = (
                    b"# HELP vllm:prefix_cache_queries_total x\n"
                    b'vllm:prefix_cache_queries_total{engine="0",model_name="m"} 120.0\n'
                    b'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 90.0\n'
                )
                self._send(200, body)

            def do_POST(self) -> None:
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stand_in._lock:
                    stand_in.payloads.append(payload)
                    stand_in.authorizations.append(self.headers.get("Authorization"))
                    failing = stand_in.fail_next > 0
                    stand_in.fail_next -= 1 if failing else 0
                if failing:
                    self._send(503, b'{"error": "warming up"}')
                    return
                if stand_in.status != 200:
                    self._send(stand_in.status, b'{"error": "bad request"}')
                    return
                if stand_in.html:
                    self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                    return
                n = payload["n"]
                choices = [
                    {
                        "index": i * n + j,
                        "text": f"{stand_in.name}:{prompt}#{j}",
                        "finish_reason": "length",
                        "token_ids": list(range(j + 1)),
                    }
                    for i, prompt in enumerate(payload["prompt"])
                    for j in range(n)
                ]
                choices.reverse()  # the client must order by index, not by position
                self._send(200, json.dumps({"choices": choices, "usage": {}}).encode())

            def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture()
def stand_ins() -> Iterator[list[StandInCompletionsServer]]:
    servers = [StandInCompletionsServer("a"), StandInCompletionsServer("b")]
    yield servers
    for server in servers:
        server.close()


def _sampler(urls: list[str], **kwargs: object) -> OpenAICompatibleSampler:
    options = {"retry": FAST_RETRY, "prompts_per_request": 1, **kwargs}
    return OpenAICompatibleSampler(urls, "m", tokenizer_path="/nonexistent", **options)  # type: ignore[arg-type]


def test_generations_come_back_in_prompt_order_with_token_counts(stand_ins):
    sampler = _sampler([stand_ins[0].url], prompts_per_request=2)
    out = sampler.generate(["p0", "p1", "p2"], GenerationParams(n=2, max_tokens=5, stop=("\n\n",)))
    assert [[g.text for g in gens] for gens in out] == [
        ["a:p0#0", "a:p0#1"],
        ["a:p1#0", "a:p1#1"],
        ["a:p2#0", "a:p2#1"],
    ]
    assert [g.n_tokens for g in out[0]] == [1, 2]
    assert {g.finish_reason for gens in out for g in gens} == {"length"}
    payload = stand_ins[0].payloads[0]
    assert payload["stop"] == ["\n\n"] and payload["max_tokens"] == 5 and payload["n"] == 2
    assert "seed" not in payload  # per-request seeds crash the CPU engine; servers are seeded at start


def test_requests_spread_round_robin_over_the_fleet(stand_ins):
    sampler = _sampler([s.url for s in stand_ins], max_concurrency=1)
    out = sampler.generate([f"p{i}" for i in range(6)], GenerationParams(n=1))
    assert [gens[0].text.split(":")[0] for gens in out] == ["a", "b", "a", "b", "a", "b"]
    assert len(stand_ins[0].payloads) == len(stand_ins[1].payloads) == 3


def test_a_dead_url_in_the_fleet_is_skipped_after_one_failure(stand_ins):
    dead = f"http://127.0.0.1:{free_port()}"
    sampler = _sampler([dead, stand_ins[0].url], max_concurrency=1)
    out = sampler.generate([f"p{i}" for i in range(5)], GenerationParams(n=1))
    assert all(gens[0].text.startswith("a:") for gens in out)
    assert len(stand_ins[0].payloads) == 5
    assert sampler.retries == 1  # the dead URL cools down after its first failure


def test_5xx_is_retried_until_the_server_answers(stand_ins):
    stand_ins[0].fail_next = 2
    sampler = _sampler([stand_ins[0].url])
    out = sampler.generate(["p"], GenerationParams(n=1))
    assert out[0][0].text == "a:p#0"
    assert sampler.retries == 2


def test_all_dead_raises_sampler_unavailable_naming_url_and_error():
    dead = f"http://127.0.0.1:{free_port()}"
    sampler = _sampler([dead])
    with pytest.raises(SamplerUnavailable) as caught:
        sampler.generate(["p"], GenerationParams(n=1))
    message = str(caught.value)
    assert dead in message and "3 attempt(s)" in message and "ConnectError" in message
    assert caught.value.url == dead and caught.value.attempts == 3


def test_a_fleet_all_dead_names_every_url_tried():
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    sampler = _sampler(dead)
    with pytest.raises(SamplerUnavailable) as caught:
        sampler.generate(["p"], GenerationParams(n=1))
    assert set(caught.value.tried) == set(dead)
    assert all(url in str(caught.value) for url in dead)


def test_4xx_fails_at_once_without_retry(stand_ins):
    stand_ins[0].status = 400
    sampler = _sampler([stand_ins[0].url])
    with pytest.raises(SamplerRequestError, match="HTTP 400"):
        sampler.generate(["p"], GenerationParams(n=1))
    assert len(stand_ins[0].payloads) == 1 and sampler.retries == 0


def test_a_non_json_answer_fails_at_once_without_retry(stand_ins):
    stand_ins[0].html = True
    sampler = _sampler([stand_ins[0].url])
    with pytest.raises(SamplerRequestError, match="answered non-JSON: <html>"):
        sampler.generate(["p"], GenerationParams(n=1))
    assert len(stand_ins[0].payloads) == 1 and sampler.retries == 0


def test_the_api_key_is_sent_as_a_bearer_token(stand_ins, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _sampler([stand_ins[0].url], api_key="sk-test").generate(["p"], GenerationParams(n=1))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    _sampler([stand_ins[0].url]).generate(["p"], GenerationParams(n=1))
    assert stand_ins[0].authorizations == ["Bearer sk-test", "Bearer sk-env"]


def test_retries_back_off_exponentially_up_to_the_cap(stand_ins, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # tenacity sleeps through time.sleep
    stand_ins[0].fail_next = 4
    policy = RetryPolicy(max_attempts=5, backoff_s=0.5, backoff_factor=3.0, max_backoff_s=2.0, cooldown_s=0)
    out = _sampler([stand_ins[0].url], retry=policy).generate(["p"], GenerationParams(n=1))
    assert out[0][0].text == "a:p#0"
    assert slept == [0.5, 1.5, 2.0, 2.0]


def test_rotation_returns_the_first_to_recover_when_all_cool_down():
    rotation = UrlRotation(["http://a", "http://b"], cooldown_s=60)
    rotation.mark_failed("http://a")
    time.sleep(0.01)
    rotation.mark_failed("http://b")
    assert rotation.next() == "http://a"
    rotation.mark_ok("http://b")
    assert {rotation.next(), rotation.next()} == {"http://b"}


def test_token_counts_fall_back_to_usage_split_over_choices():
    body = {
        "choices": [{"index": i, "text": "x", "finish_reason": "stop"} for i in range(3)],
        "usage": {"completion_tokens": 10},
    }
    assert [g.n_tokens for g in parse_completions(body, 1, 3)[0]] == [4, 3, 3]
    with pytest.raises(SamplerRequestError, match="expected 4 choices"):
        parse_completions(body, 2, 2)


def test_docstring_examples_hold():
    import doctest

    from prm_factory.sampling import openai_sampler as openai_sampler_module

    result = doctest.testmod(openai_sampler_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0


def test_prefix_cache_stats_read_from_metrics(stand_ins):
    assert prefix_cache_stats(stand_ins[0].url) == (120.0, 90.0)


# ---------------------------------------------------------------------------------------------------------
# A real `vllm serve` process on the embedded model: the session's `served_model` (tests/conftest.py), shared
# with tests/labels/test_judge_server.py; the last test here kills it (a later user would start it again).


def test_request_seeds_send_each_prompt_alone_with_the_offline_engines_seed(stand_ins):
    from prm_factory.sampling.vllm_sampler import request_seed

    sampler = _sampler([stand_ins[0].url], prompts_per_request=4, seed=7, request_seeds=True)
    prompts = ["p0", "p1", "p2"]
    out = sampler.generate(prompts, GenerationParams(n=2, max_tokens=4))
    assert [[g.text for g in gens] for gens in out] == [[f"a:{p}#0", f"a:{p}#1"] for p in prompts]
    sent = {
        tuple(payload["prompt"]) if isinstance(payload["prompt"], list) else (payload["prompt"],): payload[
            "seed"
        ]
        for payload in stand_ins[0].payloads
    }
    assert sent == {(p,): request_seed(7, p) for p in prompts}  # one prompt per request, its own seed
    assert sampler.seed_mode == "request"


def test_without_request_seeds_no_seed_is_sent_and_prompts_share_requests(stand_ins):
    sampler = _sampler([stand_ins[0].url], prompts_per_request=4, seed=7)
    sampler.generate(["p0", "p1", "p2"], GenerationParams(n=1, max_tokens=4))
    (payload,) = stand_ins[0].payloads
    assert "seed" not in payload and payload["prompt"] == ["p0", "p1", "p2"]
    assert sampler.seed_mode == "engine"


@pytest.mark.engine
def test_real_server_takes_per_request_seeds_and_a_run_on_servers_promises_no_identity(served_model):
    """The session's server runs with chunked prefill off (conftest.py), so it takes per-request seeds. A
    server batches the requests of every client by arrival time, and its prefix cache serves a repeated
    prompt's prefix from another batch, so identical draws are not promised there (not even for a request
    sent again): the run records `none`, with the reason, instead (sampling/reproducibility.py)."""
    from prm_factory.sampling.vllm_sampler import EngineSettings, engine_record

    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    sampler = OpenAICompatibleSampler([server.base_url], model_name, checkpoint, seed=3, request_seeds=True)
    prompts = [sampler.render_chat(None, f"Tell me a fact about the number {i}.") for i in range(3)]
    out = sampler.generate(prompts, GenerationParams(n=2, temperature=0.9, max_tokens=12))
    assert [len(gens) for gens in out] == [2, 2, 2]
    assert len({g.text for gens in out for g in gens}) > 1  # sampled, not one greedy answer
    settings = EngineSettings(
        checkpoint, model_name, backend="openai", base_urls=(server.base_url,), request_seeds=True
    )
    record = engine_record(settings)
    assert record["seed_mode"] == "request"
    assert record["reproducibility"]["mode"] == "none" and "arrival" in record["reproducibility"]["reason"]


@pytest.mark.engine
def test_real_server_returns_n_completions_with_tokens_and_finish_reasons(served_model):
    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    sampler = OpenAICompatibleSampler([server.base_url], model_name, checkpoint)
    prompts = [sampler.render_chat(None, "What is 2 + 3?"), sampler.render_chat(None, "Name a colour.")]
    queries_before, _ = prefix_cache_stats(server.base_url)
    out = sampler.generate(prompts, GenerationParams(n=2, temperature=0.7, max_tokens=16))
    assert [len(gens) for gens in out] == [2, 2]
    for gens in out:
        for g in gens:
            assert 1 <= g.n_tokens <= 16
            assert g.finish_reason in {"stop", "length"}
    assert any(g.finish_reason == "length" and g.n_tokens == 16 for gens in out for g in gens)
    queries_after, hits_after = prefix_cache_stats(server.base_url)
    assert queries_after > queries_before and hits_after >= 0


@pytest.mark.engine
def test_real_server_chat_rendering_matches_the_tokenizer(served_model):
    from transformers import AutoTokenizer

    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    sampler = OpenAICompatibleSampler([server.base_url], model_name, checkpoint)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    expected = AutoTokenizer.from_pretrained(checkpoint).apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )
    assert sampler.render_chat("Be brief.", "Hi") == expected
    assert expected.rstrip().endswith("assistant")


@pytest.mark.engine
def test_real_fleet_with_one_dead_url_still_serves(served_model):
    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    dead = f"http://127.0.0.1:{free_port()}"
    sampler = OpenAICompatibleSampler(
        [dead, server.base_url], model_name, checkpoint, prompts_per_request=1, retry=FAST_RETRY
    )
    prompts = [sampler.render_chat(None, f"Count to {i}.") for i in range(4)]
    out = sampler.generate(prompts, GenerationParams(n=1, max_tokens=8))
    assert [len(gens) for gens in out] == [1, 1, 1, 1]
    assert all(g.n_tokens >= 1 for gens in out for g in gens)
    assert 1 <= sampler.retries <= 2  # the dead URL is tried, then cools down


def _server_run_config(tmp_path, checkpoint: str, base_urls: list[str], model_name: str):
    from prm_factory.config.run_config import load_config

    return load_config(
        None,
        {
            "dataset.root": str(tmp_path / "ds"),
            "model.path": checkpoint,
            "model.backend": "openai",
            "model.base_urls": base_urls,
            "model.served_model_name": model_name,
            "problems.limit": 1,
            "sampling.n": 2,
            "sampling.max_tokens": 96,
            "rollouts.k": 2,
            "rollouts.max_steps": 1,
            "rollouts.max_tokens": 48,
            "resume.enabled": False,
        },
    )


@pytest.mark.engine
def test_generation_run_on_the_server_backend_records_cache_hits(served_model, prefect_server, tmp_path):
    from prm_factory.flows.generation_run import run_generation
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    summary = run_generation(_server_run_config(tmp_path, checkpoint, [server.base_url], model_name))
    assert summary.status == "succeeded", summary.error
    assert summary.chains == 2 and summary.steps > 0
    run = query(Dataset(str(tmp_path / "ds")), "SELECT * FROM runs").to_pylist()[0]
    assert run["model"] == Path(checkpoint).name and len(run["model_weights_hash"]) == 64
    assert run["prefix_cache_hit_rate"] is not None and 0.0 <= run["prefix_cache_hit_rate"] <= 1.0
    assert run["rollouts_drawn"] > 0


def test_generation_run_against_a_dead_fleet_fails_and_records_why(
    prefect_server, no_retry_delays, tmp_path, monkeypatch
):
    import prm_factory.sampling.openai_sampler as openai_sampler
    from prm_factory.flows.generation_run import run_generation
    from prm_factory.sampling.model_prep import prepare_default_model
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    # the run's sampler keeps its tries per request (max_attempts), their backoff waits go (3.5 s a try of
    # the task, three tries), as no_retry_delays keeps the task's retries without their waits
    monkeypatch.setattr(openai_sampler, "RetryPolicy", functools.partial(RetryPolicy, backoff_s=0.0))
    dead = f"http://127.0.0.1:{free_port()}"
    summary = run_generation(_server_run_config(tmp_path, str(prepare_default_model()), [dead], "smollm2"))
    assert summary.status == "failed" and "SamplerUnavailable" in summary.error and dead in summary.error
    run = query(Dataset(str(tmp_path / "ds")), "SELECT status, error FROM runs").to_pylist()[0]
    assert run["status"] == "failed" and dead in run["error"]


@pytest.mark.engine
def test_real_server_dying_mid_run_retries_then_fails_clearly(served_model):
    """Runs last: it kills the module's server."""
    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    sampler = OpenAICompatibleSampler(
        [server.base_url],
        model_name,
        checkpoint,
        prompts_per_request=1,
        max_concurrency=1,
        retry=RetryPolicy(max_attempts=3, backoff_s=0.2, cooldown_s=1.0),
    )
    prompts = [sampler.render_chat(None, f"Tell a story about the number {i}.") for i in range(64)]
    failure: list[BaseException] = []

    def run() -> None:
        try:
            sampler.generate(prompts, GenerationParams(n=1, max_tokens=32))
        except BaseException as error:  # handed to the test thread below
            failure.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 120
    while sampler.requests_done < 1 and time.monotonic() < deadline and worker.is_alive():
        time.sleep(0.05)
    assert sampler.requests_done >= 1, "no request finished before the kill"
    server.kill()
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert len(failure) == 1 and isinstance(failure[0], SamplerUnavailable), failure
    error = failure[0]
    assert error.url == server.base_url and error.attempts == 3
    assert server.base_url in str(error) and "Error" in error.last_error
    assert sampler.retries >= 2
    assert sampler.requests_done < len(prompts)
