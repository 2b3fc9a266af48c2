"""The contract between the rollout driver and a strategy, and the per-step estimate a strategy returns.

A strategy is a pure state machine: it never calls an engine. The driver asks each chain's state which
step prefixes it wants probed this round and how many rollouts each (`wanted`), draws them for all
chains together, and hands back the graded outcomes (`record`). A state with nothing wanted is finished;
`estimates` then says what it learned about each probeable step. Because states only see booleans, every
strategy is tested on recorded outcomes, without an engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class StepEstimate:
    """What a strategy knows about one step prefix, before costs are attached.

    `source` is "rollouts" (drawn: `n_correct` of `n_rollouts`), "inferred" (implied by other probes:
    `inferred_hard`), or "none" (nothing known).
    """

    step_index: int
    source: str = "none"
    n_rollouts: int = 0
    n_correct: int = 0
    inferred_hard: bool | None = None

    @property
    def mc_value(self) -> float | None:
        return self.n_correct / self.n_rollouts if self.source == "rollouts" and self.n_rollouts else None

    @property
    def hard_label(self) -> bool | None:
        if self.source == "rollouts" and self.n_rollouts:
            return self.n_correct > 0
        return self.inferred_hard if self.source == "inferred" else None


class StrategyState(Protocol):
    """One chain's progress through a strategy."""

    def wanted(self) -> dict[int, int]:
        """Step index -> rollouts to draw from that prefix this round; empty when the chain is finished.
        Calling it twice without `record` in between returns the same request."""
        ...

    def record(self, outcomes: Mapping[int, Sequence[bool]]) -> None:
        """The graded outcomes of this round's rollouts, for every step `wanted` asked for."""
        ...

    def estimates(self) -> tuple[StepEstimate, ...]:
        """One estimate per probeable step (0 .. n_prefixes-1), in order."""
        ...


class Strategy(Protocol):
    """Options of one estimation method; `start` makes a fresh state per chain.

    `n_prefixes` is how many step prefixes the chain may probe: its steps but the last (a rollout from the
    full chain has nothing left to write), capped by `max_steps`. `outcome_correct` is the chain's own
    outcome (unparsed counts as not correct) and `n_steps` the full step count, so a search knows whether
    the step after its range is the chain's known outcome or simply out of range.
    """

    name: str
    max_steps: int | None

    def start(self, n_prefixes: int, n_steps: int, outcome_correct: bool) -> StrategyState: ...


def check_counts(name: str, **counts: int | None) -> None:
    """Fail at construction, not mid-run, on a nonsensical option. `max_steps` may be 0 (probe nothing:
    only the last step gets a value, the chain's outcome); every other count must be at least 1."""
    for option, value in counts.items():
        least = 0 if option == "max_steps" else 1
        if value is not None and value < least:
            raise ValueError(f"{name}: {option} must be >= {least}, got {value}")


def check_record(wanted: Mapping[int, int], outcomes: Mapping[int, Sequence[bool]]) -> None:
    """The driver must answer exactly what was asked; anything else is a bug worth stopping on."""
    if set(outcomes) != set(wanted) or any(len(outcomes[s]) != n for s, n in wanted.items()):
        got = {s: len(o) for s, o in outcomes.items()}
        raise ValueError(f"outcomes {got} do not match the request {dict(wanted)}")
