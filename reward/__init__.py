"""Process rewards for online RL: the factory's step checks as a reward function (`score_steps`,
`score_batch`), adapters for trainers (`trl`, `verl`, `verifiers_rubric`, `slime`) and a reward server
(`server`, `prm-factory reward serve`). docs/rewards.md."""

from prm_factory.reward.aggregate import AGGREGATIONS
from prm_factory.reward.labelling import DEFAULT_SOURCES, RewardRequestError
from prm_factory.reward.scorer import (
    RewardResult,
    RewardScorer,
    StepReward,
    default_scorer,
    score_batch,
    score_steps,
)

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_SOURCES",
    "RewardRequestError",
    "RewardResult",
    "RewardScorer",
    "StepReward",
    "default_scorer",
    "score_batch",
    "score_steps",
]
