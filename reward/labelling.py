"""Label one response's steps as `prm-factory label` labels a chain: the same step splitting, the same
verifier built from the same config, the same registered label sources in the same order, the same
consensus and first-error rule. Pure apart from the verifier's worker processes; safe from any thread.

The sources come from the label-source registry by name (labels/registry.py), so the trained PRM (`prm`,
registered by an entry point from training/) is reached like any plug-in: `sources=("verifier",
"reference", "prm")` with `options={"prm": {"checkpoint": ...}}`. That keeps this package low in the
layers (it imports labels/, verifiers/ and sampling/, never training/), and a user's own registered source
is a reward source too. A source that needs the policy engine (Monte Carlo rollouts, the judge) is refused:
a reward call starts no engine.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.assemble import RecordContext, SampledChain, chain_consensus, join_steps
from prm_factory.labels.consensus import Weighing, weighing
from prm_factory.labels.registry import configured, order_by_reads
from prm_factory.labels.source import ChainLabels, LabelSource, SourceSetup
from prm_factory.reward.budget import budget_until, without_cut_positives
from prm_factory.sampling.protocol import Generation
from prm_factory.sampling.segment import StepSpan, segment
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig, default_pool, streams_until
from prm_factory.verifiers.protocol import Verdict, Verifier

DEFAULT_SOURCES: tuple[str, ...] = ("verifier", "reference")
"""What `prm-factory label` runs without a model on the default config: the verifier and the reference."""

DOMAINS = ("math", "code")

_MAX_PLANS = 64


class RewardRequestError(ValueError):
    """A request that cannot be scored as given (unknown source, a source needing an engine, bad steps)."""


class ResponseTimedOut(Exception):
    """A response labelled in the caller ran past its deadline: it is scored all `unverifiable`."""


@dataclass(frozen=True)
class RewardRequest:
    """One response to score, as plain data (it crosses to a worker process)."""

    prompt: str
    response: str
    answer: str | None = None  # the reference final answer: grades the outcome (math)
    solution: str | None = None  # a worked solution: the reference source aligns steps with it (math)
    tests: str | None = None  # code: the JSON test spec the sandbox runs
    steps: tuple[str, ...] | None = None  # the trainer's own steps (None: split the response as run does)
    domain: str = "math"
    sources: tuple[str, ...] = DEFAULT_SOURCES
    options: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # [labels.options] as items
    budget_s: float | None = None  # SymPy time of the step checks (reward/budget.py); None: no budget

    def options_dict(self) -> dict[str, dict[str, str]]:
        return {name: dict(items) for name, items in self.options}


def options_items(options: Mapping[str, Mapping[str, Any]] | None) -> tuple:
    """`{"prm": {"checkpoint": p}}` as the hashable items a RewardRequest carries."""
    return tuple(
        sorted(
            (name, tuple(sorted((k, str(v)) for k, v in o.items()))) for name, o in (options or {}).items()
        )
    )


@dataclass(frozen=True)
class LabelledResponse:
    """What the labelling gives back (plain data: it returns from a worker process)."""

    spans: tuple[StepSpan, ...]
    labels: tuple[tuple[StepLabel, ...], ...]  # per step, one label per source that labelled it
    consensus: tuple[str, ...]
    first_error: int | None  # earliest step whose consensus is negative (the factory's rule)
    source_first_errors: dict[str, int]
    outcome: Verdict
    labelers: dict[str, str] = field(default_factory=dict)
    # the consensus's own P(right) per step where the labels layer computes one (issue 47), else None
    consensus_p_correct: tuple[float | None, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What every request of one shape (domain, sources, options) shares: built once per process, so a
    request pays for its own steps only (a config validated, tables read, sources looked up: about a
    tenth of a GSM8K-sized response's labelling, measured with cProfile in bench/bench_reward.py's set)."""

    config: RunConfig
    verifier: Verifier
    setup: SourceSetup
    sources: tuple[LabelSource, ...]
    record_context: RecordContext
    labelers: dict[str, str]  # each source's labeler tag (a function of the set-up alone)
    by_name: dict[str, LabelSource] = field(default_factory=dict)  # the sources by name


