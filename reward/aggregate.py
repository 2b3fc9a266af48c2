"""One scalar per response from its steps' `p_correct`, by a named rule. Each rule is pure and says what
it is known to bias, since the policy being trained chooses where its steps end (verl RFC #7244: a
per-step normalisation is biased when the policy controls the step count).

A step with no `p_correct` (nothing checked: `unverifiable`) is never counted as wrong: fail closed, a
check that could not run is no error. That is itself a bias every rule shares: a response whose steps hold
no checkable claim scores as well as one whose claims all hold, so a policy can learn to write fewer
checkable claims. Pair a step reward with the outcome (`outcome_penalty`) where the answer is known.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class AggregateInput:
    """What a rule reads: each step's p_correct (None: unchecked), the first error, the graded outcome."""

    p_correct: Sequence[float | None]
    first_error: int | None
    outcome: bool | None  # the final answer against the reference: None when not graded


def minimum(steps: AggregateInput) -> float:
    """The lowest step p_correct (1.0 when none was checked): the weakest step decides (Qwen2.5-Math-PRM,
    Lightman et al.). Bias: blind to how many steps are wrong; steps without claims cost nothing.

    >>> minimum(AggregateInput([1.0, None, 0.04], 2, None))
    0.04
    """
    return min((p for p in steps.p_correct if p is not None), default=1.0)


def first_error(steps: AggregateInput) -> float:
    """The share of steps before the first error (1.0 with none): credit for the right prefix. Bias: the
    policy sets the step count, so splitting a right prefix into more steps raises it (#7244).

    >>> first_error(AggregateInput([1.0, 1.0, 0.04, 1.0], 2, None))
    0.5
    """
    n = len(steps.p_correct)
    if steps.first_error is None or n == 0:
        return 1.0
    return steps.first_error / n


def product(steps: AggregateInput) -> float:
    """The product of the checked steps' p_correct (an independence model). Bias: falls with every
    checked step below 1, so it favours short responses with few checkable claims.

    >>> round(product(AggregateInput([0.5, None, 0.5], None, None)), 3)
    0.25
    """
    return math.prod(p for p in steps.p_correct if p is not None)


def mean(steps: AggregateInput) -> float:
    """The mean p_correct of the checked steps (1.0 when none was). Bias: padding with trivially right
    checked steps dilutes an error.

    >>> mean(AggregateInput([1.0, None, 0.0], 2, None))
    0.5
    """
    checked = [p for p in steps.p_correct if p is not None]
    return sum(checked) / len(checked) if checked else 1.0


STEP_PENALTY = 0.1
"""What `outcome_penalty` takes off the outcome per step whose consensus is negative (p_correct < 0.5)."""


def outcome_penalty(steps: AggregateInput) -> float:
    """The outcome (1 right, 0 wrong or not graded) minus STEP_PENALTY per wrong step, floored at -1 (the
    shape of OpenRLHF PR #1260's step penalties). Bias: an ungraded answer scores as a wrong one; the
    penalty counts only errors the checks could read.

    >>> outcome_penalty(AggregateInput([1.0, 0.04, 0.04], 1, True))
    0.8
    """
    wrong = sum(1 for p in steps.p_correct if p is not None and p < 0.5)
    return max(-1.0, (1.0 if steps.outcome else 0.0) - STEP_PENALTY * wrong)


AGGREGATIONS: dict[str, Callable[[AggregateInput], float]] = {
    "min": minimum,
    "first_error": first_error,
    "product": product,
    "mean": mean,
    "outcome_penalty": outcome_penalty,
}
"""The named aggregations (`aggregate=` of score_steps)."""


def aggregate(name: str, steps: AggregateInput) -> float:
    """The scalar of rule `name` (a ValueError names the known ones)."""
    try:
        rule = AGGREGATIONS[name]
    except KeyError:
        raise ValueError(f"unknown aggregation {name!r}; choose one of {', '.join(AGGREGATIONS)}") from None
    return float(rule(steps))
