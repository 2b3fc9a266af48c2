"""`prm-factory sandbox ...`: build the offline sandbox image and clear leftover containers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    sandbox = typer.Typer(no_args_is_help=True, help="The Docker sandbox for code tests.")
    console = Console()

    @sandbox.command("build")
    def build(rebuild: Annotated[bool, typer.Option(help="build even if the tag exists")] = False) -> None:
        """Build the sandbox image offline (debootstrap rootfs + docker import), cached by content tag."""
        from verifiers.code.image import ensure_image

        try:
            tag = ensure_image(rebuild=rebuild)
        except Exception as err:  # docker or debootstrap missing: one line, non-zero exit
            Console(stderr=True).print(f"[red]error:[/red] sandbox build failed: {err}", soft_wrap=True)
            raise typer.Exit(2) from err
        console.print(f"sandbox image: {tag}")

    @sandbox.command("cleanup")
    def cleanup(
        all_owners: Annotated[bool, typer.Option(help="also containers of other processes")] = False,
    ) -> None:
        """Remove sandbox containers left behind by crashed runs."""
        from verifiers.code.sandbox import cleanup_leftovers

        console.print(f"removed {cleanup_leftovers(all_owners=all_owners)} leftover sandbox containers")

    app.add_typer(sandbox, name="sandbox")
