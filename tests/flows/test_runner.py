"""The one chunk executor (flows/runner.py): a stage's task, cache, tags and clock come from its declaration,
and label sources run as stages in order, each reading the labels before it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from prefect import task
from prefect.cache_policies import NO_CACHE

import prm_factory.flows.tasks as tasks
from prm_factory.config.run_config import load_config
from prm_factory.flows.observe import StageEvents
from prm_factory.flows.runner import ChunkExecutor
from prm_factory.flows.stage_clock import StageClock
from prm_factory.flows.stages import GENERATION, Stage, UndeclaredInput, source_stage
from prm_factory.labels.source import BaseSource, SourceSetup
from prm_factory.schemas.step_labels import StepLabel


def test_a_stage_gets_the_engine_tag_and_the_sandbox_tag_in_a_code_run() -> None:
    math, code = ChunkExecutor("/tmp/x", "math"), ChunkExecutor("/tmp/x", "code")
    assert math.tags(GENERATION["rollouts"]) == [tasks.ENGINE_TAG]
    assert code.tags(GENERATION["rollouts"]) == [tasks.ENGINE_TAG, tasks.SANDBOX_TAG]
    assert math.tags(GENERATION["segment"]) == [] and code.tags(GENERATION["segment"]) == [tasks.SANDBOX_TAG]
    assert math.tags(GENERATION["rows"]) == []


def test_sources_on_the_clock_are_those_with_an_engine_or_a_checkpoint() -> None:
    assert source_stage("judge", frozenset({"engine"})).timed
    assert source_stage("prm", frozenset({"checkpoint"})).timed
    assert not source_stage("reference", frozenset({"solution"})).timed


CALLS: list[int] = []


@task(cache_policy=NO_CACHE)
def counted_task(x: int) -> int:
    CALLS.append(x)
    return 2 * x


@pytest.fixture
def counted() -> Stage:
    CALLS.clear()
    return Stage("double", task=counted_task, reads=("x",), writes="doubled", needs=frozenset({"engine"}))


def test_a_cached_stage_runs_once_per_key_and_shows_cached_on_the_clock(
    prefect_server: None, tmp_path, counted: Stage
) -> None:
    import logging

    clock = StageClock(StageEvents("run", logging.getLogger("test")), tmp_path, check_cache=True)
    executor = ChunkExecutor(str(tmp_path), "math", clock)
    assert executor.run(counted, "double-key-1", 3) == 6
    assert executor.run(counted, "double-key-1", 3) == 6  # read back from <root>/_cache
    assert executor.run(counted, "double-key-2", 4) == 8
    assert CALLS == [3, 4]
    clock.finish()
    assert "double" in clock.seconds() and clock.cached_stages() == []  # one of its three runs computed
    uncached = ChunkExecutor(str(tmp_path), "math", resume=False)
    assert uncached.run(counted, "double-key-1", 3) == 6 and CALLS == [3, 4, 3]


def test_a_step_reads_the_chunk_values_it_declares_and_writes_its_own(
    prefect_server: None, tmp_path, counted: Stage
) -> None:
    executor = ChunkExecutor(str(tmp_path), "math", resume=False)
    values = executor.step(counted, None, {"x": 5, "unrelated": 1})
    assert values == {"x": 5, "unrelated": 1, "doubled": 10} and CALLS == [5]
    with pytest.raises(UndeclaredInput, match="'double' reads \\['x'\\]"):
        executor.step(counted, None, {"y": 5})


@dataclass
class Echo(BaseSource):
    """Labels every step `correct`, and says how many labels of `reads` it saw first."""

    name: str = "echo"
    reads: tuple[str, ...] = ()

    def label(self, chains, prior, setup):
        seen = sum(1 for name in self.reads for labels in prior.get(name, []) if labels)
        return [tuple(StepLabel(self.name, "correct", reason=f"saw {seen}") for _ in c.steps) for c in chains]


def test_label_sources_run_in_order_each_reading_the_labels_before_it(prefect_server: None, tmp_path) -> None:
    from prm_factory.labels.assemble import SampledChain, join_steps
    from prm_factory.sampling.protocol import Generation
    from prm_factory.schemas.records import Problem
    from prm_factory.verifiers.protocol import Verdict

    text, spans = join_steps(["a", "b"])
    chain = SampledChain(
        "c",
        Problem("p", "s", "math", "q"),
        "",
        0,
        Generation(text, 0, "stop"),
        spans,
        Verdict("correct"),
        None,
    )
    setup = SourceSetup(load_config(None), "math", None)  # type: ignore[arg-type]
    first, second = Echo("first"), Echo("second", reads=("first",))
    out = ChunkExecutor(str(tmp_path), "math").label_sources(
        [first, second], [chain], {"given": [None]}, setup
    )
    assert list(out) == ["given", "first", "second"]
    assert [label.reason for label in out["second"][0]] == ["saw 1", "saw 1"]
