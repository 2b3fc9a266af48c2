"""Per-source precision and recall, and first-error agreement, from a stratified audit sample, each with a
bootstrap confidence interval that respects the sampling weights; and the reviewers' agreement (Cohen's
kappa).

The estimands are population figures of the version's (filtered) steps, as if every step were reviewed:

- precision of `incorrect` = P(the reviewer says incorrect | the source says incorrect); recall of `incorrect`
  = P(the source says incorrect | the reviewer says incorrect), where a source that abstains (`unverifiable`,
  no MC value) has missed the step; the same two for `correct`;
- first-error agreement = among the chains a source gives a first error (its first `incorrect` step), the
  share where the reviewer says that step is wrong *and* no earlier step is (the reviewer's answer to "is this
  the first wrong step?"); a step the reviewer called wrong without answering that is left out.

Each is a ratio of two population totals, estimated by the weighted ratio over the reviewed steps: a step of
stratum h stands for N_h / m_h steps (N_h in the stratum, m_h reviewed with a decided answer). Steps not
decided (`can't tell`, reviewers who disagree, not reached yet) are treated as missing at random inside their
stratum; a stratum with no decided step is not covered, and the figures then describe the covered strata
only (the report says which share of steps that is).

The interval is the percentile interval of the Rao-Wu rescaling bootstrap (Rao & Wu 1988; Rao, Wu & Yue
1992): each replicate resamples m_h - 1 of a stratum's m_h steps with replacement and rescales the weights by
sqrt(1 - m_h / N_h), so a stratum reviewed in full adds no variance and a small one is not under-spread. A
ratio the sample sees only at 0 or 1 has a degenerate bootstrap (every replicate agrees), which would claim a
certainty it has not earned, so the interval is widened to at least the Wilson score interval at the
ratio's effective sample size (Kish: (sum of weights)^2 / sum of squared weights over the ratio's steps,
divided by 1 - the reviewed share of the ratio's steps, so a census has no floor), in the spirit of Korn &
Graubard (1998) for survey proportions near 0 and 1.
`bench/bench_audit_coverage.py` measures how often the intervals cover the true figures on synthetic
problems with exact step truth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

HumanLabel = Literal["correct", "incorrect"]
METRICS: tuple[str, ...] = (
    "precision_incorrect",
    "recall_incorrect",
    "precision_correct",
    "recall_correct",
    "first_error_agreement",
)
METRIC_TITLES = {
    "precision_incorrect": "precision of incorrect",
    "recall_incorrect": "recall of incorrect",
    "precision_correct": "precision of correct",
    "recall_correct": "recall of correct",
    "first_error_agreement": "first-error agreement",
}
Z95 = 1.959963984540054


@dataclass(frozen=True)
class ReviewedStep:
    """One drawn step with the reviewers' resolved label (None: not decided)."""

    item_id: int
    stratum: str
    votes: Mapping[str, str | None]
    first_error_of: Sequence[str]
    human: HumanLabel | None
    human_first_error: Literal["this", "earlier"] | None = None


@dataclass(frozen=True)
class Estimate:
    estimate: float | None  # None: no reviewed step in the ratio's denominator
    low: float | None
    high: float | None
    n: int  # reviewed steps in the denominator
    effective_n: float  # Kish's effective sample size of those steps


@dataclass(frozen=True)
class Coverage:
    covered_strata: int
    strata: int
    covered_population: int  # steps in strata with at least one decided review
    population: int
    decided: int  # reviewed steps with a decided label
    undecided: int  # reviewed steps whose reviewers could not tell or disagreed


@dataclass(frozen=True)
class AuditEstimates:
    figures: dict[str, dict[str, Estimate]]  # source -> metric -> estimate
    coverage: Coverage
    replicates: int
    seed: int


