"""Checks a config before any run starts, so a broken config costs one line, not an engine start.

Each problem is one line saying which field and what to do. A run still records its own failures in the
runs table (flows/generation_run.py); these are the mistakes worth catching before Prefect or vLLM start.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from prm_factory.config.run_config import RunConfig


def config_problems(config: RunConfig) -> list[str]:
    """Every problem found, one line each; an empty list means the config can run."""
    problems: list[str] = []
    source = config.problems.resolved_path()
    if config.problems.source != "synthetic" and not source.is_file():  # synthetic problems need no file
        problems.append(f"problem file not found: {source} (set problems.path or --problems)")
    if config.model.path is not None:
        checkpoint = Path(config.model.path).expanduser()
        if not checkpoint.is_dir():
            problems.append(f"model.path not found: {checkpoint} (a local Hugging Face checkpoint directory)")
        elif not (checkpoint / "config.json").is_file():
            problems.append(f"model.path {checkpoint} is not a Hugging Face checkpoint (no config.json)")
    if config.runner.task_runner == "dask" and importlib.util.find_spec("prefect_dask") is None:
        from prm_factory.flows.scaleout import DASK_PIN

        problems.append(f"runner.task_runner = 'dask' needs prefect-dask (pip install {DASK_PIN})")
    problems.extend(labeler_problems(config))
    return problems


def source_problems(config: RunConfig) -> list[str]:
    """Every name in `[labels] sources` must be a registered label source (or load as module:attribute)."""
    from prm_factory.labels.registry import RegistryError, configured, source_names

    try:
        registry = configured(config.labels.sources)
        names = source_names(config.labels.sources)
    except RegistryError as err:
        return [f"labels.sources: {err}"]
    return [
        f"labels.sources: no label source {name!r}; registered: {', '.join(registry)}"
        for name in names
        if name not in registry
    ]


def labeler_problems(config: RunConfig) -> list[str]:
    """A verifier that cannot load what it needs fails here with one clear line, instead of quietly turning
    every answer it cannot read into `error` (or, worse, a label). Math: math-verify and its LaTeX parser
    must import and parse in the bounded worker the grader uses. A label source the config names must be
    registered."""
    problems = source_problems(config)
    if problems or config.problems.domain != "math":
        return problems
    return math_dependency_problems()


_math_dependencies_ok = False


def math_dependency_problems() -> list[str]:
    """The math check starts a worker (seconds), and what it checks is the installed environment, not the
    config: once it passes in a process, it is not run again (the CLI checks before it redirects output and
    then calls the Python API, which checks too)."""
    global _math_dependencies_ok
    if _math_dependencies_ok:
        return []
    from prm_factory.verifiers.math.answers import check_dependencies
    from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig

    pool = BoundedPool(PoolConfig(workers=1))
    try:
        problems = [f"math verifier: {line}" for line in check_dependencies(pool=pool)]
    finally:
        pool.close()
    _math_dependencies_ok = not problems
    return problems