@dataclass
class Context:
    """A process's config, verifier and sources per request shape, built once and shared by threads."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _verifiers: dict[tuple, Verifier] = field(default_factory=dict)
    _weighings: dict[str, Weighing] = field(default_factory=dict)
    _plans: dict[tuple, Plan] = field(default_factory=dict)
    _pools: list[BoundedPool] = field(default_factory=list)

    def config(self, request: RewardRequest) -> RunConfig:
        return RunConfig.model_validate(
            {
                "problems": {"source": "code"} if request.domain == "code" else {},
                "labels": {"sources": list(request.sources), "options": request.options_dict()},
            }
        )

    def plan(self, request: RewardRequest) -> Plan:
        """The request shape's plan (a refused shape raises RewardRequestError every time, never cached).
        Keyed also by what the dataset root reads (the working folder, PRM_FACTORY_DATASET), since the
        consensus reads that dataset's audited tables."""
        key = (
            request.domain,
            request.sources,
            request.options,
            os.getcwd(),
            os.environ.get("PRM_FACTORY_DATASET"),
        )
        plan = self._plans.get(key)
        if plan is None:
            config = self.config(request)
            verifier = self.verifier(config, request.domain)
            setup = SourceSetup(
                config, request.domain, verifier, None, "reward", pipeline="label", rollouts=False
            )
            sources = tuple(chosen_sources(request, setup))
            context = replace(_RECORD_CONTEXT, weighing=self.weighing(config))
            labelers = {source.name: source.labeler(setup) for source in sources}
            plan = Plan(config, verifier, setup, sources, context, labelers, {s.name: s for s in sources})
            with self._lock:
                if len(self._plans) >= _MAX_PLANS:  # request options are the caller's: keep this bounded
                    self._plans.clear()
                plan = self._plans.setdefault(key, plan)
        return plan

    def weighing(self, config: RunConfig) -> Weighing:
        """The consensus's tables and thresholds as `label` reads them for this config (labels.consensus)."""
        key = config.labels.model_dump_json() + str(config.dataset_root())
        with self._lock:
            if key not in self._weighings:
                self._weighings[key] = weighing(config)
            return self._weighings[key]

    def verifier(self, config: RunConfig, domain: str) -> Verifier:
        key = (domain, config.verifier.model_dump_json(), config.sandbox.model_dump_json())
        with self._lock:
            if key not in self._verifiers:
                self._verifiers[key] = _make_verifier(config, domain, self._pools)
            return self._verifiers[key]

    def close(self) -> None:
        """Stop what this context's verifiers started (a code verifier's sandbox containers, a math
        verifier's SymPy workers); the next request builds them again."""
        with self._lock:  # the pools are the closed math verifiers': `ready` must not start them again
            verifiers, self._verifiers, self._pools = list(self._verifiers.values()), {}, []
            self._plans.clear()
        for verifier in verifiers:
            close = getattr(verifier, "close", None)
            if callable(close):
                close()

    def ready(self) -> None:
        """Every SymPy pool this context's verifiers use, and the process-wide one (the certainty gate's),
        with its slots back and its workers started: run outside any deadline (after one cut a check)."""
        with self._lock:
            pools = [*self._pools, default_pool()]
        for pool in pools:
            pool.ready()


def _make_verifier(config: RunConfig, domain: str, pools: list[BoundedPool]) -> Verifier:
    """The verifier `run` and `label` build from this config (flows/domains.py builds it the same way)."""
    if domain == "code":
        from prm_factory.verifiers.code.sandbox import SandboxLimits
        from prm_factory.verifiers.code.verifier import CodeVerifier, CodeVerifierConfig

        s = config.sandbox
        limits = SandboxLimits(memory_mb=s.memory_mb, pids=s.pids, cpus=s.cpus, wall_seconds=s.wall_seconds)
        return CodeVerifier(
            CodeVerifierConfig(pool_size=s.pool_size, limits=limits, engine_wait_s=s.engine_wait_seconds)
        )
    from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig

    v = config.verifier
    math = MathVerifierConfig(timeout_s=v.timeout_seconds, last_number_fallback=v.last_number_fallback)
    # the pool MathVerifier builds itself, kept here so `Context.ready` reaches it; its streams stop at
    # the calling thread's deadline (a budget, a response's deadline) where one is set
    pool = BoundedPool(PoolConfig(workers=math.workers, memory_limit_mb=math.worker_memory_mb))
    pools.append(pool)
    return MathVerifier(math, pool=pool)


def split_steps(request: RewardRequest, config: RunConfig) -> tuple[str, tuple[StepSpan, ...]]:
    """The response's steps with their spans: the trainer's own steps located in the response (joined as
    `label` joins them when no response is given), else the response split as a run splits a chain."""
    if request.steps is not None:
        if not request.response:
            return join_steps(list(request.steps))
        spans, cursor = [], 0
        for index, step in enumerate(request.steps):
            start = request.response.find(step, cursor)
            if start < 0:
                raise RewardRequestError(f"step {index} is not in the response after character {cursor}")
            spans.append(StepSpan(index, step, start, start + len(step)))
            cursor = start + len(step)
        return request.response, tuple(spans)
    if request.domain == "code":
        from prm_factory.verifiers.code.program import segment_chain

        pieces = segment_chain(request.response, config.segmentation.code_mode)
        return request.response, tuple(StepSpan(i, p.text, p.start, p.end) for i, p in enumerate(pieces))
    return request.response, tuple(segment(request.response, config.segmentation.mode))


