"""Wall time and cache status of each stage of a run whose stages repeat once per chunk of problems.

A streaming run goes sample → segment → verify → rollouts → stage rows for one chunk, then for the next,
so a stage's time is the sum over chunks, it starts once (first chunk) and finishes once (after the last
chunk, `finish`). A stage counts as cached when every one of its runs found all its keys on disk before
(or belonged to a chunk reused whole from the staging area), as the CLI's "(cached)" and the artifact show.

Between two pieces of a stage its clock waits: after each piece the clock sends `paused(stage, seconds so
far)` and before a later one `resumed(stage)` to its events object where that has them (the CLI's bars show
a stage's own time, not the wall time since its first chunk). They are no operator events: not logged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from prm_factory.flows.observe import StageEvents
from prm_factory.flows.resume import is_cached

T = TypeVar("T")


@dataclass
class _StageState:
    seconds: float = 0.0
    runs: int = 0
    cached_runs: int = 0
    finished: bool = False


@dataclass
class StageClock:
    """Times stages for one run; `current` names the stage a failure happened in."""

    events: StageEvents
    dataset_root: str | Path
    check_cache: bool = True  # resume.enabled: whether keys are looked up at all
    current: str = "setup"
    _stages: dict[str, _StageState] = field(default_factory=dict)

    def run(self, stage: str, work: Callable[[], T], keys: Iterable[str] = ()) -> T:
        """Run one piece of `stage` (a chunk of it, or all of it); cached when all `keys` were on disk."""
        keys = list(keys)
        found = sum(is_cached(self.dataset_root, k) for k in keys) if self.check_cache else 0
        state = self._start(stage)
        t0 = time.perf_counter()
        result = work()
        state.seconds += time.perf_counter() - t0
        state.runs += 1
        state.cached_runs += bool(keys) and found == len(keys)
        self._signal("paused", stage, round(state.seconds, 2))
        return result

    def reuse(self, stages: Iterable[str]) -> None:
        """A chunk whose rows were staged already: its stages count as cached runs taking no time."""
        for stage in stages:
            state = self._start(stage)
            state.runs += 1
            state.cached_runs += 1
            self._signal("paused", stage, round(state.seconds, 2))

    def once(self, stage: str, work: Callable[[], T], keys: Iterable[str] = ()) -> T:
        """A stage that runs once per run (load, engine start, commit): run it and finish it."""
        result = self.run(stage, work, keys)
        self.finish(stage)
        return result

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.events.advanced(stage, done, total)

    def finish(self, *stages: str) -> None:
        """Emit `done` for `stages` (default: every started stage not finished yet), in start order."""
        for stage in stages or [s for s, st in self._stages.items() if not st.finished]:
            state = self._stages.get(stage)
            if state is None or state.finished:
                continue
            state.finished = True
            self.events.finished(stage, round(state.seconds, 2), self.is_cached(stage))

    def is_cached(self, stage: str) -> bool:
        state = self._stages.get(stage)
        return state is not None and state.runs > 0 and state.cached_runs == state.runs

    def seconds(self) -> dict[str, float]:
        return {stage: round(state.seconds, 2) for stage, state in self._stages.items()}

    def cached_stages(self) -> list[str]:
        return [stage for stage in self._stages if self.is_cached(stage)]

    def _start(self, stage: str) -> _StageState:
        self.current = stage
        if stage not in self._stages:
            self._stages[stage] = _StageState()
            self.events.started(stage)
        else:
            self._signal("resumed", stage)
        return self._stages[stage]

    def _signal(self, name: str, *args: object) -> None:
        """A piece's boundary, to the events object where it takes them (see the module's docstring)."""
        method = getattr(self.events, name, None)
        if callable(method):
            method(*args)
