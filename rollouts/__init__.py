"""Monte Carlo value estimation for step prefixes: strategies, the batching driver, the MC first error.

values = estimate_values(items, make_strategy("exhaustive", rollouts_per_probe=8), sampler, grade, params)
"""

from prm_factory.rollouts.driver import estimate_values
from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.rollouts.items import RolloutItem
from prm_factory.rollouts.strategies import (
    STRATEGIES,
    AdaptiveStrategy,
    BinarySearchStrategy,
    ExhaustiveStrategy,
    Strategy,
    make_strategy,
)
from prm_factory.rollouts.values import ChainValues, StepValue

__all__ = [
    "STRATEGIES",
    "AdaptiveStrategy",
    "BinarySearchStrategy",
    "ChainValues",
    "ExhaustiveStrategy",
    "RolloutItem",
    "StepValue",
    "Strategy",
    "estimate_values",
    "first_error_mc",
    "make_strategy",
]
