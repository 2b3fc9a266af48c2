"""StageEvents forwards a chunk's pause and resume to the sinks that keep a clock, and only to them."""

from __future__ import annotations

import logging

from prm_factory.flows.observe import StageEvents, progress_sink


class _ClockSink:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def started(self, stage: str) -> None:
        self.calls.append(("started", stage))

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.calls.append(("advanced", stage, done, total))

    def finished(self, stage: str, seconds: float, cached: bool) -> None:
        self.calls.append(("finished", stage, seconds, cached))

    def paused(self, stage: str, seconds: float) -> None:
        self.calls.append(("paused", stage, seconds))

    def resumed(self, stage: str) -> None:
        self.calls.append(("resumed", stage))


class _PlainSink(_ClockSink):
    paused = None  # type: ignore[assignment]  a sink without a clock
    resumed = None  # type: ignore[assignment]


def test_pause_and_resume_reach_clock_sinks_and_skip_plain_ones(caplog):
    events = StageEvents("r1", logging.getLogger("test-observe-pause"))
    clock, plain = _ClockSink(), _PlainSink()
    with caplog.at_level(logging.INFO), progress_sink(clock), progress_sink(plain):
        events.started("rollouts")
        events.paused("rollouts", 3.5)
        events.resumed("rollouts")
        events.finished("rollouts", 7.0)
    assert clock.calls == [
        ("started", "rollouts"),
        ("paused", "rollouts", 3.5),
        ("resumed", "rollouts"),
        ("finished", "rollouts", 7.0, False),
    ]
    assert [c[0] for c in plain.calls] == ["started", "finished"]
    # a chunk boundary is not an operator event: only start and done are logged
    assert [r.getMessage().split("event=")[1].split()[0] for r in caplog.records] == ["start", "done"]
