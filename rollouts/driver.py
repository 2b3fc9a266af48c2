"""Run a rollout strategy over many chains with few engine calls, and attach cost to every step value.

Rollouts are where the compute goes, and an engine is fastest when it sees many prompts at once (and,
with prefix caching, many prompts sharing prefixes). So the driver works in rounds: each round it asks
every unfinished chain's strategy state what it wants probed, submits all of those prefixes, across all
chains, in one `sampler.generate` call per distinct rollout count, grades the generations and feeds the
outcomes back. Exhaustive estimation is then one call for the whole run; a binary search is a few calls
(about log2 of the longest chain's steps), however many chains there are. A prefix that several chains of
one problem share is drawn once for all of them (`rollouts.pool`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace

from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.rollouts.items import RolloutItem
from prm_factory.rollouts.pool import DrawnRollout, RolloutPool
from prm_factory.rollouts.strategies.base import StepEstimate, Strategy, StrategyState
from prm_factory.rollouts.values import ChainValues, StepValue
from prm_factory.sampling.protocol import Generation, GenerationParams, Sampler
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict, outcome_value

Grader = Callable[[Problem, str], Verdict]
Progress = Callable[[int, int], None]

# A strategy that keeps asking after this many rounds is broken; stop rather than spin on the engine.
MAX_ROUNDS = 1000


@dataclass
class _Cost:
    rollouts: int = 0
    tokens: int = 0
    seconds: float = 0.0


def probeable_prefixes(n_steps: int, max_steps: int | None) -> int:
    """Step prefixes a chain may probe: all steps but the last (its value is the chain's outcome), capped."""
    n = max(0, n_steps - 1)
    return n if max_steps is None else min(n, max_steps)


def split_seconds(seconds: float, tokens: Sequence[int], rollouts: Sequence[int]) -> list[float]:
    """One engine call's time split over its generations (or probes) by tokens generated, or by rollouts
    when no tokens were reported, so each step label carries its share of engine time."""
    weights = tokens if sum(tokens) > 0 else rollouts
    total = sum(weights)
    if total == 0:
        return [0.0 for _ in weights]
    return [seconds * w / total for w in weights]


def _check_generations(generations: list[list[Generation]], n_prompts: int, n: int) -> None:
    if len(generations) != n_prompts or any(len(g) != n for g in generations):
        shape = [len(g) for g in generations]
        raise RuntimeError(f"sampler returned {shape} generations for {n_prompts} prompts x n={n}")


def _check_request(item: RolloutItem, n_prefixes: int, wanted: dict[int, int]) -> None:
    for step, n in wanted.items():
        if not 0 <= step < n_prefixes or n < 1:
            raise ValueError(
                f"{item.chain_id}: strategy asked for {n} rollouts from step {step} "
                f"(probeable steps: 0..{n_prefixes - 1})"
            )


def _outcome_value(item: RolloutItem) -> StepValue:
    """The last step's value is the chain's own outcome; an unjudged outcome gives no value at all."""
    if item.outcome_correct is None:
        return StepValue(item.n_steps - 1, None, 0, 0, None, None, "outcome", 0, 0.0)
    score = 1.0 if item.outcome_correct else 0.0
    return StepValue(item.n_steps - 1, score, 0, 0, item.outcome_correct, score, "outcome", 0, 0.0)


def _step_value(estimate: StepEstimate, cost: _Cost) -> StepValue:
    mc_value = estimate.mc_value
    return StepValue(
        step_index=estimate.step_index,
        mc_value=mc_value,
        n_rollouts=estimate.n_rollouts if estimate.source == "rollouts" else 0,
        n_correct=estimate.n_correct if estimate.source == "rollouts" else 0,
        n_judged=estimate.judged if estimate.source == "rollouts" else 0,
        hard_label=estimate.hard_label,
        soft_label=mc_value,
        value_source=estimate.source,
        tokens=cost.tokens,
        seconds=cost.seconds,
    )


def _chain_values(
    item: RolloutItem, estimates: Sequence[StepEstimate], costs: dict[int, _Cost], read: int
) -> ChainValues:
    steps: list[StepValue] = []
    for index in range(item.n_steps):
        if index == item.n_steps - 1:
            steps.append(_outcome_value(item))
        elif index < len(estimates):
            steps.append(_step_value(estimates[index], costs.get(index, _Cost())))
        else:
            steps.append(StepValue(index, None, 0, 0, None, None, "none", 0, 0.0))
    drawn = sum(c.rollouts for c in costs.values())
    return ChainValues(
        chain_id=item.chain_id,
        steps=tuple(steps),
        first_error_mc=first_error_mc([s.hard_label for s in steps]),
        rollouts_drawn=drawn,
        tokens=sum(c.tokens for c in costs.values()),
        seconds=sum(c.seconds for c in costs.values()),
        rollouts_shared=read - drawn,
    )


def estimate_values(
    items: Sequence[RolloutItem],
    strategy: Strategy,
    sampler: Sampler,
    grade: Grader,
    params: GenerationParams,
    *,
    progress: Progress | None = None,
    share_prefixes: bool = True,
) -> list[ChainValues]:
    """Monte Carlo step values for every chain, in the order of `items`.

    Args:
        items: the chains, with their prompts, step ends and own outcomes.
        strategy: which prefixes to probe and how many rollouts each (see `rollouts.strategies`).
        sampler: the engine; called once per round per distinct rollout count, with `params.n` replaced.
        grade: the outcome grader; a rollout is correct for "correct", wrong for "incorrect" and unjudged
            (counted in `n_rollouts` but not in the values) for "unparsed", "timeout" or "error".
        params: sampling parameters for rollouts (temperature, max_tokens, stop); `n` is ignored.
        progress: called after each round with (finished chains, all chains).
        share_prefixes: chains of one problem with an identical prefix read the same rollouts of it
            (drawn once, charged once; see `rollouts.pool`). False draws separately for every chain.

    The last step of each chain takes the chain's own outcome (`value_source="outcome"`, no rollouts).
    """
    prefixes = [probeable_prefixes(item.n_steps, strategy.max_steps) for item in items]
    states: list[StrategyState] = [
        strategy.start(n, item.n_steps, item.outcome_correct) for item, n in zip(items, prefixes, strict=True)
    ]
    costs: list[dict[int, _Cost]] = [defaultdict(_Cost) for _ in items]
    read: list[int] = [0 for _ in items]  # rollouts each chain read, shared or not
    cursors: dict[tuple[int, int], int] = defaultdict(int)  # (chain, step) -> rollouts read from the prefix
    pool = RolloutPool(share=share_prefixes)

    for _round in range(MAX_ROUNDS + 1):
        requests: list[tuple[int, int, Hashable, int]] = []  # chain, step, prefix key, n
        for chain, (item, state) in enumerate(zip(items, states, strict=True)):
            asked = state.wanted()
            _check_request(item, prefixes[chain], asked)
            requests.extend((chain, step, pool.key(item, step), n) for step, n in sorted(asked.items()))
        if not requests:
            if _round == 0 and progress is not None:  # nothing to probe: report the run as finished
                progress(len(states), len(states))
            break
        if _round == MAX_ROUNDS:
            raise RuntimeError(
                f"strategy {strategy.name!r} still asking for rollouts after {MAX_ROUNDS} rounds"
            )

        _draw_shortfall(requests, cursors, pool, items, sampler, grade, params)

        outcomes: list[dict[int, list[bool]]] = [{} for _ in items]
        for chain, step, key, n in requests:
            drawn, charged = pool.take(key, cursors[chain, step], n)
            cursors[chain, step] += n
            outcomes[chain][step] = drawn
            read[chain] += n
            cost = costs[chain][step]
            cost.rollouts += len(charged)
            cost.tokens += sum(r.tokens for r in charged)
            cost.seconds += sum(r.seconds for r in charged)

        for state, chain_outcomes in zip(states, outcomes, strict=True):
            if chain_outcomes:
                state.record(chain_outcomes)
        if progress is not None:
            progress(sum(1 for state in states if not state.wanted()), len(states))

    return [
        _chain_values(item, state.estimates(), dict(cost), reads)
        for item, state, cost, reads in zip(items, states, costs, read, strict=True)
    ]


def _draw_shortfall(
    requests: Sequence[tuple[int, int, Hashable, int]],
    cursors: dict[tuple[int, int], int],
    pool: RolloutPool,
    items: Sequence[RolloutItem],
    sampler: Sampler,
    grade: Grader,
    params: GenerationParams,
) -> None:
    """Draw what this round's requests need beyond what the pool holds: one engine call per distinct
    shortfall, each prefix once however many chains share it."""
    needed: dict[Hashable, int] = {}
    source: dict[Hashable, tuple[int, int]] = {}  # a chain and step that has the prefix, for its text
    for chain, step, key, n in requests:
        needed[key] = max(needed.get(key, 0), cursors[chain, step] + n)
        source.setdefault(key, (chain, step))
    by_shortfall: dict[int, list[Hashable]] = defaultdict(list)
    for key, end in needed.items():
        if end > pool.size(key):
            by_shortfall[end - pool.size(key)].append(key)

    for n, keys in sorted(by_shortfall.items()):
        prompts = [items[source[key][0]].rollout_prompt(source[key][1]) for key in keys]
        started = time.perf_counter()
        generations = sampler.generate(prompts, replace(params, n=n))
        elapsed = time.perf_counter() - started
        _check_generations(generations, len(prompts), n)
        flat = [g for gens in generations for g in gens]
        seconds = iter(split_seconds(elapsed, [g.n_tokens for g in flat], [1] * len(flat)))
        for key, gens in zip(keys, generations, strict=True):
            chain, step = source[key]
            item = items[chain]
            pool.add(
                key,
                [
                    DrawnRollout(
                        outcome_value(grade(item.problem, item.graded_text(step, g.text)).label),
                        g.n_tokens,
                        next(seconds),
                    )
                    for g in gens
                ],
            )
