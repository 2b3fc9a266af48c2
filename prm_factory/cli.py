"""`prm-factory`: the command line. `run` lives here; every other command group is a module-level Typer app in
prm_factory/commands/ (COMMAND_MODULES). Each command parses its options and calls one library function."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from prm_factory import teardown
from prm_factory.config.runtime import apply_runtime_defaults

if TYPE_CHECKING:
    from prm_factory.config.run_config import RunConfig

apply_runtime_defaults()

ENGINE_STOP_SECONDS = 1.0
"""What the end of a run gives its vLLM engine before its processes are killed (see `stop_engines`)."""

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Step-labeled training data for PRMs.")
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> None:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)


def _parse_sets(pairs: list[str]) -> dict[str, object]:
    """`--set rollouts.k=8` style overrides; values parsed as TOML scalars when they can be."""
    import tomllib

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
    from prm_factory.config.run_config import ConfigError, load_config

    overrides = _parse_sets(set_ or [])
    if dataset is not None:
        overrides["dataset.root"] = str(dataset)
    if problems is not None:
        overrides["problems.path"] = str(problems)
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
    from prm_factory.flows.preflight import config_problems

    problems_found = config_problems(cfg)
    if problems_found:  # one line each, before Prefect or the engine start
        for line in problems_found[:-1]:
            err_console.print(f"[red]error:[/red] {line}", soft_wrap=True)
        fail(problems_found[-1])

    if pool is not None:
        _run_on_pool(cfg, pool, shard, shards, parent_run)
        return

    from prm_factory.config.runtime import apply_quiet_defaults
    from prm_factory.flows.generation_run import run_generation
    from prm_factory.flows.observe import progress_sink
    from prm_factory.progress import RichStageProgress, logged_events, output_to_log, run_log_path
    from prm_factory.summary import print_summary

    apply_quiet_defaults()
    log_path = run_log_path(cfg.dataset_root())
    started = time.perf_counter()
    try:
        with output_to_log(log_path) as terminal:
            with RichStageProgress(Console(file=terminal)) as bars, progress_sink(bars):
                summary = run_generation(cfg, shard, parent_run)
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
    # a pipe gets the stage record as lines (no live bars there); a terminal only the failures
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
        err_console.print(
            f"[red]error:[/red] shard(s) {', '.join(failed)} did not complete; rerun one alone with "
            f"--shard I/N --pool {pool} --parent-run {parent}",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _print_logical_run(cfg: RunConfig, parent: str) -> None:
    """The logical run's row of `prm-factory stats` (its shards together)."""
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.errors import StorageError
    from prm_factory.storage.stats import run_costs

    try:
        rows = run_costs(Dataset(str(cfg.dataset_root())), run_id=parent)
    except StorageError as err:
        err_console.print(f"no dataset to read the run from: {err}", soft_wrap=True)
        return
    for row in rows:
        console.print(
            f"run {row['run_id']}: {row['status']}, shards {row['shards']}, "
            f"{row['step_labels']} step labels, wall {row['wall_seconds']}s; dataset {cfg.dataset_root()}"
        )


COMMAND_MODULES = (
    "prm_factory.commands.dataset",  # query, versions, tag, stats, export, compact
    "prm_factory.commands.report",
    "prm_factory.commands.label",  # label, relabel
    "prm_factory.commands.quality",  # eval
    "prm_factory.commands.serve",
    "prm_factory.commands.search",  # search-eval
    "prm_factory.commands.train",  # train, score
    "prm_factory.commands.model",  # the `model` group: prepare, warm
    "prm_factory.commands.sandbox",  # the `sandbox` group: build, cleanup
    "prm_factory.commands.audit",  # the `audit` group: sample, serve, report, status, labels, export, import
)


def _register_commands() -> None:
    """Commands live in one module per group, each a module-level Typer app that `register(app)` merges in."""
    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)


_register_commands()


def main() -> None:  # pragma: no cover - console script entry
    teardown.install()  # before the heavy libraries' exit handlers, so it runs after them
    sys.exit(app())


if __name__ == "__main__":
    main()
