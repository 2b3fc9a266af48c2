"""`prm-factory sandbox ...`: build the offline sandbox image and clear leftover containers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(no_args_is_help=True, help="The Docker sandbox for code tests.")
"""The `sandbox` group; prm_factory/cli.py adds it to the main app under that name."""


def register(parent: typer.Typer) -> None:
    """Add this group to `parent` (the main app, or a test's) as `sandbox`."""
    parent.add_typer(app, name="sandbox")


@app.command("build")
def build(rebuild: Annotated[bool, typer.Option(help="build even if the tag exists")] = False) -> None:
    """Build the sandbox image offline (debootstrap rootfs + docker import), cached by content tag."""
    from prm_factory.verifiers.code.image import ensure_image

    try:
        tag = ensure_image(rebuild=rebuild)
    except Exception as err:  # docker or debootstrap missing: one line, non-zero exit
        Console(stderr=True).print(f"[red]error:[/red] sandbox build failed: {err}", soft_wrap=True)
        raise typer.Exit(2) from err
    Console().print(f"sandbox image: {tag}")


@app.command("cleanup")
def cleanup(
    all_owners: Annotated[bool, typer.Option(help="also containers of other processes")] = False,
) -> None:
    """Remove sandbox containers left behind by crashed runs."""
    from prm_factory.verifiers.code.sandbox import cleanup_leftovers

    Console().print(f"removed {cleanup_leftovers(all_owners=all_owners)} leftover sandbox containers")
