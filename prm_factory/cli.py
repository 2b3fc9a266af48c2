"""`prm-factory`: the command line. `run` lives here; every other command group is a module-level Typer app in
prm_factory/commands/ (COMMAND_MODULES). Each command parses its options and calls one library function."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from config.runtime import apply_runtime_defaults

apply_runtime_defaults()

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
) -> None:
    """Sample chains, label every step, and commit a new dataset version."""
    from config.run_config import ConfigError, load_config

    overrides = _parse_sets(set_ or [])
    if dataset is not None:
        overrides["dataset.root"] = str(dataset)
    if problems is not None:
        overrides["problems.path"] = str(problems)
    try:
        cfg = load_config(config, overrides)
    except ConfigError as err:
        fail(str(err))
    from flows.preflight import config_problems

    problems_found = config_problems(cfg)
    if problems_found:  # one line each, before Prefect or the engine start
        for line in problems_found[:-1]:
            err_console.print(f"[red]error:[/red] {line}", soft_wrap=True)
        fail(problems_found[-1])

    from config.runtime import apply_quiet_defaults
    from flows.generation_run import run_generation
    from flows.observe import progress_sink
    from prm_factory.progress import RichStageProgress, logged_events, output_to_log, run_log_path
    from prm_factory.summary import print_summary

    apply_quiet_defaults()
    log_path = run_log_path(cfg.dataset_root())
    started = time.perf_counter()
    try:
        with output_to_log(log_path) as terminal:
            with RichStageProgress(Console(file=terminal)) as bars, progress_sink(bars):
                summary = run_generation(cfg)
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
    console.print(f"wall time {time.perf_counter() - started:.0f}s")
    if summary.status != "succeeded":
        raise typer.Exit(1)


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
)


def _register_commands() -> None:
    """Commands live in one module per group, each a module-level Typer app that `register(app)` merges in."""
    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)


_register_commands()


def main() -> None:  # pragma: no cover - console script entry
    sys.exit(app())


if __name__ == "__main__":
    main()
