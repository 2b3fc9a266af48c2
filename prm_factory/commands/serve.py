"""`prm-factory serve CONFIG... --cron "0 * * * *"`: scheduled runs of several configs (flows/serve.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from prm_factory.console import fail

if TYPE_CHECKING:
    from prm_factory.flows.serve import ServedConfig

app = typer.Typer()
"""The serve command; prm_factory/cli.py merges it into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


@app.command()
def serve(
    configs: Annotated[list[Path], typer.Argument(help="TOML run configs, one deployment each")],
    cron: Annotated[str, typer.Option(help="cron schedule for every config")] = "0 * * * *",
    timezone: Annotated[str | None, typer.Option(help="IANA time zone of the schedule")] = None,
    max_runs: Annotated[int, typer.Option(min=1, help="flow runs (engines) at once on this machine")] = 1,
    engine_slots: Annotated[int, typer.Option(min=1, help="tasks using the engine at once")] = 1,
    sandbox_slots: Annotated[int, typer.Option(min=1, help="tasks using the sandbox at once")] = 2,
    dry_run: Annotated[bool, typer.Option(help="check and print the deployments, serve nothing")] = False,
) -> None:
    """Serve one Prefect deployment per config on a cron schedule (needs `prefect server start`)."""
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.serve import (
        build_deployments,
        ensure_tag_limits,
        require_api_server,
        serve_deployments,
    )

    served = _checked_configs(configs, cron)
    try:
        deployments = build_deployments(served, cron, timezone=timezone)
    except ConfigError as err:
        fail(str(err))
    console = Console()
    for item, deployment in zip(served, deployments, strict=True):
        console.print(f"deployment {deployment.name}: {item.path} on '{cron}'")
    if dry_run:
        return
    try:
        url = require_api_server()
    except ConfigError as err:
        fail(str(err))
    limits = ensure_tag_limits(engine_slots, sandbox_slots)
    console.print(f"serving {len(deployments)} deployment(s) against {url}; tag limits {limits}")
    serve_deployments(deployments, max_runs)


def _checked_configs(configs: list[Path], cron: str) -> list[ServedConfig]:
    """Every config loaded and preflighted, with the schedule; all problems are printed, then exit 2."""
    from prm_factory.config.run_config import ConfigError, load_config
    from prm_factory.flows.preflight import config_problems
    from prm_factory.flows.serve import ServedConfig, validate_cron

    served: list[ServedConfig] = []
    errors: list[str] = []
    try:
        validate_cron(cron)
    except ConfigError as err:
        errors.append(str(err))
    for path in configs:
        try:
            config = load_config(path)
        except ConfigError as err:
            errors.append(str(err))
            continue
        errors.extend(f"{path}: {line}" for line in config_problems(config))
        served.append(ServedConfig(path, config))
    if errors:
        err_console = Console(stderr=True)
        for line in errors:
            err_console.print(f"[red]error:[/red] {line}", soft_wrap=True)
        raise typer.Exit(2)
    return served