def _domains(steps: Sequence[ReviewedStep], source: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric: (in the ratio's denominator, counted in its numerator) as 0/1 arrays over `steps`."""
    vote = np.array([s.votes.get(source) or "" for s in steps], dtype=object)
    human = np.array([s.human or "" for s in steps], dtype=object)
    first = np.array([source in s.first_error_of for s in steps], dtype=bool)
    human_first = np.array([s.human_first_error or "" for s in steps], dtype=object)
    known_first = (human == "correct") | ((human == "incorrect") & (human_first != ""))
    out = {}
    for label in ("incorrect", "correct"):
        out[f"precision_{label}"] = (vote == label, human == label)
        out[f"recall_{label}"] = (human == label, vote == label)
    out["first_error_agreement"] = (first & known_first, (human == "incorrect") & (human_first == "this"))
    return {
        k: (d.astype(bool).astype(float), (d & y).astype(bool).astype(float)) for k, (d, y) in out.items()
    }


def rao_wu_weights(
    strata: Sequence[str], populations: Mapping[str, int], replicates: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(full-sample weights, replicate weights B x n) for units of the given strata (Rao-Wu rescaling).

    >>> w, reps = rao_wu_weights(["a", "a", "b"], {"a": 10, "b": 1}, 4, np.random.default_rng(0))
    >>> w.tolist(), reps.shape, bool((reps[:, 2] == 1).all())
    ([5.0, 5.0, 1.0], (4, 3), True)
    """
    labels = np.array(strata)
    weights = np.zeros(len(strata))
    factors = np.ones((replicates, len(strata)))
    for stratum in sorted(set(strata)):
        members = np.flatnonzero(labels == stratum)
        m, population = len(members), populations[stratum]
        if m > population:
            raise ValueError(f"stratum {stratum!r}: {m} reviewed steps but only {population} in it")
        weights[members] = population / m
        if m < 2:
            continue  # one reviewed step: no spread to resample (the Wilson floor still applies)
        scale = math.sqrt(1 - m / population)
        counts = rng.multinomial(m - 1, np.full(m, 1 / m), size=replicates)
        factors[:, members] = 1 - scale + scale * (m / (m - 1)) * counts
    return weights, factors * weights


def wilson(estimate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion at (effective) sample size n.

    >>> [round(x, 4) for x in wilson(1.0, 20)]
    [0.8389, 1.0]
    """
    if n <= 0:
        return 0.0, 1.0
    centre = (estimate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(estimate * (1 - estimate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _estimate(
    weights: np.ndarray,
    replicate_weights: np.ndarray,
    in_domain: np.ndarray,
    counted: np.ndarray,
    level: float,
    wilson_floor: bool = True,
) -> Estimate:
    n = int(in_domain.sum())
    if n == 0:
        return Estimate(None, None, None, 0, 0.0)
    domain_weights = weights * in_domain
    point = float((domain_weights * counted).sum() / domain_weights.sum())
    effective_n = float(domain_weights.sum() ** 2 / (domain_weights**2).sum())
    denominators = replicate_weights @ in_domain
    numerators = replicate_weights @ counted
    valid = denominators > 0
    ratios = numerators[valid] / denominators[valid]
    tail = (1 - level) / 2
    low, high = (
        (float(np.quantile(ratios, tail)), float(np.quantile(ratios, 1 - tail)))
        if len(ratios)
        else (0.0, 1.0)
    )
    sampled_share = n / float(domain_weights.sum())  # the reviewed share of the domain's steps
    if not wilson_floor or sampled_share >= 1 - 1e-12:  # a census has no sampling error to floor
        return Estimate(point, low, high, n, effective_n)
    floor_low, floor_high = wilson(point, effective_n / (1 - sampled_share), _z(level))
    return Estimate(point, min(low, floor_low), max(high, floor_high), n, effective_n)


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


def estimate(
    steps: Sequence[ReviewedStep],
    populations: Mapping[str, int],
    sources: Sequence[str],
    replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    wilson_floor: bool = True,
) -> AuditEstimates:
    """Every source's figures (METRICS) with intervals, from the reviewed steps and the strata's sizes.

    `wilson_floor=False` gives the plain percentile interval (the bench compares the two)."""
    decided = [s for s in steps if s.human is not None]
    rng = np.random.default_rng(seed)
    weights, replicate_weights = rao_wu_weights([s.stratum for s in decided], populations, replicates, rng)
    figures: dict[str, dict[str, Estimate]] = {}
    for source in sources:
        domains = _domains(decided, source)
        figures[source] = {
            metric: _estimate(weights, replicate_weights, *domains[metric], level, wilson_floor)
            for metric in METRICS
        }
    covered = {s.stratum for s in decided}
    coverage = Coverage(
        covered_strata=len(covered),
        strata=len(populations),
        covered_population=sum(populations[key] for key in covered),
        population=sum(populations.values()),
        decided=len(decided),
        undecided=len(steps) - len(decided),
    )
    return AuditEstimates(figures, coverage, replicates, seed)


@dataclass(frozen=True)
class Kappa:
    kappa: float | None  # None: fewer than 2 doubly reviewed steps, or no variation in the answers
    low: float | None
    high: float | None
    n: int  # steps two reviewers decided
    agreement: float | None  # raw share of those where they agree


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (None when chance agreement is total).

    The worked example of Cohen (1960) as Wikipedia gives it: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no.
    >>> pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    >>> round(cohen_kappa(pairs), 4)
    0.4
    """
    if not pairs:
        return None
    labels = sorted({label for pair in pairs for label in pair})
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    chance = sum(
        (sum(a == label for a, _ in pairs) / n) * (sum(b == label for _, b in pairs) / n) for label in labels
    )
    return None if chance >= 1 else (observed - chance) / (1 - chance)


MIN_KAPPA_PAIRS = 10
"""Fewer doubly reviewed steps than this: kappa without a bootstrap interval."""
MAX_UNDEFINED_SHARE = 0.05
"""More resamples than this share with no kappa (every answer alike): no interval either."""


def kappa_with_interval(
    pairs: Sequence[tuple[str, str]], replicates: int = 2000, seed: int = 0, level: float = 0.95
) -> Kappa:
    """Kappa over the doubly reviewed steps with a percentile bootstrap interval (steps resampled)."""
    if len(pairs) < 2:
        return Kappa(None, None, None, len(pairs), None)
    point = cohen_kappa(pairs)
    agreement = sum(a == b for a, b in pairs) / len(pairs)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(pairs), size=(replicates, len(pairs)))
    values = [cohen_kappa([pairs[i] for i in row]) for row in draws]
    finite = np.array([v for v in values if v is not None])
    undefined = 1 - len(finite) / replicates
    if point is None or len(pairs) < MIN_KAPPA_PAIRS or undefined > MAX_UNDEFINED_SHARE:
        # a handful of steps, or resamples that are mostly all-alike, give a zero-width or meaningless
        # interval (3 steps: "0.00 [0.00, 0.00]"); the point stands alone then
        return Kappa(point, None, None, len(pairs), agreement)
    tail = (1 - level) / 2
    return Kappa(
        point, float(np.quantile(finite, tail)), float(np.quantile(finite, 1 - tail)), len(pairs), agreement
    )
