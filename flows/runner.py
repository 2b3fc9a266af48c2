"""The one chunk executor of every pipeline: the generation run, `label` and `relabel` declare their stages
(flows/stages.py: key and how it runs) and run each of them here.

`ChunkExecutor.step` runs a stage on a chunk's named values (what the stage `reads`, its result stored
under what it `writes`); `ChunkExecutor.run` owns what used to be written by hand per stage and per flow:
the stage's Prefect task (the object the stage declares), its content cache (flows/resume.py, for cached
stages and only with `resume.enabled`), the engine's and the sandbox's concurrency tags (from what it
needs; the sandbox only in a code run), its place on the run's progress clock (flows/stage_clock.py, where
the pipeline has one), and the task runner (a stage that declares `spread` runs over the process or Dask
runner of `runner.task_runner`). `label_sources` runs the label sources after the ones a pipeline reads
from its own stages, each as a stage of its own, in order, each reading the labels before it.

>>> executor = ChunkExecutor("/tmp/ds", domain="math")                                  # doctest: +SKIP
>>> values = {"settings": settings, "problems": part, "params": params, "domain": domain}  # doctest: +SKIP
>>> executor.step(GENERATION["sample"], key, values)["drawn"]                            # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from prm_factory.config.run_config import RunConfig
from prm_factory.flows import tasks
from prm_factory.flows.resume import with_stage_cache
from prm_factory.flows.stage_clock import StageClock
from prm_factory.flows.stages import Stage, UndeclaredInput, source_stage
from prm_factory.labels.assemble import SampledChain
from prm_factory.labels.source import ChainLabels, LabelSource, SourceSetup


@dataclass(frozen=True)
class ChunkExecutor:
    """Runs the stages of one pipeline's chunks (see the module docstring)."""

    root: str
    domain: str = "math"
    clock: StageClock | None = None
    resume: bool = True
    config: RunConfig | None = None  # where `runner.task_runner` is read (None: threads)

    def tags(self, stage: Stage) -> list[str]:
        """The concurrency tags of a stage's task (flows/serve.py limits them): the engine's, the sandbox's in
        a code run."""
        tags = [tasks.ENGINE_TAG] if "engine" in stage.needs else []
        return tags + ([tasks.SANDBOX_TAG] if "sandbox" in stage.needs and self.domain == "code" else [])

    def task(self, stage: Stage, key: str | None) -> Any:
        """The stage's Prefect task with its cache, tags and name."""
        task = stage.task
        if task is None:
            raise TypeError(f"stage {stage.name!r} declares no task")
        if stage.cached:
            task = with_stage_cache(task, self.root, key if self.resume else None)
        # Prefect otherwise keeps up to 1000 task results in an in-process LRU: every chunk's labels and
        # chains would stay in memory for the whole run, which the chunk loop exists to avoid.
        options: dict[str, Any] = {"tags": self.tags(stage), "cache_result_in_memory": False}
        if task is tasks.label_task:
            options["name"] = f"label-{stage.name}"
        return task.with_options(**options)

    def run(self, stage: Stage, key: str | None, *args: Any) -> Any:
        """Run one chunk's piece of `stage` on `args` (the task's parameters) and return its result."""
        runner = self.config.runner.task_runner if self.config is not None else "threads"
        if stage.spread is not None and runner != "threads":  # its sub-chunks over the process / Dask runner
            work = partial(stage.spread, key, self.config, self.root, *args)
        else:
            work = partial(self.task(stage, key), *args)
        if self.clock is None or not stage.timed:
            return work()
        return self.clock.run(stage.clock_name, work, [key] if key and stage.cached else [])

    def step(self, stage: Stage, key: str | None, values: dict[str, Any]) -> dict[str, Any]:
        """Run `stage` on the chunk's `values` named by its `reads`; its result goes into `values` under its
        `writes` (returned, for chaining)."""
        missing = [name for name in stage.reads if name not in values]
        if missing:
            raise UndeclaredInput(f"stage {stage.name!r} reads {missing}, which no earlier stage wrote")
        result = self.run(stage, key, *(values[name] for name in stage.reads))
        if stage.writes:
            values[stage.writes] = result
        return values

    def label_sources(
        self,
        sources: Sequence[LabelSource],
        chains: Sequence[SampledChain],
        labels: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> dict[str, list[ChainLabels | None]]:
        """`labels` plus each source's labels of `chains`, the sources run in order as stages."""
        out: dict[str, list[ChainLabels | None]] = {
            name: list(per_chain) for name, per_chain in labels.items()
        }
        for source in sources:
            stage = source_stage(source.name, source.needs)
            values = {"source": source, "chains": list(chains), "labels": dict(out), "setup": setup}
            out[source.name] = self.step(stage, None, values)[stage.writes]
        return out

    def timed_sources(self, sources: Sequence[LabelSource]) -> list[str]:
        """The clock names of the sources that show on the clock (a reused chunk counts them as cached)."""
        return [source.name for source in sources if source_stage(source.name, source.needs).timed]
