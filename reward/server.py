"""The reward server (`prm-factory reward serve`): OpenRLHF's `POST /get_reward`, a batch endpoint with
per-step results, `/health` and Prometheus `/metrics` (Starlette + uvicorn, as the audit page).

Stateless: every answer depends on the request alone, so replicas scale behind any load balancer (or as a
Ray Serve deployment wrapping `create_app`). What keeps one replica serving:

- **Bounded work.** At most `concurrency` requests are scored at once (the scorer's workers) and at most
  `queue` more wait; beyond that a request gets 503 with `Retry-After` at once. Each response has the
  scorer's deadline in its worker; a request has `request_deadline_s` from arrival, past which the responses
  not yet scored come back `timed_out` (all steps `unverifiable`, the reward `unverified_reward`): never an
  error to the trainer.
- **Bounded requests.** A body over `max_body_bytes` is refused (413) before it is read whole, one that is
  not UTF-8 or not JSON gets 400, missing fields or wrong types 422, each with the reason; so do more than
  `max_batch` responses, a response over `max_response_chars` or with more than `max_steps` steps.
- **Who may call.** It listens on 127.0.0.1 unless told otherwise; there, a Host header naming anything but
  loopback is refused (audit.server.LoopbackHost: no DNS rebinding). Beyond loopback it needs a token,
  `Authorization: Bearer TOKEN` or `?token=TOKEN` (OpenRLHF's client sends no header: put it in
  `--remote_rm_url`); `/health` answers without one, for load balancers.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from prm_factory.audit.server import LoopbackHost, is_loopback
from prm_factory.reward.aggregate import AGGREGATIONS
from prm_factory.reward.labelling import Context, RewardRequest, RewardRequestError, split_steps
from prm_factory.reward.scorer import DEFAULT_AGGREGATE, RewardResult, RewardScorer, make_request

_CONTEXT = Context()  # the config a request's splitting reads, per request shape

KEEP_ALIVE_SECONDS = 30
"""How long an idle connection stays open. uvicorn's default, 5 s, is shorter than the pools of the
clients a trainer uses (aiohttp keeps an idle connection 15 s, httpx 5 s): a client then sends its next
request on a connection the server is closing, and gets a disconnect error. A server's keep-alive longer
than every client's leaves the closing to the client (NVIDIA-NeMo/Gym#1555 does the same, 30 s)."""


@dataclass(frozen=True)
class Limits:
    """What one request may ask, and how much work the replica takes on."""

    max_body_bytes: int = 2_000_000
    max_batch: int = 512
    max_response_chars: int = 50_000
    max_steps: int = 400
    concurrency: int = 2
    queue: int = 64
    request_deadline_s: float = 60.0
    unverified_reward: float = 0.0  # the reward of a response whose checks did not finish


