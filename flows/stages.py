"""The cached stages, declared once: what each consumes, reads, produces and which code decides its result.

A stage's cache key is derived from its declaration (flows/resume.py stores the results): the code digest
of its declared modules (`verifiers.identity.code_digest`), the values of its declared inputs (named parts of
the config and the run plan) and the keys of the stages it consumes. A change to an upstream stage's inputs or
code therefore changes every key downstream of it, and a stage is added by one entry in `GENERATION`.

Run-scoped stages get one key per run, suffixed per chunk of problems (`resume.chunk_key`); a chunk-scoped
stage (`rows`) is keyed from its upstream stages' chunk keys.

A stage also declares what it reads and writes by name (`reads`, `writes`): the chunk loop hands it the
chunk's values of those names and stores its result under `writes` (flows/runner.ChunkExecutor.step), and
`Pipeline.unwired` finds a read that nothing before it writes, so a reader follows a value from the stage
that makes it to the stages that use it, and the task a stage runs is the object it names, not a string.

>>> pipeline = Pipeline((Stage("a", inputs=("x",)), Stage("b", consumes=("a",))))
>>> pipeline.run_keys({"x": 1})["b"] != pipeline.run_keys({"x": 2})["b"]
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prefect import Task

from prm_factory.flows import scaleout, tasks
from prm_factory.flows.resume import chunk_key, stage_key
from prm_factory.schemas.records import Problem


class UndeclaredInput(KeyError):
    """A stage reads an input that was not provided, or a key was asked with an input no stage declares."""


@dataclass(frozen=True)
class Stage:
    """One stage: what keys it (consumes, inputs, code), what it reads and writes, and how it runs
    (flows/runner.py runs every stage of every pipeline the same way). `task` is its Prefect task (from
    flows/tasks.py), called with the chunk's values named by `reads`, in order; its result is the chunk's
    value `writes`; `needs` the resources it uses (`engine`, `sandbox`: its concurrency tags); `cached`:
    its result is stored under its key and reused; `clock` its name on the run's progress clock
    (flows/stage_clock.py), `timed` False for a stage the clock does not show; `spread` a function of
    flows/scaleout.py that runs it over a process or Dask task runner instead (`runner.task_runner`)."""

    name: str
    consumes: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: str = ""
    code: tuple[str, ...] = ()
    scope: Literal["run", "chunk"] = "run"
    clock: str = ""
    task: Task | None = None
    reads: tuple[str, ...] = ()
    writes: str = ""
    needs: frozenset[str] = frozenset()
    cached: bool = True
    timed: bool = True
    spread: Callable[..., Any] | None = None

    @property
    def clock_name(self) -> str:
        return self.clock or self.name


@dataclass(frozen=True)
class Pipeline:
    """Stages in dependency order; a stage consumes only stages declared before it."""

    stages: tuple[Stage, ...]

    def __post_init__(self) -> None:
        seen: dict[str, Stage] = {}
        for stage in self.stages:
            if stage.name in seen:
                raise ValueError(f"stage {stage.name!r} declared twice")
            for upstream in stage.consumes:
                if upstream not in seen:
                    raise ValueError(f"stage {stage.name!r} consumes {upstream!r}, not declared before it")
                if stage.scope == "run" and seen[upstream].scope == "chunk":
                    raise ValueError(
                        f"run-scoped stage {stage.name!r} cannot consume chunk stage {upstream!r}"
                    )
            seen[stage.name] = stage

    def __getitem__(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(name)

    def names(self, scope: str | None = None) -> list[str]:
        return [s.name for s in self.stages if scope is None or s.scope == scope]

    def unwired(self, given: Sequence[str]) -> list[str]:
        """`stage.read` for every read that neither `given` (what the pipeline's loop puts in a chunk's
        values) nor an earlier stage's `writes` provides: empty for a pipeline the loop can run."""
        known, missing = set(given), []
        for stage in self.stages:
            missing += [f"{stage.name}.{name}" for name in stage.reads if name not in known]
            if stage.writes:
                known.add(stage.writes)
        return missing

    def input_names(self) -> set[str]:
        return {name for stage in self.stages for name in stage.inputs}

    def upstream(self, name: str) -> set[str]:
        """Every stage `name` depends on, directly or through another stage."""
        found: set[str] = set()
        todo = list(self[name].consumes)
        while todo:
            current = todo.pop()
            if current not in found:
                found.add(current)
                todo.extend(self[current].consumes)
        return found

    def _check(self, inputs: Mapping[str, Any]) -> None:
        unknown = set(inputs) - self.input_names()
        if unknown:
            raise UndeclaredInput(f"inputs no stage declares: {sorted(unknown)}")

    def _key(self, stage: Stage, inputs: Mapping[str, Any], upstream_keys: Mapping[str, str]) -> str:
        missing = [name for name in stage.inputs if name not in inputs]
        if missing:
            raise UndeclaredInput(f"stage {stage.name!r} reads inputs not given: {missing}")
        payload = {name: inputs[name] for name in stage.inputs}
        if stage.consumes:
            froms = [upstream_keys[name] for name in stage.consumes]
            payload["from"] = froms[0] if len(froms) == 1 else froms
        return stage_key(stage.name, payload, code=stage.code)

    def run_keys(self, inputs: Mapping[str, Any]) -> dict[str, str]:
        """The key of every run-scoped stage (chunk-scoped ones need a chunk: `chunk_keys`)."""
        self._check(inputs)
        keys: dict[str, str] = {}
        for stage in self.stages:
            if stage.scope == "run":
                keys[stage.name] = self._key(stage, inputs, keys)
        return keys

    def chunk_keys(
        self, run_keys: Mapping[str, str], inputs: Mapping[str, Any], index: int, part: Sequence[Problem]
    ) -> dict[str, str]:
        """Every stage's key for chunk `index`: run keys suffixed by the chunk, chunk stages chained."""
        self._check(inputs)
        keys: dict[str, str] = {}
        for stage in self.stages:
            if stage.scope == "run":
                keys[stage.name] = chunk_key(run_keys[stage.name], index, part)
            else:
                keys[stage.name] = self._key(stage, inputs, keys)
        return keys


