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

    `source` is "rollouts" (drawn: `n_correct` of the `n_judged` graded among `n_rollouts`), "inferred"
    (implied by other probes: `inferred_hard`), or "none" (nothing known). A rollout the grader could not
    judge (no answer found, a time-out, a dead worker) is drawn but not judged: it counts for nothing, so a
    busy machine cannot lower a value.

    >>> e = StepEstimate(0, "rollouts", n_rollouts=4, n_correct=1, n_judged=2)
    >>> (e.mc_value, e.hard_label)
    (0.5, True)
    >>> StepEstimate(0, "rollouts", n_rollouts=4, n_correct=0, n_judged=0).hard_label is None
    True
    """

    step_index: int
    source: str = "none"
    n_rollouts: int = 0
    n_correct: int = 0
    inferred_hard: bool | None = None
    n_judged: int | None = None  # None: every drawn rollout was judged

    @property
    def judged(self) -> int:
        return self.n_rollouts if self.n_judged is None else self.n_judged

    @property
    def mc_value(self) -> float | None:
        return self.n_correct / self.judged if self.source == "rollouts" and self.judged else None

    @property
    def hard_label(self) -> bool | None:
        if self.source == "rollouts" and self.judged:
            return self.n_correct > 0
        return self.inferred_hard if self.source == "inferred" else None


RolloutOutcome = bool | None  # True: reached the reference, False: judged wrong, None: could not be judged


def tally(step: int, drawn: Sequence[RolloutOutcome]) -> StepEstimate:
    """The estimate of one probed prefix from its graded rollouts; unjudged ones count for nothing."""
    return StepEstimate(
        step,
        "rollouts",
        n_rollouts=len(drawn),
        n_correct=sum(d is True for d in drawn),
        n_judged=sum(d is not None for d in drawn),
    )


class StrategyState(Protocol):
    """One chain's progress through a strategy."""

    def wanted(self) -> dict[int, int]:
        """Step index -> rollouts to draw from that prefix this round; empty when the chain is finished.
        Calling it twice without `record` in between returns the same request."""
        ...

    def record(self, outcomes: Mapping[int, Sequence[RolloutOutcome]]) -> None:
        """The graded outcomes of this round's rollouts (True, False, or None when one could not be
        judged), for every step `wanted` asked for."""
        ...

    def estimates(self) -> tuple[StepEstimate, ...]:
        """One estimate per probeable step (0 .. n_prefixes-1), in order."""
        ...


class Strategy(Protocol):
    """Options of one estimation method; `start` makes a fresh state per chain.

    `n_prefixes` is how many step prefixes the chain may probe: its steps but the last (a rollout from the
    full chain has nothing left to write), capped by `max_steps`. `outcome_correct` is the chain's own
    outcome (unparsed counts as not correct) and `n_steps` the full step count, so a search knows whether
    the step after its range is the chain's known outcome or simply out of range. An unjudged chain outcome
    (None) is searched like a wrong one, without assuming its last step is bad.
    """

    name: str
    max_steps: int | None

    def start(self, n_prefixes: int, n_steps: int, outcome_correct: bool | None) -> StrategyState: ...


def check_counts(name: str, **counts: int | None) -> None:
    """Fail at construction, not mid-run, on a nonsensical option. `max_steps` may be 0 (probe nothing:
    only the last step gets a value, the chain's outcome); every other count must be at least 1."""
    for option, value in counts.items():
        least = 0 if option == "max_steps" else 1
        if value is not None and value < least:
            raise ValueError(f"{name}: {option} must be >= {least}, got {value}")


def check_record(wanted: Mapping[int, int], outcomes: Mapping[int, Sequence[RolloutOutcome]]) -> None:
    """The driver must answer exactly what was asked; anything else is a bug worth stopping on."""
    if set(outcomes) != set(wanted) or any(len(outcomes[s]) != n for s, n in wanted.items()):
        got = {s: len(o) for s, o in outcomes.items()}
        raise ValueError(f"outcomes {got} do not match the request {dict(wanted)}")


class OneRoundState:
    """A chain's state for a strategy that asks for all its probes in one round (every prefix for
    exhaustive estimation, a few checkpoints of a correct chain for the search): a step not probed keeps
    its initial estimate.

    >>> state = OneRoundState([StepEstimate(0), StepEstimate(1)], {1: 2})
    >>> state.wanted()
    {1: 2}
    >>> state.record({1: [True, None]})
    >>> [(e.source, e.hard_label) for e in state.estimates()], state.wanted()
    ([('none', None), ('rollouts', True)], {})
    """

    def __init__(self, initial: Sequence[StepEstimate], probes: Mapping[int, int]) -> None:
        self._estimates = list(initial)
        self._pending = dict(probes)

    def wanted(self) -> dict[int, int]:
        return dict(self._pending)

    def record(self, outcomes: Mapping[int, Sequence[RolloutOutcome]]) -> None:
        check_record(self._pending, outcomes)
        for step, drawn in outcomes.items():
            self._estimates[step] = tally(step, drawn)
        self._pending = {}

    def estimates(self) -> tuple[StepEstimate, ...]:
        return tuple(self._estimates)
