"""Rollout strategies by name, so a config picks one without an if/elif chain in the flow."""

from __future__ import annotations

from typing import Any

from prm_factory.rollouts.strategies.adaptive import AdaptiveStrategy
from prm_factory.rollouts.strategies.base import StepEstimate, Strategy, StrategyState
from prm_factory.rollouts.strategies.binary_search import BinarySearchStrategy
from prm_factory.rollouts.strategies.exhaustive import ExhaustiveStrategy

STRATEGIES: dict[str, type] = {
    "exhaustive": ExhaustiveStrategy,
    "binary_search": BinarySearchStrategy,
    "adaptive": AdaptiveStrategy,
}


def make_strategy(name: str, **options: Any) -> Strategy:
    """The strategy registered as `name`, built with `options` (its dataclass fields).

    >>> make_strategy("exhaustive", rollouts_per_probe=4)
    ExhaustiveStrategy(rollouts_per_probe=4, max_steps=None, name='exhaustive')
    """
    try:
        strategy_type = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown rollout strategy {name!r}; known: {sorted(STRATEGIES)}") from None
    if "name" in options:
        raise TypeError("'name' selects the strategy and cannot be passed as an option")
    if isinstance(options.get("correct_chain_checks"), list):  # config files give lists; keep it hashable
        options["correct_chain_checks"] = tuple(options["correct_chain_checks"])
    return strategy_type(**options)


__all__ = [
    "STRATEGIES",
    "AdaptiveStrategy",
    "BinarySearchStrategy",
    "ExhaustiveStrategy",
    "StepEstimate",
    "Strategy",
    "StrategyState",
    "make_strategy",
]
