"""Rollouts drawn so far, per distinct step prefix, so chains that share a prefix share its rollouts.

Several chains sampled for one problem often begin with the same step ("Let's find how many apples Tom
has."). The value of a prefix depends only on the prefix, so k rollouts drawn from it serve every chain that
has it: each chain reads the prefix's rollouts from its own cursor, and only rollouts that no chain has read
yet are drawn. A drawn rollout's cost (tokens, engine seconds) is charged once, to the first chain that
reads it, so per-step costs add up to what the engine really spent.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from prm_factory.rollouts.items import RolloutItem


@dataclass(frozen=True)
class DrawnRollout:
    correct: bool | None  # None: the grader could not judge it (unparsed, timed out, worker failure)
    tokens: int
    seconds: float


@dataclass
class _PrefixDraws:
    rollouts: list[DrawnRollout] = field(default_factory=list)
    charged: int = 0  # rollouts [0, charged) have been charged to some chain


class RolloutPool:
    """Drawn rollouts keyed by prefix. With `share=False` every (chain, step) is its own prefix."""

    def __init__(self, share: bool = True) -> None:
        self.share = share
        self._draws: dict[Hashable, _PrefixDraws] = {}

    def key(self, item: RolloutItem, step: int) -> Hashable:
        """Same problem, same rendered prompt, same prefix text: same rollout distribution."""
        if self.share:
            return (item.problem.problem_id, item.prompt, item.prefix(step))
        return (item.chain_id, step)

    def size(self, key: Hashable) -> int:
        draws = self._draws.get(key)
        return len(draws.rollouts) if draws else 0

    def add(self, key: Hashable, rollouts: list[DrawnRollout]) -> None:
        self._draws.setdefault(key, _PrefixDraws()).rollouts.extend(rollouts)

    def take(self, key: Hashable, start: int, n: int) -> tuple[list[bool | None], list[DrawnRollout]]:
        """Outcomes of rollouts [start, start+n) of the prefix, and those of them not yet charged to anyone
        (now charged to the caller)."""
        draws = self._draws[key]
        if start + n > len(draws.rollouts):
            raise RuntimeError(f"pool holds {len(draws.rollouts)} rollouts of a prefix, {start + n} asked")
        taken = draws.rollouts[start : start + n]
        newly_charged = draws.rollouts[max(start, draws.charged) : start + n]
        draws.charged = max(draws.charged, start + n)
        return [r.correct for r in taken], newly_charged