def chosen_sources(request: RewardRequest, setup: SourceSetup) -> list[LabelSource]:
    """The requested registered sources that apply here, ordered so a source reading another runs after it."""
    if request.domain not in DOMAINS:
        raise RewardRequestError(f"unknown domain {request.domain!r}; choose one of {', '.join(DOMAINS)}")
    try:
        known = configured(list(request.sources))
        picked = [known[name] for name in dict.fromkeys(request.sources) if ":" not in name]
    except ValueError as error:  # RegistryError: an unknown or broken source
        raise RewardRequestError(str(error)) from error
    for source in picked:
        if "engine" in source.needs:
            raise RewardRequestError(
                f"label source {source.name!r} needs the policy engine; a reward starts none"
            )
    return order_by_reads([s for s in picked if s.applies(setup)])


def label_response(
    request: RewardRequest, context: Context, deadline: float | None = None
) -> LabelledResponse:
    """The response's step labels, consensus and first error (see the module docstring); with a
    `budget_s`, the step checks' SymPy work stops that many seconds after this call began. `deadline`
    (time.time()): every SymPy stream of the call stops at it, and a call that ends past it raises
    ResponseTimedOut (what a caller that labels in its own thread bounds a response with)."""
    started = time.time()  # the budget's clock: the SymPy worker reads it too
    with streams_until(deadline):
        labelled = _label(request, context, started)
    if deadline is not None and time.time() >= deadline:
        raise ResponseTimedOut(f"past its deadline by {time.time() - deadline:.3f} s")
    return labelled


def _label(request: RewardRequest, context: Context, started: float) -> LabelledResponse:
    plan = context.plan(request)
    verifier, setup, sources = plan.verifier, plan.setup, plan.sources
    text, spans = split_steps(request, plan.config)
    problem = Problem(
        problem_id=content_id("reward", request.domain, request.prompt, request.answer),
        source="reward",
        domain=request.domain,
        text=request.prompt,
        reference_answer=request.answer,
        reference_solution=request.solution,
        tests=request.tests,
    )
    outcome = _outcome(verifier, problem, text)
    chain = SampledChain(
        chain_id=content_id("reward-chain", problem.problem_id, text),
        problem=problem,
        prompt=request.prompt,
        sample_index=0,
        generation=Generation(text, 0, "external"),
        steps=spans,
        outcome=outcome,
        final_answer=outcome.evidence.get("answer"),
    )
    by_source: dict[str, list[ChainLabels | None]] = {}
    budgeted = budget_until(started + request.budget_s) if request.budget_s is not None else nullcontext()
    with budgeted as budget:
        for source in sources:
            labelled = source.label([chain], by_source, setup)
            if budget is not None and budget.cut and source.name == "verifier" and labelled[0]:
                labelled = [without_cut_positives(labelled[0])]  # before a later source reads them
            by_source[source.name] = labelled
    labels = {name: per_chain[0] for name, per_chain in by_source.items()}
    # `label`'s rules without its records (step ids, rows, the chain's JSON: about 3 % of a GSM8K-sized
    # response's time, which the reward never reads); tests/reward/test_same_labels.py holds the two alike
    agreed = chain_consensus(chain, labels, plan.record_context.weighing, plan.by_name)
    return LabelledResponse(
        spans=spans,
        labels=agreed.labels,
        consensus=agreed.consensus,
        first_error=agreed.first_error,
        source_first_errors=agreed.first_errors,
        outcome=outcome,
        labelers=dict(plan.labelers),
        consensus_p_correct=agreed.p_correct,
    )


_RECORD_CONTEXT = RecordContext("reward", "reward", "{}", 0, "", "", "reward")
"""Record fields a reward does not store (ids, run, config hash): only the labels are read back."""


def _outcome(verifier: Verifier, problem: Problem, text: str) -> Verdict:
    """The final answer graded as `label` grades an external chain without a separate final answer."""
    if problem.domain == "code" and problem.tests:
        return verifier.grade(problem, text)
    if problem.domain == "math" and problem.reference_answer:
        return verifier.grade(problem, text)
    return Verdict("unparsed", "no reference answer to grade against")


def labels_by_source(response: LabelledResponse) -> dict[str, list[str]]:
    """Each source's verdicts in step order (for comparing with a stored dataset)."""
    names = dict.fromkeys(label.source for step in response.labels for label in step)
    return {
        name: [next(x.verdict for x in step if x.source == name) for step in response.labels]
        for name in names
    }
