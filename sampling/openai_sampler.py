"""The Sampler protocol over HTTP: a fleet of OpenAI-compatible servers (`vllm serve`) doing the sampling.

Why a second backend: one offline engine per process caps a run at one machine; servers let many machines
(or GPUs) sample for one run, and the same code talks to one local server in tests.

How it works. Prompts go to `/v1/completions` as raw text through the `openai` client, one per URL with its
own retries off (the chat template is applied here, from a local tokenizer, so a rollout can continue an
assistant turn exactly as with the offline engine). A `generate` call is cut into requests of
`prompts_per_request` prompts; requests go round-robin over the base URLs, `max_concurrency` at a time from
a thread pool. A request that fails with a connection error, a timeout or a 5xx is retried (tenacity) on
the next URL with exponential backoff, and a URL that failed is skipped for a cool-down, so a dead server
in a fleet costs one failed try, not one per request. After `max_attempts` tries a request raises
`SamplerUnavailable`, naming the URL and the last error. A 4xx or a non-JSON answer is the caller's or a
proxy's mistake and is raised at once, unretried.

Seeding. By default no seed is sent: the servers are seeded at start (`--seed`), and `seed` here records that
seed for provenance (the CPU build of vLLM crashes on per-request seeds while chunked prefill is on). With
`request_seeds`, every prompt goes in a request of its own carrying `request_seed(seed, prompt)`, the seed the
offline engine gives it, so a prompt's draws no longer depend on which prompts shared its request.

Token counts come from each choice's `token_ids` (vLLM's `return_token_ids`); a server that does not return
them gets the response's `usage.completion_tokens` split over its choices.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import tenacity
from prometheus_client.parser import text_string_to_metric_families

from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.sampling.vllm_sampler import request_seed


class SamplerUnavailable(RuntimeError):
    """No server answered a request within the retry budget. `url` is the last one tried."""

    def __init__(self, url: str, attempts: int, last_error: str, tried: Sequence[str] = ()) -> None:
        others = sorted(set(tried) - {url})
        super().__init__(
            f"OpenAI-compatible sampler unavailable: {attempts} attempt(s) failed, "
            f"the last at {url}: {last_error}" + (f" (also tried {', '.join(others)})" if others else "")
        )
        self.url = url
        self.tried = tuple(tried)
        self.attempts = attempts
        self.last_error = last_error


class SamplerRequestError(RuntimeError):
    """The server refused the request (4xx) or answered with something that is not a completion."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try before giving up on a request.

    - max_attempts: tries per request over the whole fleet (the first one included).
    - backoff_s / backoff_factor / max_backoff_s: sleep before the i-th retry is
      min(backoff_s * backoff_factor**(i-1), max_backoff_s).
    - cooldown_s: a URL that failed is skipped for this long while another URL is in rotation.
    """

    max_attempts: int = 4
    backoff_s: float = 0.5
    backoff_factor: float = 2.0
    max_backoff_s: float = 8.0
    cooldown_s: float = 10.0


class _Retryable(Exception):
    """A failure worth another try elsewhere: connection error, timeout, 5xx."""


class UrlRotation:
    """Round-robin over base URLs that skips URLs in cool-down (after a failure) while a healthy one is left.

    >>> r = UrlRotation(["http://a", "http://b"], cooldown_s=60)
    >>> [r.next() for _ in range(3)]
    ['http://a', 'http://b', 'http://a']
    >>> r.mark_failed("http://b")
    >>> [r.next() for _ in range(2)]
    ['http://a', 'http://a']
    """

    def __init__(self, urls: Sequence[str], cooldown_s: float) -> None:
        if not urls:
            raise ValueError("at least one base URL is needed")
        self.urls = [u.rstrip("/") for u in urls]
        self.cooldown_s = cooldown_s
        self._turn = itertools.count()
        self._down_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def next(self) -> str:
        """The next URL in turn that is not cooling down; if all are, the one that recovers first."""
        with self._lock:
            now = time.monotonic()
            start = next(self._turn)
            for offset in range(len(self.urls)):
                url = self.urls[(start + offset) % len(self.urls)]
                if self._down_until.get(url, 0.0) <= now:
                    return url
            return min(self.urls, key=lambda u: self._down_until.get(u, 0.0))

    def mark_failed(self, url: str) -> None:
        with self._lock:
            self._down_until[url] = time.monotonic() + self.cooldown_s

    def mark_ok(self, url: str) -> None:
        with self._lock:
            self._down_until.pop(url, None)


def _split_tokens(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def parse_completions(body: dict[str, Any], n_prompts: int, n: int) -> list[list[Generation]]:
    """`n` generations per prompt from a `/v1/completions` body; choice `index` is prompt * n + sample.

    >>> body = {"choices": [{"index": 1, "text": "b", "finish_reason": "length", "token_ids": [5, 6]},
    ...                     {"index": 0, "text": "a", "finish_reason": "stop"}],
    ...         "usage": {"completion_tokens": 5}}
    >>> [(g.text, g.n_tokens, g.finish_reason) for g in parse_completions(body, 1, 2)[0]]
    [('a', 3, 'stop'), ('b', 2, 'length')]
    """
    choices = sorted(body.get("choices") or [], key=lambda c: c["index"])
    if len(choices) != n_prompts * n:
        raise SamplerRequestError(
            f"expected {n_prompts * n} choices ({n_prompts} prompts x n={n}), got {len(choices)}"
        )
    known = sum(len(c["token_ids"]) for c in choices if c.get("token_ids") is not None)
    unknown = [i for i, c in enumerate(choices) if c.get("token_ids") is None]
    completion_tokens = int((body.get("usage") or {}).get("completion_tokens") or 0)
    shares = iter(_split_tokens(max(completion_tokens - known, 0), len(unknown)) if unknown else [])
    flat = [
        Generation(
            text=c.get("text") or "",
            n_tokens=len(c["token_ids"]) if c.get("token_ids") is not None else next(shares),
            finish_reason=c.get("finish_reason") or "",
            # vLLM's server names the stop string that ended a choice; others leave it out
            stop_reason=c["stop_reason"] if isinstance(c.get("stop_reason"), str) else None,
        )
        for c in choices
    ]
    return [flat[i * n : (i + 1) * n] for i in range(n_prompts)]


class OpenAICompatibleSampler:
    """Sampler over `/v1/completions` of one or more OpenAI-compatible servers (a fleet).

    Args:
        base_urls: server roots, e.g. ["http://127.0.0.1:8000"] (no `/v1`).
        model: the served model name sent with every request.
        tokenizer_path: a local tokenizer (the checkpoint dir) whose chat template `render_chat` applies.
        seed: the seed the servers were started with; with `request_seeds`, the root of each prompt's seed.
        request_seeds: send each prompt alone with its own seed (see the module docstring).
        model_id: the id recorded with the chains; `model` when None.
        prompts_per_request: prompts batched into one request; the server batches across requests too,
            so small requests spread a call over a fleet without costing throughput.
        max_concurrency: requests in flight at once; default 4 per URL.
        timeout_s: per request; CPU servers generating long completions need minutes.
        retry: the retry policy.
        api_key: sent as a bearer token when set (a hosted endpoint); `OPENAI_API_KEY` when None.

    `generate` may be called from several threads at once: the HTTP clients (thread-safe) and the URL
    rotation (locked) are shared, and each call has its own thread pool.
    """

    def __init__(
        self,
        base_urls: Sequence[str],
        model: str,
        tokenizer_path: str | os.PathLike[str],
        *,
        seed: int = 0,
        model_id: str | None = None,
        prompts_per_request: int = 4,
        max_concurrency: int | None = None,
        timeout_s: float = 600.0,
        retry: RetryPolicy | None = None,
        api_key: str | None = None,
        request_seeds: bool = False,
    ) -> None:
        if prompts_per_request < 1:
            raise ValueError("prompts_per_request must be >= 1")
        self.model = model
        self.model_id = model_id or model
        self.seed = seed
        self.request_seeds = request_seeds
        self.seed_mode = "request" if request_seeds else "engine"
        self.tokenizer_path = str(tokenizer_path)
        self.prompts_per_request = prompts_per_request
        self.retry = retry or RetryPolicy()
        self.rotation = UrlRotation(base_urls, self.retry.cooldown_s)
        self.max_concurrency = max_concurrency or 4 * len(self.rotation.urls)
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        # One client per server: the client's own retries are off, rotation and backoff are done here.
        # The client needs some key; "EMPTY" is vLLM's placeholder for a server started without --api-key.
        self._clients = {
            url: openai.OpenAI(base_url=f"{url}/v1", api_key=key or "EMPTY", timeout=timeout_s, max_retries=0)
            for url in self.rotation.urls
        }
        self._tokenizer: Any = None
        self._tokenizer_lock = threading.Lock()
        self.requests_done = 0  # successful requests, for progress and tests
        self.retries = 0
        self.engine_seconds = 0.0  # wall time inside `generate`, as `VLLMSampler` reports it
        self._count_lock = threading.Lock()

    # -- Sampler protocol ------------------------------------------------------------------------------

    def render_chat(self, system: str | None, user: str) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        return self._chat_tokenizer().apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        """`params.n` generations per prompt, in prompt order. Raises `SamplerUnavailable` when a request
        cannot be served within the retry budget (the other requests of the call are then abandoned)."""
        if not prompts:
            return []
        started = time.perf_counter()
        try:
            return self._generate(prompts, params)
        finally:
            with self._count_lock:
                self.engine_seconds += time.perf_counter() - started

    def _generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        step = 1 if self.request_seeds else self.prompts_per_request  # a request carries one seed
        batches = [list(prompts[i : i + step]) for i in range(0, len(prompts), step)]
        if len(batches) == 1:
            return self._request_with_retries(batches[0], params)
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batches))) as pool:
            futures = [pool.submit(self._request_with_retries, batch, params) for batch in batches]
            try:
                results = [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()  # queued requests need not run once the call has failed
                raise
        return [per_prompt for result in results for per_prompt in result]

    # -- HTTP ------------------------------------------------------------------------------------------

    def _chat_tokenizer(self) -> Any:
        with self._tokenizer_lock:
            if self._tokenizer is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                from transformers import AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(self.tokenizer_path)
            return self._tokenizer

    def _request_with_retries(self, prompts: list[str], params: GenerationParams) -> list[list[Generation]]:
        tried: list[str] = []

        def attempt() -> list[list[Generation]]:
            url = self.rotation.next()
            try:
                body = self._complete(url, prompts, params)
            except _Retryable:
                self.rotation.mark_failed(url)
                tried.append(url)
                raise
            self.rotation.mark_ok(url)
            with self._count_lock:
                self.requests_done += 1
            return parse_completions(body, len(prompts), params.n)

        policy = self.retry
        backoff = dict(multiplier=policy.backoff_s, exp_base=policy.backoff_factor, max=policy.max_backoff_s)
        retrying = tenacity.Retrying(  # only _Retryable is retried: a 4xx or a malformed answer is raised
            retry=tenacity.retry_if_exception_type(_Retryable),
            stop=tenacity.stop_after_attempt(policy.max_attempts),
            wait=tenacity.wait_exponential(**backoff),
            before_sleep=lambda _: self._count_retry(),
        )
        try:
            return retrying(attempt)
        except tenacity.RetryError as gave_up:
            cause = gave_up.last_attempt.exception()
            raise SamplerUnavailable(tried[-1], policy.max_attempts, str(cause), tried) from cause

    def _count_retry(self) -> None:
        with self._count_lock:
            self.retries += 1

    def _complete(self, base_url: str, prompts: list[str], params: GenerationParams) -> dict[str, Any]:
        """One `/v1/completions` request; a failure worth trying elsewhere raises `_Retryable`."""
        try:
            completion = self._clients[base_url].completions.create(
                model=self.model,
                prompt=prompts,
                n=params.n,
                temperature=params.temperature,
                top_p=params.top_p,
                max_tokens=params.max_tokens,
                stop=list(params.stop) if params.stop else openai.omit,
                seed=request_seed(self.seed, prompts[0]) if self.request_seeds else openai.omit,
                extra_body={"return_token_ids": True},  # vLLM's per-choice token ids
            )
        except openai.APIConnectionError as error:  # refused, reset, timed out, protocol broken
            cause = error.__cause__ or error
            raise _Retryable(f"{type(cause).__name__}: {cause}") from error
        except openai.InternalServerError as error:  # any 5xx
            raise _Retryable(f"HTTP {error.status_code}: {error.response.text[:300]}") from error
        except openai.APIStatusError as error:
            raise SamplerRequestError(
                f"{base_url}/v1/completions refused the request: HTTP {error.status_code}: "
                f"{error.response.text[:500]}"
            ) from error
        if not isinstance(completion, openai.types.Completion):  # the client hands back non-JSON as text
            raise SamplerRequestError(f"{base_url}/v1/completions answered non-JSON: {str(completion)[:300]}")
        return completion.model_dump()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()

    def prefix_cache_totals(self) -> tuple[int, int]:
        """(queried tokens, hit tokens) summed over the fleet, as `VLLMSampler.prefix_cache_stats` gives
        for the offline engine; a server without the counters raises `SamplerRequestError`."""
        pairs = [prefix_cache_stats(url) for url in self.rotation.urls]
        return int(sum(q for q, _ in pairs)), int(sum(h for _, h in pairs))

    def __enter__(self) -> OpenAICompatibleSampler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def prefix_cache_stats(base_url: str, timeout_s: float = 10.0) -> tuple[float, float]:
    """(queries, hits) of the server's prefix cache, in tokens, summed over label sets, from `/metrics`.

    Hit rate over a window = (hits_after - hits_before) / (queries_after - queries_before).
    Raises `SamplerRequestError` when the server exposes neither counter (prefix caching off, not vLLM).
    """
    response = httpx.get(f"{base_url.rstrip('/')}/metrics", timeout=timeout_s)
    response.raise_for_status()
    totals = {"vllm:prefix_cache_queries_total": 0.0, "vllm:prefix_cache_hits_total": 0.0}
    seen = set()
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name in totals:
                totals[sample.name] += sample.value
                seen.add(sample.name)
    if not seen:
        raise SamplerRequestError(f"{base_url}/metrics has no vllm:prefix_cache_* counters")
    return totals["vllm:prefix_cache_queries_total"], totals["vllm:prefix_cache_hits_total"]
