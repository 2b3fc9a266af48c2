"""`prm-factory reward serve`: the process-reward server for RL trainers (reward/server.py)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from prm_factory.console import fail

app = typer.Typer(no_args_is_help=True, help="Process rewards for online RL (docs/rewards.md).")
"""The `reward` group; prm_factory/cli.py merges it into the main app."""


def register(parent: typer.Typer) -> None:
    """Add this group to `parent` (the main app, or a test's) as `reward`."""
    parent.add_typer(app, name="reward")


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; beyond loopback a token is required.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="PRM_FACTORY_REWARD_TOKEN",
            help="Token callers send (default: none on loopback, a fresh one elsewhere).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes that label responses.")] = 2,
    deadline: Annotated[float, typer.Option(min=0.1, help="Seconds one response may take.")] = 10.0,
    request_deadline: Annotated[float, typer.Option(min=0.1, help="Seconds one request may take.")] = 60.0,
    queue: Annotated[int, typer.Option(min=0, help="Requests that may wait for a slot (then 503).")] = 64,
    max_body: Annotated[int, typer.Option(min=1024, help="Largest request body, in bytes.")] = 2_000_000,
    max_batch: Annotated[int, typer.Option(min=1, help="Most responses in one request.")] = 512,
    max_steps: Annotated[int, typer.Option(min=1, help="Most steps in one response.")] = 400,
    budget: Annotated[
        float | None,
        typer.Option(min=0.0, help="SymPy seconds per response's step checks; a cut check is unverifiable."),
    ] = None,
    competition: Annotated[
        bool,
        typer.Option(
            help="Traffic is competition math: start what it needs before the first request "
            "(about 150 MiB a worker that GSM8K-sized traffic never uses)."
        ),
    ] = False,
) -> None:
    """Serve OpenRLHF's POST /get_reward, POST /score (per-step results), /health and /metrics."""
    from prm_factory.reward.scorer import RewardScorer
    from prm_factory.reward.server import Limits, run, serve_token

    try:
        required = serve_token(host, token)
    except ValueError as error:
        fail(str(error))
    limits = Limits(
        max_body_bytes=max_body,
        max_batch=max_batch,
        max_steps=max_steps,
        concurrency=workers,
        queue=queue,
        request_deadline_s=request_deadline,
    )
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{port}/get_reward" + (f"?token={required}" if required else "")
    Console().print(f"rewards at {url}  (Ctrl+C stops)", highlight=False, soft_wrap=True)
    scorer = RewardScorer(workers=workers, deadline_s=deadline, budget_s=budget, competition=competition)
    run(scorer, limits, host, port, required)