GENERATION = Pipeline(
    (
        Stage(
            "sample",
            inputs=("problems", "engine", "sampling", "domain"),
            outputs="drawn chains",
            code=(
                "prm_factory.sampling.chains",
                "prm_factory.sampling.prompts",
                "prm_factory.sampling.vllm_sampler",
                # the CPU engine's top-p (the plugin runs in the engine's processes)
                "prm_factory.sampling.vllm_plugins",
                "prm_factory.sampling.cpu_top_p",
            ),
            task=tasks.sample_task,
            reads=("settings", "problems", "params", "domain"),
            writes="drawn",
            needs=frozenset({"engine"}),
        ),
        Stage(
            "segment",
            consumes=("sample",),
            inputs=("segmentation", "verifier"),
            outputs="chains split into steps, final answers graded",
            code=("prm_factory.sampling.segment", "prm_factory.labels.assemble", "prm_factory.flows.domains"),
            clock="segment_grade",
            task=tasks.segment_task,
            reads=("drawn", "domain", "verifier", "identity"),
            writes="sampled",
            needs=frozenset({"sandbox"}),
        ),
        Stage(
            "verify",
            consumes=("segment",),
            inputs=("verifier",),  # its code digest is in the value (verifiers.identity.labeler_identity)
            outputs="step verdicts",
            code=("prm_factory.flows.domains",),
            task=tasks.verify_task,
            reads=("sampled", "verifier"),
            writes="verdicts",
            needs=frozenset({"sandbox"}),
            spread=scaleout.spread_verify,
        ),
        Stage(
            "rollouts",
            consumes=("segment",),
            inputs=("rollouts", "engine", "verifier"),
            outputs="Monte Carlo step values",
            code=("prm_factory.rollouts",),
            task=tasks.rollouts_task,
            reads=("settings", "sampled", "config", "verifier", "run_id", "done", "expected"),
            writes="rollout_stage",
            needs=frozenset({"engine", "sandbox"}),
        ),
        Stage(
            "rows",
            consumes=("rollouts", "verify"),
            inputs=("labels", "judge"),
            outputs="the chunk's staged Parquet rows",
            code=("prm_factory.labels", "prm_factory.storage", "prm_factory.schemas.records"),
            scope="chunk",
            clock="stage_rows",
            task=tasks.stage_task,
            reads=("root", "directory", "problems", "chains", "steps", "tally"),
            cached=False,  # its rows are staged under its key (storage/staging.py), not a task result
        ),
    )
)
"""A generation run's keyed stages (flows/generation_run.py); the label sources after the verifier and MC
are stages too, uncached (`source_stage`)."""

