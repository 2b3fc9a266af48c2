"""Adaptive Monte Carlo: stop drawing where the estimate is decided, spend the rest where it is not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prm_factory.rollouts.strategies.base import (
    RolloutOutcome,
    StepEstimate,
    check_counts,
    check_record,
    tally,
)


@dataclass(frozen=True)
class AdaptiveStrategy:
    """Draw rollouts in small rounds and stop per prefix once its first `first_draws` rollouts all agree.

    Most prefixes are easy: from a hopeless prefix every rollout fails, from a sound one (with a capable
    model) every rollout succeeds, and a few draws say so. Exhaustive estimation still spends its full k on
    them. Here each prefix first gets `first_draws` rollouts; if they all agree the prefix is decided (soft
    label 0 or 1). Otherwise it stays open and gets `draws_per_round` more per round, most uncertain prefix
    first (soft estimate closest to 0.5), until it has `rollouts_per_probe` or the chain's budget runs out.
    So no prefix gets more rollouts than exhaustive estimation with the same k would give it.

    Attributes:
        rollouts_per_probe: most rollouts one prefix gets (k); an open prefix is closed there, decided or not.
        first_draws: rollouts every prefix gets in the first round (j); all agreeing decides the prefix.
        draws_per_round: extra rollouts per open prefix per later round.
        budget_per_chain: most rollouts one chain may draw (None: only `rollouts_per_probe` bounds it). When
            the first round does not fit, earlier prefixes are served first, as they decide the first error.
        max_steps: probe at most this many prefixes per chain.

    References:
        Math-Shepherd (https://arxiv.org/abs/2312.08935) for the estimator; the early stop is a sequential
        test on it, as in OmegaPRM's (https://arxiv.org/abs/2406.06592) budgeted rollouts.

    Example:
        >>> state = AdaptiveStrategy(rollouts_per_probe=4, first_draws=2, draws_per_round=2).start(
        ...     n_prefixes=2, n_steps=3, outcome_correct=False)
        >>> state.wanted()
        {0: 2, 1: 2}
        >>> state.record({0: [True, True], 1: [True, False]})
        >>> state.wanted()
        {1: 2}
    """

    rollouts_per_probe: int = 8
    first_draws: int = 2
    draws_per_round: int = 2
    budget_per_chain: int | None = None
    max_steps: int | None = None
    name: str = "adaptive"

    def __post_init__(self) -> None:
        check_counts(
            self.name,
            first_draws=self.first_draws,
            draws_per_round=self.draws_per_round,
            rollouts_per_probe=self.rollouts_per_probe,
            budget_per_chain=self.budget_per_chain,
            max_steps=self.max_steps,
        )
        if self.rollouts_per_probe < self.first_draws:
            raise ValueError(
                f"{self.name}: rollouts_per_probe ({self.rollouts_per_probe}) "
                f"< first_draws ({self.first_draws})"
            )

    def start(self, n_prefixes: int, n_steps: int, outcome_correct: bool | None) -> _AdaptiveState:
        return _AdaptiveState(self, n_prefixes)


class _AdaptiveState:
    def __init__(self, options: AdaptiveStrategy, n_prefixes: int) -> None:
        self._o = options
        self._drawn: list[list[RolloutOutcome]] = [[] for _ in range(n_prefixes)]
        self._budget_left = options.budget_per_chain
        self._pending = self._plan()

    def _grant(self, want: int) -> int:
        if self._budget_left is None:
            return want
        granted = min(want, self._budget_left)
        self._budget_left -= granted
        return granted

    def _is_open(self, step: int) -> bool:
        drawn = self._drawn[step]
        if len(drawn) >= self._o.rollouts_per_probe:
            return False
        judged = [d for d in drawn if d is not None]
        if len(judged) < self._o.first_draws:
            return True  # an unjudged rollout decides nothing: draw again, up to k
        return len(set(judged[: self._o.first_draws])) > 1

    def _plan(self) -> dict[int, int]:
        plan: dict[int, int] = {}
        if all(not drawn for drawn in self._drawn):  # first round: every prefix, in step order
            for step in range(len(self._drawn)):
                granted = self._grant(self._o.first_draws)
                if granted:
                    plan[step] = granted
            return plan

        def uncertainty(step: int) -> tuple[float, int]:
            judged = [d for d in self._drawn[step] if d is not None]
            return (abs(sum(judged) / len(judged) - 0.5) if judged else 0.0), step

        open_steps = sorted(
            (s for s in range(len(self._drawn)) if self._drawn[s] and self._is_open(s)), key=uncertainty
        )
        for step in open_steps:
            want = min(self._o.draws_per_round, self._o.rollouts_per_probe - len(self._drawn[step]))
            granted = self._grant(want)
            if granted:
                plan[step] = granted
        return plan

    def wanted(self) -> dict[int, int]:
        return dict(self._pending)

    def record(self, outcomes: Mapping[int, Sequence[RolloutOutcome]]) -> None:
        check_record(self._pending, outcomes)
        for step, drawn in outcomes.items():
            self._drawn[step].extend(drawn)
        self._pending = self._plan()

    def estimates(self) -> tuple[StepEstimate, ...]:
        return tuple(tally(i, drawn) if drawn else StepEstimate(i) for i, drawn in enumerate(self._drawn))
