"""Monte Carlo value estimation for step prefixes: strategies, the batching driver, and label consensus.

values = estimate_values(items, make_strategy("exhaustive", rollouts_per_probe=8), sampler, grade, params)
"""

from rollouts.driver import estimate_values
from rollouts.items import RolloutItem
from rollouts.labels import consensus, first_error_index, first_error_mc, first_error_verifier
from rollouts.strategies import (
    STRATEGIES,
    AdaptiveStrategy,
    BinarySearchStrategy,
    ExhaustiveStrategy,
    Strategy,
    make_strategy,
)
from rollouts.values import ChainValues, StepValue

__all__ = [
    "STRATEGIES",
    "AdaptiveStrategy",
    "BinarySearchStrategy",
    "ChainValues",
    "ExhaustiveStrategy",
    "RolloutItem",
    "StepValue",
    "Strategy",
    "consensus",
    "estimate_values",
    "first_error_index",
    "first_error_mc",
    "first_error_verifier",
    "make_strategy",
]
