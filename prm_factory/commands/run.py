"""`prm-factory run`: sample chains, label every step, commit a dataset version (here, one shard here, or
every shard on a Prefect work pool's workers).

The run itself is `prm_factory.run` (the Python API); this module parses options, shows progress bars on a
terminal (stage lines on a pipe), keeps the libraries' output in a log under the dataset root, and prints the
summary.
"""

from __future__ import annotations

import logging
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from prm_factory import teardown
from prm_factory.console import fail

if TYPE_CHECKING:
    from prm_factory.config.run_config import RunConfig
    from prm_factory.flows.run_summary import RunSummary

ENGINE_STOP_SECONDS = 1.0
"""What the end of a run gives its vLLM engine before its processes are killed (see `stop_engines`)."""

app = typer.Typer()
"""The `run` command; prm_factory/cli.py merges it into the main app."""
console = Console()
err_console = Console(stderr=True)


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


def parse_sets(pairs: list[str]) -> dict[str, object]:
    """`--set rollouts.k=8` style overrides; values parsed as TOML scalars when they can be."""
    overrides: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            fail(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            overrides[key.strip()] = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            overrides[key.strip()] = raw
    return overrides


@app.command()
def run(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="TOML run config")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="override, e.g. --set rollouts.k=8")] = None,
    dataset: Annotated[Path | None, typer.Option(help="dataset root (overrides the config)")] = None,
    problems: Annotated[Path | None, typer.Option(help="problems file (overrides the config)")] = None,
    shard: Annotated[
        str | None, typer.Option(help="run shard I/N (from 0) of the problems, by a hash of their ids")
    ] = None,
    shards: Annotated[
        int | None, typer.Option(min=1, help="with --pool: every shard of N, one flow run each")
    ] = None,
    pool: Annotated[
        str | None, typer.Option(help="Prefect work pool: the shards run on its workers, not here")
    ] = None,
    parent_run: Annotated[
        str | None, typer.Option(help="the shards' shared run id (default: from the config and N)")
    ] = None,
) -> None:
    """Sample chains, label every step, and commit a new dataset version.

    `--shard I/N` runs one hash slice of the problems as a shard of one logical run (rerun a failed shard
    the same way); `--shards N --pool NAME` runs all N as flow runs on a Prefect work pool's workers."""
    overrides = parse_sets(set_ or [])
    if dataset is not None:
        overrides["dataset.root"] = str(dataset)
    if problems is not None:
        overrides["problems.path"] = str(problems)
    cfg = _checked_config(config, overrides, shard, shards, pool, parent_run)
    if pool is not None:
        _run_on_pool(cfg, pool, shard, shards, parent_run)
        return
    started = time.perf_counter()
    summary, log_path = _run_here(cfg, shard, parent_run)
    # a pipe gets the stage record as lines (no live bars there); a terminal only the failures
    from prm_factory.progress import logged_events
    from prm_factory.summary import print_summary

    shown = ("done", "failed", "end") if not console.is_terminal else ("failed",)
    for line in logged_events(log_path, shown):
        err_console.print(line, soft_wrap=True, markup=False, highlight=False)
    print_summary(summary, console, log_path=log_path)
    if summary.shard is not None:
        console.print(f"shard {summary.shard} of run {summary.parent_run_id}")
    console.print(f"wall time {time.perf_counter() - started:.0f}s")
    code = 0 if summary.status == "succeeded" else 1
    if teardown.installed():  # the console script: no later caller in this process needs the engine
        from prm_factory.sampling.vllm_sampler import stop_engines

        stop_engines(timeout=ENGINE_STOP_SECONDS)
    teardown.leave_after_handlers(code)  # only where `main` installed it: the console script
    if code:
        raise typer.Exit(code)


def _checked_config(
    config: Path | None,
    overrides: dict[str, object],
    shard: str | None,
    shards: int | None,
    pool: str | None,
    parent_run: str | None,
) -> RunConfig:
    """The run's config with the shard options checked and the preflight passed, or a clean exit (one
    `error:` line per problem found, before Prefect or the engine start)."""
    from prm_factory.api import load_config
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.preflight import config_problems

    try:
        cfg = load_config(config, overrides)
        if shard is not None or shards is not None or pool is not None or parent_run is not None:
            from prm_factory.flows.shards import Shard, absolute_paths

            cfg = absolute_paths(cfg)  # every shard, here or on a worker, runs (and hashes) the same config
            if pool is None and shards is not None:
                raise ConfigError("--shards N needs --pool NAME (one shard here: --shard I/N)")
            if pool is None and shard is None:
                raise ConfigError("--parent-run needs --shard I/N")
            if shard is not None:
                Shard.parse(shard)
    except ConfigError as err:
        fail(str(err))
    problems_found = config_problems(cfg)
    if problems_found:
        for line in problems_found[:-1]:
            err_console.print(f"[red]error:[/red] {line}", soft_wrap=True)
        fail(problems_found[-1])
    return cfg


