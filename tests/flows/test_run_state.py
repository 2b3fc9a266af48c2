"""What a generation run keeps across chunks (flows/run_state.py): the prefix cache counters summed over the
chunks that have them, and no rate where no chunk did."""

from __future__ import annotations

from prm_factory.flows.run_state import RunProgress
from prm_factory.flows.tasks import RolloutStage


def test_the_hit_rate_sums_the_chunks_that_have_counters() -> None:
    progress = RunProgress()
    assert progress.hit_rate() is None
    progress.add_rollouts(RolloutStage([], None), chains=3)  # a backend without counters
    assert progress.hit_rate() is None and progress.rollout_chains == 3
    progress.add_rollouts(RolloutStage([], (100, 25)), chains=2)
    progress.add_rollouts(RolloutStage([], (100, 75)), chains=2)
    assert progress.hit_rate() == 0.5 and progress.rollout_chains == 7