class RequestRefused(Exception):
    """A request refused with an HTTP status and a reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Metrics:
    """The replica's Prometheus metrics, in a registry of its own (several apps in one process: tests)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "prm_reward_requests",
            "HTTP requests by endpoint and status",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.responses = Counter(
            "prm_reward_responses", "Responses scored, by result status", ["status"], registry=self.registry
        )
        self.latency = Histogram(
            "prm_reward_request_seconds",
            "Request latency from arrival to answer",
            ["endpoint"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.in_flight = Gauge("prm_reward_in_flight", "Requests being scored", registry=self.registry)
        self.queued = Gauge(
            "prm_reward_queued", "Requests waiting for a scoring slot", registry=self.registry
        )


class BearerToken:
    """Refuses (401) every request but `/health` without the token (header or query)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token.strip():
            raise ValueError("an empty token protects nothing: give a real one")
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/health":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get("authorization", "")
        given = header[7:] if header.lower().startswith("bearer ") else request.query_params.get("token", "")
        if not given or not hmac.compare_digest(given.encode(), self.token):
            await JSONResponse({"error": "this reward server needs its token"}, 401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def read_json(request: Request, limit: int) -> Any:
    """The body as JSON, refused past `limit` bytes (declared or streamed), if not UTF-8, or not JSON."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise RequestRefused(413, f"body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestRefused(413, f"body over {limit} bytes")
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestRefused(400, f"body is not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise RequestRefused(400, f"body is not JSON: {error.msg} at line {error.lineno}") from None


def checked(request: RewardRequest, limits: Limits) -> RewardRequest:
    """Refuse a response too long or with too many steps before any worker sees it."""
    if len(request.response) > limits.max_response_chars:
        raise RequestRefused(413, f"a response over {limits.max_response_chars} characters")
    if request.steps is not None and len(request.steps) > limits.max_steps:
        raise RequestRefused(413, f"more than {limits.max_steps} steps")
    try:
        _, spans = split_steps(request, _CONTEXT.config(request))
    except RewardRequestError as error:  # a given step not found in the response
        raise RequestRefused(422, str(error)) from None
    if len(spans) > limits.max_steps:
        raise RequestRefused(413, f"{len(spans)} steps, more than {limits.max_steps}")
    return request


def _field(body: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    if name not in body:
        if required:
            raise RequestRefused(422, f"missing field {name!r}")
        return None
    value = body[name]
    if value is None and required:
        raise RequestRefused(422, f"field {name!r} must be {kind.__name__}, not null")
    if value is not None and not isinstance(value, kind):
        raise RequestRefused(422, f"field {name!r} must be {kind.__name__}, not {type(value).__name__}")
    return value


def openrlhf_requests(body: Any, limits: Limits) -> list[RewardRequest]:
    """OpenRLHF's `{"query": [prompt + response, ...], "prompts": [...], "labels": [...]}`: the response is
    the query past its prompt (the whole query where no prompt is given or it does not start the query),
    the label the reference answer."""
    if not isinstance(body, dict):
        raise RequestRefused(422, "the body must be a JSON object")
    queries = _field(body, "query", list)
    prompts = _field(body, "prompts", list, required=False) or [""] * len(queries)
    labels = _field(body, "labels", list, required=False) or [None] * len(queries)
    if not len(queries) == len(prompts) == len(labels):
        raise RequestRefused(422, "query, prompts and labels must have the same length")
    if len(queries) > limits.max_batch:
        raise RequestRefused(413, f"more than {limits.max_batch} queries")
    requests = []
    for query, prompt, label in zip(queries, prompts, labels, strict=True):
        if not isinstance(query, str) or not isinstance(prompt, str):
            raise RequestRefused(422, "query and prompts must be lists of strings")
        response = query[len(prompt) :] if prompt and query.startswith(prompt) else query
        answer = None if label is None else str(label)
        requests.append(checked(_made(prompt=prompt, response=response, answer=answer), limits))
    return requests


def batch_requests(body: Any, limits: Limits) -> tuple[list[RewardRequest], str]:
    """`{"items": [{"prompt", "response", "answer"?, "solution"?, "steps"?, "sources"?, "budget_s"?}],
    "aggregate"?}` (`budget_s`: reward/budget.py)."""
    if not isinstance(body, dict):
        raise RequestRefused(422, "the body must be a JSON object")
    items = _field(body, "items", list)
    aggregate = _field(body, "aggregate", str, required=False) or DEFAULT_AGGREGATE
    if aggregate not in AGGREGATIONS:
        raise RequestRefused(422, f"unknown aggregate {aggregate!r}; choose one of {', '.join(AGGREGATIONS)}")
    if len(items) > limits.max_batch:
        raise RequestRefused(413, f"more than {limits.max_batch} items")
    allowed = {"prompt", "response", "answer", "solution", "steps", "sources", "budget_s"}
    requests = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise RequestRefused(422, f"item {position} must be an object")
        unknown = set(item) - allowed
        if unknown:
            raise RequestRefused(422, f"item {position}: unknown fields {sorted(unknown)}")
        for name in ("prompt", "response"):
            if name not in item:
                raise RequestRefused(422, f"item {position}: missing field {name!r}")
        requests.append(checked(_made(**item), limits))
    return requests, aggregate


def _made(**fields: Any) -> RewardRequest:
    try:
        return make_request(**fields)
    except RewardRequestError as error:
        raise RequestRefused(422, str(error)) from None


class Scoring:
    """Admission (a slot, a bounded queue) and the per-request deadline around the scorer."""

    def __init__(self, scorer: RewardScorer, limits: Limits, metrics: Metrics) -> None:
        self.scorer = scorer
        self.limits = limits
        self.metrics = metrics
        self.slots = asyncio.Semaphore(limits.concurrency)
        self.waiting = 0
        self.running = 0

    async def score(
        self, requests: Sequence[RewardRequest], aggregate: str, started: float
    ) -> list[RewardResult]:
        if self.slots.locked() and self.waiting >= self.limits.queue:
            raise RequestRefused(503, f"busy: {self.waiting} requests queued")
        self.waiting += 1
        self.metrics.queued.inc()
        try:
            left = self.limits.request_deadline_s - (time.monotonic() - started)
            await asyncio.wait_for(self.slots.acquire(), timeout=max(left, 0.001))
        except TimeoutError:
            return [self._late(r, aggregate) for r in requests]
        finally:
            self.waiting -= 1
            self.metrics.queued.dec()
        self.metrics.in_flight.inc()
        self.running += 1
        try:
            left = self.limits.request_deadline_s - (time.monotonic() - started)
            work = asyncio.to_thread(self.scorer.score, list(requests), aggregate_name=aggregate)
            try:
                results = await asyncio.wait_for(work, timeout=max(left, 0.001))
            except TimeoutError:  # the thread finishes its responses within their own deadlines
                results = [self._late(r, aggregate) for r in requests]
        except RewardRequestError as error:
            raise RequestRefused(422, str(error)) from None
        finally:
            self.slots.release()
            self.running -= 1
            self.metrics.in_flight.dec()
        for result in results:
            self.metrics.responses.labels(result.status).inc()
        return results

    def _late(self, request: RewardRequest, aggregate: str) -> RewardResult:
        reason = f"the request's deadline of {self.limits.request_deadline_s:g} s passed"
        return self.scorer.unscored(
            request, "timed_out", reason, aggregate, None, self.limits.request_deadline_s
        )


def create_app(
    scorer: RewardScorer, limits: Limits = Limits(), token: str | None = None, loopback: bool = True
) -> Starlette:
    """The server's app over `scorer`. `token` None is allowed only on loopback (`run` enforces it)."""
    metrics = Metrics()
    scoring = Scoring(scorer, limits, metrics)

    async def answered(endpoint: str, request: Request, handle: Any) -> Response:
        started = time.monotonic()
        try:
            body = await read_json(request, limits.max_body_bytes)
            status, payload = 200, await handle(body, started)
        except RequestRefused as refused:
            status, payload = refused.status, {"error": refused.reason}
        metrics.requests.labels(endpoint, str(status)).inc()
        metrics.latency.labels(endpoint).observe(time.monotonic() - started)
        headers = {"retry-after": "1"} if status == 503 else None
        return JSONResponse(payload, status, headers=headers)

    def reward_of(result: RewardResult) -> float:
        return result.score if result.status == "ok" else limits.unverified_reward

    async def get_reward(request: Request) -> Response:
        async def handle(body: Any, started: float) -> dict[str, Any]:
            requests = openrlhf_requests(body, limits)
            results = await scoring.score(requests, DEFAULT_AGGREGATE, started)
            rewards = [reward_of(r) for r in results]
            return {
                "rewards": rewards,
                "scores": rewards,
                "extra_logs": {
                    "first_error": [-1 if r.first_error is None else r.first_error for r in results],
                    "unverified": [float(r.status != "ok") for r in results],
                },
            }

        return await answered("/get_reward", request, handle)

    async def score(request: Request) -> Response:
        async def handle(body: Any, started: float) -> dict[str, Any]:
            requests, aggregate = batch_requests(body, limits)
            results = await scoring.score(requests, aggregate, started)
            return {"results": [{**r.to_dict(), "reward": reward_of(r)} for r in results]}

        return await answered("/score", request, handle)

    async def health(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "workers": scorer.workers,
                "in_flight": scoring.running,
                "queued": scoring.waiting,
            }
        )

    async def prometheus(request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    middleware = []
    if token is not None:
        middleware.append(Middleware(BearerToken, token=token))
    elif loopback:
        middleware.append(Middleware(LoopbackHost))
    else:
        raise ValueError("a reward server listening beyond loopback needs a token")
    routes = [
        Route("/get_reward", get_reward, methods=["POST"]),
        Route("/score", score, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", prometheus, methods=["GET"]),
    ]
    return Starlette(routes=routes, middleware=middleware)


def serve_token(host: str, token: str | None) -> str | None:
    """The token the server will require: the one given, a fresh one beyond loopback, else none."""
    if token is not None:
        if not token.strip():
            raise ValueError("--token is empty: give a real token, or none for a fresh one")
        return token
    return None if is_loopback(host) else secrets.token_urlsafe(24)


def run(
    scorer: RewardScorer, limits: Limits, host: str = "127.0.0.1", port: int = 8000, token: str | None = None
) -> None:
    """Serve until interrupted (uvicorn, one process: its scorer's workers do the labelling)."""
    import uvicorn

    scorer.warm()
    app = create_app(scorer, limits, token, loopback=is_loopback(host))
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