def _run_here(cfg: RunConfig, shard: str | None, parent_run: str | None) -> tuple[RunSummary, Path]:
    """`prm_factory.run` with progress bars, the libraries' output in the run log; on an error the log's
    failed events, the reason and the log's path go to the terminal and the error is raised again."""
    from prm_factory.api import run as run_config
    from prm_factory.config.runtime import apply_quiet_defaults
    from prm_factory.flows.observe import progress_sink
    from prm_factory.progress import RichStageProgress, logged_events, output_to_log, run_log_path

    apply_quiet_defaults()
    log_path = run_log_path(cfg.dataset_root())
    try:
        with output_to_log(log_path) as terminal:
            with RichStageProgress(Console(file=terminal)) as bars, progress_sink(bars):
                summary = run_config(cfg, shard=shard, parent_run=parent_run)
    except BaseException as error:  # the reason belongs on the terminal, the details in the log
        for line in logged_events(log_path, ("failed",)):
            err_console.print(line, soft_wrap=True, markup=False, highlight=False)
        if not isinstance(error, KeyboardInterrupt | SystemExit | typer.Exit):
            reason = escape(f"{type(error).__name__}: {error}")
            err_console.print(f"[red]error:[/red] {reason}", soft_wrap=True)
        err_console.print(f"log: {log_path}", soft_wrap=True, highlight=False)
        raise
    # the temporary Prefect server's shutdown note and vLLM's engine shutdown warnings at interpreter exit
    # would land under the summary; errors still show
    logging.getLogger("prefect").setLevel(logging.WARNING)
    logging.getLogger("vllm").setLevel(logging.ERROR)
    return summary, log_path


def _run_on_pool(
    cfg: RunConfig, pool: str, shard: str | None, shards: int | None, parent_run: str | None
) -> None:
    """Submit the shards as flow runs of a deployment on `pool`, follow them, print the logical run."""
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.fanout import (
        SubmittedShard,
        deploy_generation,
        ensure_work_pool,
        shards_to_run,
        submit_shards,
        wait_for_shards,
    )
    from prm_factory.flows.serve import require_api_server
    from prm_factory.flows.shards import derived_parent_id

    try:
        wanted = shards_to_run(shard, shards)
        url = require_api_server()
    except ConfigError as err:
        fail(str(err))
    parent = parent_run or derived_parent_id(cfg, wanted[0].count)
    started = time.perf_counter()
    kind = ensure_work_pool(pool)
    deployment = deploy_generation(pool)
    submitted = submit_shards(deployment, cfg, wanted, parent)
    console.print(
        f"run {parent}: {len(submitted)} shard(s) of {wanted[0].count} submitted to work pool {pool!r} "
        f"({kind}) at {url}; start workers with: prefect worker start --pool {pool}"
    )

    def changed(item: SubmittedShard, state: str) -> None:
        console.print(f"shard {item.shard} ({item.flow_run_name}): {state.lower()}")

    states = wait_for_shards(submitted, on_change=changed)
    _print_logical_run(cfg, parent)
    console.print(f"wall time {time.perf_counter() - started:.0f}s")
    if any(state != "COMPLETED" for state in states.values()):
        failed = [str(item.shard) for item in submitted if states[item.flow_run_id] != "COMPLETED"]
        fail(
            f"shard(s) {', '.join(failed)} did not complete; rerun one alone with "
            f"--shard I/N --pool {pool} --parent-run {parent}",
            code=1,
        )


def _print_logical_run(cfg: RunConfig, parent: str) -> None:
    """The logical run's row of `prm-factory stats` (its shards together)."""
    from prm_factory.api import open_dataset
    from prm_factory.storage.errors import StorageError
    from prm_factory.storage.stats import run_costs

    try:
        rows = run_costs(open_dataset(cfg.dataset_root()), run_id=parent)
    except StorageError as err:
        err_console.print(f"no dataset to read the run from: {err}", soft_wrap=True)
        return
    for row in rows:
        console.print(
            f"run {row['run_id']}: {row['status']}, shards {row['shards']}, "
            f"{row['step_labels']} step labels, wall {row['wall_seconds']}s; dataset {cfg.dataset_root()}"
        )
