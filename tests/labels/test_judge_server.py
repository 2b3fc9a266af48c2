"""The judge against a real `vllm serve` of the embedded model, through the OpenAI-compatible sampler.

The server is the session's one `vllm serve` of the prepared default checkpoint (eager, seeded): the
`served_model` fixture of tests/conftest.py, shared with tests/sampling/test_openai_sampler.py.
SmolLM2-135M is a poor judge: this checks the mechanism (the prompts reach the server in one request, each
judgement is read or kept unread with its text, the labels line up with the steps and name their
labeller), not the judge's wisdom.
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from prm_factory.labels.judge import (
    DEFAULT_JUDGE_PARAMS,
    Judge,
    judge_step_labels,
    prompt_hash,
    read_judgement,
    render_judge_prompt,
)
from prm_factory.sampling.openai_sampler import OpenAICompatibleSampler

pytestmark = [pytest.mark.engine, pytest.mark.slow]

MAX_TOKENS = 48

CHAINS = [
    (
        "Janet has 3 apples and buys 4 more. How many apples does she have?",
        ["Janet starts with 3 apples.", "She buys 4 more, so 3 + 4 = 8.", "The answer is 8."],
    ),
    ("What is 6 * 7?", ["6 * 7 = 42.", "The answer is 42."]),
]


def _counters(base_url: str) -> dict[str, float]:
    """Every counter sample of the server's `/metrics`, summed over its label sets."""
    text = httpx.get(f"{base_url}/metrics", timeout=10.0).raise_for_status().text
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.type == "counter":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    return totals


def test_judge_on_a_real_server_reads_or_keeps_every_judgement(served_model):
    from transformers import AutoTokenizer

    server, checkpoint, model_name = served_model.server, served_model.checkpoint, served_model.name
    sampler = OpenAICompatibleSampler([server.base_url], model_name, checkpoint, prompts_per_request=4)
    judge = Judge(sampler, params=replace(DEFAULT_JUDGE_PARAMS, max_tokens=MAX_TOKENS))

    before = _counters(server.base_url)
    results = judge.judge_many(CHAINS)
    after = _counters(server.base_url)

    # the two critique prompts reached the server, in one request, token for token
    assert sampler.requests_done == 1 and sampler.retries == 0
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    prompts = [sampler.render_chat(None, render_judge_prompt(problem, steps)) for problem, steps in CHAINS]
    assert "<paragraph_2>\nThe answer is 8.\n</paragraph_2>" in prompts[0]
    sent_tokens = sum(len(tokenizer(p).input_ids) for p in prompts)
    assert after["vllm:prompt_tokens_total"] - before.get("vllm:prompt_tokens_total", 0.0) == sent_tokens
    assert after["vllm:request_success_total"] - before.get("vllm:request_success_total", 0.0) == 2

    labeler = f"{model_name}@{prompt_hash()}"
    assert len(results) == len(CHAINS)
    for result, (_, steps) in zip(results, CHAINS, strict=True):
        # read, or no label with the text kept: the verdicts are exactly what the kept text says
        assert 1 <= result.n_tokens <= MAX_TOKENS and result.finish_reason in {"stop", "length"}
        assert read_judgement(result.raw_output, len(steps)) == (result.first_error, result.reason)
        assert result.first_error is None or -1 <= result.first_error < len(steps)
        assert list(result.verdicts) == judge_step_labels(
            result.first_error, len(steps), model_name, why=result.reason
        )
        assert len(result.verdicts) == len(steps)
        assert result.labeler == labeler
        assert all(model_name in verdict.reason for verdict in result.verdicts)
    print(
        "judgements:",
        [(r.first_error, r.reason, r.finish_reason, r.n_tokens, r.raw_output[:80]) for r in results],
    )
