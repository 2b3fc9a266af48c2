"""Where the test suite's wall time goes: per worker, per xdist group,, the tests of the worker it waits on.

tests/conftest.py records every test phase (setup, call, teardown) with its start, stop and the xdist worker
that ran it, in `.pytest_cache/prm-factory-timings.jsonl` (or `$PRM_TEST_TIMINGS`). pytest's `--durations`
lists the slowest phases but not who ran them; with `--dist loadgroup` the suite lasts as long as its busiest
worker, so that worker's tests are the critical path, and the other workers' idle tail is what a better split
would recover. A session fixture's start is charged to the setup of the first test that asks for it.

    python bench/suite_critical_path.py                          # the last run's file
    python bench/suite_critical_path.py before.jsonl after.jsonl # two runs side by side, with the ratio

Each phase also carries the CPU it took in the worker's process and in the children it reaped
(tests/phase_cpu.py): with more workers than cores the suite waits on CPU, and the tests that take the
most of it are the ones worth making cheaper. Processes that outlive a phase (the session's engine, the
Prefect server) are not charged to any test, and a long-lived child is charged whole to the phase that
reaps it (a fork server of math workers, with the CPU of the workers it forked and reaped: to the test
that stops it; the process-wide one ends with its worker, charged to no test).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[1] / ".pytest_cache" / "prm-factory-timings.jsonl"
NO_GROUP = "(no group)"


@dataclass(frozen=True)
class Phase:
    nodeid: str
    when: str
    start: float
    stop: float
    worker: str
    cpu: float = 0.0  # this process, during the phase (files written before carry none)
    child_cpu: float = 0.0  # children started and reaped during the phase

    @property
    def seconds(self) -> float:
        return self.stop - self.start

    @property
    def group(self) -> str:
        """xdist's `--dist loadgroup` names a test's group after an `@` at the end of its node id (past any
        parameter id, which may hold an `@` of its own: xdist's own rule)."""
        at = self.nodeid.rfind("@")
        return self.nodeid[at + 1 :] if at > self.nodeid.rfind("]") else NO_GROUP

    @property
    def test(self) -> str:
        return self.nodeid[: self.nodeid.rfind("@")] if self.group != NO_GROUP else self.nodeid


@dataclass(frozen=True)
class WorkerSpan:
    worker: str
    first_start: float
    last_stop: float
    busy: float
    tests: int


def read_phases(path: Path) -> list[Phase]:
    return [Phase(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def worker_spans(phases: Iterable[Phase]) -> list[WorkerSpan]:
    by_worker: dict[str, list[Phase]] = defaultdict(list)
    for phase in phases:
        by_worker[phase.worker].append(phase)
    return sorted(
        (
            WorkerSpan(
                worker,
                min(p.start for p in own),
                max(p.stop for p in own),
                sum(p.seconds for p in own),
                len({p.test for p in own}),
            )
            for worker, own in by_worker.items()
        ),
        key=lambda span: span.last_stop,
    )


def per_test(phases: Iterable[Phase], measure: Callable[[Phase], float]) -> dict[str, float]:
    """`measure` of each phase summed per test (setup, call and teardown together)."""
    totals: dict[str, float] = defaultdict(float)
    for phase in phases:
        totals[phase.test] += measure(phase)
    return dict(totals)


def test_seconds(phases: Iterable[Phase]) -> dict[str, float]:
    """Setup, call and teardown summed per test."""
    return per_test(phases, lambda phase: phase.seconds)


def group_seconds(phases: Iterable[Phase]) -> dict[str, tuple[float, set[str]]]:
    totals: dict[str, float] = defaultdict(float)
    workers: dict[str, set[str]] = defaultdict(set)
    for phase in phases:
        totals[phase.group] += phase.seconds
        workers[phase.group].add(phase.worker)
    return {group: (totals[group], workers[group]) for group in totals}


def report(phases: Sequence[Phase], top: int = 25) -> list[str]:
    """The lines printed for one run."""
    if not phases:
        return ["no test phases recorded"]
    origin = min(p.start for p in phases)
    wall = max(p.stop for p in phases) - origin
    spans = worker_spans(phases)
    busy = sum(span.busy for span in spans)
    lines = [
        f"wall (first start to last stop): {wall:.0f} s; test time summed over workers: {busy:.0f} s;"
        f" the ideal split over {len(spans)} worker(s): {busy / len(spans):.0f} s",
        "worker   tests    busy s   ends at s   idle tail s",
    ]
    last = spans[-1].last_stop
    for span in spans:
        lines.append(
            f"{span.worker:<8} {span.tests:>5} {span.busy:>9.0f} {span.last_stop - origin:>11.0f}"
            f" {last - span.last_stop:>13.0f}"
        )
    lines.append("group                 seconds  workers")
    for group, (seconds, workers) in sorted(group_seconds(phases).items(), key=lambda kv: -kv[1][0]):
        lines.append(f"{group:<20} {seconds:>8.0f}  {','.join(sorted(workers))}")
    critical = spans[-1].worker
    own = [p for p in phases if p.worker == critical]
    lines.append(f"critical path: worker {critical}, its {top} longest tests (setup + call + teardown)")
    for test, seconds in sorted(test_seconds(own).items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{seconds:>8.1f} s  {shortened(test)}")
    own_cpu = per_test(phases, lambda phase: phase.cpu)
    child_cpu = per_test(phases, lambda phase: phase.child_cpu)
    if sum(own_cpu.values()) + sum(child_cpu.values()) > 0:
        lines.append(
            f"CPU charged to tests: {sum(own_cpu.values()):.0f} s in the workers,"
            f" {sum(child_cpu.values()):.0f} s in the children they reaped;"
            f" the {top} tests that took the most (own + children, wall)"
        )
        seconds = test_seconds(phases)
        for test in sorted(own_cpu, key=lambda t: -(own_cpu[t] + child_cpu[t]))[:top]:
            mine, theirs = own_cpu[test], child_cpu[test]
            split = f"({mine:.1f} + {theirs:.1f}, {seconds[test]:.1f} s)"
            lines.append(f"{mine + theirs:>8.1f} s  {split}  {shortened(test)}")
    return lines


def shortened(test: str, width: int = 160) -> str:
    """A test id cut to `width` characters: a parametrised id can be a whole input (a 50,000-character
    pathological completion filled a terminal).

    >>> shortened("t.py::test[" + "x" * 300 + "]", 30)
    't.py::test[xxxxxxxxxxxxxxxxxxx... (312 chars)'
    """
    return test if len(test) <= width else f"{test[:width]}... ({len(test)} chars)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help=f"timings files (default {DEFAULT})")
    parser.add_argument("--top", type=int, default=25, help="tests listed on the critical worker")
    args = parser.parse_args(argv)
    files = args.files or [DEFAULT]
    walls = []
    for path in files:
        phases = read_phases(path)
        print(f"== {path}")
        print("\n".join(report(phases, args.top)))
        if phases:
            walls.append(max(p.stop for p in phases) - min(p.start for p in phases))
    if len(walls) == 2 and walls[1] > 0:
        print(f"wall ratio, first / second: {walls[0] / walls[1]:.2f}x ({walls[0]:.0f} s / {walls[1]:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
