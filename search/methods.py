"""Test-time search with a reward model, as pure functions: which of N sampled chains a method picks, and
how often the pick is right.

Why pure: the question "does the trained PRM pick better answers than a plain vote?" must not depend on
the engine or the model, so every method here works on recorded `Candidate`s (final answer, correctness,
per-step scores of each scorer, tokens spent) and can be checked on hand-made ones.

Methods at a budget of N chains per problem:

* `majority`: the most frequent final answer (chains without an answer abstain);
* `best_of_n(scorer, agg)`: the chain with the highest aggregated step score, `agg` one of
  `last` (the last step's score), `min` (the weakest step) or `product` (all steps right);
* `weighted_vote(scorer, agg)`: answers vote with the sum of their chains' aggregated scores;
* `pass_at_n`: any chain right (the ceiling every selection method lives under).

Ties are credited by expectation (a random tie-break): two tied answers, one right, give 0.5. Accuracy at
N < the drawn n averages over the disjoint groups of N consecutive chains, so N = 2 on 8 drawn chains is
the mean over 4 independent pairs; its 95 % interval is a percentile bootstrap over problems. A method is
compared with majority vote by a paired bootstrap of the per-problem difference (same problems, same
resamples), which is the interval the "beats majority vote" question needs.

>>> right = Candidate("4", True, 10, {"prm": (0.9, 0.8)})
>>> wrong = Candidate("5", False, 10, {"prm": (0.9, 0.1)})
>>> majority([right, wrong, wrong]), best_of_n("prm", "min")([right, wrong, wrong])
(0.0, 1.0)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Aggregation = Literal["last", "min", "product"]
AGGREGATIONS: tuple[Aggregation, ...] = ("last", "min", "product")


@dataclass(frozen=True)
class Candidate:
    """One sampled chain of a problem as the methods see it.

    `answer` is the chain's final answer as a vote key (None: no answer found, it abstains from votes);
    `scores[name]` holds a scorer's per-step probabilities that the step is right, `score_tokens[name]` the
    tokens that scorer read to produce them (its forward-pass cost).
    """

    answer: str | None
    correct: bool
    policy_tokens: int
    scores: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    score_tokens: Mapping[str, int] = field(default_factory=dict)


def aggregate(step_scores: Sequence[float], how: Aggregation) -> float:
    """One chain score from its step scores; a chain without steps scores 0 (nothing to trust).

    >>> [round(aggregate([0.9, 0.5, 0.8], how), 2) for how in ("last", "min", "product")]
    [0.8, 0.5, 0.36]
    """
    if not step_scores:
        return 0.0
    if how == "last":
        return float(step_scores[-1])
    if how == "min":
        return float(min(step_scores))
    if how == "product":
        return float(math.prod(step_scores))
    raise ValueError(f"unknown aggregation {how!r}; known: {AGGREGATIONS}")


Selector = Callable[[Sequence[Candidate]], float]
"""A method: the expected correctness (0..1) of its pick among a group of candidates."""


@dataclass(frozen=True)
class Method:
    """A selection method and the scorers whose compute it spends."""

    name: str
    select: Selector
    scorers: tuple[str, ...] = ()


def _top_credit(keys: Sequence[float], correct: Sequence[float]) -> float:
    """Mean correctness of the entries tied at the highest key (a random tie-break's expectation)."""
    if not keys:
        return 0.0
    best = max(keys)
    tied = [
        c for k, c in zip(keys, correct, strict=True) if math.isclose(k, best, rel_tol=1e-9, abs_tol=1e-12)
    ]
    return sum(tied) / len(tied)


def _vote(group: Sequence[Candidate], weight: Callable[[Candidate], float]) -> float:
    totals: dict[str, float] = {}
    right: dict[str, list[bool]] = {}
    for candidate in group:
        if candidate.answer is None:
            continue
        totals[candidate.answer] = totals.get(candidate.answer, 0.0) + weight(candidate)
        right.setdefault(candidate.answer, []).append(candidate.correct)
    answers = list(totals)
    # chains with the same answer are graded alike; the mean guards against a grader that disagrees
    return _top_credit([totals[a] for a in answers], [sum(right[a]) / len(right[a]) for a in answers])


def majority(group: Sequence[Candidate]) -> float:
    return _vote(group, lambda _: 1.0)


def pass_at_n(group: Sequence[Candidate]) -> float:
    return float(any(c.correct for c in group))


def best_of_n(scorer: str, how: Aggregation) -> Selector:
    def select(group: Sequence[Candidate]) -> float:
        return _top_credit(
            [aggregate(c.scores[scorer], how) for c in group], [float(c.correct) for c in group]
        )

    return select


def weighted_vote(scorer: str, how: Aggregation) -> Selector:
    return lambda group: _vote(group, lambda c: aggregate(c.scores[scorer], how))


def standard_methods() -> dict[str, Method]:
    """The table's rows (beam search is not a selection over the same chains; it has its own rows)."""
    methods = [
        Method("pass@n (oracle)", pass_at_n),
        Method("majority vote", majority),
        Method("orm best-of-n", best_of_n("orm", "last"), ("orm",)),
        Method("orm-weighted vote", weighted_vote("orm", "last"), ("orm",)),
        *(Method(f"prm best-of-n ({how})", best_of_n("prm", how), ("prm",)) for how in AGGREGATIONS),
        *(Method(f"prm-weighted vote ({how})", weighted_vote("prm", how), ("prm",)) for how in AGGREGATIONS),
    ]
    return {m.name: m for m in methods}


def groups_of(candidates: Sequence[Candidate], n: int) -> list[Sequence[Candidate]]:
    """Disjoint groups of `n` consecutive candidates (a remainder shorter than n is dropped)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return [candidates[i : i + n] for i in range(0, len(candidates) - n + 1, n)]


def per_problem_credit(select: Selector, candidates: Sequence[Candidate], n: int) -> float:
    """Expected accuracy of a method at budget n on one problem: the mean over its disjoint groups."""
    groups = groups_of(candidates, n)
    if not groups:
        raise ValueError(f"{len(candidates)} candidates cannot make a group of {n}")
    return sum(select(g) for g in groups) / len(groups)


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float


def bootstrap_mean(values: Sequence[float], *, resamples: int = 2000, seed: int = 0) -> Interval:
    """Mean and 95 % percentile-bootstrap interval over the items (problems) of `values`."""
    if not values:
        return Interval(0.0, 0.0, 0.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return Interval(sum(values) / n, means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1])


@dataclass(frozen=True)
class SearchRow:
    """One cell group of the table: a method at budget n, over all problems."""

    method: str
    n: int
    accuracy: Interval
    vs_majority: Interval | None  # paired difference with majority vote at the same n
    policy_tokens: float  # mean per problem
    scorer_tokens: float  # mean per problem: the reward models' forward tokens


def _tokens(group: Sequence[Candidate], scorers: Sequence[str]) -> tuple[int, int]:
    policy = sum(c.policy_tokens for c in group)
    scored = sum(c.score_tokens.get(s, 0) for c in group for s in scorers)
    return policy, scored


def search_rows(
    problems: Sequence[Sequence[Candidate]],
    budgets: Sequence[int],
    methods: Mapping[str, Method] | None = None,
    *,
    seed: int = 0,
) -> list[SearchRow]:
    """Every method at every budget over the problems' candidates (each problem the same number)."""
    methods = methods or standard_methods()
    rows: list[SearchRow] = []
    for n in budgets:
        baseline = [per_problem_credit(majority, cands, n) for cands in problems]
        for method in methods.values():
            credits = [per_problem_credit(method.select, cands, n) for cands in problems]
            costs = [[_tokens(g, method.scorers) for g in groups_of(cands, n)] for cands in problems]
            policy = sum(sum(p for p, _ in c) / len(c) for c in costs) / len(costs) if costs else 0.0
            scored = sum(sum(s for _, s in c) / len(c) for c in costs) / len(costs) if costs else 0.0
            paired = None
            if method.name != "majority vote":
                paired = bootstrap_mean([a - b for a, b in zip(credits, baseline, strict=True)], seed=seed)
            rows.append(SearchRow(method.name, n, bootstrap_mean(credits, seed=seed), paired, policy, scored))
    return rows


def single_pick_rows(
    name: str,
    picks: Mapping[int, Sequence[Candidate]],
    problems: Sequence[Sequence[Candidate]],
    *,
    scorers: Sequence[str] = ("prm",),
    seed: int = 0,
) -> list[SearchRow]:
    """Rows for a method that returns one chain per problem and budget (beam search): `picks[n][i]` is
    its chain for problem i, carrying the whole search's policy and scorer tokens; compared with majority
    vote over `problems`' sampled candidates at the same n."""
    rows = []
    for n, chosen in sorted(picks.items()):
        credits = [float(c.correct) for c in chosen]
        baseline = [per_problem_credit(majority, cands, n) for cands in problems]
        policy, scored = _tokens(chosen, scorers)
        rows.append(
            SearchRow(
                name,
                n,
                bootstrap_mean(credits, seed=seed),
                bootstrap_mean([a - b for a, b in zip(credits, baseline, strict=True)], seed=seed),
                policy / len(chosen) if chosen else 0.0,
                scored / len(chosen) if chosen else 0.0,
            )
        )
    return rows


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def render_markdown(rows: Sequence[SearchRow]) -> str:
    """Methods down, budgets across: accuracy % [95 % CI]; then the difference with majority vote and the
    compute per problem at the largest budget."""
    budgets = sorted({r.n for r in rows})
    names = list(dict.fromkeys(r.method for r in rows))
    cell = {(r.method, r.n): r for r in rows}
    top = budgets[-1]
    head = " | ".join(f"N = {n}" for n in budgets)
    lines = [
        f"| method | {head} | Δ vs majority at N = {top} | policy tokens / problem | RM tokens / problem |",
        "|---|" + "---|" * (len(budgets) + 3),
    ]
    for name in names:
        cells = []
        for n in budgets:
            r = cell.get((name, n))
            cells.append(
                ""
                if r is None
                else f"{_pct(r.accuracy.mean)} [{_pct(r.accuracy.low)}, {_pct(r.accuracy.high)}]"
            )
        last = cell.get((name, top))
        delta = (
            ""
            if last is None or last.vs_majority is None
            else (
                f"{100 * last.vs_majority.mean:+.1f} "
                f"[{100 * last.vs_majority.low:+.1f}, {100 * last.vs_majority.high:+.1f}]"
            )
        )
        policy = "" if last is None else f"{last.policy_tokens:.0f}"
        scored = "" if last is None else f"{last.scorer_tokens:.0f}"
        lines.append(f"| {name} | {' | '.join(cells)} | {delta} | {policy} | {scored} |")
    return "\n".join(lines)


def rows_as_dicts(rows: Sequence[SearchRow]) -> list[dict[str, object]]:
    """Plain rows for JSON and the HTML report (which must not import this layer)."""
    out: list[dict[str, object]] = []
    for r in rows:
        out.append(
            {
                "method": r.method,
                "n": r.n,
                "accuracy": r.accuracy.mean,
                "ci_low": r.accuracy.low,
                "ci_high": r.accuracy.high,
                "vs_majority": None if r.vs_majority is None else r.vs_majority.mean,
                "vs_majority_low": None if r.vs_majority is None else r.vs_majority.low,
                "vs_majority_high": None if r.vs_majority is None else r.vs_majority.high,
                "policy_tokens": r.policy_tokens,
                "scorer_tokens": r.scorer_tokens,
            }
        )
    return out
