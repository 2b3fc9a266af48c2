"""`score_steps` / `score_batch`: a response's steps labelled as the factory labels a chain, each with its
`p_correct`, the first error and one scalar, within a deadline per response.

Why worker processes: the verifier's pure-Python readings run in the caller's process and only SymPy work
goes to its killable workers, so a pathological response could still hold a caller's thread past any
limit. A `RewardScorer` runs each request in a worker process of its own small pool
(verifiers.math.bounded, the verifier's pool machinery): a request that runs past `deadline_s` has its
worker killed and replaced, and comes back with every step `unverifiable` (status `timed_out`), never as an
error to the trainer. A worker start (imports, the verifier's own SymPy worker) is paid once, outside any
deadline, by `warm()`; a killed worker's replacement is paid by the next request on that slot.

In the caller, where that keeps the bound: a math response of the built-in sources (verifier, reference)
of at most IN_CALLER_MAX_CHARS is labelled in the calling thread itself, one call at a time, with no hop
to a worker or another thread (the process hop, two wake-ups and a pickled request and result, cost a
GSM8K-sized response a fifth of its time; a hop to a labelling thread in this process a sixth). There the
work that can run long is SymPy's, in the verifier's killable pools, and every stream of them stops at
the response's deadline (verifiers.math.bounded.streams_until); the pure-Python readings are stopped at
it by an exception raised into the thread (reward/watchdog.py). A response past its deadline is
`timed_out`, and the pools are made ready again outside the next one's deadline (what a worker's
replacement was). Inputs are capped here (C code, such as a regex, is not stopped mid-call), and a
response over the cap, another domain or source, or a second concurrent call goes to a worker.
`in_caller=False` always uses the workers.

Thread-safe: the pool hands each calling thread its own worker, so as many requests run at once as the
scorer has workers, and one more in the caller; more callers wait for a free one. `deadline_s=None`
labels in the calling thread instead (no bound, no worker): what a debugger wants.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from prm_factory.labels.registry import configured
from prm_factory.reward.aggregate import AggregateInput, aggregate
from prm_factory.reward.labelling import (
    DEFAULT_SOURCES,
    Context,
    LabelledResponse,
    RewardRequest,
    RewardRequestError,
    options_items,
    split_steps,
)
from prm_factory.reward.probability import MAPPING_NAME, step_p_correct
from prm_factory.reward.tokens import token_ends
from prm_factory.reward.watchdog import PastDeadline, can_interrupt, run_until
from prm_factory.reward.worker import WARM_STEP, label_one
from prm_factory.verifiers.math.bounded import TIMED_OUT, BoundedPool, PoolConfig
from prm_factory.verifiers.protocol import outcome_value

DEADLINE_S = 10.0
"""Default time a response may take in its worker (its SymPy items also have the verifier's own limit)."""

DEFAULT_AGGREGATE = "min"

IN_CALLER_SOURCES = frozenset({"verifier", "reference"})
"""Sources whose only work that can run long is the verifier's SymPy, in pools a deadline stops."""
IN_CALLER_MAX_CHARS = 2_000
"""Largest prompt + response + solution (+ steps) labelled in this process: every GSM8K-sized dev chain
(at most 1,715 characters), no 30-step competition one (5,000 and more). It bounds the C code a response
can run here past its deadline (the watchdog stops pure Python, not a regex or an integer power); the
verifier's readings were superlinear on some inputs (one step of `2^2^2^2 = 16.` repeated: 2,240
characters 45 s before 106be2b)."""

CONSENSUS_MAPPING = "consensus"
"""`p_correct_mapping` where the labels layer's consensus gives each step's P(right) itself."""


@dataclass(frozen=True)
class SourceVerdict:
    """One source's label of one step."""

    source: str
    verdict: str
    reason: str
    kind: str | None = None
    value: float | None = None


@dataclass(frozen=True)
class StepReward:
    """One step: its span in the response, the token where it ends, its verdict and how far to trust it."""

    index: int
    start: int
    end: int
    token_end: int | None  # index of its last token in the response's tokens (None: no tokenizer given)
    verdict: str  # correct | incorrect | disputed | unverifiable (the consensus of its sources)
    p_correct: float | None  # None: nothing checked it (probability.py gives the mapping)
    sources: tuple[SourceVerdict, ...]


@dataclass(frozen=True)
class RewardResult:
    """A response's reward: one scalar by the named aggregation, and the steps behind it."""

    score: float
    aggregate: str
    steps: tuple[StepReward, ...]
    first_error: int | None  # earliest step whose consensus is negative
    outcome: str  # the final answer graded: correct | incorrect | unparsed | timeout | error
    status: str  # ok | timed_out | failed
    reason: str = ""
    elapsed_s: float = 0.0
    p_correct_mapping: str = MAPPING_NAME
    labelers: Mapping[str, str] | None = None

    @property
    def step_scores(self) -> list[float | None]:
        return [step.p_correct for step in self.steps]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["labelers"] = dict(self.labelers or {})
        return data


_VERDICT = {
    "positive": "correct",
    "negative": "incorrect",
    "disputed": "disputed",
    "unlabeled": "unverifiable",
}


def make_request(
    prompt: str,
    response: str,
    *,
    answer: str | None = None,
    solution: str | None = None,
    tests: str | None = None,
    steps: Sequence[str] | None = None,
    domain: str = "math",
    sources: Sequence[str] = DEFAULT_SOURCES,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    budget_s: float | None = None,
) -> RewardRequest:
    """A request from keyword arguments (types checked here, so a worker never sees a malformed one)."""
    for name, value in (("prompt", prompt), ("response", response)):
        if not isinstance(value, str):
            raise RewardRequestError(f"{name} must be a string, not {type(value).__name__}")
    for name, value in (("answer", answer), ("solution", solution), ("tests", tests)):
        if value is not None and not isinstance(value, str):
            raise RewardRequestError(f"{name} must be a string or null, not {type(value).__name__}")
    if steps is not None and (isinstance(steps, str) or not all(isinstance(s, str) for s in steps)):
        raise RewardRequestError("steps must be a list of strings")
    if isinstance(sources, str) or not all(isinstance(s, str) for s in sources):
        raise RewardRequestError("sources must be a list of source names")
    if budget_s is not None and (
        isinstance(budget_s, bool) or not isinstance(budget_s, int | float) or not budget_s >= 0
    ):
        raise RewardRequestError("budget_s must be a number of seconds, at least 0, or null")
    return RewardRequest(
        prompt=prompt,
        response=response,
        answer=answer,
        solution=solution,
        tests=tests,
        steps=tuple(steps) if steps is not None else None,
        domain=domain,
        sources=tuple(sources),
        options=options_items(options),
        budget_s=None if budget_s is None else float(budget_s),
    )


class RewardScorer:
    """Scores requests in a pool of worker processes, each within `deadline_s` (None: in the caller).
    `budget_s` is the SymPy time budget of a request that sets none itself (reward/budget.py; None, the
    default: no budget, the verdicts `label` gives). `competition`: the traffic is competition math, so
    `warm` also starts what only it needs (the certainty gate's SymPy pool in each worker and the LaTeX
    parser's saved DFA in the SymPy workers: about 150 MiB a worker that GSM8K-sized traffic never uses);
    without it the first competition response a worker gets starts them (about a second, once)."""

    def __init__(
        self,
        workers: int | None = None,
        deadline_s: float | None = DEADLINE_S,
        startup_timeout_s: float = 120.0,
        budget_s: float | None = None,
        in_caller: bool = True,
        competition: bool = False,
    ) -> None:
        self.workers = workers or min(2, os.cpu_count() or 1)
        self._warm_target = f"prm_factory.reward.worker:{'warm_competition' if competition else 'warm'}"
        self.deadline_s = deadline_s
        self.budget_s = budget_s
        self.in_caller = in_caller and deadline_s is not None and can_interrupt()
        self._caller_lock = threading.Lock()  # one response at a time in the caller (the GIL)
        self._caller_cut = False  # a response past its deadline in the caller: make the pools ready
        self.startup_timeout_s = startup_timeout_s
        self._context = Context()  # the caller's own: splitting on a timeout, and deadline_s=None
        self._pool = (
            BoundedPool(
                PoolConfig(workers=self.workers, startup_timeout_s=startup_timeout_s, memory_limit_mb=0)
            )
            if deadline_s is not None
            else None
        )
        self._warm_lock = threading.Lock()
        self._warmed = False

    def warm(self) -> None:
        """Start every worker and its verifier's SymPy worker now (idempotent)."""
        with self._warm_lock:
            if self._warmed:
                return
            request = RewardRequest("Warm up.", WARM_STEP)
            if self._pool is None or self.in_caller:
                label_one(request, self._context)
                self._context.ready()  # the certainty gate's process-wide pool too
            if self._pool is not None:
                pool = self._pool
                with ThreadPoolExecutor(self.workers) as threads:  # each thread holds a distinct worker
                    list(
                        threads.map(
                            lambda _: list(
                                pool.run_stream(self._warm_target, [request], 1, self.startup_timeout_s)
                            ),
                            range(self.workers),
                        )
                    )
            self._warmed = True

    def _warm_one(self) -> None:
        """Warm the next free worker (one a timeout killed is replaced there; with several workers, another
        may come first, and the replacement then warms inside its first request's deadline)."""
        assert self._pool is not None
        request = RewardRequest("Warm up.", WARM_STEP)
        list(self._pool.run_stream(self._warm_target, [request], 1, self.startup_timeout_s))

    def label(self, requests: Sequence[RewardRequest]) -> list[tuple[str, Any, float]]:
        """Each request's `(status, LabelledResponse or reason, seconds)`, in order, over the workers."""
        if not requests:  # an empty batch (a trainer's empty query list): nothing to warm or label
            return []
        self.warm()
        if self.budget_s is not None:
            requests = [r if r.budget_s is not None else replace(r, budget_s=self.budget_s) for r in requests]
        if self._pool is None:
            out = []
            for request in requests:
                started = time.perf_counter()
                status, value = label_one(request, self._context)
                out.append((status, value, time.perf_counter() - started))
            return out
        slices = [
            list(range(i, len(requests), self.workers)) for i in range(min(self.workers, len(requests)))
        ]
        if len(slices) == 1:  # one worker's share (score_steps): no thread to start, maybe no worker
            return self._run_share(list(requests))
        results: list[tuple[str, Any, float] | None] = [None] * len(requests)
        shares = [[requests[p] for p in positions] for positions in slices]
        with ThreadPoolExecutor(len(shares) - 1) as threads:
            others = [threads.submit(self._run_slice, share) for share in shares[1:]]
            first = self._run_share(shares[0])  # in this thread where it fits, beside the workers
            for positions, labelled in zip(slices, [first, *(f.result() for f in others)], strict=True):
                for position, result in zip(positions, labelled, strict=True):
                    results[position] = result
        return [r for r in results if r is not None]

    def fits_caller(self, request: RewardRequest) -> bool:
        """Whether the request may be labelled in the caller (see the module docstring)."""
        size = len(request.prompt) + len(request.response) + len(request.solution or "")
        return (
            self.in_caller
            and can_interrupt()  # this thread's, now: a tracer set since the scorer was built
            and request.domain == "math"
            and set(request.sources) <= IN_CALLER_SOURCES
            and size + sum(len(step) for step in request.steps or ()) <= IN_CALLER_MAX_CHARS
        )

    def _run_share(self, requests: list[RewardRequest]) -> list[tuple[str, Any, float]]:
        """A share of a call's requests (all of them for one worker's share, a batch's first beside the
        workers' shares): in this thread where every one fits and no other call is labelling here, else
        in a worker. The workers' shares run meanwhile; this thread's share skips their hop (a pickled
        request and result, two wake-ups)."""
        if all(self.fits_caller(r) for r in requests) and self._caller_lock.acquire(blocking=False):
            return self._run_in_caller(requests)  # it releases the lock
        return self._run_slice(requests)

    def _run_in_caller(self, requests: list[RewardRequest]) -> list[tuple[str, Any, float]]:
        """Each request labelled in this thread until its deadline (its SymPy streams stop there, and the
        watchdog stops its pure Python); one past it is `timed_out`. Called with the in-caller lock held;
        releases it."""
        assert self.deadline_s is not None
        out: list[tuple[str, Any, float]] = []
        try:
            for request in requests:
                if self._caller_cut:  # slots still finishing a cut item, or emptied: outside the deadline
                    self._context.ready()
                    self._caller_cut = False
                started = time.perf_counter()
                deadline = time.time() + self.deadline_s
                try:
                    status, value = run_until(deadline, label_one, request, self._context, deadline)
                except PastDeadline:
                    status, value = "timed_out", "stopped"
                if status == "timed_out":
                    self._caller_cut = True
                    value = f"no verdict within the deadline of {self.deadline_s:g} s ({value})"
                out.append((status, value, time.perf_counter() - started))
        finally:
            self._caller_lock.release()
        return out

    def _run_slice(self, requests: list[RewardRequest]) -> list[tuple[str, Any, float]]:
        """One worker's share, in order: a request past its deadline is `timed_out` and the rest go on in
        a fresh worker (the verifiers.math.bounded.run_items rule)."""
        assert self._pool is not None and self.deadline_s is not None
        out: list[tuple[str, Any, float]] = []
        while len(out) < len(requests):
            remaining = requests[len(out) :]
            started = time.perf_counter()
            stream = self._pool.run_stream(
                "prm_factory.reward.worker:score_requests", remaining, len(remaining), self.deadline_s
            )
            lost = False
            for item in stream:
                now = time.perf_counter()
                if isinstance(item, str):  # TIMED_OUT or WORKER_FAILED: the worker is gone
                    late = item == TIMED_OUT
                    reason = (
                        f"no verdict within the deadline of {self.deadline_s:g} s"
                        if late
                        else "worker failed"
                    )
                    out.append(("timed_out" if late else "failed", reason, now - started))
                    lost = True
                    break
                status, value = item
                out.append((status, value, now - started))
                started = now
            stream.close()  # hands the worker's slot back before the warm-up below takes one
            if lost and len(out) < len(requests):  # the rest of this share waits for the replacement anyway
                self._warm_one()  # it starts outside their deadlines
            elif lost:  # nothing left here: the replacement starts without holding this call
                threading.Thread(target=self._warm_one, daemon=True).start()
            elif len(out) < len(requests):
                out.append(("failed", "the reward worker ended early", time.perf_counter() - started))
        return out

    def score(
        self,
        requests: Sequence[RewardRequest],
        *,
        aggregate_name: str = DEFAULT_AGGREGATE,
        tokenizer: Any = None,
    ) -> list[RewardResult]:
        """Each request's RewardResult. A request refused as given raises RewardRequestError (a caller's
        mistake); a check that timed out or broke gives an all-`unverifiable` result with its reason."""
        aggregate(aggregate_name, AggregateInput([], None, None))  # an unknown name fails before any work
        for request in requests:
            _check_sources(request)
        results = []
        for request, (status, value, seconds) in zip(requests, self.label(requests), strict=True):
            if status == "refused":
                raise RewardRequestError(value)
            if status == "ok":
                results.append(_result(request, value, aggregate_name, tokenizer, seconds))
            else:
                results.append(self.unscored(request, status, value, aggregate_name, tokenizer, seconds))
        return results

    def unscored(
        self,
        request: RewardRequest,
        status: str,
        reason: str,
        aggregate_name: str,
        tokenizer: Any,
        seconds: float,
    ) -> RewardResult:
        """A result whose checks did not finish: every step `unverifiable`, `status` and `reason` say why."""
        _, spans = split_steps(request, self._context.config(request))
        ends = (
            token_ends(tokenizer, request.response, [s.end for s in spans])
            if tokenizer
            else [None] * len(spans)
        )
        steps = tuple(
            StepReward(s.index, s.start, s.end, end, "unverifiable", None, ())
            for s, end in zip(spans, ends, strict=True)
        )
        score = aggregate(aggregate_name, AggregateInput([None] * len(steps), None, None))
        outcome = "timeout" if status == "timed_out" else "error"
        return RewardResult(score, aggregate_name, steps, None, outcome, status, reason, seconds)

    def close(self) -> None:
        """Stop the workers and what the caller's own context started (sandbox containers, SymPy workers)."""
        if self._pool is not None:
            self._pool.close()
        self._context.close()


def _check_sources(request: RewardRequest) -> None:
    """Refuse unknown sources in the caller, before a worker is involved."""
    try:
        known = configured(list(request.sources))
        for name in request.sources:
            if ":" not in name:
                known[name]
    except ValueError as error:
        raise RewardRequestError(str(error)) from error


def _result(
    request: RewardRequest, labelled: LabelledResponse, aggregate_name: str, tokenizer: Any, seconds: float
) -> RewardResult:
    registry = configured(list(request.sources))
    ends = (
        token_ends(tokenizer, request.response or labelled_text(labelled), [s.end for s in labelled.spans])
        if tokenizer is not None
        else [None] * len(labelled.spans)
    )
    calibrated = any(p is not None for p in labelled.consensus_p_correct)  # issue 47's, where it landed
    steps = []
    rows = zip(labelled.spans, labelled.labels, labelled.consensus, ends, strict=True)
    for position, (span, labels, consensus, end) in enumerate(rows):
        steps.append(
            StepReward(
                span.index,
                span.start,
                span.end,
                end,
                _VERDICT[consensus],
                labelled.consensus_p_correct[position]
                if calibrated
                else step_p_correct(labels, consensus, registry),
                tuple(SourceVerdict(x.source, x.verdict, x.reason, x.kind, x.value) for x in labels),
            )
        )
    outcome = labelled.outcome.label
    inputs = AggregateInput([s.p_correct for s in steps], labelled.first_error, outcome_value(outcome))
    return RewardResult(
        aggregate(aggregate_name, inputs),
        aggregate_name,
        tuple(steps),
        labelled.first_error,
        outcome,
        "ok",
        "",
        seconds,
        CONSENSUS_MAPPING if calibrated else MAPPING_NAME,
        labelled.labelers,
    )


def labelled_text(labelled: LabelledResponse) -> str:
    """The text the spans point into when a request gave steps and no response (steps joined as `label`)."""
    from prm_factory.labels.assemble import join_steps

    return join_steps([s.text for s in labelled.spans])[0]


_default: RewardScorer | None = None
_default_lock = threading.Lock()


def default_scorer() -> RewardScorer:
    """The process-wide scorer (`min(2, cores)` workers, DEADLINE_S), started on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = RewardScorer()
        return _default


def score_batch(
    items: Sequence[Mapping[str, Any]],
    *,
    aggregate: str = DEFAULT_AGGREGATE,
    tokenizer: Any = None,
    scorer: RewardScorer | None = None,
) -> list[RewardResult]:
    """`score_steps` over many responses at once, spread over the scorer's workers. Each item is a mapping
    of `score_steps`'s arguments (`prompt`, `response`, and any of `answer`, `solution`, `tests`, `steps`,
    `domain`, `sources`, `options`, `budget_s`)."""
    requests = [make_request(**dict(item)) for item in items]
    return (scorer or default_scorer()).score(requests, aggregate_name=aggregate, tokenizer=tokenizer)


def score_steps(
    prompt: str,
    response: str,
    *,
    answer: str | None = None,
    solution: str | None = None,
    tests: str | None = None,
    steps: Sequence[str] | None = None,
    domain: str = "math",
    sources: Sequence[str] = DEFAULT_SOURCES,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    tokenizer: Any = None,
    aggregate: str = DEFAULT_AGGREGATE,
    scorer: RewardScorer | None = None,
    budget_s: float | None = None,
) -> RewardResult:
    """One response's process reward: split into steps as a run splits a chain (or the trainer's `steps`),
    labelled by the named registered sources that need no engine (the verifier; the reference where a worked
    `solution` is given; the final answer graded against `answer`; a `prm` checkpoint through `options`),
    each step with its span, last token (given a `tokenizer`), verdict, `p_correct` and reasons, plus the
    first error and one scalar by `aggregate` (reward/aggregate.py). `budget_s` (opt-in) bounds the step
    checks' SymPy time: a claim whose check it cuts is `unverifiable` (reward/budget.py).

    >>> result = score_steps("48/2?", "48/2 = 25.\\n\\nThe answer is 25.", answer="24")  # doctest: +SKIP
    >>> result.first_error, result.steps[0].verdict, result.outcome                      # doctest: +SKIP
    (0, 'incorrect', 'incorrect')
    """
    request = make_request(
        prompt,
        response,
        answer=answer,
        solution=solution,
        tests=tests,
        steps=steps,
        domain=domain,
        sources=sources,
        options=options,
        budget_s=budget_s,
    )
    return (scorer or default_scorer()).score([request], aggregate_name=aggregate, tokenizer=tokenizer)[0]
