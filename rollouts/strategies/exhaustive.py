"""Math-Shepherd's estimator: k rollouts from every step prefix, all in one round."""

from __future__ import annotations

from dataclasses import dataclass

from prm_factory.rollouts.strategies.base import OneRoundState, StepEstimate, check_counts


@dataclass(frozen=True)
class ExhaustiveStrategy:
    """Draw `rollouts_per_probe` completions from every step prefix (but the last) in a single round.

    The most expensive strategy and the reference the others are measured against: every step gets a soft
    label (fraction of rollouts that reach the reference answer) and a hard label (any of them does).

    Attributes:
        rollouts_per_probe: completions per step prefix (Math-Shepherd's N; the paper uses 8).
        max_steps: probe at most this many prefixes per chain; later steps get no value.

    References:
        Wang et al., "Math-Shepherd: Verify and Reinforce LLMs Step-by-step without Human Annotations",
        ACL 2024 (https://arxiv.org/abs/2312.08935); distilabel's `MathShepherdCompleter`.

    Example:
        >>> state = ExhaustiveStrategy(rollouts_per_probe=2).start(n_prefixes=2, n_steps=3,
        ...                                                         outcome_correct=False)
        >>> state.wanted()
        {0: 2, 1: 2}
        >>> state.record({0: [True, False], 1: [False, False]})
        >>> [(e.mc_value, e.hard_label) for e in state.estimates()]
        [(0.5, True), (0.0, False)]
    """

    rollouts_per_probe: int = 8
    max_steps: int | None = None
    name: str = "exhaustive"

    def __post_init__(self) -> None:
        check_counts(self.name, rollouts_per_probe=self.rollouts_per_probe, max_steps=self.max_steps)

    def start(self, n_prefixes: int, n_steps: int, outcome_correct: bool | None) -> OneRoundState:
        initial = [StepEstimate(i) for i in range(n_prefixes)]
        return OneRoundState(initial, dict.fromkeys(range(n_prefixes), self.rollouts_per_probe))
