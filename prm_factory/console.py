"""Console output of the commands: tables never cut (a table printed to a pipe or a file keeps its full
width), and a usage error as one line."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console, RenderableType
from rich.measure import Measurement

# wide enough for any table the CLI builds; only its natural width is used
_UNBOUNDED = 1_000_000


def print_whole(console: Console, renderable: RenderableType) -> None:
    """Print `renderable` (a table) on a terminal at the terminal's width; anywhere else (a pipe, a file)
    at its natural width, so no column header or cell is truncated or folded to fit 80 columns."""
    if console.is_terminal:
        console.print(renderable)
        return
    natural = Measurement.get(console, console.options.update_width(_UNBOUNDED), renderable).maximum
    previous = console.width
    console.width = max(previous, natural)
    try:
        console.print(renderable)
    finally:
        console.width = previous


def fail(message: str, code: int = 2) -> NoReturn:
    """`error: MESSAGE` on stderr and exit `code` (2: the call itself is wrong), never a traceback."""
    Console(stderr=True).print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)
