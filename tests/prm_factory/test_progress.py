"""The stage bars show a stage's own time: frozen when it ends, waiting between its chunks (a streaming run
showed `segment_grade 0:20:30` for a stage of 1 s); StageClock reports the pauses (flows/stage_clock.py)."""

from __future__ import annotations

import io
import logging
import subprocess
import sys

from rich.console import Console

from prm_factory.flows.observe import StageEvents
from prm_factory.flows.stage_clock import StageClock
from prm_factory.progress import RichStageProgress, StageTimeColumn, stage_seconds


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def bars_at(clock: FakeTime) -> RichStageProgress:
    bars = RichStageProgress(Console(file=io.StringIO(), width=100))
    bars.progress.get_time = clock  # the bars' clock, moved by hand
    return bars


def shown(bars: RichStageProgress, stage: str) -> str:
    task = next(t for t in bars.progress.tasks if t.description.split(" ")[0] == stage)
    return StageTimeColumn().render(task).plain


def test_a_finished_stage_shows_its_own_seconds_not_the_span_since_it_started() -> None:
    now = FakeTime()
    bars = bars_at(now)
    bars.started("segment_grade")
    now.now = 1230.0  # the last chunk ends twenty minutes after the first began
    assert shown(bars, "segment_grade") == "0:20:30"  # still running (no pauses reported): wall time
    bars.finished("segment_grade", 1.2, cached=False)
    assert shown(bars, "segment_grade") == "0:00:01"
    now.now = 5000.0
    assert shown(bars, "segment_grade") == "0:00:01"  # stopped


def test_the_clock_waits_between_pieces_and_runs_on_after() -> None:
    now = FakeTime()
    bars = bars_at(now)
    bars.started("verify")
    now.now = 3.0
    bars.paused("verify", 3.0)
    now.now = 600.0  # other stages' chunks
    assert shown(bars, "verify") == "0:00:03"
    bars.resumed("verify")
    now.now = 605.0
    assert shown(bars, "verify") == "0:00:08"
    bars.resumed("verify")  # a second resume does not restart the running piece
    now.now = 606.0
    assert shown(bars, "verify") == "0:00:09"


def test_stage_seconds_before_a_stage_starts_and_with_cached_and_reported_times() -> None:
    assert stage_seconds({}, 10.0) is None
    assert stage_seconds({"worked": 2.0, "since": 4.0}, 10.0) == 8.0
    assert stage_seconds({"worked": 2.0, "since": None}, 10.0) == 2.0
    assert stage_seconds({"worked": 2.0, "since": 4.0, "seconds": 0.5}, 10.0) == 0.5


class Recorder(StageEvents):
    """StageEvents that also take the pieces' boundaries (what a progress sink gets)."""

    def __init__(self) -> None:
        super().__init__("r", logging.getLogger("test-stage-clock"))
        self.calls: list[tuple] = []

    def started(self, stage: str) -> None:
        self.calls.append(("started", stage))

    def finished(self, stage: str, seconds: float, cached: bool = False) -> None:
        self.calls.append(("finished", stage))

    def paused(self, stage: str, seconds: float) -> None:
        self.calls.append(("paused", stage))

    def resumed(self, stage: str) -> None:
        self.calls.append(("resumed", stage))


def test_stage_clock_reports_each_piece_of_a_chunked_stage(tmp_path) -> None:
    events = Recorder()
    clock = StageClock(events, tmp_path, check_cache=False)
    for _ in range(2):
        clock.run("sample", lambda: None)
        clock.run("verify", lambda: None)
    clock.reuse(["sample"])
    clock.finish()
    assert events.calls == [
        ("started", "sample"),
        ("paused", "sample"),
        ("started", "verify"),
        ("paused", "verify"),
        ("resumed", "sample"),
        ("paused", "sample"),
        ("resumed", "verify"),
        ("paused", "verify"),
        ("resumed", "sample"),  # a reused chunk: a piece of no time
        ("paused", "sample"),
        ("finished", "sample"),
        ("finished", "verify"),
    ]


def test_stage_clock_without_piece_events_keeps_to_the_logged_ones(tmp_path, caplog) -> None:
    """Events that do not take pauses (today's StageEvents) get start and done only, as before."""
    events = StageEvents("r", logging.getLogger("test-stage-clock-plain"))
    clock = StageClock(events, tmp_path, check_cache=False)
    with caplog.at_level(logging.INFO, logger="test-stage-clock-plain"):
        clock.run("sample", lambda: None)
        clock.run("sample", lambda: None)
        clock.finish()
    assert [r.getMessage().split()[3] for r in caplog.records] == ["event=start", "event=done"]
    assert clock.seconds().keys() == {"sample"}


QUIET_SCRIPT = """
import logging, sys
from pathlib import Path
from prm_factory.progress import quiet_output
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s | %(message)s")
with quiet_output(Path(sys.argv[1])) as log:
    logging.getLogger("prefect.flow_runs").info("Finished in state Completed()")
    print("inside")
    if sys.argv[2] == "fail":
        raise RuntimeError("boom")
logging.getLogger("prefect").info("Stopping temporary server")  # turned down after the block
print("after", log.parent.name)
"""


def quiet(tmp_path, how: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", QUIET_SCRIPT, str(tmp_path / "ds"), how],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_quiet_output_sends_prefect_lines_to_the_log_under_the_dataset_root(tmp_path) -> None:
    done = quiet(tmp_path, "ok")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["after", "_logs"] and done.stderr == ""
    (log,) = (tmp_path / "ds" / "_logs").iterdir()
    assert "Finished in state Completed()" in log.read_text() and "inside" in log.read_text()
    assert "Stopping temporary server" not in log.read_text()


def test_quiet_output_names_the_log_on_an_error_and_lets_the_error_through(tmp_path) -> None:
    done = quiet(tmp_path, "fail")
    assert done.returncode == 1
    (log,) = (tmp_path / "ds" / "_logs").iterdir()
    assert f"log: {log}" in " ".join(done.stderr.split())
    assert "RuntimeError: boom" in done.stderr and "Finished in state" not in done.stderr
    assert "inside" not in done.stdout
