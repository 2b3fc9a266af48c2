"""One warm reward scorer shared by the module's tests (a worker start costs seconds, not the subject)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prm_factory.reward import RewardScorer


@pytest.fixture(scope="module")
def scorer() -> Iterator[RewardScorer]:
    scorer = RewardScorer(workers=1, deadline_s=30.0)
    scorer.warm()
    yield scorer
    scorer.close()