EXTERNAL = Pipeline(
    (
        Stage(
            "rollouts",
            inputs=("external_chains", "outcomes", "engine", "rollouts", "verifier"),
            outputs="Monte Carlo step values of chains read from a file",
            code=("prm_factory.rollouts",),
            task=tasks.rollouts_task,
            reads=("settings", "sampled", "config", "verifier", "run_id"),
            writes="rollout_stage",
            needs=frozenset({"engine", "sandbox"}),
        ),
    )
)
"""The label flow's one cached stage (flows/label_run.py)."""


def source_stage(name: str, needs: frozenset[str]) -> Stage:
    """A label source's batch call as a stage (flows/tasks.label_task): on the clock where it needs an engine
    or a checkpoint (the others run inline, as the reference alignment always has), with the engine's and the
    sandbox's tags where it needs them. Not cached: a source's identity keys the rows it ends in."""
    return Stage(
        name,
        task=tasks.label_task,
        reads=("source", "chains", "labels", "setup"),
        writes=name,
        needs=needs,
        cached=False,
        timed=bool(needs & {"engine", "checkpoint"}),
    )


KEYED_ELSEWHERE: dict[str, str] = {  # module -> why its key still covers it
    "prm_factory.verifiers": "the `verifier` input carries the verifier's name, version and code digest",
    "prm_factory.config": "a stage reads config only through its declared inputs, by value",
    "prm_factory.schemas": (
        "problems enter by their content-hash ids (`problems`); record types are shapes, not rules"
    ),
    "prm_factory.sampling.protocol": "types and the sampler protocol only",
    "prm_factory.sampling.cpu_host": "what it decides (the dtype `auto` became) is in the `engine` input",
    "prm_factory.sampling.reproducibility": (
        "what it decides (vLLM's batch-invariant kernels on or off) is in the `engine` input"
    ),
    "prm_factory.sampling.shm_cleanup": (
        "removes dead engines' /dev/shm files before a start; no chain depends on it"
    ),
    "prm_factory.labels.consensus": (
        "labels.assemble's row building, keyed by `rows` (which declares `labels`)"
    ),
    "prm_factory.labels.judge": (
        "labels.assemble's row building, keyed by `rows`; the judge's prompt hash is in `labels`"
    ),
    "prm_factory.rollouts.items": (
        "labels.assemble builds rollout items for the `rollouts` stage, which declares it"
    ),
    "prm_factory.rollouts.values": (
        "labels.assemble reads values when building rows, which consume `rollouts`"
    ),
    "prm_factory.labels.reference": "the reference labeler's identity is in `labels` (the label config hash)",
    "prm_factory.labels.source": (
        "the label source shape; the votes it declares decide rows, keyed by `rows` (prm_factory.labels)"
    ),
    "prm_factory.labels.sources": (
        "each source's identity is in `labels` (the label config hash), the verifier's also in `verifier`"
    ),
    "prm_factory.sampling.backends": "engine access of the judge source, which is not cached",
    "prm_factory.sampling.model_prep": "resolves the judge's checkpoint; the judge model is in `judge`",
}
"""Product modules a stage's declared code imports without declaring, and why its key still covers them
(tests/flows/test_stages.py checks every such import is declared upstream or listed here)."""
